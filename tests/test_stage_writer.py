"""The writer's guarantee that every unverified lemma is marked and named, whatever the model wrote."""

from __future__ import annotations

import pytest

from lemmata.artifacts import ConsistencyCheck, Direction, Directions, ProvedLemma, TaskInput, Theory
from lemmata.stages.writer import ensure_limitations, paper_title


def lemma(lemma_id: str, verified: bool, status: str = "proved", confidence: float = 0.9) -> ProvedLemma:
    return ProvedLemma(id=lemma_id, statement=f"Statement {lemma_id}.", proof_text="Proof.", confidence=confidence,
                       verified=verified, status=status,  # type: ignore[arg-type]
                       verification_method="auto_accepted" if verified else "failed",
                       verification="verifier: invalid (gap in step 2)" if not verified else "auto-accepted")


def theory(*lemmas: ProvedLemma) -> Theory:
    return Theory(goal="G", theorem_statement="G", lemmas=list(lemmas), assembled_proof="By [L1].",
                  consistency=ConsistencyCheck(passed=True), proof_status="partial")


ALL_VERIFIED = theory(lemma("L1", True), lemma("L2", True))
SOME_UNVERIFIED = theory(lemma("L1", True), lemma("L2", False, "low_confidence", 0.55), lemma("L3", False, "failed", 0.3))


def test_a_fully_verified_theory_leaves_the_body_alone() -> None:
    body = "\\section{Introduction}\nText."
    assert ensure_limitations(body, ALL_VERIFIED) == body


def test_no_markers_and_no_limitations_get_our_section_with_every_unverified_lemma() -> None:
    out = ensure_limitations("\\section{Introduction}\nText.", SOME_UNVERIFIED)
    section = out.split("\\section*{Limitations of the verification}", 1)[1]
    assert section.count("\\item \\unverified{}") == 2
    assert "Lemma L2 (low confidence, confidence 0.55)" in section and "Lemma L3 (failed" in section
    assert "L1" not in section


def test_a_limitations_section_naming_only_some_lemmas_gets_the_rest_listed() -> None:
    """Malformed model output met on the embedded model: its Limitations section named one of two unverified lemmas."""
    body = ("\\begin{proof}\\unverified By algebra.\\end{proof}\n"
            "\\section{Limitations}\nLemma L2 is only sketched.\n\\section{Conclusion}\nL3 is fine.")
    out = ensure_limitations(body, SOME_UNVERIFIED)
    added = out.split("\\section*{Limitations of the verification}", 1)[1]
    assert "Lemma L3" in added and "Lemma L2" not in added  # L3 appears in the Conclusion, not under Limitations


def test_a_complete_limitations_section_with_markers_is_kept_as_written() -> None:
    body = "\\unverified\n\\section*{Limitations}\nSteps L2 and L3 are unverified.\n"
    assert ensure_limitations(body, SOME_UNVERIFIED) == body


@pytest.mark.parametrize("body", ["\\section{Limitations}\nL2 and L3 are weak.", "Text without sections."])
def test_named_but_never_marked_lemmas_get_markers(body: str) -> None:
    out = ensure_limitations(body, SOME_UNVERIFIED)
    assert out.count("\\unverified{}") == 2


def directions(goal: str) -> Directions:
    return Directions(candidates=[Direction(title="Prove the sum of two odd integers is even", summary="s")],
                      chosen=0, goal=goal, research_brief="")


def task(mode: str) -> TaskInput:
    return TaskInput(session_id="s1", mode=mode, task="Prove that the sum of two even integers is even.")  # type: ignore[arg-type]


def test_a_prove_paper_is_titled_by_its_theorem() -> None:
    """Malformed model output met on the embedded model: a direction titled with the wrong theorem."""
    assert paper_title(task("prove"), directions("The sum of two even integers is even.")) == \
        "The sum of two even integers is even"


def test_other_papers_and_long_theorems_take_the_direction_title() -> None:
    assert paper_title(task("explore"), directions("Short goal.")) == "Prove the sum of two odd integers is even"
    assert paper_title(task("prove"), directions("x" * 121)) == "Prove the sum of two odd integers is even"
