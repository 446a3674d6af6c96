"""What a researcher checks when reading a lemmata paper, as code: the invariants of issues 21
and 34 (the machine checks: each lemma's status line, no refuted statement printed as a step, no
machine-checked lemma called numerically suspect, the main result saying by what it stands).

`audit_paper` reads a run's theory and its PDF and returns the problems found (empty: none).
Used on recorded real-model runs (test_embedded_replays.py) and the embedded smoke test.
"""

from __future__ import annotations

import re
from pathlib import Path

from pypdf import PdfReader

from lemmata import layout
from lemmata.artifacts import VERIFIED_MIN_CONFIDENCE, Experiment, Theory, chain_numbers, read_artifact
from lemmata.errors import ArtifactError
from lemmata.latex.macros import _MACRO_GROUPS
from lemmata.verification.ladder import label

#: Text of the writer's prompt that must never reach the paper.
PROMPT_MATERIAL = (
    "Citation keys",
    "%%%",
    "=== user ===",
    "lemmata-math",
    "Proof style rules",
    "NOT VERIFIED",
    *(title for title, _ in _MACRO_GROUPS),
)
#: Markdown a model writes that must not survive into the PDF.
MARKDOWN = ("###", "**", "```")


def pdf_text(pdf: Path) -> str:
    """The PDF's text with whitespace collapsed (pypdf breaks lines anywhere)."""
    return " ".join(" ".join(page.extract_text() for page in PdfReader(pdf).pages).split())


def audit_paper(theory: Theory, pdf: Path) -> list[str]:
    """The problems of the paper `pdf` as an account of `theory`."""
    text = pdf_text(pdf)
    numbers = chain_numbers([lemma.id for lemma in theory.lemmas])  # L2, L3 stay Lemma 2, 3 after a refuted L1
    problems = [
        f"lemma {number} ({lemma.id}) is not stated as 'Lemma {number} ({lemma.id})'"
        for number, lemma in zip(numbers, theory.lemmas)
        if f"Lemma {number} ({lemma.id})" not in text
    ]
    unverified = [lemma for lemma in theory.lemmas if not lemma.verified]
    if text.count("[Unverified step]") != len(unverified):
        problems.append(
            f"{text.count('[Unverified step]')} [Unverified step] markers for {len(unverified)} unverified lemmas"
        )
    if unverified and "Limitations" not in text:
        problems.append("no Limitations section, yet lemmas are not verified")
    if not theory.main_result_established and "not established" not in text:
        problems.append("the main result is not established and the paper does not say so")
    if theory.main_result_established and "Theorem" not in text:
        problems.append("the main result is established but stated nowhere")
    problems += [f"prompt material in the paper: {phrase!r}" for phrase in PROMPT_MATERIAL if phrase in text]
    problems += [f"markdown in the paper: {mark!r}" for mark in MARKDOWN if mark in text]
    problems += [
        f"lemma {lemma.id} is reviewed at confidence {lemma.confidence:.2f}"
        for lemma in theory.lemmas
        if lemma.status == "reviewed" and lemma.confidence < VERIFIED_MIN_CONFIDENCE
    ]
    return problems + machine_check_problems(theory, text)


def machine_check_problems(theory: Theory, text: str) -> list[str]:
    """Issue 34: each lemma's status line in the ladder's words; no refuted statement as a step;
    the main result saying by what it stands."""
    squeezed = re.sub(r"\s+", "", text)
    problems = [
        f"lemma {lemma.id} has no status line 'Status: {label(lemma.status)}.'"
        for lemma in theory.lemmas
        if re.sub(r"\s+", "", f"Status: {label(lemma.status)}.") not in squeezed
    ]
    steps = {lemma.statement for lemma in theory.lemmas}
    problems += [
        f"the refuted statement of {attempt.id} is printed as a step"
        for attempt in theory.refuted
        if attempt.statement in steps
    ]
    if theory.main_result_status == "machine_checked" and not re.search(r"Theorem\d+\(machine-checked", squeezed):
        problems.append("the main result is machine-checked and its theorem does not say so")
    return problems


def audit_run(run_dir: Path, pdf: Path) -> list[str]:
    theory = read_artifact(run_dir / layout.THEORY, Theory)
    problems = audit_paper(theory, pdf)
    try:
        experiment = read_artifact(run_dir / layout.EXPERIMENT, Experiment)
    except ArtifactError:
        return problems
    checked = {lemma.id for lemma in theory.lemmas if lemma.machine_checked}
    return problems + [
        f"lemma {check.lemma_id} is machine-checked, yet called numerically suspect"
        for check in experiment.checks
        if check.numerically_suspect and check.lemma_id in checked
    ]
