"""The kernel's admission of a formal statement: what it shows a researcher, read back.

A statement is admitted when it is well typed (statement.typed) and both of its renderings —
the text of the cards, the gate and `lemmata check`, the LaTeX of the paper — read back
(readback.py) to the very tree the checkers check, definedness conditions included. Otherwise it
is refused, with the reason: no checker sees a statement whose printed form says something else.
`a % 2*b` is (a mod 2)·b; it was once shown as "a mod 2·b", which a reader takes for a mod (2b).
"""

from __future__ import annotations

from dataclasses import dataclass

from lemmata.kernel.readback import Misread, Reading, read_latex, read_text
from lemmata.kernel.render import stated_conditions, statement_latex, statement_text
from lemmata.kernel.statement import Statement, typed
from lemmata.kernel.tree import Const, Expr, FormalError, Op, Reduce, Var


@dataclass(frozen=True)
class Admitted:
    statement: Statement
    text: str
    latex: str


def admit(statement: Statement) -> Admitted:
    """`statement` with its renderings; FormalError (Misread for a rendering) naming why not."""
    typed(statement)
    text, latex = statement_text(statement), statement_latex(statement)
    for reading, what in ((read_text(text), "text"), (read_latex(latex), "LaTeX")):
        _same_reading(statement, reading, what)
    return Admitted(statement, text, latex)


def read_admitted(text: str) -> Statement:
    """The statement the text shows, when the kernel would show it so: read back, typed, and
    rendered again to the same text. FormalError otherwise."""
    reading = read_text(text)
    statement = typed(reading.statement)
    if statement_text(statement) != text:
        raise Misread("the text is not the kernel's rendering of the statement it reads as")
    _same_reading(statement, reading, "text")
    return statement


def _same_reading(statement: Statement, reading: Reading, what: str) -> None:
    shown = reading.statement
    if shown.variables != statement.variables:
        raise Misread(f"the {what} rendering declares other variables than the statement")
    parts = (*statement.hypotheses, statement.conclusion)
    if len(shown.hypotheses) != len(statement.hypotheses) or not all(
        identical(a, b) for a, b in zip((*shown.hypotheses, shown.conclusion), parts)
    ):
        raise Misread(f"the {what} rendering reads as another statement than the one checked")
    conditions = stated_conditions(statement)
    if len(conditions) != len(reading.conditions) or not all(
        identical(a, b) for a, b in zip(conditions, reading.conditions)
    ):
        raise Misread(f"the {what} rendering states other conditions of definedness than the statement has")


def identical(first: Expr, second: Expr) -> bool:
    """The same tree, node for node; a number the same number of the same kind (2 is not 2.0)."""
    if type(first) is not type(second):
        return False
    if isinstance(first, Const):
        assert isinstance(second, Const)
        return type(first.value) is type(second.value) and first.value == second.value
    if isinstance(first, Var):
        assert isinstance(second, Var)
        return first.name == second.name
    if isinstance(first, Op):
        assert isinstance(second, Op)
        return (
            first.name == second.name
            and len(first.args) == len(second.args)
            and all(identical(a, b) for a, b in zip(first.args, second.args))
        )
    assert isinstance(first, Reduce) and isinstance(second, Reduce)
    conditions = (first.condition, second.condition)
    if (conditions[0] is None) != (conditions[1] is None):
        return False
    return (
        first.kind == second.kind
        and first.index == second.index
        and all(
            identical(a, b) for a, b in zip((first.low, first.high, first.body), (second.low, second.high, second.body))
        )
        and (conditions[0] is None or identical(conditions[0], conditions[1]))  # type: ignore[arg-type]
    )


__all__ = ["Admitted", "FormalError", "admit", "identical", "read_admitted"]
