"""The stages as the researcher sees them: which rules make each, which artifact proves it done."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

from lemmata.run.gates import GATE_RULES, gate_path


@dataclass(frozen=True)
class Stage:
    name: str
    rules: tuple[str, ...]
    artifact: str  # the file that proves the stage done
    files: tuple[str, ...] = ()  # every file its rules write, globs allowed (`lemmata status ID` lists them)


STAGES = (
    Stage("survey", ("intake", "briefing", "survey", "survey_papers_gate", "survey_final", "survey_review_gate"),
          "survey.json", ("input.json", "briefing.json", "survey/first.json", "gates/survey_papers.json",
                          "survey.json", "gates/survey_review.json")),
    Stage("direction planning", ("ideation", "direction_gate", "directions", "direction_review_gate"),
          "directions.json",
          ("directions/ideas.json", "gates/direction.json", "directions.json", "gates/direction_review.json")),
    Stage("theory", ("formalize", "theory_plan", "prove_lemma", "theory_assemble"), "theory.json",
          ("theory/formal.json", "gates/theory_rework.json", "theory/plan.json", "theory/lemmas/*.json", "theory.json")),
    Stage("theory_review_gate", ("theory_review_gate",), "gates/theory_review.json", ("gates/theory_review.json",)),
    Stage("experiment", ("experiment", "experiment_review_gate", "learn"), "experiment.json",
          ("experiment.json", "figures/*.pdf", "gates/experiment_review.json", "learned.json")),
    Stage("writer", ("writer",), "paper_v1.tex", ("paper_v1.tex", "references.bib", "paper_v1.json")),
    Stage("compile", ("compile", "research_output"), "paper_v1.pdf",
          ("paper_v1.pdf", "paper_v1.compile.json", "research_output.json")),
)
#: The rules a cluster profile sends to the queue; the workflow's `localrules` are all the others.
CLUSTER_RULES = ("prove_lemma", "experiment", "rewrite_theory", "rewrite_experiment")
#: The experiment's plots, which paper_v1.tex includes as figures/<lemma>.pdf: delivered with it.
USER_FIGURES = "figures"


def user_files(version: int) -> tuple[str, ...]:
    """What the output folder receives of a paper version (its plots aside)."""
    return (f"paper_v{version}.tex", f"paper_v{version}.pdf", "references.bib")


def figures_of(version: int) -> str:
    """Where a version's plots are in the run directory (the paper names them figures/<file>)."""
    return USER_FIGURES if version == 1 else f"versions/v{version}/{USER_FIGURES}"


def card_artifacts(version: int) -> tuple[str, ...]:
    """The artifacts whose appearance shows a stage's summary card: the first run's stages, or a
    rewrite's theory and experiment (its writer card comes with the end of the drive)."""
    if version == 1:
        return tuple(stage.artifact for stage in STAGES)
    return (f"versions/v{version}/theory.json", f"versions/v{version}/experiment.json")


#: The rules that compile a paper version: when one fails, the writer's card still shows.
COMPILE_RULES = ("compile", "rewrite_compile")


def version_targets(version: int) -> tuple[str, ...]:
    """What the workflow is asked to make: the whole first run (rule all), or a rewrite's files."""
    return () if version == 1 else (f"paper_v{version}.pdf", f"rewrite_context_v{version}.json")


USER_FILES = user_files(1)


def stage_of_rule(rule: str) -> str:
    for stage in STAGES:
        if rule in stage.rules:
            return stage.name
    return rule


def stage_done(run_dir: Path, stage: Stage, incomplete: set[str]) -> bool:
    """Its artifact exists, complete, and each of its gates has a decision: a stage whose review
    waits for the researcher is not done yet (a resume starts there, with the question)."""
    if stage.artifact in incomplete:  # a killed job was writing it
        return False
    decisions = [gate_path(run_dir, GATE_RULES[rule]) for rule in stage.rules if rule in GATE_RULES]
    return all(path.exists() for path in (run_dir / stage.artifact, *decisions))


def stage_states(run_dir: Path, running_rules: set[str], failed_rule: str | None) -> list[tuple[Stage, str]]:
    """done / running / failed / waiting / pending for each stage, from files and live events."""
    incomplete = incomplete_outputs(run_dir)
    states = []
    for stage in STAGES:
        if stage_done(run_dir, stage, incomplete):
            state = "done"
        elif running_rules & set(stage.rules):
            state = "running"
        elif failed_rule in stage.rules:
            state = "waiting" if failed_rule.endswith("_gate") else "failed"
        else:
            state = "pending"
        states.append((stage, state))
    return states


def artifact_states(run_dir: Path) -> list[tuple[str, str, str]]:
    """(stage, file, state) for every file a stage wrote, and its main artifact while missing:
    `done`, `incomplete` (a job was writing it when the run stopped) or `pending`."""
    incomplete = incomplete_outputs(run_dir)
    rows = []
    for stage in STAGES:
        for pattern in stage.files:
            for path in sorted(run_dir.glob(pattern)):
                name = path.relative_to(run_dir).as_posix()
                # An output may be a directory (the experiment's figures/): its files share its state.
                unfinished = name in incomplete or any(name.startswith(f"{output}/") for output in incomplete)
                rows.append((stage.name, name, "incomplete" if unfinished else "done"))
        if not (run_dir / stage.artifact).exists():
            rows.append((stage.name, stage.artifact, "pending"))
    return rows


def incomplete_outputs(run_dir: Path) -> set[str]:
    """Outputs Snakemake marked incomplete: its marker files are named by the output's path in
    URL-safe base64 (.snakemake/incomplete/)."""
    names = set()
    for marker in (run_dir / ".snakemake" / "incomplete").glob("*"):
        try:
            names.add(base64.urlsafe_b64decode(marker.name.encode()).decode())
        except (ValueError, UnicodeDecodeError):  # "migration_underway" and split long names
            continue
    return names
