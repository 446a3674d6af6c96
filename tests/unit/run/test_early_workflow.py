"""The workflow process started with the `lemmata` command (run/early_workflow.py): it imports
Snakemake while the CLI works, then becomes exactly the process the driver would have started;
a command that starts no workflow leaves nothing behind."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lemmata.run import early_workflow
from lemmata.run.workflow import workflow_processes

WAITING_JOB = """
rule all:
    output: "done.txt"
    run:
        import os, time
        while not os.path.exists("release"):
            time.sleep(0.02)
        with open(output[0], "w") as handle:
            handle.write(os.environ["MARKER"] + " " + os.getcwd() + " " + oct(os.umask(0)))
"""


@pytest.fixture(autouse=True)
def nothing_left_waiting() -> Iterator[None]:
    yield
    process, early_workflow._waiting = early_workflow._waiting, None
    if process is not None:
        process.kill()
        process.wait()


def command() -> list[str]:
    return [sys.executable, "-m", early_workflow.MODULE, "--cores", "1", "--force-use-threads", "--nocolor"]


def environment(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": early_workflow.package_path(os.environ), **extra}


def test_a_run_command_starts_the_workflow_process_and_hands_it_the_run(tmp_path: Path) -> None:
    (tmp_path / "Snakefile").write_text(WAITING_JOB)
    (tmp_path / "release").touch()
    early_workflow.start_for(["prove", "The sum of two even integers is even"])
    waiting = early_workflow._waiting
    assert waiting is not None and os.readlink(f"/proc/{waiting.pid}/cwd") == early_workflow.WAITING_DIRECTORY
    log = tmp_path / "snakemake.log"
    umask = os.umask(0o027)  # the driver's own (lemmata's is 077), not the one the command started with
    try:
        process = early_workflow.hand_over(command(), tmp_path, environment(MARKER="handed over"), log)
    finally:
        os.umask(umask)
    assert process is waiting and process.wait(timeout=120) == 0
    assert (tmp_path / "done.txt").read_text() == f"handed over {tmp_path} 0o27"  # environment, folder, umask
    assert "1 of 1 steps (100%) done" in log.read_text()  # its output went to the run's log


@pytest.mark.parametrize(
    "arguments", [["status"], ["prove", "--help"], ["ask", "ID", "why?"], []], ids=["status", "help", "ask", "none"]
)
def test_a_command_that_runs_no_workflow_starts_none(arguments: list[str]) -> None:
    early_workflow.start_for(arguments)
    assert early_workflow._waiting is None


def test_a_process_not_needed_ends_without_a_word(tmp_path: Path) -> None:
    """A refused task, or a command line it cannot become: it ends at once, writing nothing."""
    early_workflow.start_for(["resume", "20261128-000000-abcdef"])
    waiting = early_workflow._waiting
    assert waiting is not None
    assert early_workflow.hand_over(["snakemake", "--cores", "1"], tmp_path, environment(), tmp_path / "log") is None
    assert waiting.wait(timeout=60) == 0 and not (tmp_path / "log").exists()


def test_a_handed_over_process_is_found_by_its_run_directory_and_a_waiting_one_never(tmp_path: Path) -> None:
    """`workflow_processes` finds a workflow by the --directory of its command line; a process
    started early keeps the command line it started with, so it is found by where it works."""
    (tmp_path / "Snakefile").write_text(WAITING_JOB)
    early_workflow.start_for(["prove", "x"])
    assert early_workflow._waiting is not None
    assert workflow_processes(tmp_path) == []  # waiting: it stands in "/", which no run folder is
    process = early_workflow.hand_over(command(), tmp_path, environment(MARKER="m"), tmp_path / "log")
    assert process is not None
    deadline = time.monotonic() + 60
    while workflow_processes(tmp_path) != [process.pid] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert workflow_processes(tmp_path) == [process.pid]
    (tmp_path / "release").touch()
    assert process.wait(timeout=120) == 0
    assert workflow_processes(tmp_path) == []
