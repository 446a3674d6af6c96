"""The stages as the researcher sees them: which rules make each, which artifact proves it done."""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lemmata import layout
from lemmata.run.gates import (
    DIRECTION,
    DIRECTION_REVIEW,
    EXPERIMENT_REVIEW,
    GATE_RULES,
    SURVEY_PAPERS,
    SURVEY_REVIEW,
    THEORY_REVIEW,
    THEORY_REWORK,
    gate_path,
)


@dataclass(frozen=True)
class Stage:
    name: str
    rules: tuple[str, ...]
    artifact: str  # the file that proves the stage done
    files: tuple[str, ...] = ()  # every file its rules write, globs allowed (`lemmata status ID` lists them)


STAGES = (
    Stage(
        "survey",
        ("intake", "briefing", "survey", "survey_papers_gate", "survey_final", "survey_review_gate"),
        layout.SURVEY,
        (
            layout.INPUT,
            layout.BRIEFING,
            layout.SURVEY_FIRST,
            layout.gate(SURVEY_PAPERS),
            layout.SURVEY,
            layout.gate(SURVEY_REVIEW),
        ),
    ),
    Stage(
        "direction planning",
        ("ideation", "direction_gate", "directions", "direction_review_gate"),
        layout.DIRECTIONS,
        (layout.IDEAS, layout.gate(DIRECTION), layout.DIRECTIONS, layout.gate(DIRECTION_REVIEW)),
    ),
    Stage(
        "theory",
        ("formalize", "theory_plan", "prove_lemma", "theory_assemble"),
        layout.THEORY,
        (layout.FORMAL, layout.gate(THEORY_REWORK), layout.PLAN, layout.lemma("*"), layout.THEORY),
    ),
    Stage("theory_review_gate", ("theory_review_gate",), layout.gate(THEORY_REVIEW), (layout.gate(THEORY_REVIEW),)),
    Stage(
        "experiment",
        ("experiment", "experiment_review_gate", "learn"),
        layout.EXPERIMENT,
        (layout.EXPERIMENT, f"{layout.FIGURES}/*.pdf", layout.gate(EXPERIMENT_REVIEW), layout.LEARNED),
    ),
    Stage("writer", ("writer",), layout.paper_tex(1), (layout.paper_tex(1), layout.REFERENCES, layout.paper_meta(1))),
    Stage(
        "compile",
        ("compile", "research_output"),
        layout.paper_pdf(1),
        (layout.paper_pdf(1), layout.compile_report(1), layout.RESEARCH_OUTPUT),
    ),
)


def user_files(version: int) -> tuple[str, ...]:
    """What the output folder receives of a paper version (its plots aside)."""
    return (layout.paper_tex(version), layout.paper_pdf(version), layout.REFERENCES)


def delivered_lemma_graph(version: int) -> str:
    """The name the output folder gives the picture of a version's lemmas (pictures/lemma_graph.py)."""
    return f"lemma_graph_v{version}.svg"


def delivered_formal_development(version: int) -> str:
    """The name the output folder gives a version's formal development (formal/development.py)."""
    return f"formal_v{version}.v"


def card_artifacts(version: int) -> tuple[str, ...]:
    """The artifacts whose appearance shows a stage's summary card: the first run's stages, or a
    rewrite's theory and experiment (its writer card comes with the end of the drive)."""
    if version == 1:
        return tuple(stage.artifact for stage in STAGES)
    return (layout.theory_of(version), layout.experiment_of(version))


#: The rules that compile a paper version: when one fails, the writer's card still shows.
COMPILE_RULES = ("compile", "rewrite_compile")


def version_targets(version: int) -> tuple[str, ...]:
    """What the workflow is asked to make: the whole first run (rule all), or a rewrite's files."""
    return () if version == 1 else (layout.paper_pdf(version), layout.rewrite_context(version))


@dataclass(frozen=True)
class RewriteStep:
    name: str  # as the Live tab shows a rewrite's progress
    rule: str
    done_file: Callable[[int], str]  # the file that says the step is done, of version n


#: A rewrite's steps as the researcher sees them (rules/rewrite.smk).
REWRITE_STEPS = (
    RewriteStep("theory", "rewrite_theory", layout.theory_of),
    RewriteStep("experiment", "rewrite_experiment", layout.experiment_of),
    RewriteStep("writer", "rewrite_writer", layout.paper_tex),
    RewriteStep("compile", "rewrite_compile", layout.paper_pdf),
)
#: The rules that make a rewrite's version: its steps, and the context for the version after it.
REWRITE_RULES = (*(step.rule for step in REWRITE_STEPS), "rewrite_context")


def version_rules(version: int) -> tuple[str, ...]:
    """The options that confine a rewrite to its own rules: ancient() keeps a newer file of the
    first run from rerunning a rewrite's job, not from rerunning the first run's own jobs (a lemma
    file written again made a rewrite redo the theory, its review, experiment and paper_v1). The
    first run's files are finished: a rewrite reads them as they are."""
    return () if version == 1 else ("--allowed-rules", *REWRITE_RULES)


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
