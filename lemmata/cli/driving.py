"""Driving a run from the terminal, and reporting how it ended: shared by the commands that start
a run (main.py), resume it, and rewrite its paper (paper_cmd.py)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click

from lemmata import layout
from lemmata.errors import UserError
from lemmata.run.outcome import run_outcome
from lemmata.run.record import load_record

#: The exit status of a run that ended before its paper: paused (Ctrl+C, `lemmata pause`, its
#: budget), stopped or waiting at a gate. 0 means done: a script that goes on after `lemmata prove`
#: must not go on without a paper. (A failed run exits 1 too, through its LemmataError.)
NOT_DONE = 1


def drive(
    run_dir: Path,
    jobs: int | None,
    rewrite: bool = False,
    instructions: str | None = None,
    offer_review: bool = True,
    wait_at_gates: bool = False,
    profile: str | None = None,
    exit_unless_done: bool = True,
) -> None:
    """Drive the run (or a rewrite of its paper: `rewrite`, with new `instructions` or None to
    continue the unfinished one) and report how it ended; a completed first run on a terminal
    then offers the review loop (questions, rewrites). `wait_at_gates`: a gate is answered in
    the browser, so the run stops there with status "waiting" until it is. `profile` None:
    the run's own. A run that did not complete exits NOT_DONE, unless not `exit_unless_done`."""
    from lemmata.cli.console import TerminalConsole
    from lemmata.cli.review_loop import offer_review as offer
    from lemmata.run.driver import Driver
    from lemmata.run.gate_answers import AnswersFromTheBrowser
    from lemmata.run.rewrite import drive_rewrite

    console: TerminalConsole | AnswersFromTheBrowser = TerminalConsole()
    if wait_at_gates:
        console, offer_review = AnswersFromTheBrowser(run_dir, TerminalConsole(interactive=False)), False
    driver = Driver(run_dir, console, jobs=jobs, profile=profile)
    record = drive_rewrite(driver, instructions) if rewrite else driver.drive()
    if record.status == "completed" and record.undelivered is not None:
        raise UserError(record.message)  # one line: where the paper is, and how it is delivered
    click.echo(
        f"run {record.session_id}: {run_outcome(run_dir, record.status).text}"
        + (f" — {record.message}" if record.message else ""),
        err=True,
    )
    if (
        record.status != "completed" and exit_unless_done
    ):  # paused (from anywhere, or by its budget), stopped, waiting: not done
        sys.exit(NOT_DONE)
    if record.status == "completed":
        # The last line on stdout: scripts can take the paper's path from it.
        click.echo(Path(record.output_dir) / layout.paper_pdf(driver.version))
        if not rewrite and offer_review:
            offer(run_dir, rewriter(run_dir, jobs))


def rewriter(run_dir: Path, jobs: int | None, profile: str | None = None) -> Callable[[str], None]:
    """A rewrite from the review loop; one that did not complete (paused) leaves the loop."""

    def rewrite(instructions: str) -> None:
        drive(
            run_dir,
            jobs,
            rewrite=True,
            instructions=instructions,
            offer_review=False,
            profile=profile,
            exit_unless_done=False,
        )
        if load_record(run_dir).status != "completed":
            raise click.Abort

    return rewrite
