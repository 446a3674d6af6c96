"""What the driver needs from whoever shows a run: the terminal (cli/console.py) or the
browser (run/gate_answers.py)."""

from __future__ import annotations

from typing import Protocol

from lemmata.artifacts import Survey, Theory
from lemmata.run.events import JobBoard, TokenTally
from lemmata.run.gates import Review


class RunConsole(Protocol):
    """What the driver needs from whoever shows the run: the terminal now, the browser later."""

    interactive: bool  # False: every prompt takes its default answer

    def progress(self, board: JobBoard, tally: TokenTally, elapsed: float) -> None: ...
    def card(self, text: str) -> None: ...
    def info(self, text: str) -> None: ...
    def review_theory(self, theory: Theory, second_look: bool = False, escalated: bool = False) -> Review: ...
    def review_stage(self, question: str) -> Review: ...
    def survey_papers(self, survey: Survey) -> str: ...
    def research_direction(self, survey: Survey, reason: str) -> str: ...
