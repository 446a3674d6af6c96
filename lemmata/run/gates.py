"""Human gates as sentinel files: `gates/<name>.json` holds the decision and any feedback."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from lemmata import layout
from lemmata.artifacts import GateDecision, Theory, chain_numbers, write_artifact
from lemmata.errors import GateClosed

GATE_CLOSED = "GATE CLOSED"
THEORY_REVIEW = "theory_review"
THEORY_REWORK = "theory_rework"  # not a gate: the objection of an `n` at the theory review
SURVEY_PAPERS = "survey_papers"  # the survey kept no paper: which papers to start from?
DIRECTION = "direction"  # ideation proposed nothing: which direction to take?
# Reviews after a stage, asked in GATE_MODE human (and after an escalation from auto).
SURVEY_REVIEW = "survey_review"
DIRECTION_REVIEW = "direction_review"
EXPERIMENT_REVIEW = "experiment_review"
#: Set by the driver in the workflow's environment when nobody can answer a question (no terminal,
#: no browser): a review gate then writes the default answer itself, and the workflow goes on
#: instead of stopping for the driver to write the same answer and start Snakemake again.
GATE_ANSWERS_VARIABLE = "LEMMATA_GATE_ANSWERS"
DEFAULT_ANSWERS = "default"
THEORY_REVIEW_QUESTION = "Approve the lemma chain and continue to the writer?"
#: What each gate decides on, in pipeline order.
GATE_INPUTS = {
    SURVEY_PAPERS: layout.SURVEY_FIRST,
    SURVEY_REVIEW: layout.SURVEY,
    DIRECTION: layout.IDEAS,
    DIRECTION_REVIEW: layout.DIRECTIONS,
    THEORY_REVIEW: layout.THEORY,
    EXPERIMENT_REVIEW: layout.EXPERIMENT,
}
#: The rule that guards each gate's sentinel.
GATE_RULES = {f"{gate}_gate": gate for gate in GATE_INPUTS}
#: The question of each stage review: whether to go on to the next stage.
STAGE_REVIEWS = {
    SURVEY_REVIEW: "Continue to direction planning with this survey?",
    DIRECTION_REVIEW: "Continue to the theory with this goal?",
    EXPERIMENT_REVIEW: "Continue to the writer with these numerical checks?",
}


def effective_gate_mode(configured: str, theory: Theory | None) -> str:
    """GATE_MODE auto becomes human once the theory has a lemma that is not verified."""
    if configured == "auto" and theory is not None and any(not lemma.verified for lemma in theory.lemmas):
        return "human"
    return configured


def waiting_gate(run_dir: Path) -> str:
    """The rule of the first gate whose input exists but whose decision does not, or ""."""
    for gate, decided_on in GATE_INPUTS.items():
        if (Path(run_dir) / decided_on).exists() and not gate_path(run_dir, gate).exists():
            return f"{gate}_gate"
    return ""


class GateInterrupted(Exception):
    """Ctrl+C (or a kill) while a gate's question waited for its answer: the run pauses there."""


@dataclass(frozen=True)
class Review:
    """The researcher's answer at a review: the theory review or a review after a stage."""

    approved: bool
    feedback: str = ""  # approved: for the next agent; rejected at the second look: why
    step: str = ""  # rejected the first time: the most problematic step (number or identifier)
    issue: str = ""


def lemma_named(theory: Theory, step: str) -> str:
    """The lemma identifier a reviewer means by `step`: its number as the chain shows it
    (artifacts.chain_numbers: 3 is L3, also when a refuted L1 left the chain; else the place, 1 =
    the first), its identifier in any case, else the text as typed."""
    step = step.strip()
    numbers = chain_numbers([lemma.id for lemma in theory.lemmas])
    if step.isdigit() and int(step) in numbers:
        return theory.lemmas[numbers.index(int(step))].id
    return next((lemma.id for lemma in theory.lemmas if lemma.id.casefold() == step.casefold()), step)


def gate_path(run_dir: Path, gate: str) -> Path:
    return Path(run_dir) / layout.gate(gate)


def gate_closed_message(sentinel: str) -> str:
    gate = Path(sentinel).stem
    return (
        f"{GATE_CLOSED}: {gate} is waiting for a decision; write {sentinel} "
        '(e.g. {"gate": "' + gate + '", "approved": true, "decided_by": "user"}) and run again'
    )


def close_gate(sentinel: Path) -> NoReturn:
    """End the gate rule's job with the recognisable GATE CLOSED failure."""
    message = gate_closed_message(str(sentinel))
    sys.stderr.write(message + "\n")
    raise GateClosed(message)


def ask_or_take_the_default(sentinel: Path) -> GateDecision:
    """A review's question: asked by the driver (the gate closes), or, when nobody is there to
    answer it, given here the default answer the driver would record: approved, no feedback."""
    if os.environ.get(GATE_ANSWERS_VARIABLE) != DEFAULT_ANSWERS:
        close_gate(sentinel)
    decision = GateDecision(gate=Path(sentinel).stem, approved=True, feedback="", decided_by="default")
    write_artifact(Path(sentinel), decision)
    return decision


def open_gate_automatically(sentinel: Path, reason: str) -> GateDecision:
    """A conditional gate whose condition does not hold: nothing to ask."""
    decision = GateDecision(gate=Path(sentinel).stem, approved=True, feedback=reason, decided_by="automatic")
    write_artifact(Path(sentinel), decision)
    return decision


def record_decision(run_dir: Path, gate: str, approved: bool, feedback: str, decided_by: str) -> GateDecision:
    decision = GateDecision(gate=gate, approved=approved, feedback=feedback.strip(), decided_by=decided_by)
    write_artifact(gate_path(run_dir, gate), decision)
    return decision
