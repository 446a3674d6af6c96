"""The kernel's differential run, the long one (issue 52 item 5; tests/unit/kernel/test_differential.py
is the CI run): random formal statements over the whole language (tests/support/statements.py),
each read by every checker of the kernel, which must agree (tests/support/differential.py).

For each statement: both renderings must read back to it (a refusal is a reach defect of the
printer, a rendering that reads otherwise a soundness defect); the Coq proposition's binders must
be unique and none a name Coq reserves; and at `--values` closed instances (values drawn for its
variables) the exact evaluator's definedness conditions must fail exactly where it is undefined,
and the solver must answer as the evaluator does, for the verdict (unsat of premises and not
conclusion) and the definedness (the premises satisfiable). Then Coq proves, at up to
`--coq-instances` instances, what the evaluator says of the verdict and of the premises (two
goals an instance, in files of many goals, lemmata.formal.coq.check_file); a goal Coq cannot
prove has its negation tried, and a negation it proves is a disagreement.

It prints the figures and the generator's coverage: for each operation, reduction and domain, how
many statements used it, how many of those the solver decided at an instance, and how many Coq
did. Exit status 1 on any disagreement, mismatch, refusal or non-unique binder.

Usage: python bench/differential.py [--statements 5000] [--seed 52] [--values 2] [--coq-instances 600]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

# The generator and the checks are the tests' (tests/support), not part of the installed lemmata.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from lemmata.kernel.render import statement_text
from lemmata.kernel.semantics import ARITY, REDUCTIONS
from lemmata.kernel.statement import DOMAINS, Statement
from support.differential import (
    CoqBatch,
    CoqGoal,
    binder_problems,
    coq_goals,
    exact_verdict,
    round_trip,
    solver_comparison,
)
from support.statements import statements, used_operations, values_for

Values = dict


def drawn(count: int, values: int, number: int) -> list[tuple[Statement, list[Values]]]:
    """`count` distinct statements, each with `values` instances, from Hypothesis seeded with
    `number` (then `number` + 1, ...: a run of Hypothesis draws some statements more than once)."""
    found: dict[str, tuple[Statement, list[Values]]] = {}
    while len(found) < count:

        @seed(number)
        @settings(
            max_examples=max(100, 2 * (count - len(found))),  # a short run draws the simplest ones again
            phases=[Phase.generate],
            derandomize=False,
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(st.data())
        def collect(data: st.DataObject) -> None:
            statement = data.draw(statements())
            instances = [data.draw(values_for(statement)) for _ in range(values)]
            if len(found) < count:
                found.setdefault(repr(statement), (statement, instances))

        collect()
        number += 1
    return list(found.values())


@dataclass
class Tally:
    counts: Counter[str] = field(default_factory=Counter)
    used: Counter[str] = field(default_factory=Counter)
    by_solver: Counter[str] = field(default_factory=Counter)
    by_coq: Counter[str] = field(default_factory=Counter)
    defects: list[str] = field(default_factory=list)
    seconds: Counter[str] = field(default_factory=Counter)

    def defect(self, kind: str, statement: Statement, detail: str, values: Values | None = None) -> None:
        self.counts[kind] += 1
        at = f" at {values}" if values is not None else ""
        self.defects.append(f"{kind}: {statement_text(statement)}{at}: {detail}")


def check_statement(statement: Statement, instances: list[Values], tally: Tally) -> list[list[CoqGoal]]:
    """Everything but Coq for one statement; the Coq goals of each of its instances."""
    started = time.monotonic()
    operations = used_operations(statement)
    tally.used.update(operations)
    checked = round_trip(statement)
    tally.counts["admitted"] += checked.admitted
    if not checked.admitted:
        tally.defect("refused (reach)", statement, checked.refusal)
    for mismatch in checked.mismatches:
        tally.defect("round-trip mismatch", statement, mismatch)
    problems = binder_problems(statement)
    if problems is None:
        tally.counts["binders: not statable"] += 1
    else:
        tally.counts["binders: checked"] += 1
        if problems:
            tally.defect("non-unique binders", statement, "; ".join(problems))
    tally.seconds["renderings and binders"] += time.monotonic() - started
    started = time.monotonic()
    goals, decided = [], False
    for values in instances:
        exact = exact_verdict(statement, values)
        tally.counts[f"evaluator: {exact.outcome}"] += 1
        for problem in exact.problems:
            tally.defect("definedness (evaluator)", statement, problem, values)
        compared = solver_comparison(statement, values, exact)
        tally.counts[f"solver verdict: {compared.verdict}"] += 1
        tally.counts[f"solver definedness: {compared.definedness}"] += 1
        if compared.verdict == "disagree":
            tally.defect("evaluator vs solver", statement, compared.detail, values)
        if compared.definedness == "disagree":
            tally.defect("definedness (solver)", statement, compared.detail, values)
        decided |= compared.verdict == "agree"
        goals.append(coq_goals(statement, values, exact, f"{statement_text(statement)} at {values}"))
    if decided:
        tally.by_solver.update(operations)
    tally.seconds["evaluator and solver"] += time.monotonic() - started
    return goals


def check_in_coq(pending: list[tuple[Statement, list[CoqGoal]]], limit: int, tally: Tally) -> None:
    """The first instance of each statement first, then the others, up to `limit` instances."""
    started = time.monotonic()
    chosen = [(s, g) for s, g in pending if g][:limit]
    batch = CoqBatch(per_file=60)
    goals = [goal for _, pair in chosen for goal in pair]
    batch.check(goals)
    proved = {id(goal) for goal in batch.proved}
    tally.counts["coq: instances"] = len(chosen)
    tally.counts["coq: goals"] = len(goals)
    tally.counts["coq: proved"] = len(batch.proved)
    tally.counts["coq: undecided"] = len(batch.undecided)
    tally.counts["coq: runs"] = batch.runs
    tally.counts["coq: with hints"] = sum(1 for goal in goals if goal.hints)
    statements_proved: dict[int, Statement] = {}
    for statement, pair in chosen:
        if all(id(goal) in proved for goal in pair):
            statements_proved[id(statement)] = statement
    for statement in statements_proved.values():
        tally.by_coq.update(used_operations(statement))
    for goal, detail in batch.disagreements:
        tally.counts["evaluator vs coq"] += 1
        tally.defects.append(f"evaluator vs Coq ({goal.about}): {goal.label}: {detail}")
    for goal, detail in batch.undecided[:10]:
        tally.defects.append(f"(undecided in Coq, {goal.about}): {goal.label}: {detail[:200]}")
    tally.seconds["Coq"] += time.monotonic() - started


def report(tally: Tally, statements_drawn: int, distinct: int, instances: int, seconds: float) -> None:
    c = tally.counts
    solver = [c[f"solver verdict: {o}"] for o in ("agree", "disagree", "unknown", "not expressible", "undecided")]
    definedness = [c[f"solver definedness: {o}"] for o in ("agree", "disagree", "unknown")]
    evaluator = [c[f"evaluator: {o}"] for o in ("holds", "fails", "vacuous", "undecided")]
    rows = [
        ("statements generated (distinct)", f"{statements_drawn} ({distinct} distinct renderings)"),
        ("admitted", f"{c['admitted']}"),
        ("refused (reach defects)", f"{c['refused (reach)']}"),
        ("round-trip mismatches", f"{c['round-trip mismatch']}"),
        ("non-unique binders", f"{c['non-unique binders']} (of {c['binders: checked']} Coq can state)"),
        ("closed instances", f"{instances}"),
        ("evaluator: holds/fails/vacuous/undecided", "/".join(map(str, evaluator))),
        ("definedness disagreements (evaluator)", f"{c['definedness (evaluator)']}"),
        ("evaluator vs solver: agree/disagree/unknown/not expressible/undecided", "/".join(map(str, solver))),
        ("definedness vs solver: agree/disagree/unknown", "/".join(map(str, definedness))),
        ("definedness disagreements (solver)", f"{c['definedness (solver)']}"),
        (
            "evaluator vs Coq: instances (goals) proved/disagree/undecided",
            f"{c['coq: instances']} ({c['coq: goals']}) {c['coq: proved']}/{c['evaluator vs coq']}/{c['coq: undecided']}",
        ),
        ("  goals with square-root or integer-part hints", f"{c['coq: with hints']}"),
        ("  coqc runs", f"{c['coq: runs']}"),
        ("seconds", f"{seconds:.0f} ({', '.join(f'{k} {v:.0f}' for k, v in tally.seconds.items())})"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    print()
    print(f"{'coverage':<22}{'statements':>12}{'solver decided':>16}{'Coq proved':>12}")
    for name in (*ARITY, *REDUCTIONS, *(f"domain:{d}" for d in DOMAINS)):
        print(f"{name:<22}{tally.used[name]:>12}{tally.by_solver[name]:>16}{tally.by_coq[name]:>12}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--statements", type=int, default=5000, help="statements to generate (default 5000)")
    parser.add_argument("--seed", type=int, default=52, help="Hypothesis's seed (default 52, the issue's number)")
    parser.add_argument("--values", type=int, default=2, help="closed instances per statement (default 2)")
    parser.add_argument("--coq-instances", type=int, default=600, help="instances checked by Coq (default 600)")
    args = parser.parse_args()
    started = time.monotonic()
    tally = Tally()
    sample = drawn(args.statements, args.values, args.seed)
    tally.seconds["generation"] += time.monotonic() - started
    pending: list[tuple[Statement, list[CoqGoal]]] = []
    later: list[tuple[Statement, list[CoqGoal]]] = []
    for number, (statement, instances) in enumerate(sample, 1):
        goals = check_statement(statement, instances, tally)
        pending.append((statement, goals[0]))
        later += [(statement, pair) for pair in goals[1:]]
        if number % 500 == 0:
            print(f"... {number} statements, {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    if args.coq_instances:
        check_in_coq(pending + later, args.coq_instances, tally)
    distinct = len({statement_text(statement) for statement, _ in sample})
    instances = sum(len(values) for _, values in sample)
    report(tally, len(sample), distinct, instances, time.monotonic() - started)
    if tally.defects:
        print()
        for defect in tally.defects[:40]:
            print(defect)
    failed = sum(
        tally.counts[kind]
        for kind in (
            "refused (reach)",
            "round-trip mismatch",
            "non-unique binders",
            "definedness (evaluator)",
            "evaluator vs solver",
            "definedness (solver)",
            "evaluator vs coq",
        )
    )
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
