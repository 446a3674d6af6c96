"""Math written in running text: wrap it in \\ensuremath, and escape `_` and `^` meant as characters.

A model writes `\\frac{1}{2}`, `x^2 + y^2`, `\\mathbb{Z}` or `\\alpha` in a sentence, or echoes
`\\norm*{x}_2` from the macro list. Each is a compile error in text mode, so only spans that
would stop the compile are rewritten; text that compiles is left byte for byte. The rules:

- A math-only command (mathcommands.MATH_ONLY) is wrapped with its arguments and the `_`/`^`
  scripts after it: `\\frac{1}{2}` -> `\\ensuremath{\\frac{1}{2}}`. `\\left( .. \\right)` is
  wrapped whole when what it encloses is a formula (no word, no text command, balanced
  braces); otherwise \\left, \\right and \\middle are dropped and their delimiters stay text.
- A command that also works in text (the lemmata-math macros, \\ensuremath) is wrapped only
  when a script follows it: `\\RR^n`.
- A bare `_` or `^` is a script when it is attached to a base, a letter or a number that is
  not part of a word (`x_i`, `2^{k+1}`), or a short formula in parentheses (`(n+1)^2`), and
  its argument is a {..} group, a control word, a signed number or one to four letters, with
  no letter or digit (nor a second script of its kind) right after. A multi-character
  argument gets braces: `x_max` -> `x_{max}`. Every other `_`/`^` is a character and is
  escaped: `snake_case_name` -> `snake\\_case\\_name`, `C_2H` -> `C\\_2H`, `1_000_000`.
- A wrapped span grows over the simple math beside it, so that `x^2 + y^2 = 1` becomes one
  formula (see mathruns).

\\ensuremath rather than \\( .. \\): should the mode guess be wrong (a user macro that is
used inside math) \\ensuremath is still right, where \\( would be an error.
Expects comments, verbatim text, URLs, keys and definitions masked (texscan.mask).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from lemmata.latex.mathcommands import JOINERS, MATH_ONLY, SIZED_PAIR, TEXT_SAFE, arguments_end
from lemmata.latex.mathruns import Span, grow_spans, merge_spans
from lemmata.latex.texscan import ENV_TAG, ESCAPE, matching_brace, skip_blanks

_MATH_ENVIRONMENT = re.compile(r"(?:equation|align|alignat|flalign|gather|multline|eqnarray|displaymath|math)\*?")
_MATH_OPENERS = {"$": "$", "$$": "$$", "\\[": "\\]", "\\(": "\\)"}
# Commands whose argument is text even inside math: scanned as running text.
_TEXT_INSIDE_MATH = frozenset(
    "\\text \\textrm \\textit \\textbf \\textsf \\texttt \\textnormal \\textup \\textsl \\textsc "
    "\\emph \\mbox \\hbox \\intertext \\shortintertext".split()
)
_SCAN = re.compile(ENV_TAG.pattern + "|" + ESCAPE + r"|\$\$|\$|[_^]")
_CONTROL_WORD = re.compile(r"\\[A-Za-z@]+")
_LET = re.compile(r"\s*(?:" + ESCAPE + r"|\S)\s*=?\s*(?:" + ESCAPE + r"|\S)")
_ESCAPED = {"_": "\\_", "^": "\\textasciicircum{}"}
_BLANKS = re.compile(r"[ \t]*")
_PAIR_SCAN = re.compile(ESCAPE + r"|\$|\n[ \t]*\n")
_PAIR_STOPS = frozenset(("\\(", "\\)", "\\[", "\\]", "\\begin", "\\end", "\\par", "\\item"))

# A script argument without braces: a signed number, a few letters, or one sign.
_SCRIPT_RUN = re.compile(r"[+-]?\d+(?:\.\d+)?|[A-Za-z]+|[*+-]")
_NOT_WORD = r"(?<![A-Za-z0-9\\@_^.])"
_BASES = (
    re.compile(_NOT_WORD + r"(?:[A-Za-z]|\d+(?:\.\d+)?)\Z"),
    re.compile(_NOT_WORD + r"[A-Za-z]?\((?P<inner>[^()$\n\x00]{0,59}[^()$\n\x00\\])\)\Z"),
)
_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}")
# What a span taken whole (\left..\right, (..)^2) may hold besides letters, digits and signs.
_FORMULA_COMMANDS = (
    frozenset(MATH_ONLY)
    | frozenset(TEXT_SAFE)
    | frozenset("\\left \\right \\middle \\quad \\qquad \\dots \\ldots".split())
)
_DELIMITERS = frozenset(
    "( ) [ ] . | / < > \\{ \\} \\| \\langle \\rangle \\lvert \\rvert \\lVert \\rVert \\vert \\Vert "
    "\\lfloor \\rfloor \\lceil \\rceil \\backslash \\uparrow \\downarrow".split()
)


def text_tokens(text: str, start: int = 0, end: int | None = None) -> Iterator[re.Match[str]]:
    """Control sequences, `_` and `^` read in text mode (not the math inside \\ensuremath{..} or \\abs{..}),
    between `start` and `end`. The argument of \\text{..} inside math is text mode again: a model
    writes `\\[ \\text{6 = 2 \\times 3} \\]`, so it is read as running text too."""
    end = len(text) if end is None else end
    closer, depth, index = "", 0, start
    while (match := _SCAN.search(text, index, end)) is not None:
        token, index = match.group(0), match.end()
        if match.group(1):
            if _MATH_ENVIRONMENT.fullmatch(match.group(2).strip()):
                depth = max(0, depth + (1 if match.group(1) == "begin" else -1))
        elif closer or depth:
            if token in _TEXT_INSIDE_MATH:
                group_end = _group_end(text, index)
                if group_end > index:
                    yield from text_tokens(text, text.index("{", index) + 1, group_end - 1)
                index = group_end
            elif token == closer:
                closer = ""
        elif token in _MATH_OPENERS:
            closer = _MATH_OPENERS[token]
        else:
            yield match
            if token in TEXT_SAFE:  # its arguments are typeset in math: \abs{x_1}, \ensuremath{x^2}
                index = arguments_end(text, index, TEXT_SAFE[token])
            elif token == "\\let":  # \let\eps\epsilon: the names are not text
                index = (_LET.match(text, index) or match).end()


def wrap_math_in_text(text: str) -> str:
    """Wrap math that stands in running text in \\ensuremath (see the module docstring)."""
    spans, inserts, drops = _find_math(text)
    return _assemble(text, grow_spans(text, merge_spans(spans)), inserts, drops)


def escape_scripts_in_text(text: str) -> str:
    """Escape the `_` and `^` still in running text (file_name): they are characters."""
    pieces, position = [], 0
    for match in text_tokens(text):
        if match.group(0) in _ESCAPED:
            pieces += [text[position : match.start()], _ESCAPED[match.group(0)]]
            position = match.end()
    return "".join(pieces) + text[position:]


def _find_math(text: str) -> tuple[list[Span], list[tuple[int, str]], list[tuple[int, int]]]:
    """Spans that must be math, braces to insert around script arguments, tokens to drop."""
    spans: list[Span] = []
    inserts: list[tuple[int, str]] = []
    drops: list[tuple[int, int]] = []
    for match in text_tokens(text):
        token, start = match.group(0), match.start()
        spec = MATH_ONLY.get(token, TEXT_SAFE.get(token))
        if spec is not None:
            after_arguments = arguments_end(text, match.end(), spec)
            end = _scripts_end(text, after_arguments, inserts, spaced=True)
            if token in MATH_ONLY or end > after_arguments:
                spans.append(Span(start, end, token in JOINERS, token in JOINERS))
        elif token in SIZED_PAIR:
            if (pair_end := _sized_pair_end(text, match)) is not None:
                spans.append(Span(start, _scripts_end(text, pair_end, inserts, spaced=True)))
            else:  # drop the sizing, keep the delimiter as text; `.` is no delimiter
                after = skip_blanks(text, match.end())
                drops.append((start, after + 1 if text[after : after + 1] == "." else match.end()))
        elif token in _ESCAPED and (base := _base_start(text, start)) is not None:
            end = _scripts_end(text, start, inserts, spaced=False)
            if end > start:
                spans.append(Span(base, end))
    return spans, inserts, drops


def _scripts_end(text: str, index: int, inserts: list[tuple[int, str]], *, spaced: bool) -> int:
    """Index after the `_`/`^` scripts at index (at most one of each); records braces to add."""
    used = ""
    while True:
        blanks = _BLANKS.match(text, index)
        assert blanks is not None  # `[ \t]*` matches anywhere
        at = blanks.end() if spaced else index
        char = text[at : at + 1]
        if char not in ("_", "^") or char in used or (argument := _script_argument(text, at + 1)) is None:
            return index
        end, needs_braces = argument
        if needs_braces:
            inserts += [(at + 1, "{"), (end, "}")]
        used, index = used + char, end


def _script_argument(text: str, index: int) -> tuple[int, bool] | None:
    """(end, needs braces) of the script argument at index, or None when it is not one."""
    if text[index : index + 1] == "{":
        end = matching_brace(text, index)
        return (end, False) if end is not None else None
    control = _CONTROL_WORD.match(text, index)
    if control:
        return control.end(), False
    run = _SCRIPT_RUN.match(text, index)
    if run is None or (run.group(0).isalpha() and len(run.group(0)) > 4):
        return None
    following = text[run.end() : run.end() + 1]
    if following.isascii() and following.isalnum() or following == text[index - 1]:
        return None  # x^2y, x_i2: not clearly one script; 1_000_000: no script at all
    return run.end(), len(run.group(0)) > 1


def _base_start(text: str, index: int) -> int | None:
    """Where the base of the script at index starts, if it has a math-looking one."""
    for pattern in _BASES:
        match = pattern.search(text, max(0, index - 64), index)
        if match and (match.groupdict().get("inner") is None or _is_formula(match.group("inner"))):
            return match.start()
    return None


def _is_formula(content: str) -> bool:
    """Whether content can be typeset as math as it is: no word, no text command, braces balanced."""
    depth = 0
    for token in re.findall(ESCAPE + r"|[{}$\x00]", content):
        if token in ("{", "}"):
            depth += 1 if token == "{" else -1
        elif token[0] != "\\" or token == "\\\\" or (token[1].isalpha() and token not in _FORMULA_COMMANDS):
            return False
        if depth < 0:
            return False
    sized = re.findall(r"\\(?:left|right|middle)(?![A-Za-z])\s*(" + ESCAPE + r"|\S|$)", content)
    return (
        depth == 0
        and not _WORD.search(content)
        and all(d in _DELIMITERS for d in sized)
        and all(
            _is_attached_script(content, m.start())
            for m in re.finditer(ESCAPE + "|[_^]", content)
            if m.group(0) in "_^"
        )
    )


def _is_attached_script(content: str, index: int) -> bool:
    """Whether the `_`/`^` at index has a base and an argument, and no second script of its kind."""
    argument = _script_argument(content, index + 1)
    if index == 0 or content[index - 1].isspace() or argument is None:
        return False
    return content[argument[0] : argument[0] + 1] != content[index]


def _sized_pair_end(text: str, match: re.Match[str]) -> int | None:
    """End of the `\\left( .. \\right)` that the token in match opens, if it is one formula."""
    if match.group(0) != "\\left":
        return None
    depth = 1
    for token in _PAIR_SCAN.finditer(text, match.end()):
        depth += {"\\left": 1, "\\right": -1}.get(token.group(0), 0)
        if depth == 0:
            end = arguments_end(text, token.end(), "d")
            return end if _is_formula(text[match.start() : end]) else None
        if token.group(0)[0] != "\\" or token.group(0) in _PAIR_STOPS:
            return None  # a blank line, `$`, or an environment ends the text first
    return None


def _group_end(text: str, index: int) -> int:
    """Index after the {..} group starting at index (after blanks), or index if there is none."""
    blanks = _BLANKS.match(text, index)
    assert blanks is not None  # `[ \t]*` matches anywhere
    start = blanks.end()
    if text[start : start + 1] == "{":
        return matching_brace(text, start) or index
    return index


def _dropped(text: str, start: int, end: int) -> str:
    """What replaces a dropped token: nothing, or {} where its line would be left blank (a paragraph end)."""
    line_start, line_end = text.rfind("\n", 0, start) + 1, text.find("\n", end)
    rest = text[line_start:start] + text[end : len(text) if line_end < 0 else line_end]
    return "" if rest.strip() else "{}"


def _assemble(text: str, spans: list[Span], inserts: list[tuple[int, str]], drops: list[tuple[int, int]]) -> str:
    """The text with each span in \\ensuremath, the braces inserted and lonely \\left/\\right dropped."""
    # (position, order, skip to, replacement): at one position inserts come first, then a
    # span's end, then the next span's start.
    edits = [(position, 0, position, brace) for position, brace in inserts]
    edits += [(s.start, 2, s.start, "\\ensuremath{") for s in spans] + [(s.end, 1, s.end, "}") for s in spans]
    edits += [
        (start, 0, end, _dropped(text, start, end))
        for start, end in drops
        if not any(s.start <= start < s.end for s in spans)
    ]
    pieces, position = [], 0
    for at, _, skip_to, replacement in sorted(edits):
        pieces += [text[position:at], replacement]
        position = max(at, skip_to)
    return "".join(pieces) + text[position:]
