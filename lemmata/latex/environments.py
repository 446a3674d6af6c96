"""Environment names in model-written bodies: aliases, unknown environments, code and drawings."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from lemmata.latex.document import NAMED_ENVIRONMENTS, THEOREM_ENVIRONMENTS
from lemmata.latex.texscan import (
    ENV_TAG,
    mandatory_argument_end,
    mask,
    matching_brace,
    skip_optional_arguments,
    unmask,
)

_STANDARD_ENVIRONMENTS = """
abstract array center description displaymath enumerate eqnarray eqnarray* equation
figure figure* flushleft flushright itemize list math minipage picture quotation quote
tabbing table table* tabular tabular* trivlist verbatim verbatim* verse titlepage
align align* alignat alignat* aligned alignedat bmatrix Bmatrix cases flalign flalign*
gather gather* gathered matrix multline multline* pmatrix smallmatrix split subarray
subequations vmatrix Vmatrix equation* dcases dcases* rcases rcases* multlined
lgathered rgathered bmatrix* pmatrix* vmatrix* Bmatrix* Vmatrix* matrix* cases*
spreadlines proof tiny scriptsize footnotesize small normalsize large Large LARGE
huge Huge bfseries itshape em sffamily ttfamily centering raggedright raggedleft
"""
KNOWN_ENVIRONMENTS: frozenset[str] = frozenset(
    _STANDARD_ENVIRONMENTS.split() + list(THEOREM_ENVIRONMENTS) + list(NAMED_ENVIRONMENTS)
)
# Environments in which `&` separates columns; anywhere else it must be escaped.
ALIGNMENT_ENVIRONMENTS: frozenset[str] = frozenset(
    name
    for name in KNOWN_ENVIRONMENTS
    if re.match(r"(tabular|array|align|flalign|eqnarray|split|.?matrix|smallmatrix|.?cases|subarray)", name)
)
# Environments a section heading cannot sit inside: a heading closes them.
SECTION_CLOSES: frozenset[str] = frozenset(THEOREM_ENVIRONMENTS + NAMED_ENVIRONMENTS + ("proof",))
# Paragraph-level blocks: never inside math or inside a command's argument.
TEXT_BLOCK_ENVIRONMENTS: frozenset[str] = SECTION_CLOSES | frozenset(
    "itemize enumerate description center figure figure* table table* quote quotation "
    "flushleft flushright abstract verbatim".split()
)

# Abbreviations and misspellings models use for environments the preamble defines.
ENVIRONMENT_ALIASES: dict[str, str] = {
    "thm": "theorem",
    "theo": "theorem",
    "lem": "lemma",
    "lemm": "lemma",
    "prop": "proposition",
    "cor": "corollary",
    "coro": "corollary",
    "corolary": "corollary",
    "corrolary": "corollary",
    "defn": "definition",
    "defin": "definition",
    "def": "definition",
    "definiton": "definition",
    "rem": "remark",
    "rema": "remark",
    "rmk": "remark",
    "conj": "conjecture",
    "obs": "observation",
    "ex": "example",
    "exmp": "example",
    "exa": "example",
    "assump": "assumption",
    "asm": "assumption",
    "assm": "assumption",
    "clm": "claim",
    "pf": "proof",
    "prf": "proof",
    "proof*": "proof",
    "main": "maintheorem",
    "mainthm": "maintheorem",
    "main-theorem": "maintheorem",
}
# Proof variants that keep a heading of their own.
PROOF_TITLES: dict[str, str] = {
    "proofsketch": "Proof sketch",
    "sketch": "Proof sketch",
    "proof-sketch": "Proof sketch",
    "solution": "Solution",
    "proofidea": "Proof idea",
}
# Theorem-like names the preamble lacks, printed under their own heading.
NAMED_SYNONYMS: dict[str, str] = {
    "property": "namedtheorem",
    "principle": "namedtheorem",
    "criterion": "namedtheorem",
    "hypothesis": "nameddefinition",
    "axiom": "nameddefinition",
    "notation": "nameddefinition",
    "problem": "nameddefinition",
    "question": "nameddefinition",
    "exercise": "nameddefinition",
    "note": "nameddefinition",
    "condition": "nameddefinition",
    "construction": "nameddefinition",
    "setting": "nameddefinition",
    "setup": "nameddefinition",
    "convention": "nameddefinition",
}
_DEFINITION_STYLE = {"definition", "assumption", "example", "remark"} | {
    name for name, env in NAMED_SYNONYMS.items() if env == "nameddefinition"
}
# Drawings need TikZ, which the preamble does not load; comments are never printed.
DROPPED_ENVIRONMENTS: frozenset[str] = frozenset(
    "tikzpicture tikzcd pgfpicture circuitikz pspicture forest asy comment thebibliography".split()
)
# Code and pseudocode need packages we do not load; their text is shown verbatim.
CODE_ENVIRONMENTS: frozenset[str] = frozenset(
    "algorithm algorithm* algorithmic algorithmicx algorithm2e lstlisting minted Verbatim "
    "code python pseudocode algo listing sourcecode".split()
)
# Wrappers reduced to their content after dropping this many leading {..} arguments.
_WRAPPER_ARGUMENTS: dict[str, int] = {
    "multicols": 1,
    "multicols*": 1,
    "spacing": 1,
    "subfigure": 1,
    "adjustbox": 1,
    "wrapfigure": 2,
    "wraptable": 2,
    "minted": 1,
}
_RENAMED_FLOATS: dict[str, str] = {
    "sidewaystable": "table",
    "sidewaysfigure": "figure",
    "longtable": "tabular",
    "tabularx": "tabular",
}


@dataclass(frozen=True)
class EnvironmentRule:
    """How one environment name is rewritten: a new name plus heading, or removal."""

    name: str | None  # None: drop the tags and keep the content
    heading_argument: str = ""  # e.g. "{Hypothesis}" for namedtheorem
    optional_title: str = ""  # e.g. "[Proof sketch]" for proof


def declared_theorem_titles(text: str) -> dict[str, str]:
    """`\\newtheorem{hyp}{Hypothesis}` declarations, as {"hyp": "Hypothesis"}."""
    titles: dict[str, str] = {}
    for match in re.finditer(r"\\newtheorem\*?\s*\{([^{}]+)\}\s*(?:\[[^\]]*\]\s*)?\{", text):
        end = matching_brace(text, match.end() - 1)
        if end is not None:
            titles[match.group(1).strip()] = text[match.end() : end - 1].strip()
    return titles


def environment_rule(name: str, titles: Mapping[str, str], known: frozenset[str]) -> EnvironmentRule:
    """Decide what becomes of `\\begin{name}` given the preamble and declared theorem titles."""
    if name in known:
        return EnvironmentRule(name)
    lower = name.strip().lower()
    if name in titles:
        return _titled_rule(titles[name], known)
    if lower in ENVIRONMENT_ALIASES:
        return EnvironmentRule(ENVIRONMENT_ALIASES[lower])
    if lower in known:
        return EnvironmentRule(lower)
    if lower in PROOF_TITLES:
        return EnvironmentRule("proof", optional_title=f"[{PROOF_TITLES[lower]}]")
    if lower in NAMED_SYNONYMS:
        return EnvironmentRule(NAMED_SYNONYMS[lower], heading_argument="{" + lower.capitalize() + "}")
    if lower.endswith("*") and lower[:-1] in THEOREM_ENVIRONMENTS:
        return _titled_rule(lower[:-1].capitalize(), known, numbered=False)
    if lower in _RENAMED_FLOATS:
        return EnvironmentRule(_RENAMED_FLOATS[lower])
    return EnvironmentRule(None)


def _titled_rule(title: str, known: frozenset[str], numbered: bool = True) -> EnvironmentRule:
    """A theorem-like environment printed as `title`: the preamble's own if it has one."""
    plain_title = re.sub(r"[^A-Za-z ]", "", title).strip().lower()
    if numbered and plain_title in known:
        return EnvironmentRule(plain_title)
    style = "nameddefinition" if plain_title in _DEFINITION_STYLE else "namedtheorem"
    return EnvironmentRule(style, heading_argument="{" + title + "}")


def normalize_environments(text: str, titles: Mapping[str, str], known: frozenset[str]) -> str:
    """Rewrite every \\begin/\\end so it names an environment the preamble defines."""
    pieces: list[str] = []
    position = 0
    for match in ENV_TAG.finditer(text):
        if match.start() < position:
            continue
        kind, name = match.group(1), match.group(2)
        rule = environment_rule(name, titles, known)
        end = match.end()
        if kind == "begin":
            end, replacement = _rewrite_begin(text, end, name, rule)
        else:
            replacement = "" if rule.name is None else "\\end{" + rule.name + "}"
        pieces += [text[position : match.start()], replacement]
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def _rewrite_begin(text: str, end: int, name: str, rule: EnvironmentRule) -> tuple[int, str]:
    """The replacement for one \\begin tag and where the consumed text ends."""
    if rule.name is None:
        end = skip_optional_arguments(text, end)
        for _ in range(_WRAPPER_ARGUMENTS.get(name.lower(), 0)):
            end = mandatory_argument_end(text, end) or end
        return end, ""
    if rule.name == "tabular" and name.lower() == "tabularx":
        return _tabularx_as_tabular(text, end)
    has_title = skip_optional_arguments(text, end) != end
    title = "" if has_title else rule.optional_title
    return end, "\\begin{" + rule.name + "}" + rule.heading_argument + title


def _tabularx_as_tabular(text: str, end: int) -> tuple[int, str]:
    """`\\begin{tabularx}{width}{lX}` as `\\begin{tabular}{ll}`: no width, no X columns."""
    width_end = mandatory_argument_end(text, end) or end
    spec_end = mandatory_argument_end(text, width_end)
    if spec_end is None:
        return width_end, "\\begin{tabular}"
    spec = text[width_end:spec_end].strip().replace("X", "l")
    return spec_end, "\\begin{tabular}" + spec


def defined_environment_names(text: str) -> frozenset[str]:
    """Environments the body itself defines with \\newenvironment."""
    found = re.findall(r"\\(?:re)?newenvironment\*?\s*\{([^{}]+)\}", text)
    return frozenset(name.strip() for name in found)


def _environment_span_end(text: str, name: str, content_start: int) -> tuple[int, int] | None:
    """(start of the matching \\end tag, end of it) for an environment opened before content_start."""
    depth = 1
    for match in ENV_TAG.finditer(text, content_start):
        if match.group(2).strip().lower() != name:
            continue
        depth += 1 if match.group(1) == "begin" else -1
        if depth == 0:
            return match.start(), match.end()
    return None


def _outermost_spans(text: str, names: frozenset[str]) -> Iterator[tuple[int, int, int, int]]:
    """(begin start, content start, content end, end end) of each outermost named environment."""
    lowered = {name.lower() for name in names}
    position = 0
    for match in ENV_TAG.finditer(text):
        name = match.group(2).strip().lower()
        if match.start() < position or match.group(1) != "begin" or name not in lowered:
            continue
        closing = _environment_span_end(text, name, match.end())
        # A truncated answer leaves the environment open: it runs to the end of the text.
        content_end, end = closing if closing else (len(text), len(text))
        yield match.start(), match.end(), content_end, end
        position = end


def drop_environments(text: str, names: frozenset[str] = DROPPED_ENVIRONMENTS) -> str:
    """Remove the named environments together with everything inside them."""
    spans = [(start, end) for start, _, _, end in _outermost_spans(text, names)]
    pieces, position = [], 0
    for start, end in spans:
        pieces.append(text[position:start])
        position = end
    return "".join(pieces) + text[position:]


def code_environments_to_verbatim(text: str, stash: list[str]) -> str:
    """Show code and pseudocode environments as (masked) verbatim blocks."""
    pieces, position = [], 0
    for start, content_start, content_end, end in _outermost_spans(text, CODE_ENVIRONMENTS):
        tag = ENV_TAG.match(text, start)
        assert tag is not None  # `start` is where _outermost_spans found this very tag
        name = tag.group(2).strip().lower()
        body_start = skip_optional_arguments(text, content_start)
        for _ in range(_WRAPPER_ARGUMENTS.get(name, 0)):
            body_start = mandatory_argument_end(text, body_start) or body_start
        code = unmask(text[body_start:content_end], stash).strip("\n")
        code = code.replace("\\end{verbatim}", "\\end {verbatim}")
        block = "\\begin{verbatim}\n" + code + "\n\\end{verbatim}"
        pieces += [text[position:start], mask(block, stash)]
        position = end
    return "".join(pieces) + text[position:]
