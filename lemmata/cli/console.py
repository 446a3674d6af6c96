"""The terminal side of a run: a live status line, stage cards, and the gate prompts."""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import wraps
from typing import Any, TextIO, TypeVar

import click

from lemmata.artifacts import Survey, Theory
from lemmata.llm.prices import usd
from lemmata.run.cards import theory_review
from lemmata.run.events import JobBoard, TokenTally
from lemmata.run.gates import THEORY_REVIEW_QUESTION, GateInterrupted, Review
from lemmata.run.pipeline import stage_of_rule
from lemmata.terminal_text import drawing_stream

MAX_FAILURES_SHOWN = 5
#: Back to the line's start and erase it: the status line redrawn in place.
ERASE_LINE = "\r\033[K"
Asking = TypeVar("Asking", bound=Callable[..., Any])


def pauses_when_cancelled(ask: Asking) -> Asking:
    """Ctrl+C (or end of input) at a gate's question pauses the run there: the driver saves a
    checkpoint and `lemmata resume` asks the question again. Not at the direction fallback,
    where the spec makes Ctrl+C end the run (RuntimeError)."""

    @wraps(ask)
    def asking(*args: Any, **kwargs: Any) -> Any:
        try:
            return ask(*args, **kwargs)
        except click.Abort:
            raise GateInterrupted from None

    return asking  # type: ignore[return-value]


class TerminalConsole:
    """Progress on stderr (one rewritten line on a terminal, a line per change otherwise). What
    it shows is written through the process's escaping streams (terminal_text.py)."""

    def __init__(self, stream: TextIO | None = None, interactive: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        # Prompts take their default (the Enter answer) when nobody can type.
        self.interactive = sys.stdin.isatty() if interactive is None else interactive
        self._last = ""

    def progress(self, board: JobBoard, tally: TokenTally, elapsed: float) -> None:
        line = status_line(board, tally, elapsed)
        if line == self._last:
            return
        if self.live:
            self._erase_line()
            self.stream.write(line)
        elif _without_clock(line) != _without_clock(self._last):
            self.stream.write(line + "\n")
        self.stream.flush()
        self._last = line

    def card(self, text: str) -> None:
        self._clear_line()
        click.echo(text)

    def info(self, text: str) -> None:
        self._clear_line()
        self.stream.write(text + "\n")
        self.stream.flush()

    @pauses_when_cancelled
    def review_theory(self, theory: Theory, second_look: bool = False, escalated: bool = False) -> Review:
        """The theory review gate. `n` the first time asks for the most problematic step and the
        issue (the theory runs once more); `n` at the second look stops the run."""
        self._clear_line()
        click.echo(
            "Theory review, after your objection: the updated lemma chain"
            if second_look
            else "Theory review: the lemma chain the paper will stand on"
        )
        if escalated:
            unverified = ", ".join(lemma.id for lemma in theory.lemmas if not lemma.verified)
            click.echo(
                f"GATE_MODE auto -> human: {unverified} not verified; every later gate asks too. "
                "The confidence breakdown:"
            )
        for line in theory_review(theory):
            click.echo("  " + line)
        review = self._ask_to_go_on(THEORY_REVIEW_QUESTION)
        if review:
            return review
        if second_look:
            return Review(approved=False, feedback=_optional("What is still wrong (kept in the run record)"))
        step = click.prompt("Most problematic step (number or identifier)").strip()
        return Review(approved=False, step=step, issue=click.prompt("What is the issue").strip())

    @pauses_when_cancelled
    def review_stage(self, question: str) -> Review:
        """A review after a stage (GATE_MODE human): go on, with feedback for the next agent, or stop."""
        self._clear_line()
        return self._ask_to_go_on(question) or Review(
            approved=False, feedback=_optional("What is wrong (kept in the run record)")
        )

    def _ask_to_go_on(self, question: str) -> Review | None:
        """`y` or Enter: approved, with feedback for the next agent; `n`: None. Without a terminal, `y`."""
        if not self.interactive:
            click.echo(f"{question} [Y/n]: Y (no terminal: default)")
            return Review(approved=True)
        if click.confirm(question, default=True):
            return Review(approved=True, feedback=_optional("Feedback for the next agent (Enter for none)"))
        return None

    @pauses_when_cancelled
    def survey_papers(self, survey: Survey) -> str:
        """The survey fallback: identifiers or titles to survey once more, or "" to go on without."""
        self._clear_line()
        click.echo("The survey kept no papers" + (f" ({survey.note})" if survey.note else "") + ".")
        failures = [f"{call.tool}({call.argument!r}): {call.error}" for call in survey.tool_calls if not call.ok]
        for failure in failures[:MAX_FAILURES_SHOWN]:
            click.echo(f"  tool error: {failure}")
        question = "Paper identifiers or titles, comma-separated (Enter to continue without papers)"
        if not self.interactive:
            click.echo(f"{question}: (no terminal: continuing without papers)")
            return ""
        return _optional(question)

    def research_direction(self, survey: Survey, reason: str) -> str:
        """The direction-planning fallback; empty input or Ctrl+C raises RuntimeError (the spec)."""
        self._clear_line()
        click.echo(f"Direction planning needs a research direction: {reason or 'ideation proposed none'}.")
        click.echo("Open problems from the survey:")
        for problem in survey.open_problems or ["(none reported)"]:
            click.echo(f"  - {problem}")
        if not self.interactive:
            raise RuntimeError("direction planning needs a research direction and there is no terminal to ask")
        try:
            direction = _optional("Research direction (Enter to stop)")
        except click.Abort:
            raise RuntimeError("no research direction given (cancelled)") from None
        if not direction:
            raise RuntimeError("no research direction given")
        return direction

    def _clear_line(self) -> None:
        if self.live and self._last:
            self._erase_line()
            self.stream.flush()
            self._last = ""

    def _erase_line(self) -> None:
        """lemmata's own drawing, the one write to the terminal that is obeyed (terminal_text.py):
        what the line then shows, model text among it, is written escaped."""
        terminal = drawing_stream(self.stream)
        self.stream.flush()
        terminal.write(ERASE_LINE)


def _optional(question: str) -> str:
    """An answer that may be empty (Enter)."""
    return click.prompt(question, default="", show_default=False).strip()


def status_line(board: JobBoard, tally: TokenTally, elapsed: float) -> str:
    labels = board.running_labels()
    stages = sorted({stage_of_rule(label.split()[0]) for label in labels})
    doing = ", ".join(stages) if stages else "waiting"
    detail = f" ({', '.join(labels)})" if labels else ""
    jobs = f"{board.done}/{board.total} jobs" if board.total else "starting"
    budget = tally.budget
    cost = f", {tally.cost.text}" if tally.cost.known_usd > 0 else ""  # a free model's run shows none
    if budget.usd is not None:
        cost = f", {usd(tally.cost.known_usd)} of the {usd(budget.usd)} budget"
    tokens = f"{tally.tokens_in + tally.tokens_out}" + (f" of {budget.tokens}" if budget.tokens is not None else "")
    return f"[{_clock(elapsed)}] {doing}{detail} | {jobs} | {tally.calls} calls, {tokens} tokens{cost}"


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes:02d}:{secs:02d}"


def _without_clock(line: str) -> str:
    return line.split("] ", 1)[-1]
