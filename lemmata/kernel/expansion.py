"""Sums, products, all and any over constant ranges written out term by term, for the checkers
that have no loops (the solver, Coq): `sum(k for k in range(1, 4))` is `1 + 2 + 3`. The terms
are joined as a balanced tree, so 5,000 of them nest 13 levels deep, not 5,000."""

from __future__ import annotations

from lemmata.kernel.evaluate import Undefined, evaluate
from lemmata.kernel.tree import (
    EXPANSION_LIMIT,
    Const,
    Expr,
    FormalError,
    Op,
    Var,
    balanced,
    free_variables,
    integer_literal,
    signed_constant,
    substitute,
    walk,
)

JOINED = {"sum": "add", "prod": "mul", "all": "and", "any": "or"}


def expand_reductions(expr: Expr, limit: int = EXPANSION_LIMIT) -> Expr:
    """`expr` with every reduction over constant bounds written out. FormalError when a bound
    depends on a variable or the terms would pass `limit`."""
    return _expand(expr, [limit])


def _expand(expr: Expr, budget: list[int]) -> Expr:
    if isinstance(expr, Const | Var):
        return expr
    if isinstance(expr, Op):
        return Op(expr.name, tuple(_expand(arg, budget) for arg in expr.args))
    low, high = _constant_bound(_expand(expr.low, budget)), _constant_bound(_expand(expr.high, budget))
    budget[0] -= max(0, high - low)
    if budget[0] < 0:
        raise FormalError(f"a sum, product, all or any has more than {EXPANSION_LIMIT} terms in all to write out")
    terms = []
    for index in range(low, high):
        value = signed_constant(index)
        if _negative_exponent(expr.body, expr.index, value) or (
            expr.condition is not None and _negative_exponent(expr.condition, expr.index, value)
        ):
            raise FormalError(
                f"the {expr.kind} over {expr.index} cannot be written out: at {expr.index} = {index} a power would "
                "have a negative exponent, which is undefined while the exponent is a variable"
            )
        body = _expand(substitute(expr.body, expr.index, value), budget)
        if expr.condition is None:
            terms.append(body)
            continue
        condition = _expand(substitute(expr.condition, expr.index, value), budget)
        terms.append(Op("ite", (condition, body, neutral(expr.kind))))
    if not terms:
        return neutral(expr.kind)
    return balanced(JOINED[expr.kind], terms)


def _negative_exponent(expr: Expr, index: str, value: Expr) -> bool:
    """Whether writing `value` for `index` makes a power's exponent a negative literal. While the
    exponent is the index, the power needs it not negative (semantics.requirements: `2**k` is
    undefined at k = −2); a literal one makes it another power (`2**−2` is the real 0.25)."""
    for node in walk(expr):
        if isinstance(node, Op) and node.name == "pow" and integer_literal(node.args[1]) is None:
            literal = integer_literal(substitute(node.args[1], index, value))
            if literal is not None and literal < 0:
                return True
    return False


def neutral(kind: str) -> Expr:
    """What a sum, product, all or any of no terms is."""
    neutrals: dict[str, Expr] = {"sum": Const(0), "prod": Const(1), "all": Op("true", ()), "any": Op("false", ())}
    return neutrals[kind]


def _constant_bound(expr: Expr) -> int:
    if free_variables(expr):
        raise FormalError("a sum, product, all or any whose range depends on a variable cannot be written out")
    try:
        value = evaluate(expr, {}, {})
    except Undefined as error:
        raise FormalError(f"a range bound is not defined: {error}") from None
    except ArithmeticError as error:  # Undecided, TooLarge
        raise FormalError(f"a range bound cannot be computed: {error}") from None
    if not isinstance(value, int) or isinstance(value, bool):
        raise FormalError("a range bound is not an integer")
    return value
