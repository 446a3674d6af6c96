"""Parts of a formal statement that say nothing, found by running it: a hypothesis no input
violates, and a case of the conclusion that holds wherever the hypotheses do.

Counting what a formalization contains is not reading it: a number of the prose parked in a
hypothesis that holds everywhere (`3 > 0`) passed "every number of the statement appears", and
`x^2 − y^2 = 217 ∨ x^2 − y^2 = 218` passed for "show that it is 218" (false), the true value
added as a second case; `C ∨ H`, H a hypothesis, hid a circular statement inside an `or`.
- `idle_hypotheses`: the hypotheses no input in the domains was found to violate: they restrict
  nothing (as far as these inputs show: `x − x + 3 > 0`), so their numbers are not the
  statement's (faithfulness.py counts only the others); a hypothesis about no variable at all is
  refused (true, it says nothing; false, the statement is vacuous). A hypothesis is judged alone,
  not beside the others: two equations are rarely met at once by sampled inputs;
- `idle_case`: a case of a disjunction in the conclusion that held at every input where the
  hypotheses hold: the statement claims no more than that case, whatever the other cases say.
Both run the kernel's exact evaluator on a few hundred inputs (sampling.py's, small and edge
values first, with very large ones beside them: `n < 10^9` is violated only far out); a few
milliseconds. They can only refuse, never admit.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from fractions import Fraction

from lemmata.formal.sampling import first_values, inputs
from lemmata.kernel.evaluate import Value, evaluate
from lemmata.kernel.render import expression_text
from lemmata.kernel.statement import Statement, Variable
from lemmata.kernel.tree import Const, Expr, conjuncts, disjuncts, free_variables, walk

#: Inputs tried: enough for every combination of the first values of up to three variables.
PROBES = 600
#: Far values a hypothesis may exclude that the usual inputs never reach.
FAR = (10**9, -(10**9), 10**18, -(10**18), 10**100, -(10**100))


def _probes(statement: Statement) -> Iterator[dict[str, Value]]:
    """The usual inputs, then each variable at the far values and at the statement's own numbers
    (and one beside each): `n != 30` is violated at 30 alone."""
    yield from itertools.islice(inputs(statement, PROBES, PROBES // 3), PROBES)
    base = {v.name: _first(v) for v in statement.variables}
    own = sorted({number for part in (*statement.hypotheses, statement.conclusion) for number in _numbers(part)})
    for variable in statement.variables:
        for far in (*FAR, *(n + step for n in own for step in (0, 1, -1)), *(-n for n in own)):
            value: Value = far if variable.kind == "int" else Fraction(far)
            if (variable.kind == "real" or isinstance(far, int)) and _in_domain(variable, value):
                yield {**base, variable.name: value}


def _numbers(expr: Expr) -> Iterator[int | Fraction]:
    for node in walk(expr):
        if isinstance(node, Const) and node.value < 10**12:
            yield node.value


def _first(variable: Variable) -> Value:
    return first_values(variable)[0]


def _in_domain(variable: Variable, value: Value) -> bool:
    condition = variable.domain_condition()
    return condition is None or evaluate(condition, {variable.name: value}, {variable.name: variable.kind}) is True


def _holds(expr: Expr, values: dict[str, Value], statement: Statement) -> bool | None:
    """`expr` at `values`: True, False, or None where it is undefined or cannot be decided."""
    try:
        value = evaluate(expr, values, statement.kinds)
    except ArithmeticError:
        return None
    return value if isinstance(value, bool) else None


def idle_hypotheses(statement: Statement) -> list[Expr]:
    """The hypotheses no probe in the domains violated."""
    parts = list(statement.hypotheses)
    violated = [False] * len(parts)
    domains = statement.domain_conditions()
    for values in _probes(statement):
        if all(violated):
            break
        if any(_holds(condition, values, statement) is not True for condition in domains):
            continue
        for index, part in enumerate(parts):
            violated[index] = violated[index] or _holds(part, values, statement) is False
    return [part for part, seen in zip(parts, violated) if not seen]


def about_no_variable(statement: Statement) -> str:
    """Why a hypothesis that mentions no variable is refused; "" when none does."""
    for hypothesis in statement.hypotheses:
        if statement.variables and not free_variables(hypothesis):
            return (
                f"the hypothesis {expression_text(hypothesis)} is about no variable: true, it says nothing; "
                "false, no input satisfies the statement. Write only the conditions the statement makes"
            )
    return ""


def idle_case(statement: Statement) -> str:
    """Why a case of the conclusion's disjunctions makes the others idle; "" when none does."""
    cases = [disjuncts(part) for part in conjuncts(statement.conclusion)]
    cases = [group for group in cases if len(group) > 1]
    if not cases:
        return ""
    assumed = {part for assumption in statement.assumptions() for part in conjuncts(assumption)}
    for group in cases:
        for case in group:
            if case in assumed:
                return (
                    f"the case {expression_text(case)} of the conclusion is one of the hypotheses: the "
                    "statement would prove nothing"
                )
    always = [[True] * len(group) for group in cases]
    instances = 0
    for values in _probes(statement):
        if any(_holds(assumption, values, statement) is not True for assumption in statement.assumptions()):
            continue
        instances += 1
        for group, seen in zip(cases, always):
            for index, case in enumerate(group):
                seen[index] = seen[index] and _holds(case, values, statement) is True
    if instances == 0:
        return ""
    for group, seen in zip(cases, always):
        for case, held in zip(group, seen):
            if held:
                return (
                    f"the case {expression_text(case)} of the conclusion holds wherever the hypotheses do, so "
                    "the other cases add nothing and the statement claims no more than that case: write the "
                    "claim the statement makes, without cases it does not name"
                )
    return ""
