"""Where a statement is defined, as conditions the solver and Coq assume and the paper shows
("where x ≠ 0"): semantics.requirements stated of the arguments, each guarded by what must hold
for the operation to be reached (`x != 0 and 1/x > 1`: none; `1/x > 1`: x != 0)."""

from __future__ import annotations

from collections.abc import Iterator

from lemmata.kernel.evaluate import evaluate
from lemmata.kernel.semantics import Kind, requirements
from lemmata.kernel.tree import Const, Expr, Op, Reduce, Var, conjunction, conjuncts, free_variables


def definedness(expr: Expr, variables: dict[str, Kind]) -> list[Expr]:
    """The conditions under which every operation `expr` reaches is defined. Conditions inside a
    sum, product, all or any are the evaluator's to meet, term by term, and expansion's (a sum
    written out states its terms' conditions)."""
    found: list[Expr] = []
    for condition in _conditions(expr, variables):
        if condition not in found:
            found.append(condition)
    return found


def _conditions(expr: Expr, variables: dict[str, Kind]) -> Iterator[Expr]:
    if isinstance(expr, Const | Var):
        return
    if isinstance(expr, Reduce):
        yield from _conditions(expr.low, variables)
        yield from _conditions(expr.high, variables)
        return
    name, args = expr.name, expr.args
    if name in ("and", "or", "implies"):
        # Read left to right: each operand's conditions hold where the operands before it let it be reached.
        for position, arg in enumerate(args):
            reached = [_reaching(name, earlier) for earlier in args[:position]]
            yield from _guarded(reached, _conditions(arg, variables))
        return
    if name == "ite":
        yield from _conditions(args[0], variables)
        for guard, branch in ((args[0], args[1]), (Op("not", (args[0],)), args[2])):
            yield from _guarded([guard], _conditions(branch, variables))
        return
    for arg in args:
        yield from _conditions(arg, variables)
    for position, relation, bound in requirements(expr, variables):
        condition = Op(relation, (args[position], Const(bound)))
        if not _evidently_true(condition):
            yield condition


def _guarded(guards: list[Expr], conditions: Iterator[Expr]) -> Iterator[Expr]:
    """Each condition where the guards hold; one the guards state themselves is no condition."""
    stated = {part for guard in guards for part in conjuncts(guard)}
    for condition in conditions:
        if condition in stated:
            continue
        yield condition if not guards else Op("implies", (conjunction(guards), condition))


def _reaching(name: str, earlier: Expr) -> Expr:
    """What an operand before makes true where the next is read: `and`, `implies` go on past a true
    one, `or` past a false one."""
    return Op("not", (earlier,)) if name == "or" else earlier


def _evidently_true(condition: Expr) -> bool:
    """A condition on constants only that holds (`2 != 0`): stating it adds nothing."""
    if free_variables(condition):
        return False
    try:
        return evaluate(condition, {}, {}) is True
    except ArithmeticError:
        return False
