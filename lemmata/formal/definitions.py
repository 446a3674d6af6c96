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

from lemmata.formal.conditions import conditions_part
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
    `f(x) = …` for it once, and that right-hand side must read as the same formula (`parse` reads
    it, with the definitions before it known). Only the conditions: in "Let f(x) = x². Show that
    f(x) = x² + 1" the second formula is the (false) claim, and as a definition it would make the
    claim `x² + 1 = x² + 1`."""
    givens = conditions_part(prose)
    for definition in definitions.values():
        candidates = list(_prose_definitions(givens, definition.name))
        if not candidates:
            return (
                f"the statement defines no function {definition.name}: write the formula itself, not a "
                "function the statement does not define"
            )
        if len(candidates) > 1:
            return f"the statement writes {definition.name} by more than one formula (cases): the language has no cases"
        for params, right_side in candidates:
            if len(params) != len(definition.params):
                continue
            try:
                body = parse(right_side)
            except FormalError:
                continue
            for prose_param, param in zip(params, definition.params):
                body = substitute(body, prose_param, Var(f"\0{param}"))
            for param in definition.params:
                body = substitute(body, f"\0{param}", Var(param))
            if body == definition.body:
                break
        else:
            return (
                f"the definition of {definition.name} is not the one the statement writes: copy the statement's "
                f"formula for {definition.name}"
            )
    return ""


#: Where a definition's right-hand side ends in the prose: the end of its formula or sentence.
_RIGHT_SIDE_END = re.compile(r"\$|\\\]|\\\\|\n|,\s|;|\.\s|\.$|\s+and\s|\s+if\s|\s+for\s")


def _prose_definitions(prose: str, name: str):
    """(parameters, right-hand side) of each `name(x) = …` the prose writes."""
    pattern = re.compile(rf"(?<![\w\\]){re.escape(name)}\s*\(\s*([^\W\d_]\w*(?:\s*,\s*[^\W\d_]\w*)*)\s*\)\s*=(?!=)")
    for found in pattern.finditer(prose):
        rest = prose[found.end() :]
        end = _RIGHT_SIDE_END.search(rest)
        right_side = (rest[: end.start()] if end else rest).strip()
        if right_side:
            yield tuple(param.strip() for param in found.group(1).split(",")), right_side
