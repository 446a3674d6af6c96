"""Looking for a counterexample by running the statement on many inputs: small and edge values
first (0, ±1, ±2, 1/2, …, every combination, smallest first, so that the first counterexample
found is a small one: a = 1, b = 2 rather than a = -8237, b = 91), then random values of growing
size. Deterministic: the random part is seeded by the statement itself.

An instance counts when the hypotheses hold there and the conclusion could be evaluated
(evaluate.py: exactly, or by intervals that decide). A counterexample is an instance whose
conclusion is false: exact arithmetic at rational inputs, so it is a proof that the statement
(as formalized) is false, not a rounding artefact. No counterexample in N instances is evidence,
never proof: the status says `tested` and how many instances.

The first input at which every premise the solver and Coq assume holds (domains, hypotheses,
definedness: Statement.premises) is kept as the statement's **witness**: a proof from those
premises is counted only when some input satisfies them (kernel/verdict.py checks it again).
"""

from __future__ import annotations

import hashlib
import itertools
import random
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction

from lemmata.kernel.evaluate import TooLarge, Undecided, Undefined, Value, evaluate
from lemmata.kernel.statement import Statement, Variable
from lemmata.kernel.tree import Expr, FormalError

#: Enumerated combinations of small values before random ones, and random ones after.
ENUMERATED = 3000
RANDOM = 3000
INTEGERS_FIRST = (0, 1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, 7, -7, 8, 9, 10, -10, 11, 12, 13, 15, 16, 17, 20, 25)
REALS_FIRST = (
    *(Fraction(n) for n in (0, 1, -1, 2, -2)),
    Fraction(1, 2),
    Fraction(-1, 2),
    Fraction(3),
    Fraction(-3),
    Fraction(1, 3),
    Fraction(3, 2),
    Fraction(-1, 3),
    Fraction(4),
    Fraction(1, 4),
    Fraction(2, 3),
    Fraction(5),
    Fraction(-5),
    Fraction(1, 10),
    Fraction(10),
    Fraction(-10),
    Fraction(9, 4),
    Fraction(100),
    Fraction(1, 100),
)


@dataclass(frozen=True)
class SamplingResult:
    instances: int  # inputs where the hypotheses held and the conclusion was decided
    tried: int  # inputs drawn
    counterexample: dict[str, Value] | None
    undecided: int  # inputs where something could not be decided or was too large
    seconds: float
    failures: tuple[str, ...] = ()  # why evaluations failed, a few distinct reasons
    witness: dict[str, Value] | None = None  # the first input at which every premise holds


def sample(
    statement: Statement, *, seconds: float = 2.0, enumerated: int = ENUMERATED, drawn: int = RANDOM
) -> SamplingResult:
    """Run the statement on up to `enumerated` small and `drawn` random inputs, within `seconds`;
    stop at the first counterexample."""
    start = time.monotonic()
    instances = tried = undecided = 0
    failures: list[str] = []
    premises = checked_premises(statement)
    witness: dict[str, Value] | None = None
    for values in inputs(statement, enumerated, drawn):
        if time.monotonic() - start > seconds:
            break
        tried += 1
        if witness is None and premises_hold(statement, premises, values):
            witness = values
        try:
            verdict = holds(statement, values)
        except (Undecided, TooLarge) as error:
            undecided += 1
            if len(failures) < 3 and str(error) not in failures:
                failures.append(str(error))
            continue
        if verdict is None:
            continue
        instances += 1
        if not verdict:
            return SamplingResult(
                instances, tried, values, undecided, time.monotonic() - start, tuple(failures), witness
            )
    return SamplingResult(instances, tried, None, undecided, time.monotonic() - start, tuple(failures), witness)


def checked_premises(statement: Statement) -> list[Expr]:
    """The premises a proof would rest on: those of the statement as the solver and Coq get it
    (sums written out), else its own."""
    try:
        return statement.expanded().premises()
    except FormalError:
        return statement.premises()


def premises_hold(statement: Statement, premises: list[Expr], values: dict[str, Value]) -> bool:
    """Every premise holds at `values`, decided exactly (undefined or undecided: no)."""
    try:
        return all(evaluate(premise, values, statement.kinds) is True for premise in premises)
    except ArithmeticError:
        return False


@dataclass(frozen=True)
class Tally:
    """What running the statement on many inputs counted: the experiment's numbers."""

    trials: int  # inputs where the hypotheses held and the conclusion was decided
    violations: int  # of those, where the conclusion failed
    by_size: dict[int, tuple[int, int]]  # the same split by the largest input's size (0, 1, 10, 100, ...)
    first_violation: dict[str, Value] | None


def tally(statement: Statement, *, seconds: float = 5.0, enumerated: int = ENUMERATED, drawn: int = RANDOM) -> Tally:
    """Run the statement on every input (not stopping at a counterexample), counting violations."""
    start = time.monotonic()
    trials = violations = 0
    by_size: dict[int, tuple[int, int]] = {}
    first: dict[str, Value] | None = None
    for values in inputs(statement, enumerated, drawn):
        if time.monotonic() - start > seconds:
            break
        try:
            verdict = holds(statement, values)
        except (Undecided, TooLarge):
            continue
        if verdict is None:
            continue
        size = _size(values)
        seen, failed = by_size.get(size, (0, 0))
        trials += 1
        by_size[size] = (seen + 1, failed + (not verdict))
        if not verdict:
            violations += 1
            first = first or values
    return Tally(trials, violations, dict(sorted(by_size.items())), first)


def _size(values: dict[str, Value]) -> int:
    """The largest input's order of magnitude: 0 for all zeros, else the power of 10 at or below it."""
    numbers: list[int | Fraction] = [
        value if value >= 0 else -value for value in values.values() if isinstance(value, int | Fraction)
    ]
    largest: int | Fraction = max(numbers, default=0)
    if largest == 0:
        return 0
    return 10 ** (len(str(int(largest))) - 1) if largest >= 1 else 1


def holds(statement: Statement, values: dict[str, Value]) -> bool | None:
    """The conclusion's truth at `values`; None where the statement says nothing (a domain or a
    hypothesis fails, or an operation reached is undefined). Raises Undecided or TooLarge."""
    try:
        for assumption in statement.assumptions():
            if not evaluate(assumption, values, statement.kinds):
                return None
        return bool(evaluate(statement.conclusion, values, statement.kinds))
    except Undefined:
        return None


def inputs(statement: Statement, enumerated: int, drawn: int) -> Iterator[dict[str, Value]]:
    variables = statement.variables
    if not variables:
        yield {}
        return
    pools = [first_values(variable) for variable in variables]
    yield from itertools.islice(_smallest_first(variables, pools), enumerated)
    seed = hashlib.sha256(repr(statement).encode()).digest()
    generator = random.Random(seed)
    for count in range(drawn):
        size = 10 ** (1 + count * 6 // max(drawn, 1))  # magnitudes 10 .. 10**6
        yield {variable.name: _random_value(variable, generator, size) for variable in variables}


def _smallest_first(variables: Sequence[Variable], pools: list[list[Value]]) -> Iterator[dict[str, Value]]:
    """Every combination of the pools' values, by the largest position used: (0,0), (0,1), (1,0),
    (1,1), (0,2), …; so small values come first for every variable."""
    longest = max(len(pool) for pool in pools)
    for level in range(longest):
        ranges = [range(min(level + 1, len(pool))) for pool in pools]
        for positions in itertools.product(*ranges):
            if max(positions) == level:
                yield {variable.name: pools[i][p] for i, (variable, p) in enumerate(zip(variables, positions))}


def first_values(variable: Variable) -> list[Value]:
    if variable.kind == "int":
        return [value for value in INTEGERS_FIRST if _in_domain(variable, value)]
    return [value for value in REALS_FIRST if _in_domain(variable, value)]


def _random_value(variable: Variable, generator: random.Random, size: int) -> Value:
    while True:
        if variable.kind == "int":
            value: Value = generator.randint(-size, size)
        else:
            denominator = generator.choice((1, 2, 3, 4, 5, 7, 8, 10, 16, 100))
            value = Fraction(generator.randint(-size * denominator, size * denominator), denominator)
            value = value.numerator if value.denominator == 1 else value
        if _in_domain(variable, value):
            return value
        value = -value if isinstance(value, int | Fraction) else value
        if _in_domain(variable, value):
            return value


def _in_domain(variable: Variable, value: Value) -> bool:
    condition = variable.domain_condition()
    return condition is None or bool(evaluate(condition, {variable.name: value}, {variable.name: variable.kind}))
