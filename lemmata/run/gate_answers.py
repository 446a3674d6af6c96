"""Gates answered from the browser: the run stops at a gate with status "waiting"; the answer,
once given, waits in the session directory (`sessions/<id>/answers/<gate>.json`) for the next
drive, whose gate question takes it. The driver's own logic (a theory rework after a first
rejection, a stop after a second) applies to it exactly as to an answer typed in a terminal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from lemmata import layout
from lemmata.artifacts import Artifact, ArtifactError, Directions, Survey, Theory, read_artifact, write_artifact
from lemmata.home_layout import ANSWERS, session_dir
from lemmata.run.cards import (
    lemma_chain_view,
    refuted_lines,
    review_head,
    stage_card,
    survey_card,
    theory_review,
    wrapped,
)
from lemmata.run.gates import (
    DIRECTION,
    DIRECTION_REVIEW,
    GATE_INPUTS,
    STAGE_REVIEWS,
    SURVEY_PAPERS,
    THEORY_REVIEW,
    THEORY_REWORK,
    Review,
    gate_path,
    waiting_gate,
)

GateKind = Literal["theory_review", "stage_review", "survey_papers", "direction"]
THEORY_QUESTION = "Approve the lemma chain and continue to the writer?"


class GateAnswer(Artifact):
    gate: str
    approved: bool = True
    feedback: str = ""
    step: str = ""  # a first theory rejection: the most problematic step
    issue: str = ""
    text: str = ""  # survey papers (may be empty) or the research direction


class GateAwaited(Exception):
    """No answer yet: the run waits at `gate` (status "waiting") until one is given."""

    def __init__(self, gate: str) -> None:
        super().__init__(gate)
        self.gate = gate


def answer_path(run_dir: Path, gate: str) -> Path:
    return session_dir(run_dir) / ANSWERS / f"{gate}.json"


def save_answer(run_dir: Path, answer: GateAnswer) -> None:
    write_artifact(answer_path(run_dir, answer.gate), answer)


def take_answer(run_dir: Path, gate: str) -> GateAnswer:
    """The waiting answer of `gate`, removed as it is taken; GateAwaited when there is none."""
    path = answer_path(run_dir, gate)
    try:
        answer = read_artifact(path, GateAnswer)
    except ArtifactError:  # none yet (or a damaged one, which is asked again)
        path.unlink(missing_ok=True)
        raise GateAwaited(gate) from None
    path.unlink()
    return answer


def gate_kind(gate: str) -> GateKind:
    if gate == THEORY_REVIEW:
        return "theory_review"
    if gate in (SURVEY_PAPERS, DIRECTION):
        return "survey_papers" if gate == SURVEY_PAPERS else "direction"
    if gate in STAGE_REVIEWS:
        return "stage_review"
    raise KeyError(gate)


def waiting_question(run_dir: Path) -> dict[str, object] | None:
    """What the gate the run waits at asks, with the card to decide on; None if none waits."""
    rule = waiting_gate(run_dir)
    if not rule:
        return None
    gate = rule.removesuffix("_gate")
    kind = gate_kind(gate)
    run_dir = Path(run_dir)
    extra: dict[str, object] = {}
    if kind == "theory_review":
        theory = read_artifact(run_dir / layout.THEORY, Theory)
        question, card = THEORY_QUESTION, "\n".join(wrapped(theory_review(theory)))
        # The same review as data, for the browser to typeset the mathematics; the card stays its text.
        extra = {"head": review_head(theory), "lemmas": lemma_chain_view(theory), "refuted": refuted_lines(theory)}
    elif kind == "survey_papers":
        question = "The survey kept no papers: paper identifiers or titles to survey, comma-separated (empty: go on without papers)"
        card = survey_card(read_artifact(run_dir / layout.SURVEY_FIRST, Survey))
    elif kind == "direction":
        survey = read_artifact(run_dir / layout.SURVEY, Survey)
        question = "Direction planning needs a research direction: which one?"
        card = "Open problems from the survey:\n" + "\n".join(
            f"  - {p}" for p in survey.open_problems or ["(none reported)"]
        )
    elif gate == DIRECTION_REVIEW:
        directions = read_artifact(run_dir / layout.DIRECTIONS, Directions)
        question, card = STAGE_REVIEWS[gate], f"Goal: {directions.goal}"
    else:
        question = STAGE_REVIEWS[gate]
        card = stage_card(run_dir / GATE_INPUTS[gate]) or ""
    return {
        "gate": gate,
        "kind": kind,
        "question": question,
        "card": card,
        "second_look": kind == "theory_review" and gate_path(run_dir, THEORY_REWORK).exists(),
        **extra,
    }


class AnswersFromTheBrowser:
    """The gate questions of a `RunConsole` answered from saved answers (the others it keeps:
    progress, cards and notes go to the wrapped console)."""

    interactive = True  # a person answers, not a default

    def __init__(self, run_dir: Path, console) -> None:
        self.run_dir = Path(run_dir)
        self._console = console

    def __getattr__(self, name: str):  # progress, card, info
        return getattr(self._console, name)

    def review_theory(self, theory: Theory, second_look: bool = False, escalated: bool = False) -> Review:
        answer = take_answer(self.run_dir, THEORY_REVIEW)
        return Review(approved=answer.approved, feedback=answer.feedback, step=answer.step, issue=answer.issue)

    def review_stage(self, question: str) -> Review:
        gate = next(gate for gate, asked in STAGE_REVIEWS.items() if asked == question)
        answer = take_answer(self.run_dir, gate)
        return Review(approved=answer.approved, feedback=answer.feedback)

    def survey_papers(self, survey: Survey) -> str:
        return take_answer(self.run_dir, SURVEY_PAPERS).text

    def research_direction(self, survey: Survey, reason: str) -> str:
        return take_answer(self.run_dir, DIRECTION).text
