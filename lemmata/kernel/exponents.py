"""Integer powers with a variable exponent, which the checkers state only where it is natural.

2^n is defined for a negative integer n (2^-1 = 1/2), but the solver's products and Coq's powers
have natural exponents, so the definedness they assume for it (semantics.requirements: n ≥ 0)
would be an assumption the statement never made: "for every integer n, 2^n ≥ 1", false at
n = -1, was machine-checked "where n ≥ 0". A statement is admitted only when each such exponent
is nonnegative by the statement's own premises: its variables' domains and the bounds its
hypotheses state (n ≥ 1, 0 < n), carried through sums, differences with a number, products,
powers of a nonnegative base and the index of a sum over a range. Anything subtler is refused, and the statement stays unchecked.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from lemmata.kernel.semantics import Kind, kind_of
from lemmata.kernel.tree import Const, Expr, FormalError, Op, Reduce, Var, conjuncts, free_variables, integer_literal

Bounds = Mapping[str, Fraction]


def check_exponents(parts: list[Expr], kinds: dict[str, Kind], bounds: Bounds) -> None:
    """FormalError for a power whose integer exponent `bounds` (the statement's lower bounds on its
    variables) do not show nonnegative."""
    for part in parts:
        _check(part, kinds, dict(bounds))


def stated_bounds(hypotheses: list[Expr], kinds: Mapping[str, Kind]) -> dict[str, Fraction]:
    """The lower bounds the hypotheses state of a variable by a number: `n >= 1`, `n > 0` (1 for an
    integer n), `2 <= n`."""
    bounds: dict[str, Fraction] = {}
    for hypothesis in hypotheses:
        for part in conjuncts(hypothesis):
            found = _bound_of(part, kinds)
            if found is not None and (found[0] not in bounds or bounds[found[0]] < found[1]):
                bounds[found[0]] = found[1]
    return bounds


def _bound_of(part: Expr, kinds: Mapping[str, Kind]) -> tuple[str, Fraction] | None:
    if not (isinstance(part, Op) and len(part.args) == 2):
        return None
    left, right = part.args
    name = {"ge": "ge", "gt": "gt", "le": "ge", "lt": "gt"}.get(part.name)
    if name is None:
        return None
    variable, number = (left, right) if part.name in ("ge", "gt") else (right, left)
    value = _number(number)
    if not isinstance(variable, Var) or value is None:
        return None
    if name == "gt" and kinds.get(variable.name) == "int" and value.denominator == 1:
        value += 1
    return variable.name, value


def _number(expr: Expr) -> Fraction | None:
    literal = integer_literal(expr)
    if literal is not None:
        return Fraction(literal)
    if isinstance(expr, Const):
        return Fraction(expr.value)
    return None


def lower_bound(expr: Expr, bounds: Bounds) -> Fraction | None:
    """A number `expr` is never below, given `bounds`; None when these rules find none."""
    if isinstance(expr, Var):
        return bounds.get(expr.name)
    number = _number(expr)
    if number is not None:
        return number
    if isinstance(expr, Op) and expr.name in ("abs", "factorial") and len(expr.args) == 1:
        return Fraction(0)
    if not isinstance(expr, Op) or len(expr.args) != 2:
        return None
    if expr.name == "pow":
        # Nonnegative, never computed (2**(10**10) is a bound no one needs): a nonnegative base, or
        # an even exponent. A power in the exponent is itself checked where it stands.
        base, exponent = lower_bound(expr.args[0], bounds), integer_literal(expr.args[1])
        return Fraction(0) if (base is not None and base >= 0) or (exponent is not None and exponent % 2 == 0) else None
    left, right = (lower_bound(arg, bounds) for arg in expr.args)
    if expr.name == "add" and left is not None and right is not None:
        return left + right
    subtracted = _number(expr.args[1])
    if expr.name == "sub" and left is not None and subtracted is not None:
        return left - subtracted
    if expr.name == "mul" and left is not None and right is not None and left >= 0 and right >= 0:
        return left * right
    return None


def _check(expr: Expr, kinds: dict[str, Kind], bounds: dict[str, Fraction]) -> None:
    if isinstance(expr, Const | Var):
        return
    if isinstance(expr, Reduce):
        _check(expr.low, kinds, bounds)
        _check(expr.high, kinds, bounds)
        inner = {**bounds}
        inner.pop(expr.index, None)
        low = lower_bound(expr.low, bounds)
        if low is not None:
            inner[expr.index] = low
        for part in (expr.body, expr.condition):
            if part is not None:
                _check(part, {**kinds, expr.index: "int"}, inner)
        return
    for arg in expr.args:
        _check(arg, kinds, bounds)
    if expr.name != "pow" or integer_literal(expr.args[1]) is not None or kind_of(expr.args[1], kinds) != "int":
        return
    low = lower_bound(expr.args[1], bounds)
    if low is None or low < 0:
        names = ", ".join(sorted(free_variables(expr.args[1]))) or "numbers"
        raise FormalError(
            f"the exponent of a power, in {names}, may be negative, and the solver and Coq state integer "
            "powers with natural exponents only (2^-1 is 1/2): give the exponent's variables the domain the "
            "statement gives them (natural, positive integer) or the bound it states"
        )
