"""Functions a statement defines by a formula: "Let f(x) = 3√(2x − 7) − 8. Find f(8)."

The formalizer writes such a definition as a hypothesis, `f(x) = 3*sqrt(2*x - 7) - 8` (the
embedded model on miniF2F's mathd_algebra_433 and mathd_algebra_616, 2026-12-03, both then
refused for an unknown function). A definition restricts no input, so it is no hypothesis: it is
taken out, and every call `f(a)` is written out as the formula at `a` (formal/reading.py). The
kernel then checks a statement without f, the same in every checker, and its rendering shows
what was checked: `3·√(2·8 − 7) − 8 = 1`.

Written out, a definition the model got wrong would be checked as if it were the prose's, so a
definition must be the prose's own (`unfaithful_definition`): the prose writes `f(x) = …` and its
right-hand side reads as the same formula. A recursive definition (a sequence) is refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lemmata.formal.conditions import definitions_part
from lemmata.kernel.tree import Expr, FormalError, Reduce, Var, bounded, free_variables, substitute, walk

#: `f(x) = BODY`, `g(a, b) == BODY`: a name called on distinct names, set equal to a formula.
_DEFINITION = re.compile(
    r"^\s*(?P<name>[^\W\d_]\w*)\s*\(\s*(?P<params>[^\W\d_]\w*(?:\s*,\s*[^\W\d_]\w*)*)\s*\)\s*==?(?!=)\s*(?P<body>\S.*)$",
    re.DOTALL,
)
#: The most functions one statement defines.
MAX_DEFINITIONS = 8


@dataclass(frozen=True)
class Definition:
    name: str
    params: tuple[str, ...]
    body: Expr


def definition_parts(text: str, taken: set[str]) -> tuple[str, tuple[str, ...], str] | None:
    """(name, parameters, the body's text) when `text` defines a function whose name is none of
    `taken` (the language's functions, the declared variables); None for any other hypothesis."""
    found = _DEFINITION.match(text)
    if found is None or found.group("name") in taken or found.group("name").lower() in taken:
        return None
    params = tuple(param.strip() for param in found.group("params").split(","))
    if len(set(params)) != len(params):
        return None
    return found.group("name"), params, found.group("body").strip()


def written_out(definition: Definition, args: Sequence[Expr]) -> Expr:
    """The body of `definition` with each parameter replaced by its argument, at once (`f(y, x)`
    of f(x, y) swaps them); FormalError when an argument's variable would be captured by a
    sum's or product's index in the body, or the result is too large."""
    if len(args) != len(definition.params):
        raise FormalError(
            f"{definition.name} is defined with {len(definition.params)} argument(s) and called with {len(args)}"
        )
    indices = {node.index for node in walk(definition.body) if isinstance(node, Reduce)}
    for arg in args:
        caught = indices & free_variables(arg)
        if caught:
            raise FormalError(
                f"a call of {definition.name} passes {sorted(caught)[0]}, which its formula uses as an index: rename one"
            )
    body = definition.body
    for position, param in enumerate(definition.params):  # placeholders first: no argument is replaced again
        body = substitute(body, param, Var(f"\0{position}"))
    for position, arg in enumerate(args):
        body = substitute(body, f"\0{position}", arg)
    return bounded(body, f"a call of {definition.name} written out")


def unfaithful_definition(prose: str, definitions: Mapping[str, Definition], parse) -> str:
    """Why a definition is not the prose's ("" when each is): the prose's conditions must write
    `f(x) = …` for it once, in a sentence that restricts nothing, and that right-hand side must
    read as the same formula (`parse` reads it, given the prose's parameters, with the definitions
    before it known). Only the conditions: in "Let f(x) = x². Show that f(x) = x² + 1" the second
    formula is the (false) claim, and as a definition it would make the claim `x² + 1 = x² + 1`."""
    for definition in definitions.values():
        found = prose_definition(prose, definition.name)
        if isinstance(found, str):
            return found
        params, right_side = found
        body = None
        if len(params) == len(definition.params):
            try:
                body = parse(right_side, params)
            except FormalError:
                pass
        if body is not None:
            for prose_param, param in zip(params, definition.params):
                body = substitute(body, prose_param, Var(f"\0{param}"))
            for param in definition.params:
                body = substitute(body, f"\0{param}", Var(param))
        if body != definition.body:
            return (
                f"the definition of {definition.name} is not the one the statement writes: copy the statement's "
                f"formula for {definition.name}"
            )
    return ""


def prose_definition(prose: str, name: str) -> tuple[tuple[str, ...], str] | str:
    """(parameters, right-hand side) of the one definition of `name` the prose's conditions write,
    or why there is none to use: none, more than one (cases), or one its sentence may restrict
    ("Let f(x) = x² for x > 0" defines f nowhere else, and written out at −1 it would be 1)."""
    candidates = list(_prose_definitions(definitions_part(_names_unwrapped(prose)), name))
    if not candidates:
        return (
            f"the statement defines no function {name}: write the formula itself, not a "
            "function the statement does not define"
        )
    if len(candidates) > 1:
        return f"the statement writes {name} by more than one formula (cases): the language has no cases"
    params, right_side, restricted = candidates[0]
    if restricted or _DOMAIN_SAID.search(prose):
        return (
            f"the statement may restrict {name} as it defines it (a condition or a comparison beside its "
            "formula, or a domain said): the language has no function defined on part of its domain"
        )
    return params, right_side


#: `\text{rem}(x, y)`, `\operatorname{rem}`: a name in LaTeX's upright type is the name.
_UPRIGHT_NAME = re.compile(r"\\(?:text|operatorname|mathrm|textrm|mathit)\s*\{\s*([^\W\d_]\w*)\s*\}")
#: Where a definition's right-hand side ends in the prose: the end of its formula or sentence.
_RIGHT_SIDE_END = re.compile(r"\$|\\\]|\\\\|\n|,\s|;|\.\s|\.$|\s+and\s|\s+if\s|\s+for\s")
#: Words that restrict where a definition holds, in its sentence: "Let f(x) = x² for x > 0", "For
#: x > 0, let f(x) = x²", "f(x) = 1/x, where x ≠ 0"; and comparisons, which such words bring.
_QUALIFIER = re.compile(
    r"\b(?:if|for|when|whenever|where|wherever|on|provided|unless|except|otherwise|with|only|domain|restricted)\b"
    r"|[<>≤≥≠∈]|\\(?:le|ge|leq|geq|lt|gt|ne|neq|in)\b",
    re.IGNORECASE,
)
#: A function's domain said anywhere in the prose, beyond the definition's sentence: "Here f is
#: defined only for positive x", "the domain of f", "f: ℝ⁺ → ℝ" (attacks of 2026-12-03: with f(x)
#: = x² written out, f(−1) = 1 would have been machine-checked).
_DOMAIN_SAID = re.compile(
    r"\b(?:domain|codomain|restrict\w*|undefined|defined\s+(?:only|for|on|over|when|where|whenever|if|at))\b"
    r"|\\(?:to|rightarrow|mapsto|colon)\b|[→↦]",
    re.IGNORECASE,
)
#: What opens a definition's sentence and restricts nothing: "If $f(x) = 2x + 3$, find …".
_OPENER = re.compile(r"^\s*(?:let|if|suppose|given|define|consider)\b", re.IGNORECASE)
#: A sentence's end: ".", "?" or "!" before a space, or a blank line.
_SENTENCE_END = re.compile(r"(?<=[.?!])\s|\n\s*\n")


def _names_unwrapped(prose: str) -> str:
    return _UPRIGHT_NAME.sub(r"\1", prose)


def _prose_definitions(prose: str, name: str):
    """(parameters, right-hand side, whether its sentence restricts it) of each `name(x) = …` the
    prose writes."""
    pattern = re.compile(rf"(?<![\w\\]){re.escape(name)}\s*\(\s*([^\W\d_]\w*(?:\s*,\s*[^\W\d_]\w*)*)\s*\)\s*=(?!=)")
    for found in pattern.finditer(prose):
        rest = prose[found.end() :]
        end = _RIGHT_SIDE_END.search(rest)
        right_side = (rest[: end.start()] if end else rest).strip()
        if right_side:
            params = tuple(param.strip() for param in found.group(1).split(","))
            yield params, right_side, _restricted(prose, found.start(), found.end() + len(right_side))


def _restricted(prose: str, start: int, end: int) -> bool:
    """Whether the sentence around prose[start:end], a definition, says anything that may restrict
    it: a qualifier or a comparison outside the definition, other than the sentence's opener."""
    before = [0, *(found.end() for found in _SENTENCE_END.finditer(prose, 0, start))][-1]
    after = _SENTENCE_END.search(prose, end)
    sentence_rest = prose[before:start] + " " + prose[end : after.start() if after else len(prose)]
    return bool(_QUALIFIER.search(_OPENER.sub(" ", sentence_rest)))
