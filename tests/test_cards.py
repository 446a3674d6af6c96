"""The theory review gate's chain is rendered from the artifact: L1, L2, … tagged 'verified' or
'low confidence' (spec, lemma record), with how each lemma was verified (issue 4)."""

from __future__ import annotations

import pytest

from lemmata.artifacts import CompileReport, ConsistencyCheck, ProvedLemma, Theory
from lemmata.cards import compile_line, lemma_chain, theory_card


def lemma(lemma_id: str, method: str, status: str, confidence: float, attempts: int = 1,
          verification: str = "") -> ProvedLemma:
    verified = method in ("auto_accepted", "verifier_pass")
    return ProvedLemma(id=lemma_id, statement=f"Statement of {lemma_id}.", proof_text="" if status == "failed" else "p",
                       confidence=confidence, verified=verified, status=status,  # type: ignore[arg-type]
                       verification_method=method, verification=verification, attempts=attempts)  # type: ignore[arg-type]


THEORY = Theory(
    goal="g", theorem_statement="t", assembled_proof="By [parity] and [sum].", proof_status="partial",
    consistency=ConsistencyCheck(passed=True),
    lemmas=[
        lemma("parity", "auto_accepted", "proved", 0.98),
        lemma("sum", "verifier_pass", "proved", 0.7, attempts=2),
        lemma("closure", "failed", "low_confidence", 0.7, attempts=6, verification="verifier: uncertain (gap)"),
        lemma("bound", "not_checked", "low_confidence", 0.6, verification="not checked: the verifier could not run"),
        lemma("extra", "failed", "failed", 0.0, verification="no usable proof"),
    ],
)


def test_the_chain_is_numbered_in_plan_order_and_tagged_from_the_artifact() -> None:
    heads = [line for line in lemma_chain(THEORY) if not line.startswith("    ")]
    assert heads == [
        "L1 [parity] verified (auto-accepted), confidence 0.98: Statement of parity.",
        "L2 [sum] verified (verifier pass, 2 turns), confidence 0.70: Statement of sum.",
        "L3 [closure] low confidence (did not pass the check, 6 turns), confidence 0.70: Statement of closure.",
        "L4 [bound] low confidence (not checked), confidence 0.60: Statement of bound.",
        "L5 [extra] failed (did not pass the check), confidence 0.00: Statement of extra.",
    ]


def test_every_unverified_lemma_says_why() -> None:
    whys = [line.strip() for line in lemma_chain(THEORY) if line.startswith("    why: ")]
    assert whys == ["why: verifier: uncertain (gap)", "why: not checked: the verifier could not run",
                    "why: no usable proof"]


def test_the_theory_card_counts_verified_lemmas_from_the_artifact() -> None:
    assert "Proof status: partial (4/5 lemmas with a proof, 2 verified)" in theory_card(THEORY)


@pytest.mark.parametrize(
    "report, line",
    [
        pytest.param(CompileReport(tex_file="paper_v1.tex", ok=True, pdf_file="paper_v1.pdf",
                                   passes=["pdflatex", "bibtex", "pdflatex", "pdflatex"], seconds=1.234),
                     "Compile: 4 passes in 1.2 s, 0 warnings", id="clean"),
        pytest.param(CompileReport(tex_file="paper_v1.tex", ok=True, pdf_file="paper_v1.pdf", passes=["pdflatex"] * 3,
                                   seconds=2.0, warnings=["w1", "w2"], undefined_citations=["lee2019"]),
                     "Compile: 3 passes in 2.0 s, 2 warnings; undefined citations: lee2019, undefined references: none",
                     id="undefined-citation"),
        pytest.param(CompileReport(tex_file="paper_v1.tex", ok=False, passes=["pdflatex"],
                                   errors=["paper_v1.tex:41: Undefined control sequence \\Tr"]),
                     "Compile FAILED after pdflatex: paper_v1.tex:41: Undefined control sequence \\Tr", id="failed"),
    ],
)
def test_the_writer_card_shows_the_compile_report(report: CompileReport, line: str) -> None:
    assert compile_line(report) == line
