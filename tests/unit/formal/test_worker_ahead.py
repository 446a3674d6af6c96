"""The checking process started ahead (formal/checking.py): its imports pass while the model writes
the statement it will check. The check inside the block is done by that process, one not needed
ends when the block ends, and a process started ahead keeps the CPU limit of the check it does."""

from __future__ import annotations

import json
import signal
import subprocess

from lemmata.artifacts import FormalSpec, FormalVariable
from lemmata.formal import checking
from lemmata.formal.checking import falsify, worker_started_ahead

EVEN_SUM = FormalSpec(
    variables=[FormalVariable(name="a", type="integer"), FormalVariable(name="b", type="integer")],
    hypotheses=["a % 2 == 0", "b % 2 == 0"],
    conclusion="(a + b) % 2 == 0",
)


def test_the_check_in_the_block_is_done_by_the_process_started_ahead() -> None:
    with worker_started_ahead():
        (ahead,) = checking._ahead
        check = falsify("The sum of two even integers is even", EVEN_SUM)
        assert checking._ahead == []  # taken by the check
    assert ahead.returncode == 0
    assert [c.checker for c in check.checks] == ["sampling", "z3"] and check.verdict == "machine_checked"


def test_a_process_started_ahead_and_not_needed_ends_with_the_block_and_says_nothing() -> None:
    with worker_started_ahead():
        (ahead,) = checking._ahead
    assert checking._ahead == [] and ahead.returncode == 0
    assert ahead.stderr is not None and ahead.stderr.closed  # read to its end: no traceback was written


def test_without_a_process_started_ahead_a_check_starts_its_own() -> None:
    assert checking._ahead == []
    assert falsify("The sum of two even integers is even", EVEN_SUM).verdict == "machine_checked"


def test_a_worker_limits_its_own_cpu_time_to_its_request() -> None:
    """Started before its budget is known, it sets its CPU limit from the request: a worker told it
    has one second of CPU stops there, although its solver was given half a minute."""
    fermat_three = FormalSpec(
        variables=[FormalVariable(name=name, type="positive integer") for name in "xyz"],
        hypotheses=[],
        conclusion="x**3 + y**3 != z**3",  # true, and beyond the solver: it works until stopped
    )
    request = {"spec": fermat_three.model_dump(), "sampling": 0.2, "solver": 30.0, "cpu_seconds": 1}
    finished = subprocess.run(
        list(checking.WORKER_COMMAND), input=json.dumps(request), capture_output=True, text=True, timeout=60
    )
    assert finished.returncode == -signal.SIGXCPU, finished.stderr[-500:]
