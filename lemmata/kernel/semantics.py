"""What the formal language means, in the two rules every checker shares: the kind of each
expression (integer, real, condition) and where each operation is defined.

- integers are unbounded; `//` and `%` round towards minus infinity (Python's, and Coq's Z.div
  and Z.modulo); `/` is exact division and gives a real;
- `and`, `or`, `implies` and `ite` read left to right: an operation is only required to be
  defined where it is reached (`x != 0 and 1/x > 1` is defined everywhere);
- a statement holds when, for every value of its variables in their domains at which each
  operation reached is defined, the hypotheses imply the conclusion.

Where an operation is defined is one table, `requirements`: the evaluator (evaluate.py) checks
it on values, and definedness.py states it as conditions that the solver and Coq assume. The two
readings of one table cannot drift apart; the differential tests hold them together.
"""

from __future__ import annotations

from typing import Literal

from lemmata.kernel.tree import Const, Expr, FormalError, Op, Reduce, Var, integer_literal

Kind = Literal["int", "real", "bool"]
Relation = Literal["ne", "ge", "gt"]

COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")
LOGIC = ("and", "or", "not", "implies", "iff")
#: Every operation and its arity (None: 2 or more). The reading of a model's text names them so.
ARITY: dict[str, int | None] = {
    "add": 2, "sub": 2, "mul": 2, "truediv": 2, "floordiv": 2, "mod": 2, "pow": 2, "neg": 1,
    "abs": 1, "min": None, "max": None, "sqrt": 1, "floor": 1, "ceil": 1, "gcd": 2, "lcm": 2,
    "factorial": 1, "divides": 2, "even": 1, "odd": 1,
    "eq": 2, "ne": 2, "lt": 2, "le": 2, "gt": 2, "ge": 2,
    "and": None, "or": None, "not": 1, "implies": 2, "iff": 2, "ite": 3, "true": 0, "false": 0,
}  # fmt: skip
REDUCTIONS = ("sum", "prod", "all", "any")
INTEGER_ONLY = ("floordiv", "mod", "gcd", "lcm", "factorial", "divides", "even", "odd")


def kind_of(expr: Expr, variables: dict[str, Kind]) -> Kind:
    """The kind of `expr` with the variables' kinds; FormalError on a misuse (an unknown name,
    `%` of a real, a number where a condition belongs, a wrong number of arguments, …)."""
    if isinstance(expr, Const):
        return "int" if isinstance(expr.value, int) else "real"
    if isinstance(expr, Var):
        if expr.name not in variables:
            raise FormalError(
                f'{expr.name!r} is not declared: add {{"name": "{expr.name}", "type": ...}} to the variables'
            )
        return variables[expr.name]
    if isinstance(expr, Reduce):
        return _reduction_kind(expr, variables)
    arity = ARITY.get(expr.name, -1)
    if arity == -1:
        raise FormalError(f"{expr.name!r} is no operation of the formal language")
    if (arity is None and len(expr.args) < 2) or (arity is not None and len(expr.args) != arity):
        raise FormalError(f"{spelled(expr.name)} takes {'2 or more' if arity is None else arity} arguments")
    return _operation_kind(expr, [kind_of(arg, variables) for arg in expr.args], variables)


def _reduction_kind(expr: Reduce, variables: dict[str, Kind]) -> Kind:
    if expr.kind not in REDUCTIONS:
        raise FormalError(f"{expr.kind!r} is no reduction of the formal language")
    if expr.index in variables:
        raise FormalError(f"the index {expr.index!r} of a {expr.kind} is also a variable: give it a name of its own")
    for bound in (expr.low, expr.high):
        if kind_of(bound, variables) != "int":
            raise FormalError(f"the range of {expr.index!r} must have integer bounds")
    inner: dict[str, Kind] = {**variables, expr.index: "int"}
    if expr.condition is not None and kind_of(expr.condition, inner) != "bool":
        raise FormalError(f"the condition over {expr.index!r} must be a condition, not a number")
    body = kind_of(expr.body, inner)
    if expr.kind in ("all", "any"):
        if body != "bool":
            raise FormalError(f"{expr.kind}(...) needs a condition for each {expr.index!r}")
        return "bool"
    if body == "bool":
        raise FormalError(f"{expr.kind}(...) needs a number for each {expr.index!r}")
    return body


def _operation_kind(expr: Op, kinds: list[Kind], variables: dict[str, Kind]) -> Kind:
    name = expr.name
    if name in ("true", "false"):
        return "bool"
    if name in LOGIC:
        if any(kind != "bool" for kind in kinds):
            raise FormalError(f"{name} joins conditions, not numbers")
        return "bool"
    if name == "ite":
        if kinds[0] != "bool" or (kinds[1] == "bool") != (kinds[2] == "bool"):
            raise FormalError("`A if CONDITION else B` needs a condition and two values of one kind")
        return "bool" if kinds[1] == "bool" else _numeric(kinds[1:])
    if any(kind == "bool" for kind in kinds):
        raise FormalError(f"{spelled(name)} takes numbers, not conditions")
    if name in INTEGER_ONLY and "real" in kinds:
        raise FormalError(f"{spelled(name)} is about integers: use floor(x) to round a real down")
    if name in (*COMPARISONS, "divides", "even", "odd"):
        return "bool"
    if name in ("truediv", "sqrt"):
        return "real"
    if name in ("floor", "ceil"):
        return "int"
    if name == "pow":
        # An integer to an integer power is an integer: a negative literal exponent makes it a
        # real, a variable one must not be negative (requirements).
        literal = integer_literal(expr.args[1])
        return "int" if kinds == ["int", "int"] and (literal is None or literal >= 0) else "real"
    return _numeric(kinds)


def _numeric(kinds: list[Kind]) -> Kind:
    return "real" if "real" in kinds else "int"


def requirements(expr: Op, variables: dict[str, Kind]) -> list[tuple[int, Relation, int]]:
    """Where `expr` is defined, as (argument position, relation, bound): `a / b` needs b ≠ 0,
    `sqrt(x)` x ≥ 0. The one table of definedness: the evaluator checks it on values, the
    conditions the solver and Coq assume are stated from it."""
    name, args = expr.name, expr.args
    if name in ("truediv", "floordiv", "mod"):
        return [(1, "ne", 0)]
    if name == "divides":
        return [(0, "ne", 0)]
    if name in ("sqrt", "factorial"):
        return [(0, "ge", 0)]
    if name == "pow":
        literal = integer_literal(args[1])
        if literal is not None:
            return [(0, "ne", 0)] if literal < 0 else []
        if kind_of(args[1], variables) == "int":
            return [(1, "ge", 0)]  # Coq's powers and the solver's products have natural exponents
        return [(0, "gt", 0)]  # a real exponent: a positive base
    return []


def spelled(name: str) -> str:
    """An operation as a model writes it."""
    return {"floordiv": "//", "mod": "%", "truediv": "/", "pow": "**", "add": "+", "sub": "-", "mul": "*"}.get(
        name, name
    )
