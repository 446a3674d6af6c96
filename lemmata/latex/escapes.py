"""Running text written as if it were math, and LaTeX specials meant as plain characters.

Expects verbatim text, comments, URLs, labels, citations and definitions to be masked
(texscan.mask), so every character scanned here is live LaTeX.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from lemmata.latex.environments import ALIGNMENT_ENVIRONMENTS
from lemmata.latex.texscan import (
    ENV_TAG,
    ESCAPE,
    mandatory_argument_end,
    matching_brace,
    skip_optional_arguments,
    unescaped_positions,
)

_TEXT_REPLACEMENTS = {"#": r"\#", "&": r"\&", "_": r"\_", "^": r"\textasciicircum{}"}
_MATH_ENVIRONMENT = re.compile(
    r"(?:equation|align|alignat|flalign|gather|multline|eqnarray|displaymath|math)\*?"
)
_MATH_OPENERS = {"$": "$", "$$": "$$", "\\[": "\\]", "\\(": "\\)"}
_TEXT_INSIDE_MATH = {"\\text", "\\textrm", "\\textit", "\\textbf", "\\textsf", "\\texttt", "\\mbox"}
_SCAN = re.compile(ENV_TAG.pattern + "|" + ESCAPE + r"|\$\$|\$|[_^]")

# Math-only commands a model may write in running text, with their {..} argument counts.
_MATH_SYMBOLS = """
alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi
pi varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta
Lambda Xi Pi Sigma Upsilon Phi Psi Omega leq le geq ge neq ne approx equiv sim simeq cong
propto in notin ni subset subseteq supset supseteq subsetneq cup cap setminus emptyset
varnothing infty partial nabla forall exists nexists neg wedge vee oplus otimes odot circ
cdot cdots times div pm mp to rightarrow leftarrow leftrightarrow Rightarrow Leftarrow
Leftrightarrow implies iff mapsto ll gg prec succ preceq succeq mid parallel perp langle
rangle lfloor rfloor lceil rceil sum prod int oint bigcup bigcap ell hbar aleph square
blacksquare Box triangle star ast top bot vdash models prime log ln exp det lim sup inf
limsup liminf max min argmin argmax Pr gcd deg dim ker hom arg sin cos tan sinh cosh tanh
"""
MATH_ONLY_COMMANDS: dict[str, int] = {f"\\{name}": 0 for name in _MATH_SYMBOLS.split()} | {
    "\\mathbb": 1, "\\mathcal": 1, "\\mathbf": 1, "\\mathrm": 1, "\\mathit": 1, "\\mathsf": 1,
    "\\mathfrak": 1, "\\boldsymbol": 1, "\\hat": 1, "\\bar": 1, "\\tilde": 1, "\\vec": 1,
    "\\widehat": 1, "\\widetilde": 1, "\\overline": 1, "\\sqrt": 1, "\\operatorname": 1,
    "\\frac": 2, "\\dfrac": 2, "\\tfrac": 2, "\\binom": 2,
}
# Trailing scripts kept with the wrapped command: \alpha_1, \mathbb{R}^n.
_SCRIPTS = re.compile(r"(?:\s*[_^]\s*(?:\{[^{}]*\}|\\[A-Za-z]+|[^\s{}\\]))*")
# A short math expression typed as text: x_i, a_{ij}, n^2, C_{2k+1} (not file_name).
_TEXT_SCRIPT = re.compile(
    r"(?<![A-Za-z0-9\\])[A-Za-z]"
    r"(?:[_^](?:\{(?:[^{}\n]|\{[^{}\n]*\})*\}|\\[A-Za-z]+|[A-Za-z0-9+-]))+(?![A-Za-z0-9])"
)


def escape_stray_hashes(text: str) -> str:
    """Escape every live `#`: with definitions masked, none can be a macro parameter."""
    return _replace_at(text, unescaped_positions(text, "#"))


def escape_stray_ampersands(text: str) -> str:
    """Escape `&` outside tabular/align-like environments, where it can only be text."""
    stack: list[str] = []
    positions: list[int] = []
    for match in re.finditer(ENV_TAG.pattern + "|" + ESCAPE + "|&", text):
        if match.group(1) == "begin":
            stack.append(match.group(2).strip())
        elif match.group(1) == "end" and stack:
            stack.pop()
        elif match.group(0) == "&" and not ALIGNMENT_ENVIRONMENTS.intersection(stack):
            positions.append(match.start())
    return _replace_at(text, positions)


def wrap_math_outside_math(text: str) -> str:
    """Put math-only commands (\\alpha, \\frac{a}{b}) and x_i written in running text into \\ensuremath."""
    spans = []
    for match in _tokens_outside_math(text):
        token = match.group(0)
        if token in MATH_ONLY_COMMANDS:
            spans.append((match.start(), _command_end(text, token, match.end())))
        elif token in "_^" and (short := _short_script_at(text, match.start())):
            spans.append(short)
    pieces, position = [], 0
    for start, end in spans:
        if start >= position:
            pieces += [text[position:start], "\\ensuremath{" + text[start:end] + "}"]
            position = end
    return "".join(pieces) + text[position:]


def escape_scripts_outside_math(text: str) -> str:
    """Escape `_` and `^` still in running text (file_name): they need math mode."""
    return _replace_at(text, [m.start() for m in _tokens_outside_math(text) if m.group(0) in "_^"])


def _command_end(text: str, command: str, index: int) -> int:
    """End of a math command with its arguments and any sub- and superscripts after it."""
    if command == "\\sqrt":
        index = skip_optional_arguments(text, index)
    for _ in range(MATH_ONLY_COMMANDS[command]):
        index = mandatory_argument_end(text, index) or index
    return _SCRIPTS.match(text, index).end()


def _short_script_at(text: str, index: int) -> tuple[int, int] | None:
    """The span of a short expression like x_i around the script character at index."""
    for match in _TEXT_SCRIPT.finditer(text, max(0, index - 1), min(len(text), index + 200)):
        if match.start() < index < match.end():
            return match.start(), match.end()
    return None


def _tokens_outside_math(text: str) -> Iterator[re.Match[str]]:
    """Tokens (`_`, `^`, control sequences) that TeX reads in text mode."""
    closer, math_depth, index = "", 0, 0
    while (match := _SCAN.search(text, index)) is not None:
        token, index = match.group(0), match.end()
        in_math = bool(closer) or math_depth > 0
        if match.group(1):
            if _MATH_ENVIRONMENT.fullmatch(match.group(2).strip()):
                math_depth = max(0, math_depth + (1 if match.group(1) == "begin" else -1))
        elif token in _TEXT_INSIDE_MATH and in_math or token == "\\ensuremath" and not in_math:
            index = _after_group(text, index)  # a group in the other mode
        elif not closer and math_depth == 0 and token in _MATH_OPENERS:
            closer = _MATH_OPENERS[token]
        elif token == closer:
            closer = ""
        elif not in_math:
            yield match


def _after_group(text: str, index: int) -> int:
    """Index after the {..} argument starting at index (after spaces), or index if there is none."""
    start = len(text) - len(text[index:].lstrip(" \t"))
    if start < len(text) and text[start] == "{":
        return matching_brace(text, start) or index
    return index


def _replace_at(text: str, positions: list[int]) -> str:
    """Replace the special character at each position by its text-mode form."""
    for position in sorted(positions, reverse=True):
        text = text[:position] + _TEXT_REPLACEMENTS[text[position]] + text[position + 1 :]
    return text
