"""The stages as the researcher sees them: which rules make each, which artifact proves it done."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Stage:
    name: str
    rules: tuple[str, ...]
    artifact: str


STAGES = (
    Stage("survey", ("intake", "survey", "survey_papers_gate", "survey_final", "survey_review_gate"), "survey.json"),
    Stage("direction planning", ("ideation", "direction_gate", "directions", "direction_review_gate"),
          "directions.json"),
    Stage("theory", ("formalize", "theory_plan", "prove_lemma", "theory_assemble"), "theory.json"),
    Stage("theory_review_gate", ("theory_review_gate",), "gates/theory_review.json"),
    Stage("experiment", ("experiment", "experiment_review_gate"), "experiment.json"),
    Stage("writer", ("writer",), "paper_v1.tex"),
    Stage("compile", ("compile", "research_output"), "paper_v1.pdf"),
)
USER_FILES = ("paper_v1.tex", "paper_v1.pdf", "references.bib")
#: The experiment's plots, which paper_v1.tex includes as figures/<lemma>.pdf: delivered with it.
USER_FIGURES = "figures"


def stage_of_rule(rule: str) -> str:
    for stage in STAGES:
        if rule in stage.rules:
            return stage.name
    return rule


def stage_states(run_dir: Path, running_rules: set[str], failed_rule: str | None) -> list[tuple[Stage, str]]:
    """done / running / failed / waiting / pending for each stage, from files and live events."""
    states = []
    for stage in STAGES:
        if (run_dir / stage.artifact).exists():
            state = "done"
        elif running_rules & set(stage.rules):
            state = "running"
        elif failed_rule in stage.rules:
            state = "waiting" if failed_rule.endswith("_gate") else "failed"
        else:
            state = "pending"
        states.append((stage, state))
    return states
