"""The audit every compile runs on the delivered PDF's text (stages/paper/audit.py): a faithful
account passes, and each defect a referee would see is named."""

from __future__ import annotations

import pytest

from lemmata.stages.paper.audit import NOT_AUDITED, audit_pdf, paper_findings
from lemmata.verification.ladder import label
from unit.run.test_cards import PARTLY_VERIFIED_THEORY, VERIFIED_THEORY


def status_line(theory, lemma_id: str) -> str:
    lemma = next(lemma for lemma in theory.lemmas if lemma.id == lemma_id)
    return f"Status: {label(lemma.status)}."


def faithful_text(theory) -> str:
    """What a correct paper's text says of `theory`: each lemma with its status, the markers and
    Limitations for the unverified, the main result stated or said not established."""
    parts = ["Introduction."]
    for number, lemma in enumerate(theory.lemmas, start=1):
        parts.append(f"Lemma {number} ({lemma.id}). {lemma.statement} {status_line(theory, lemma.id)}")
        if not lemma.verified:
            parts.append("[Unverified step]")
    parts.append("Theorem 1. t" if theory.main_result_established else "The main result is not established.")
    if any(not lemma.verified for lemma in theory.lemmas):
        parts.append("Limitations. Lemma 2 is not verified.")
    return " ".join(parts)


@pytest.mark.parametrize("theory", [VERIFIED_THEORY, PARTLY_VERIFIED_THEORY], ids=["verified", "partly-verified"])
def test_a_faithful_account_of_the_theory_has_no_findings(theory) -> None:
    assert paper_findings(theory, faithful_text(theory)) == []


@pytest.mark.parametrize(
    "spoil, finding",
    [
        pytest.param(
            lambda text: text.replace("Lemma 2 (L2)", "Lemma 2"),
            "lemma 2 (L2) is not stated as 'Lemma 2 (L2)'",
            id="lemma-unnamed",
        ),
        pytest.param(
            lambda text: text.replace("[Unverified step]", ""),
            "0 [Unverified step] markers for 1 unverified lemmas",
            id="marker-dropped",
        ),
        pytest.param(
            lambda text: text.replace("Limitations.", "Outlook."),
            "no Limitations section, yet lemmas are not verified",
            id="no-limitations",
        ),
        pytest.param(
            lambda text: text.replace("is not established", "holds"),
            "the main result is not established and the paper does not say so",
            id="unestablished-claimed",
        ),
        pytest.param(
            lambda text: text + " Proof style rules: be brief.",
            "prompt material in the paper: 'Proof style rules'",
            id="prompt-echo",
        ),
        pytest.param(lambda text: text + " **Bold** claim.", "markdown in the paper: '**'", id="markdown"),
        pytest.param(
            lambda text: text.replace(status_line(PARTLY_VERIFIED_THEORY, "L1"), "Status: proved."),
            f"lemma L1 has no status line '{status_line(PARTLY_VERIFIED_THEORY, 'L1')}'",
            id="status-in-other-words",
        ),
    ],
)
def test_each_defect_of_the_paper_is_named(spoil, finding: str) -> None:
    findings = paper_findings(PARTLY_VERIFIED_THEORY, spoil(faithful_text(PARTLY_VERIFIED_THEORY)))
    assert finding in findings


def test_an_established_main_result_stated_nowhere_is_a_finding() -> None:
    text = faithful_text(VERIFIED_THEORY).replace("Theorem 1. t", "")
    assert paper_findings(VERIFIED_THEORY, text) == ["the main result is established but stated nowhere"]


def test_without_pypdf_the_compile_report_says_the_paper_was_not_audited(tmp_path, monkeypatch) -> None:
    """pypdf is the optional `pdf` extra: SLURM's virtualenv has none, and its compile jobs died on
    the import (2026-12-04). The audit says it did not run instead."""
    import sys

    monkeypatch.setitem(sys.modules, "pypdf", None)  # import now raises ImportError
    assert audit_pdf(VERIFIED_THEORY, tmp_path / "paper_v1.pdf") == [NOT_AUDITED]
