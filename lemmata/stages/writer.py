"""Writer stage: the paper's LaTeX and its bibliography, from the run's artifacts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lemmata.artifacts import (
    Directions, Experiment, GateDecision, PaperMeta, PaperRecord, ProvedLemma, Survey, TaskInput, Theory, read_artifact,
)
from lemmata.gates import feedback_of
from lemmata.latex.bibliography import assign_citation_keys, cited_keys, remove_unknown_citations, render_bibtex
from lemmata.latex.document import render_document
from lemmata.latex.extract import extract_latex_body
from lemmata.latex.macros import MACRO_SUMMARY
from lemmata.latex.undefined import provide_undefined_commands
from lemmata.llm.client import LLMClient
from lemmata.stages.experiment_figures import add_experiment_figures, figure_label, has_figure
from lemmata.stages.prompts import render_prompt
from lemmata.stages.unverified_marks import add_numerical_warnings, mark_unverified

PROOF_STYLE_RULES = """Proof style rules (enforced):
- No skip words ('clearly', 'trivially', 'by standard arguments') without an immediate justification.
- Every inequality names the lemma or theorem it uses.
- Each lemma proof opens with 1 to 2 sentences of informal explanation.
- Low-confidence lemmas are tagged with an orange bold [Unverified step] marker: lemmata adds it after each lemma marked NOT VERIFIED; do not write it yourself.
- The Limitations section explains all unverified steps."""
BIB_STEM = "references"
TITLE_MAX_CHARS = 120
AUTHORS_LISTED = 3


@dataclass(frozen=True)
class WrittenPaper:
    tex: str
    bibtex: str
    meta: PaperMeta


@dataclass(frozen=True)
class WriterInputs:
    task: TaskInput
    survey: Survey
    directions: Directions
    theory: Theory
    experiment: Experiment
    feedback: str = ""


def write_paper(client: LLMClient, inputs: WriterInputs, *, version: int, enforce_style: bool) -> WrittenPaper:
    keyed = assign_citation_keys(inputs.survey.papers)
    known_keys = {key for key, _ in keyed}
    title = paper_title(inputs.task, inputs.directions)
    prompt = render_prompt("writer", **_prompt_values(inputs, title, keyed, enforce_style))
    body = extract_latex_body(client.complete("writer", prompt.system, prompt.user))
    body, removed = remove_unknown_citations(body, known_keys)
    body = add_experiment_figures(body, inputs.experiment)
    body = add_numerical_warnings(mark_unverified(body, inputs.theory), inputs.experiment)
    bibtex = render_bibtex(keyed) if keyed else ""
    tex = render_document(title=title, abstract="", body=provide_undefined_commands(body),
                          bibliography_stem=BIB_STEM if bibtex else None)
    meta = PaperMeta(version=version, title=title, tex_file=f"paper_v{version}.tex", bib_entries=len(keyed),
                     cited_keys=sorted(cited_keys(body)), removed_citations=removed)
    return WrittenPaper(tex=tex, bibtex=bibtex, meta=meta)


def _prompt_values(inputs: WriterInputs, title: str, keyed: list[tuple[str, PaperRecord]],
                   enforce_style: bool) -> dict[str, str]:
    theory = inputs.theory
    return {
        "macros": MACRO_SUMMARY,
        "title": title,
        "goal": inputs.directions.goal,
        "brief": inputs.directions.research_brief or "(none)",
        "survey_summary": inputs.survey.summary or "(none)",
        "citation_keys": "\n".join(citation_line(key, paper) for key, paper in keyed) or "(none: cite nothing)",
        "theorem": theory.theorem_statement,
        "proof_status": theory.proof_status,
        "lemmas": "\n\n".join(_lemma_entry(lemma) for lemma in theory.lemmas),
        "assembled_proof": theory.assembled_proof or "(no assembled proof)",
        "experiment": experiment_summary(inputs.experiment),
        "style_rules": PROOF_STYLE_RULES if enforce_style else "",
        "feedback": f"Reviewer feedback to follow: {inputs.feedback}" if inputs.feedback else "",
    }


def citation_line(key: str, paper: PaperRecord) -> str:
    """`key: authors (year), title`, so the model knows which paper each key stands for."""
    authors = ", ".join(paper.authors[:AUTHORS_LISTED]) + (" et al." if len(paper.authors) > AUTHORS_LISTED else "")
    year = f" ({paper.year})" if paper.year else ""
    return f"{key}: {authors or 'unknown authors'}{year}, {paper.title}"


def _lemma_entry(lemma: ProvedLemma) -> str:
    tag = "verified" if lemma.verified else "NOT VERIFIED: say so in Limitations"
    return f"[{lemma.id}] ({tag}; status {lemma.status}; confidence {lemma.confidence:.2f}) {lemma.statement}\nProof: {lemma.proof_text or '(none)'}"


def experiment_summary(experiment: Experiment) -> str:
    if experiment.skipped:
        return f"(not run: {experiment.skip_reason})"
    lines = [f"[{c.lemma_id}] " + (f"violation rate {c.violation_rate:.4f} over {c.trials} trials"
             + (" -- NUMERICALLY SUSPECT: warn strongly" if c.numerically_suspect else "")
             + (f"; lemmata adds its plot as Figure \\ref{{{figure_label(c)}}}" if has_figure(c) else "")
             if c.outcome == "ran" else f"test failed: {c.detail}") for c in experiment.checks]
    return "\n".join(lines) or f"(no checks: {experiment.skip_reason})"


def paper_title(task: TaskInput, directions: Directions) -> str:
    """A `prove` paper is titled by its theorem (when short enough): a direction's title can
    promise something else entirely. Other modes take the chosen direction's title."""
    if task.mode == "prove" and len(directions.goal) <= TITLE_MAX_CHARS:
        return directions.goal.rstrip(".")
    return directions.candidates[directions.chosen].title


def read_writer_inputs(paths: Any) -> WriterInputs:
    """The writer's artifacts from Snakemake's named inputs; the review feedback goes along."""
    reviews = [read_artifact(Path(path), GateDecision) for path in (paths.review, paths.experiment_review)]
    return WriterInputs(
        task=read_artifact(Path(paths.task), TaskInput),
        survey=read_artifact(Path(paths.survey), Survey),
        directions=read_artifact(Path(paths.directions), Directions),
        theory=read_artifact(Path(paths.theory), Theory),
        experiment=read_artifact(Path(paths.experiment), Experiment),
        feedback=" ".join(filter(None, (feedback_of(review) for review in reviews))),
    )
