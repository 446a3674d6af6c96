"""The formal tree every checker reads: numbers, variables, operations and reductions.

A statement's hypotheses and conclusion are trees of these four nodes, built once from the
model's text (lemmata/formal/reading.py, outside the kernel) and from the kernel's own rendering
(readback.py). Nothing here evaluates anything; the semantics are semantics.py's.

Trees are bounded (`MAX_DEPTH`, `MAX_NODES`): every function of the kernel walks them
recursively, and a tree past these bounds is refused where it is made (`bounded`), never met
as a RecursionError deep inside a checker.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction


class FormalError(ValueError):
    """A formal statement that cannot be read, typed or checked; the message says why."""


@dataclass(frozen=True)
class Const:
    """A number as written: a non-negative integer, or a non-negative finite decimal (a Fraction).
    A negative number is `neg` of its magnitude, as it is written and read."""

    value: int | Fraction


@dataclass(frozen=True)
class Var:
    name: str


@dataclass(frozen=True)
class Op:
    """An operation of semantics.OPERATIONS applied to its arguments."""

    name: str
    args: tuple[Expr, ...]


@dataclass(frozen=True)
class Reduce:
    """`kind` (sum, prod, all, any) of `body` over the integers `index` from `low` to `high` - 1
    (Python's `range`) at which `condition` holds (None: all of them)."""

    kind: str
    index: str
    low: Expr
    high: Expr
    body: Expr
    condition: Expr | None = None


Expr = Const | Var | Op | Reduce

#: Nesting and size a tree may have: far beyond any statement a researcher writes, far below
#: Python's recursion limit for the kernel's walks (each level costs a few frames).
MAX_DEPTH = 60
MAX_NODES = 4000
#: At most this many terms are written out from sums, products, all and any (`expand_reductions`).
EXPANSION_LIMIT = 5000


def children(expr: Expr) -> tuple[Expr, ...]:
    if isinstance(expr, Op):
        return expr.args
    if isinstance(expr, Reduce):
        return (expr.low, expr.high, expr.body, *((expr.condition,) if expr.condition is not None else ()))
    return ()


def bounded(expr: Expr, what: str = "the statement") -> Expr:
    """`expr` when its depth and size are within bounds; FormalError otherwise. Iterative, so a
    tree of any depth is measured without recursion."""
    nodes = 0
    stack: list[tuple[Expr, int]] = [(expr, 1)]
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if depth > MAX_DEPTH:
            raise FormalError(f"{what} is nested more than {MAX_DEPTH} levels deep: write it in smaller parts")
        if nodes > MAX_NODES:
            raise FormalError(f"{what} has more than {MAX_NODES} parts: write it shorter")
        stack.extend((child, depth + 1) for child in children(node))
    return expr


def walk(expr: Expr) -> Iterator[Expr]:
    """Every node of `expr`, parents before children."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(children(node)))


def free_variables(expr: Expr) -> set[str]:
    if isinstance(expr, Const):
        return set()
    if isinstance(expr, Var):
        return {expr.name}
    if isinstance(expr, Reduce):
        inner = free_variables(expr.body) | (free_variables(expr.condition) if expr.condition else set())
        return free_variables(expr.low) | free_variables(expr.high) | (inner - {expr.index})
    return set().union(*(free_variables(arg) for arg in expr.args)) if expr.args else set()


def bound_names(expr: Expr) -> set[str]:
    """The indices of the reductions inside `expr`."""
    return {node.index for node in walk(expr) if isinstance(node, Reduce)}


def conjuncts(expr: Expr) -> list[Expr]:
    """The parts of a conjunction (`a and b and c`: a, b, c); any other condition is its own part."""
    if isinstance(expr, Op) and expr.name == "and":
        return [part for arg in expr.args for part in conjuncts(arg)]
    return [expr]


def disjuncts(expr: Expr) -> list[Expr]:
    """The cases of a disjunction (`a or b`: a, b); any other condition is its own case."""
    if isinstance(expr, Op) and expr.name == "or":
        return [part for arg in expr.args for part in disjuncts(arg)]
    return [expr]


def conjunction(parts: list[Expr]) -> Expr:
    if not parts:
        return Op("true", ())
    return parts[0] if len(parts) == 1 else Op("and", tuple(parts))


def substitute(expr: Expr, name: str, value: Expr) -> Expr:
    if isinstance(expr, Const):
        return expr
    if isinstance(expr, Var):
        return value if expr.name == name else expr
    if isinstance(expr, Reduce):
        low, high = substitute(expr.low, name, value), substitute(expr.high, name, value)
        if expr.index == name:
            return Reduce(expr.kind, expr.index, low, high, expr.body, expr.condition)
        condition = substitute(expr.condition, name, value) if expr.condition else None
        return Reduce(expr.kind, expr.index, low, high, substitute(expr.body, name, value), condition)
    return Op(expr.name, tuple(substitute(arg, name, value) for arg in expr.args))


def has_reductions(expr: Expr) -> bool:
    return any(isinstance(node, Reduce) for node in walk(expr))


def integer_literal(expr: Expr) -> int | None:
    """The integer a literal states (`3`, `-3` as neg(3)); None for anything else."""
    if isinstance(expr, Const) and isinstance(expr.value, int):
        return expr.value
    if isinstance(expr, Op) and expr.name == "neg" and len(expr.args) == 1:
        inner = integer_literal(expr.args[0])
        return None if inner is None else -inner
    return None


def signed_constant(value: int | Fraction) -> Expr:
    """The tree of a number: neg of its magnitude when it is negative (as it is written)."""
    magnitude = Const(-value if value < 0 else value)
    return Op("neg", (magnitude,)) if value < 0 else magnitude


def balanced(operation: str, terms: list[Expr]) -> Expr:
    """`terms` joined by a binary `operation`, as a balanced tree: a sum of 5,000 terms written
    out is 13 levels deep, not 5,000 (each checker walks it recursively)."""
    if len(terms) == 1:
        return terms[0]
    middle = len(terms) // 2
    return Op(operation, (balanced(operation, terms[:middle]), balanced(operation, terms[middle:])))
