"""The child process of checking.py: sampling and the solver on one formal statement.

Reads `{"spec": FormalSpec, "sampling": seconds, "solver": seconds}` on standard input and writes
`{"vacuous": bool, "checks": [MachineCheck, ...]}` on standard output. Run as
`python -m lemmata.formal.worker`; its parent sets its memory limit, it sets its own CPU limit
from the request's `cpu_seconds` before it reads the statement (it may have been started before
its request was known: checking.worker_started_ahead).
"""

from __future__ import annotations

import json
import resource
import sys
import time
from typing import Any

from lemmata.artifacts import FormalSpec, MachineCheck
from lemmata.formal import smt
from lemmata.formal.evaluate import Interval, TooLarge, Undecided, Value
from lemmata.formal.language import FormalError, expand_reductions
from lemmata.formal.render import value_text
from lemmata.formal.sampling import holds, sample
from lemmata.formal.statement import Statement, read_statement


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
    try:
        expanded: Statement | None = Statement(
            statement.variables,
            tuple(expand_reductions(h) for h in statement.hypotheses),
            expand_reductions(statement.conclusion),
        )
    except FormalError as error:
        expanded, why_not = None, str(error)
    if expanded is not None:
        try:
            vacuity = smt.satisfiable_assumptions(expanded, solver_seconds)
        except smt.NotExpressible as error:
            expanded, why_not = None, str(error)
        else:
            if vacuity.outcome == "unsat":
                return {"vacuous": True, "checks": []}
    checks = [sampling_check(statement, sampling_seconds)]
    if checks[0].outcome == "refuted":
        return {"vacuous": False, "checks": [c.model_dump() for c in checks]}
    if expanded is None:
        checks.append(MachineCheck(checker="z3", method="solver", outcome="not_applicable", detail=why_not))
    else:
        checks.append(solver_check(statement, expanded, solver_seconds))
    return {"vacuous": False, "checks": [c.model_dump() for c in checks]}


def sampling_check(statement: Statement, seconds: float) -> MachineCheck:
    result = sample(statement, seconds=seconds)
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
    return MachineCheck(
        checker="sampling",
        method="sampling",
        outcome="no_counterexample" if result.instances else "inconclusive",
        detail=f"{result.instances} of {result.tried} inputs satisfied the hypotheses and were decided; "
        "none is a counterexample" + undecided,
        instances=result.instances,
        seconds=round(result.seconds, 3),
    )


def solver_check(statement: Statement, expanded: Statement, seconds: float) -> MachineCheck:
    start = time.monotonic()
    try:
        answer = smt.prove_or_find_model(expanded, seconds)
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
        )
    if answer.outcome == "unknown":
        return MachineCheck(
            checker="z3", method="solver", outcome="inconclusive", detail=f"unknown: {answer.reason}", seconds=spent
        )
    assert answer.model is not None
    confirmed, why = _confirmed(statement, answer.model)
    if confirmed:
        return MachineCheck(
            checker="z3",
            method="solver",
            outcome="refuted",
            detail="the solver's counterexample, confirmed by exact evaluation",
            counterexample=_shown(answer.model),
            seconds=spent,
        )
    return MachineCheck(checker="z3", method="solver", outcome="inconclusive", detail=why, seconds=spent)


def _confirmed(statement: Statement, model: dict[str, Value]) -> tuple[bool, str]:
    """Whether the exact evaluator agrees that the solver's model is a counterexample."""
    for variable in statement.variables:
        if variable.rational_only and isinstance(model.get(variable.name), Interval):
            return False, f"the solver's counterexample gives the rational {variable.name} an irrational value"
    try:
        verdict = holds(statement, model)
    except (Undecided, TooLarge) as error:
        return False, f"the solver's counterexample could not be evaluated exactly ({error})"
    if verdict is False:
        return True, ""
    return False, (
        "the solver's counterexample is not one by exact evaluation "
        f"({'the conclusion holds there' if verdict else 'the hypotheses fail or it is undefined there'}): "
        "a disagreement between the checkers, so nothing is decided"
    )


def _shown(values: dict[str, Value]) -> dict[str, str]:
    return {name: value_text(value) for name, value in values.items()}


if __name__ == "__main__":
    main()
