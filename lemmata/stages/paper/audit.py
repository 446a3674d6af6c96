"""The delivered paper read as a referee reads it, against the run's record: the last check before
a PDF is handed over, on every run (the compile job runs it; tests/support/paper_audit.py holds
recorded runs to the same rules).

The writer's clean-ups (prose.py, prompt_echo.py, claims.py, named_works.py) work on the model's
parts before they become LaTeX; this reads what came out of pdflatex, so a defect any of them
missed, or one lemmata's own rendering made, is still seen: every lemma stated as "Lemma n (id)"
with its status line in the ladder's words and an "[Unverified step]" marker when it is not
verified; Limitations when anything is unverified; the main result stated, and said not
established when it is not, machine-checked only where its theorem says so; no refuted statement
printed as a step; no prompt material or markdown; no lemma called reviewed below the
confidence the verdict needs. What it finds is recorded in the compile report
(`audit_findings`) and shown on the compile's card; it is never silently dropped.
"""

from __future__ import annotations

import re
from pathlib import Path

from lemmata.artifacts import VERIFIED_MIN_CONFIDENCE, Theory, chain_numbers
from lemmata.latex.macros import MACRO_GROUP_TITLES
from lemmata.verification.ladder import label

#: Text of the writer's prompt that must never reach the paper.
PROMPT_MATERIAL = (
    "Citation keys",
    "%%%",
    "=== user ===",
    "lemmata-math",
    "Proof style rules",
    "NOT VERIFIED",
    *MACRO_GROUP_TITLES,
)
#: Markdown a model writes that must not survive into the PDF.
MARKDOWN = ("###", "**", "```")


#: What the compile report says when the PDF's text cannot be read: pypdf is the optional `pdf`
#: extra, and the core installs without it (SLURM's virtualenv has none: its compile jobs failed
#: on the import, 2026-12-04).
NOT_AUDITED = "not audited: pypdf, which reads the PDF's text, is not installed (pip install 'lemmata[pdf]')"


def pdf_text(pdf: Path) -> str:
    """The PDF's text with whitespace collapsed (pypdf breaks lines anywhere); ImportError
    without the `pdf` extra."""
    from pypdf import PdfReader

    return " ".join(" ".join(page.extract_text() for page in PdfReader(pdf).pages).split())


def audit_pdf(theory: Theory, pdf: Path) -> list[str]:
    """The defects of the paper `pdf` as an account of `theory` (paper_findings), or NOT_AUDITED."""
    try:
        text = pdf_text(pdf)
    except ImportError:
        return [NOT_AUDITED]
    return paper_findings(theory, text)


def paper_findings(theory: Theory, text: str) -> list[str]:
    """The defects of a paper whose text is `text` (pdf_text) as an account of `theory`; empty: none."""
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
    return problems + machine_check_findings(theory, text)


def machine_check_findings(theory: Theory, text: str) -> list[str]:
    """Each lemma's status line in the ladder's words; no refuted statement as a step; the main
    result saying by what it stands."""
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
