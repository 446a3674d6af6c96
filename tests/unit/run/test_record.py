"""The driver's choices that need no workflow: how many jobs, what a stopped Snakemake means,
which processes still work on a run."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from lemmata import layout
from lemmata.isolation.box import WEAKER_LIMITS_VARIABLE
from lemmata.run.events import JobBoard
from lemmata.run.record import RunLock, is_run_active
from lemmata.run.workflow import (
    EMBEDDED_JOBS,
    PROVIDER_JOBS,
    STOP_NOTICE,
    Invocation,
    default_jobs,
    workflow_environment,
    workflow_processes,
)


@pytest.mark.parametrize("backend", ["vendora", "router", "local", "vendorx", "replay"])
def test_provider_backends_prove_a_full_plan_at_once(backend: str) -> None:
    assert default_jobs(backend) == max(PROVIDER_JOBS, os.cpu_count() or 1) >= 10  # the largest full plan


def test_the_embedded_model_gets_two_jobs() -> None:
    assert default_jobs("embedded") == EMBEDDED_JOBS == 2


def board(*failed_rules: str) -> JobBoard:
    return JobBoard(failed_rules=list(failed_rules))


@pytest.mark.parametrize(
    "invocation, stopped",
    [
        pytest.param(
            Invocation(1, board(), log_text=f"...\n{STOP_NOTICE} (scheduler).\n"), True, id="signalled-from-outside"
        ),
        pytest.param(Invocation(1, board(), paused=True, log_text=STOP_NOTICE), False, id="our-own-pause"),
        pytest.param(Invocation(1, board("prove_lemma"), log_text=STOP_NOTICE), False, id="a-job-failed-too"),
        pytest.param(
            Invocation(1, board(), log_text="WorkflowError: MissingInputException"), False, id="an-ordinary-failure"
        ),
    ],
)
def test_a_workflow_stopped_by_a_signal_is_told_from_a_failure(invocation: Invocation, stopped: bool) -> None:
    assert invocation.stopped_from_outside() is stopped


@pytest.mark.parametrize(
    "invocation, killed",
    [
        pytest.param(Invocation(-9, board()), True, id="sigkill-or-the-oom-killer"),
        pytest.param(Invocation(137, board()), True, id="sigkill-reported-by-a-wrapper"),
        pytest.param(Invocation(-9, board(), paused=True), False, id="killed-while-our-pause-ran"),
        pytest.param(Invocation(1, board("prove_lemma")), False, id="a-job-failed"),
        pytest.param(Invocation(130, board()), False, id="an-exit-status-that-is-not-a-kill"),
    ],
)
def test_a_killed_workflow_is_told_from_a_failure(invocation: Invocation, killed: bool) -> None:
    assert invocation.killed() is killed


def looks_like_snakemake(*args: str) -> subprocess.Popen:
    """A sleeping process whose command line reads like a Snakemake invocation."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "-m", "snakemake", *args])


def test_a_workflow_process_is_found_by_its_directory_however_the_path_was_spelled(tmp_path: Path) -> None:
    run_dir = tmp_path / "real/runs/s1"
    run_dir.mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    workflow = looks_like_snakemake("--directory", str(tmp_path / "link/runs/s1"), "--cores", "2")
    report = looks_like_snakemake("--directory", str(run_dir), "--report", "r.html", "--nolock")
    other = looks_like_snakemake("--directory", str(tmp_path / "real/runs/s2"))
    try:
        assert workflow_processes(run_dir) == [workflow.pid]  # not the report, not another run
    finally:
        for process in (workflow, report, other):
            process.kill()
            process.wait()


def test_status_probes_never_make_a_driver_fail_to_take_the_runs_lock(tmp_path: Path) -> None:
    """`is_run_active` (every status poll) holds the lock for an instant; a driver taking it
    meanwhile waits that instant instead of calling the run busy, and the probe writes nothing."""
    stop = threading.Event()

    def probe() -> None:
        while not stop.is_set():
            is_run_active(tmp_path)

    with RunLock(tmp_path):
        pass  # the lock file exists, naming this process
    prober = threading.Thread(target=probe)
    prober.start()
    try:
        for _ in range(200):
            with RunLock(tmp_path):
                assert (tmp_path / layout.LOCK).read_text() == str(os.getpid())
                assert is_run_active(tmp_path)
    finally:
        stop.set()
        prober.join()
    assert not is_run_active(tmp_path)


def test_a_run_held_by_a_driver_is_still_refused(tmp_path: Path) -> None:
    with RunLock(tmp_path):
        holder = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from lemmata.run.record import RunLock; RunLock(sys.argv[1]).__enter__()",
                str(tmp_path),
            ],
            capture_output=True,
            text=True,
        )
    assert holder.returncode != 0 and f"in progress (pid {os.getpid()})" in holder.stderr


def test_a_dotenv_file_cannot_loosen_the_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """LEMMATA_SANDBOX_LIMITS=per-process counts only from the real environment: a .env file in
    the directory lemmata is started from (a checkout someone else wrote) reaches no job with it."""
    monkeypatch.delenv(WEAKER_LIMITS_VARIABLE, raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text(f"{WEAKER_LIMITS_VARIABLE}=per-process\nSOME_OTHER_VALUE=kept\n")
    environment = workflow_environment(tmp_path / "run")
    assert WEAKER_LIMITS_VARIABLE not in environment and environment["SOME_OTHER_VALUE"] == "kept"
    monkeypatch.setenv(WEAKER_LIMITS_VARIABLE, "per-process")  # the user's own choice, in the environment
    assert workflow_environment(tmp_path / "run")[WEAKER_LIMITS_VARIABLE] == "per-process"
