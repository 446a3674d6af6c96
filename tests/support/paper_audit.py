"""What a researcher checks when reading a lemmata paper, as code: the invariants of issue 21.

`audit_paper` reads a run's theory and its PDF and returns the problems found (empty: none).
Used on recorded real-model runs (test_embedded_replays.py) and the embedded smoke test.
"""

from __future__ import annotations

from pathlib import Path

from pypdf import PdfReader

from lemmata.artifacts import VERIFIED_MIN_CONFIDENCE, Theory, read_artifact
from lemmata.latex.macros import _MACRO_GROUPS

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
    problems = [
        f"lemma {number} ({lemma.id}) is not stated as 'Lemma {number} ({lemma.id})'"
        for number, lemma in enumerate(theory.lemmas, start=1)
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
        f"lemma {lemma.id} is verified at confidence {lemma.confidence:.2f}"
        for lemma in theory.lemmas
        if lemma.verified and lemma.confidence < VERIFIED_MIN_CONFIDENCE
    ]
    return problems


def audit_run(run_dir: Path, pdf: Path) -> list[str]:
    return audit_paper(read_artifact(run_dir / "theory.json", Theory), pdf)
