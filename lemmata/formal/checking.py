"""The machine checks of one statement, in order: read and type the formal statement, admit it
to the kernel (its rendering must read back to it), refuse it when it cannot be the prose's
(faithfulness.py) or no input satisfies its hypotheses, look for a counterexample and a witness
by sampling, ask the SMT solver, then try a kernel proof (kernels.py: Coq). What the checks come
to is the kernel's to say (lemmata/kernel/verdict.py), never this module's.

`falsify` runs the first part (everything but the kernel): cheap — about a second — and run
before any proof is written, on every lemma of a plan. `prove_in_kernel` adds the kernels'
checks (the model's own script first, then the kernel's automation), in the lemma's own job. Sampling and
the solver run in a child process with CPU and memory limits (worker.py): a solver that runs
away, or crashes, costs that process and not the run. Coq runs in the box (coq.py).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from lemmata.artifacts import FormalCheck, FormalSpec, MachineCheck
from lemmata.formal.definitions import unfaithful_definition
from lemmata.formal.faithfulness import unfaithful
from lemmata.formal.kernels import KERNELS, ProofKernel
from lemmata.formal.reading import parse_expression, products_split, read_definitions, read_statement
from lemmata.kernel.admission import admit
from lemmata.kernel.coq_terms import NotStatable, coq_statement
from lemmata.kernel.statement import Statement
from lemmata.kernel.tree import Expr, FormalError

T = TypeVar("T")

#: The worker's limits beyond its own time budgets: Z3 on a hard question can grow large.
WORKER_MEMORY_BYTES = 2 << 30
WORKER_GRACE_SECONDS = 15.0
WORKER_COMMAND = (sys.executable, "-P", "-m", "lemmata.formal.worker")


@dataclass(frozen=True)
class Budget:
    """Seconds each checker may spend on one statement."""

    sampling: float = 2.0
    solver: float = 3.0
    kernel: float = 20.0


DEFAULT_BUDGET = Budget()


def read_formal(spec: FormalSpec) -> Statement:
    """The typed statement of a spec; FormalError saying what is wrong with it."""
    return _refused_not_raised(
        lambda: read_statement([(v.name, v.type) for v in spec.variables], spec.hypotheses, spec.conclusion)
    )


def formal_reading(prose: str, spec: FormalSpec) -> Statement:
    """The statement, when the kernel admits it and it can be the prose's; FormalError with the
    reason otherwise (a formalizer is told it and asked again, unless the statement is circular)."""
    statement = _refused_not_raised(lambda: admit(read_formal(spec)).statement)
    reason = _refused_not_raised(lambda: unfaithful(prose, statement) or _unfaithful_definition(prose, spec))
    if reason:
        raise FormalError(reason)
    return statement


def _unfaithful_definition(prose: str, spec: FormalSpec) -> str:
    """Why a function the formal statement defines is not the prose's ("" when each is)."""
    declared = {variable.name for variable in spec.variables}
    definitions, _ = read_definitions(spec.hypotheses, declared)

    def parse(text: str, params: tuple[str, ...]) -> Expr:
        return products_split(parse_expression(text, definitions), declared | set(params))

    return unfaithful_definition(prose, definitions, parse)


#: What reading a model's text may raise besides FormalError: a defect of lemmata's that a
#: hostile or odd answer reaches. It refuses the statement with its name, never ends the job.
_READING_DEFECTS = (
    RecursionError,
    MemoryError,
    ArithmeticError,
    ValueError,
    TypeError,
    KeyError,
    IndexError,
    AssertionError,
)


def _refused_not_raised(read: Callable[[], T]) -> T:
    try:
        return read()
    except FormalError:
        raise
    except _READING_DEFECTS as error:
        raise FormalError(
            f"lemmata could not read it ({type(error).__name__}: {str(error)[:120]}): its own defect, so nothing is checked"
        ) from error


def not_formalized(prose: str, reason: str, spec: FormalSpec | None = None) -> FormalCheck:
    return FormalCheck(prose=prose, spec=spec, not_formalized=reason)


def falsify(prose: str, spec: FormalSpec, budget: Budget = DEFAULT_BUDGET) -> FormalCheck:
    """The formal statement read, judged faithful or refused, and checked by sampling and the
    solver: refuted, proved by the solver, tested, or undecided."""
    try:
        statement = formal_reading(prose, spec)
    except FormalError as error:
        return not_formalized(prose, f"the formal statement was refused: {error}", spec)
    derived = _derived(statement)
    report = run_worker(spec, budget)
    if report.get("vacuous"):
        return not_formalized(
            prose,
            "the formal statement was refused: no input satisfies its hypotheses (the solver proved them "
            "contradictory), so it would hold vacuously",
            spec,
        )
    checks = [MachineCheck.model_validate(check) for check in report["checks"]]
    witness = report.get("witness")
    witness = witness if isinstance(witness, dict) and all(isinstance(v, str) for v in witness.values()) else None
    return FormalCheck(prose=prose, spec=spec, checks=checks, witness=witness, **derived)


def prove_in_kernel(
    check: FormalCheck,
    model_scripts: Mapping[str, str] | None = None,
    budget: Budget = DEFAULT_BUDGET,
    kernels: Sequence[ProofKernel] = KERNELS,
) -> FormalCheck:
    """`check` with the registered proof kernels' checks added, in order, until one proves it:
    each is given the model's script in its language (`model_scripts`, e.g. {"coq": ...}), then
    tries its own automation. Not tried on a statement that was refuted or not formalized; a
    kernel that already proved it is not asked again, nor one that failed, unless a model script
    in its language is given now (its failed check is then replaced)."""
    if check.spec is None or check.not_formalized or check.refutation is not None:
        return check
    try:
        statement: Statement | None = admit(read_formal(check.spec)).statement
        unstatable = ""
    except FormalError as error:
        statement, unstatable = None, str(error)
    scripts = model_scripts or {}
    checks = list(check.checks)
    for kernel in kernels:
        earlier = [existing for existing in checks if existing.checker == kernel.name]
        if earlier and (any(e.outcome == "proved" for e in earlier) or not scripts.get(kernel.script_language)):
            continue
        checks = [existing for existing in checks if existing.checker != kernel.name]
        if statement is None:
            checks.append(
                MachineCheck(checker=kernel.name, method="kernel proof", outcome="not_applicable", detail=unstatable)
            )
            continue
        problem = kernel.problem()
        if problem:  # not installed here: said, never passed
            checks.append(
                MachineCheck(checker=kernel.name, method="kernel proof", outcome="unavailable", detail=problem)
            )
            continue
        checks.append(kernel.prove(statement, scripts.get(kernel.script_language, ""), budget.kernel))
        if checks[-1].outcome == "proved":
            break
    return check.model_copy(update={"checks": checks})


def _derived(statement: Statement) -> dict[str, str]:
    """What every reader is shown: the statement as text and LaTeX (the kernel's admitted
    renderings), and the Coq proposition."""
    admitted = admit(statement)
    try:
        coq = coq_statement(statement).proposition
    except NotStatable:
        coq = ""
    return {"text": admitted.text, "latex": admitted.latex, "coq": coq}


def run_worker(spec: FormalSpec, budget: Budget) -> dict:
    """Sampling and the solver in a child process (worker.py), limited in memory and time: the one
    started ahead (`worker_started_ahead`), else a new one."""
    timeout = budget.sampling + 2 * budget.solver + WORKER_GRACE_SECONDS
    request = {
        "spec": spec.model_dump(),
        "sampling": budget.sampling,
        "solver": budget.solver,
        "cpu_seconds": int(timeout) + 1,
    }
    worker = _take_worker_ahead() or _start_worker()
    report, stderr, timed_out = None, "", False
    try:
        stdout, stderr = worker.communicate(json.dumps(request), timeout=timeout)
        report = json.loads(stdout) if worker.returncode == 0 else None
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.communicate()
        timed_out = True
    except json.JSONDecodeError:
        pass
    if isinstance(report, dict) and isinstance(report.get("checks"), list):
        return report
    why = "it ran out of time" if timed_out else f"it ended with status {worker.returncode}"
    tail = (stderr.strip().splitlines() or [""])[-1][:200]
    detail = f"the checking process failed ({why}{': ' + tail if tail else ''})"
    return {
        "checks": [
            {"checker": "sampling", "method": "sampling", "outcome": "inconclusive", "detail": detail},
            {"checker": "z3", "method": "solver", "outcome": "inconclusive", "detail": detail},
        ]
    }


_ahead: list[subprocess.Popen[str]] = []
_ahead_lock = threading.Lock()


@contextmanager
def worker_started_ahead() -> Iterator[None]:
    """A checking process started now, for the first check inside the block: its start (0.3 s of
    imports, 2 cores) passes while the model writes the statement it will check. One not taken is
    told to end when the block ends."""
    worker = _start_worker()
    with _ahead_lock:
        _ahead.append(worker)
    try:
        yield
    finally:
        with _ahead_lock:
            unused = worker in _ahead
            if unused:
                _ahead.remove(worker)
        if unused:
            worker.communicate("")  # an empty request: it ends at once


def _take_worker_ahead() -> subprocess.Popen[str] | None:
    with _ahead_lock:
        return _ahead.pop(0) if _ahead else None


def _start_worker() -> subprocess.Popen[str]:
    return subprocess.Popen(
        WORKER_COMMAND,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_memory_limits,
    )


def _memory_limits() -> None:
    """Before the worker's first line; its CPU time it limits itself once it knows its budget."""
    resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_BYTES, WORKER_MEMORY_BYTES))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
