"""Snakemake as the driver starts it: its jobs on worker threads, no solver process per job, and
an exit that waits for none of its idle timers (issue 25: the workflow's own cost)."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from lemmata.run.snakemake_process import asks_for_a_report, cancel_idle_timers, exit_status
from lemmata.run.workflow import snakemake_command


def test_the_workflow_runs_its_jobs_in_snakemakes_process_and_schedules_them_greedily(tmp_path: Path) -> None:
    command = snakemake_command(tmp_path, jobs=2)
    assert command[1:3] == ["-m", "lemmata.run.snakemake_process"]
    assert "--force-use-threads" in command  # else each `run:` job starts a Snakemake process of its own
    assert command[command.index("--scheduler") + 1] == "greedy"  # the ILP scheduler runs a solver per pass


def test_snakemakes_waiting_timers_are_cancelled_and_no_other_librarys() -> None:
    """Snakemake's scheduler leaves one-second timers behind; Python would wait for them at exit.
    A timer another library armed is its own business: it runs."""
    released, theirs = threading.Event(), threading.Event()

    def release() -> None:
        released.set()

    release.__module__ = "snakemake.scheduling.job_scheduler"  # where the scheduler's timer callback lives
    scheduler_timer, other_timer = threading.Timer(60, release), threading.Timer(0.2, theirs.set)
    scheduler_timer.start()
    other_timer.start()
    assert cancel_idle_timers() == 1
    scheduler_timer.join(timeout=2)
    other_timer.join(timeout=10)
    assert not scheduler_timer.is_alive() and not released.is_set()
    assert theirs.is_set()


@pytest.mark.parametrize(("code", "status"), [(None, 0), (0, 0), (1, 1), (3, 3), ("bad config", 1)])
def test_the_exit_status_is_the_one_sys_exit_would_give(
    code: object, status: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert exit_status(code) == status
    assert capsys.readouterr().err == ("bad config\n" if isinstance(code, str) else "")


def test_snakemakes_command_line_ends_with_its_status_and_without_waiting(tmp_path: Path) -> None:
    """A workflow that fails to parse: Snakemake's message, its exit status, no idle second."""
    (tmp_path / "Snakefile").write_text("rule broken:\n    output: 'x'\n    shell: 'true'\n    nonsense\n")
    result = subprocess.run(
        [sys.executable, "-m", "lemmata.run.snakemake_process", "--snakefile", "Snakefile", "--cores", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert result.returncode == 1
    assert "SyntaxError" in result.stderr + result.stdout


def test_a_finished_workflow_exits_zero_with_its_log_written_out(tmp_path: Path) -> None:
    """The process exits as any Python program does: what Snakemake logged is on disk."""
    (tmp_path / "Snakefile").write_text(
        "rule all:\n    output: 'done.txt'\n    run:\n        open(output[0], 'w').write('written on a thread')\n"
    )
    result = run_workflow_in(tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "done.txt").read_text() == "written on a thread"
    (log,) = (tmp_path / ".snakemake" / "log").glob("*.snakemake.log")
    assert "1 of 1 steps (100%) done" in log.read_text()


def test_the_teardown_skips_the_collectors_sweep_but_still_closes_what_a_job_left_open(tmp_path: Path) -> None:
    """Snakemake's objects are frozen out of the last garbage collections (their sweep was 0.39 s
    of every run's end), yet a file a job left open is still flushed and closed as the
    interpreter lets go of it, and exit handlers run after the freeze."""
    (tmp_path / "Snakefile").write_text(
        "import atexit, gc\n"
        "rule all:\n"
        "    output: 'done.txt'\n"
        "    run:\n"
        "        open(output[0], 'w').write('done')\n"
        "        LEFT_OPEN.append(open('left_open.txt', 'w', buffering=1 << 20))\n"
        "        LEFT_OPEN[0].write('still written')\n"
        "        atexit.register(lambda: open('frozen.txt', 'w').write(str(gc.get_freeze_count())))\n"
        "LEFT_OPEN = []\n"
    )
    result = run_workflow_in(tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "left_open.txt").read_text() == "still written"
    assert int((tmp_path / "frozen.txt").read_text()) > 10_000  # Snakemake's objects, and the job's


def test_a_run_imports_no_report_machinery_and_keeps_a_tex_box_started_ahead(tmp_path: Path) -> None:
    """A run asks Snakemake for no report: its HTML reporter (jinja2, docutils, pygments, numpy)
    is not imported for the argument parser. The process keeps a spare TeX box for its jobs."""
    (tmp_path / "Snakefile").write_text(
        "import sys\n"
        "rule all:\n"
        "    output: 'seen.txt'\n"
        "    run:\n"
        "        from lemmata.latex.texbox import SPARE\n"
        "        seen = ['snakemake.report.html_reporter' in sys.modules, SPARE._kept]\n"
        "        open(output[0], 'w').write(repr(seen))\n"
    )
    result = run_workflow_in(tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "seen.txt").read_text() == "[False, True]"


@pytest.mark.parametrize(
    ("arguments", "report"),
    [
        (["--snakefile", "S", "--report", "report.html"], True),  # `lemmata report`
        (["--snakefile", "S", "--report-after-run", "--report", "r.zip"], True),
        (["--snakefile", "S", "--reporter", "html"], True),
        (["--snakefile", "S", "--cores", "1", "--force-use-threads"], False),  # a run
    ],
)
def test_the_html_reporter_stays_for_a_command_that_asks_for_a_report(arguments: list[str], report: bool) -> None:
    assert asks_for_a_report(arguments) is report


def run_workflow_in(folder: Path) -> subprocess.CompletedProcess[str]:
    """The Snakefile in `folder`, run by lemmata's Snakemake process with jobs on its threads."""
    return subprocess.run(
        [sys.executable, "-m", "lemmata.run.snakemake_process", "--cores", "1", "--force-use-threads"],
        cwd=folder,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


SIGTERM_WHILE_THE_SCHEDULER_HOLDS_ITS_LOCK = """
import os, signal, threading, time
from snakemake.scheduling.job_scheduler import JobScheduler
from lemmata.run.snakemake_process import stop_requests_off_the_main_thread

stop_requests_off_the_main_thread()
scheduler = JobScheduler.__new__(JobScheduler)  # the state exit_gracefully touches, as __init__ makes it
scheduler._lock, scheduler._open_jobs, scheduler._user_kill = threading.Lock(), threading.Semaphore(0), None
signal.signal(signal.SIGTERM, scheduler.exit_gracefully)  # what JobScheduler.__init__ does
with scheduler._lock:  # the main thread handling finished and failed jobs
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(0.2)  # the handler runs here, on the main thread, the lock still held
assert scheduler._open_jobs.acquire(timeout=30), "the scheduler was never woken"
print(scheduler._user_kill)
"""


def test_a_pause_landing_while_the_scheduler_holds_its_lock_is_taken_not_deadlocked() -> None:
    """Snakemake's SIGTERM handler takes the scheduler's lock; run inside the signal handler on a
    main thread that holds it, it waited for ever (a budget pause in CI, 2026-11-28). Off the main
    thread, it waits until the lock is let go, then asks the scheduler to finish gracefully."""
    result = subprocess.run(
        [sys.executable, "-c", SIGTERM_WHILE_THE_SCHEDULER_HOLDS_ITS_LOCK],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "graceful"
