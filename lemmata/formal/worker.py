"""The child process of checking.py: sampling and the solver on one formal statement.

Reads `{"spec": FormalSpec, "sampling": seconds, "solver": seconds}` on standard input and writes
`{"vacuous": bool, "witness": {name: value} | null, "checks": [MachineCheck, ...]}` on standard
output. Run as `python -m lemmata.formal.worker`; its parent sets its memory limit, it sets its own
CPU limit from the request's `cpu_seconds` before it reads the statement (it may have been started
before its request was known: checking.worker_started_ahead).

Each checker runs on its own: one that fails (a bug of lemmata's, a statement the solver cannot be
given) is recorded as such and the others' findings are kept. The witness is an input at which
every premise holds, from sampling or else from the solver, confirmed by exact evaluation; when
neither finds one, none is reported, and no proof of the statement counts (kernel/verdict.py).
"""

from __future__ import annotations

import json
import resource
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from lemmata.artifacts import FormalSpec, MachineCheck
from lemmata.formal.reading import read_statement
from lemmata.formal.sampling import checked_premises, premises_hold, sample
from lemmata.kernel import smt
from lemmata.kernel.evaluate import Interval, Value
from lemmata.kernel.render import value_text
from lemmata.kernel.statement import Statement
from lemmata.kernel.verdict import counterexample_confirmed


def main() -> None:
    text = sys.stdin.read()
    if not text:  # started ahead and not needed after all (checking.worker_started_ahead)
        return
    request = json.loads(text)
    # Its CPU time, now that it is known: a process started ahead has already spent some on imports.
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu = int(used.ru_utime + used.ru_stime) + int(request["cpu_seconds"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    spec = FormalSpec.model_validate(request["spec"])
    statement = read_statement([(v.name, v.type) for v in spec.variables], spec.hypotheses, spec.conclusion)
    report = check(statement, float(request["sampling"]), float(request["solver"]))
    sys.stdout.write(json.dumps(report))


def check(statement: Statement, sampling_seconds: float, solver_seconds: float) -> dict[str, Any]:
    found: dict[str, Any] = {}
    sampled = _guarded("sampling", "sampling", lambda: _sampling_check(statement, sampling_seconds, found))
    witness = found.get("witness")
    if witness is None:
        answer = _guarded_answer(lambda: smt.satisfiable_assumptions(statement, solver_seconds))
        if answer is not None and answer.outcome == "unsat":
            return {"vacuous": True, "witness": None, "checks": []}
        if answer is not None and answer.outcome == "sat" and answer.model is not None:
            witness = _confirmed_witness(statement, answer.model)
    checks = [sampled]
    if sampled.outcome != "refuted":
        checks.append(_guarded("z3", "solver", lambda: solver_check(statement, solver_seconds)))
    return {"vacuous": False, "witness": witness, "checks": [c.model_dump() for c in checks]}


def _guarded(checker: str, method: str, run: Callable[[], MachineCheck]) -> MachineCheck:
    """The check, or an inconclusive one saying that it failed and how: never the whole report lost."""
    try:
        return run()
    except Exception as error:  # lemmata's own bug: recorded, and the other checks kept
        where = traceback.extract_tb(error.__traceback__)[-1]
        detail = (
            f"the check failed ({type(error).__name__}: {error}; {where.filename.rsplit('/', 1)[-1]}:{where.lineno})"
        )
        return MachineCheck(checker=checker, method=method, outcome="inconclusive", detail=detail[:300])


def _guarded_answer(ask: Callable[[], smt.SolverAnswer]) -> smt.SolverAnswer | None:
    try:
        return ask()
    except Exception:  # not expressible, or the solver failed: no witness from it
        return None


def _sampling_check(statement: Statement, seconds: float, found: dict[str, Any]) -> MachineCheck:
    result = sample(statement, seconds=seconds)
    if result.witness is not None:
        found["witness"] = _shown(result.witness)
    if result.counterexample is not None:
        return MachineCheck(
            checker="sampling",
            method="sampling",
            outcome="refuted",
            detail=f"a counterexample after {result.tried} inputs, confirmed by exact arithmetic",
            instances=result.instances,
            counterexample=_shown(result.counterexample),
            seconds=round(result.seconds, 3),
        )
    undecided = f"; {result.undecided} inputs undecided ({'; '.join(result.failures)})" if result.undecided else ""
    if not result.instances:
        detail = (
            f"none of the {result.tried} inputs sampled satisfied the hypotheses and was decided, so sampling tested "
            "nothing: the hypotheses may be satisfied by no input at all" + undecided
        )
    else:
        detail = f"{result.instances} of {result.tried} inputs satisfied the hypotheses and were decided; none is a "
        detail += "counterexample" + undecided
    return MachineCheck(
        checker="sampling",
        method="sampling",
        outcome="no_counterexample" if result.instances else "inconclusive",
        detail=detail,
        instances=result.instances,
        seconds=round(result.seconds, 3),
    )


def sampling_check(statement: Statement, seconds: float) -> MachineCheck:
    return _sampling_check(statement, seconds, {})


def solver_check(statement: Statement, seconds: float) -> MachineCheck:
    start = time.monotonic()
    try:
        answer = smt.prove_or_find_model(statement, seconds)
    except smt.NotExpressible as error:
        return MachineCheck(checker="z3", method="solver", outcome="not_applicable", detail=str(error))
    spent = round(time.monotonic() - start, 3)
    if answer.outcome == "unsat":
        return MachineCheck(
            checker="z3",
            method="solver",
            outcome="proved",
            detail="no input satisfies the hypotheses and not the conclusion (unsat)",
            seconds=spent,
            certificate=answer.certificate,
        )
    if answer.outcome == "unknown":
        return MachineCheck(
            checker="z3", method="solver", outcome="inconclusive", detail=f"unknown: {answer.reason}", seconds=spent
        )
    assert answer.model is not None
    why = _not_a_counterexample(statement, answer.model)
    if not why:
        return MachineCheck(
            checker="z3",
            method="solver",
            outcome="refuted",
            detail="the solver's counterexample, confirmed by exact evaluation",
            counterexample=_shown(answer.model),
            seconds=spent,
        )
    return MachineCheck(checker="z3", method="solver", outcome="inconclusive", detail=why, seconds=spent)


def _not_a_counterexample(statement: Statement, model: dict[str, Value]) -> str:
    """Why the solver's model is no counterexample by exact evaluation; "" when it is one."""
    irrational = [name for name, value in model.items() if isinstance(value, Interval)]
    if irrational:
        return (
            f"the solver's counterexample gives {irrational[0]} an irrational value, which exact evaluation cannot "
            "confirm: nothing is decided"
        )
    if counterexample_confirmed(statement, _shown(model)):
        return ""
    return (
        "the solver's counterexample is not one by exact evaluation: a disagreement between the checkers, "
        "so nothing is decided"
    )


def _confirmed_witness(statement: Statement, model: dict[str, Value]) -> dict[str, str] | None:
    if any(isinstance(value, Interval) for value in model.values()):
        return None
    return _shown(model) if premises_hold(statement, checked_premises(statement), model) else None


def _shown(values: dict[str, Value]) -> dict[str, str]:
    return {name: value_text(value) for name, value in values.items()}


if __name__ == "__main__":
    main()
