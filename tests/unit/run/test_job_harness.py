"""Jobs share Snakemake's process (they run on its worker threads): each job's records, warnings
and traceback go to its own rule's log, and a job that changes what all share is stopped."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import warnings

import pytest

from lemmata.run.job_harness import ProcessStateChanged, carried, job_harness


def test_two_jobs_at_once_each_keep_their_own_records_and_warnings(tmp_path):
    both_started = threading.Barrier(2)

    def job(name: str) -> None:
        with job_harness(tmp_path / f"{name}.log"):
            both_started.wait(timeout=10)
            logging.getLogger(f"lemmata.{name}").warning("record of %s", name)
            warnings.warn(f"warning of {name}", UserWarning, stacklevel=1)
            both_started.wait(timeout=10)

    threads = [threading.Thread(target=job, args=(name,)) for name in ("alpha", "beta")]
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=20)
    alpha, beta = (tmp_path / "alpha.log").read_text(), (tmp_path / "beta.log").read_text()
    assert "record of alpha" in alpha and "warning of alpha" in alpha
    assert "record of beta" in beta and "warning of beta" in beta
    assert "beta" not in alpha and "alpha" not in beta


def test_work_a_job_carries_to_a_helper_thread_logs_to_the_jobs_log_and_only_there(tmp_path):
    """The theory's kernel check runs on a helper thread beside the sketch call: its records are
    the job's. The helper thread's other work, and the same function outside a job, are not."""

    def check() -> None:
        logging.getLogger("lemmata.formal").warning("kernel check of the development")

    def elsewhere() -> None:
        logging.getLogger("lemmata.other").warning("not the job's")

    with job_harness(tmp_path / "theory_assemble.log"):
        work = carried(check)  # wrapped on the job's thread, run on the helper's
        helper = threading.Thread(target=lambda: (work(), elsewhere()))
        helper.start()
        helper.join(timeout=10)
    log = (tmp_path / "theory_assemble.log").read_text()
    assert "kernel check of the development" in log and "not the job's" not in log
    assert carried(check) is check  # outside a job there is no job's log to carry


def test_a_crash_leaves_its_traceback_in_the_log_and_an_expected_end_does_not(tmp_path):
    with pytest.raises(ZeroDivisionError), job_harness(tmp_path / "crash.log"):
        1 / 0  # noqa: B018
    crash = (tmp_path / "crash.log").read_text()
    assert "Traceback (most recent call last)" in crash and "ZeroDivisionError" in crash

    with pytest.raises(KeyError), job_harness(tmp_path / "expected.log", expected=(KeyError,)):
        raise KeyError("said in one line by the job itself")
    assert not (tmp_path / "expected.log").exists()


def test_a_job_that_changes_the_directory_or_environment_is_stopped_and_the_process_put_back(tmp_path):
    cwd, path = os.getcwd(), os.environ.get("PATH")
    with pytest.raises(ProcessStateChanged) as changed, job_harness(tmp_path / "job.log"):
        os.chdir(tmp_path)
        os.environ["LEMMATA_PLANTED"] = "secret-value"
        os.environ.pop("PATH", None)
    message = str(changed.value)
    assert "the working directory" in message and "the environment (LEMMATA_PLANTED, PATH)" in message
    assert "secret-value" not in message  # names, never values
    assert os.getcwd() == cwd and os.environ.get("PATH") == path and "LEMMATA_PLANTED" not in os.environ
    assert "it was put back" in (tmp_path / "job.log").read_text()


def test_a_job_that_sets_a_signal_handler_is_stopped_and_the_handler_put_back(tmp_path):
    original = signal.getsignal(signal.SIGUSR1)
    try:
        with pytest.raises(ProcessStateChanged, match=r"the signal handlers \(SIGUSR1\)"), job_harness(None):
            signal.signal(signal.SIGUSR1, lambda *_: None)
        assert signal.getsignal(signal.SIGUSR1) is original
    finally:
        signal.signal(signal.SIGUSR1, original)


def test_a_change_during_a_failing_job_is_logged_without_hiding_the_failure(tmp_path):
    with pytest.raises(RuntimeError, match="the job's own failure"), job_harness(tmp_path / "job.log"):
        os.environ["LEMMATA_PLANTED"] = "x"
        raise RuntimeError("the job's own failure")
    assert "LEMMATA_PLANTED" not in os.environ
    assert "the environment (LEMMATA_PLANTED)" in (tmp_path / "job.log").read_text()


#: A warning from a library module, as real jobs meet them (a Snakefile's own code has no module
#: name, and Python files its warnings under no filter a user would expect).
PLANTED_MODULE = """
import warnings


def warn():
    warnings.warn("planted in job a", UserWarning, stacklevel=1)
"""
PLANTED_WORKFLOW = """
import logging
import sys
import time
from pathlib import Path
from lemmata.run.job_harness import job_harness

sys.path.insert(0, str(Path.cwd()))
import planted

rule all:
    input: "a.done", "b.done"

rule a:
    output: "a.done"
    log: "logs/a.log"
    run:
        with job_harness(Path(log[0])):
            time.sleep(0.5)  # b runs meanwhile, on the other thread
            planted.warn()
            Path(output[0]).write_text("a")

rule b:
    output: "b.done"
    log: "logs/b.log"
    run:
        with job_harness(Path(log[0])):
            logging.getLogger("lemmata.planted").warning("a record of job b")
            time.sleep(0.5)
            Path(output[0]).write_text("b")
"""


def test_on_snakemakes_worker_threads_a_planted_warning_is_in_its_rules_log_only(tmp_path):
    (tmp_path / "Snakefile").write_text(PLANTED_WORKFLOW)
    (tmp_path / "planted.py").write_text(PLANTED_MODULE)
    done = subprocess.run(
        [sys.executable, "-m", "lemmata.run.snakemake_process", "--snakefile", "Snakefile", "--cores", "2"]
        + ["--force-use-threads", "all"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    a_log, b_log = (tmp_path / "logs/a.log").read_text(), (tmp_path / "logs/b.log").read_text()
    assert "planted in job a" in a_log and "planted in job a" not in b_log
    assert "a record of job b" in b_log and "a record of job b" not in a_log
    assert "planted in job a" not in done.stderr  # not mixed into Snakemake's own output


def test_a_job_on_a_worker_thread_cannot_set_a_signal_handler_at_all():
    """Why the harness compares signal handlers only on the main thread: elsewhere Python refuses."""
    refused = []

    def job() -> None:
        try:
            signal.signal(signal.SIGUSR1, lambda *_: None)
        except ValueError as error:
            refused.append(str(error))

    thread = threading.Thread(target=job)
    thread.start()
    thread.join(timeout=10)
    assert refused and "main thread" in refused[0]


def test_records_and_warnings_of_other_threads_go_where_they_went_before(tmp_path, caplog):
    """Snakemake's own thread keeps its warnings and records (standard error, in the workflow's
    log): the harness takes only its jobs' own."""

    def elsewhere() -> None:
        logging.getLogger("lemmata.elsewhere").warning("a record of another thread")
        warnings.warn("a warning of another thread", UserWarning, stacklevel=1)

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with job_harness(tmp_path / "job.log"):
            thread = threading.Thread(target=elsewhere)
            thread.start()
            thread.join(timeout=10)
    assert not (tmp_path / "job.log").exists()
    assert "a record of another thread" in caplog.text
    assert [str(warning.message) for warning in seen] == ["a warning of another thread"]
