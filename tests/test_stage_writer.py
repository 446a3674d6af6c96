"""The writer: exactly one marker per unverified lemma, every one named under Limitations, whatever
the model wrote; the prompt it sends (style rules, macros, citation keys) and the paper it keeps."""

from __future__ import annotations

import re

from lemmata.artifacts import (
    ConsistencyCheck, Direction, Directions, Experiment, LemmaCheck, PaperRecord, ProvedLemma, Survey, TaskInput,
    Theory,
)
from lemmata.latex.macros import MACRO_SUMMARY
from lemmata.stages.unverified_marks import add_numerical_warnings, mark_unverified
from lemmata.stages.writer import PROOF_STYLE_RULES, WriterInputs, paper_title, write_paper
from lemmata.testing.scripted_backend import scripted_client


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


def markers(body: str) -> int:
    return body.count("\\unverified")


def test_a_fully_verified_theory_keeps_no_marker_at_all() -> None:
    body = "\\section{Introduction}\nText \\unverified{} and [Unverified step] typed by the model."
    assert mark_unverified(body, ALL_VERIFIED) == "\\section{Introduction}\nText and typed by the model."


def test_no_lemma_environments_put_one_marker_per_lemma_in_our_limitations() -> None:
    out = mark_unverified("\\section{Introduction}\nText.", SOME_UNVERIFIED)
    section = out.split("\\section*{Limitations of the verification}", 1)[1]
    assert section.count("\\item \\unverified{} ") == 2 and markers(out) == 2
    assert "Lemma L2 (low confidence, confidence 0.55)" in section and "Lemma L3 (failed" in section
    assert "L1" not in section


LEMMAS_BODY = ("\\begin{lemma}[L1]\\label{lem:L1} One.\\end{lemma}\n\\begin{proof}A.\\end{proof}\n"
               "\\begin{lemma}[Lemma L2] Two.\\end{lemma}\n\\unverified\n\\begin{proof}\\unverified B.\\end{proof}\n"
               "\\begin{lemma}\\label{lem:L3} Three.\\end{lemma}\n\\begin{proof}C. [Unverified step]\\end{proof}\n"
               "\\section{Limitations}\nL2 and L3 are weak; see \\unverified.\n")


def test_each_unverified_lemma_gets_exactly_one_marker_after_its_statement() -> None:
    """Malformed model output: markers twice for L2, a literal one inside L3's proof, one in Limitations."""
    out = mark_unverified(LEMMAS_BODY, SOME_UNVERIFIED)
    assert markers(out) == 2 and "[Unverified step]" not in out
    assert "Two.\\end{lemma}\n\\unverified{}\n" in out and "Three.\\end{lemma}\n\\unverified{}\n" in out
    assert "One.\\end{lemma}\n\\begin{proof}" in out  # the verified lemma is left alone
    assert "Limitations of the verification" not in out  # the model's section names both


def test_lemmas_without_ids_are_matched_by_position_when_the_counts_agree() -> None:
    body = "".join(f"\\begin{{lemma}} S{i}.\\end{{lemma}}\\begin{{proof}}P{i}.\\end{{proof}}\n" for i in (1, 2, 3))
    out = mark_unverified(body, SOME_UNVERIFIED)
    assert "S2.\\end{lemma}\n\\unverified{}\n" in out and "S3.\\end{lemma}\n\\unverified{}\n" in out
    assert markers(out) == 2


def test_titled_and_untitled_lemmas_mix_when_the_counts_agree() -> None:
    body = "\\begin{lemma}[L1] S1.\\end{lemma}\\begin{lemma} S2.\\end{lemma}\\begin{lemma}[L3] S3.\\end{lemma}"
    out = mark_unverified(body, SOME_UNVERIFIED)
    assert "S2.\\end{lemma}\n\\unverified{}\n" in out and "S3.\\end{lemma}\n\\unverified{}\n" in out


def test_a_lemma_missing_from_the_text_carries_its_marker_in_our_list() -> None:
    body = "\\begin{lemma}[L2] Two.\\end{lemma}\n\\section{Limitations}\nL2 and L3 are weak.\n"
    out = mark_unverified(body, SOME_UNVERIFIED)
    added = out.split("\\section*{Limitations of the verification}", 1)[1]
    assert "\\item \\unverified{} Lemma L3" in added and "L2" not in added
    assert markers(out) == 2


def test_a_limitations_section_naming_only_some_lemmas_gets_the_rest_listed() -> None:
    """Malformed model output met on the embedded model: its Limitations section named one of two unverified lemmas."""
    body = ("\\begin{lemma}[L2] Two.\\end{lemma}\\begin{lemma}[L3] Three.\\end{lemma}\n"
            "\\section{Limitations}\nLemma L2 is only sketched.\n\\section{Conclusion}\nL3 is fine.")
    out = mark_unverified(body, SOME_UNVERIFIED)
    added = out.split("\\section*{Limitations of the verification}", 1)[1]
    assert "Lemma L3" in added and "Lemma L2" not in added  # L3 appears in the Conclusion, not under Limitations
    assert "\\unverified" not in added and markers(out) == 2  # its marker sits after its lemma


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


def check(lemma_id: str, violations: int, suspect: bool) -> LemmaCheck:
    return LemmaCheck(lemma_id=lemma_id, group="low_confidence", outcome="ran", trials=2000, violations=violations,
                      violation_rate=violations / 2000, numerically_suspect=suspect)


def test_numerically_suspect_lemmas_get_a_bold_warning_with_their_figures() -> None:
    experiment = Experiment(skipped=False, checks=[check("L2", 240, True), check("L3", 1, False)])
    out = add_numerical_warnings("Body.", experiment)
    assert out.count("\\textbf{Warning: numerical tests contradict Lemma") == 1
    assert "Lemma L2.} 240 of 2000 random trials violate it (rate 12.0\\%)" in out
    assert "L3" not in out


def test_no_suspect_lemma_no_warning_section() -> None:
    assert add_numerical_warnings("Body.", Experiment(skipped=True, skip_reason="EXPERIMENT_MODE=false")) == "Body."


# write_paper with a scripted model: what the prompt carries and what the paper keeps.

PAPERS = [
    PaperRecord(id="arXiv:2101.00001", title="Parity in rings", authors=["José Díaz", "Ann Lee"], year=2021),
    PaperRecord(id="arXiv:2101.00002", title="More parity", authors=["Diaz, J.", "B", "C", "D"], year=2021),
    PaperRecord(id="s2:77", title="Anonymous notes"),
]


def writer_inputs(papers: list[PaperRecord], feedback: str = "") -> WriterInputs:
    return WriterInputs(task=task("prove"), survey=Survey(papers=papers),
                        directions=directions("The sum of two even integers is even."), theory=SOME_UNVERIFIED,
                        experiment=Experiment(skipped=True, skip_reason="EXPERIMENT_MODE=false"), feedback=feedback)


def write(answer: str, papers: list[PaperRecord], enforce_style: bool = True, feedback: str = ""):
    client, backend = scripted_client({"writer": [answer]})
    paper = write_paper(client, writer_inputs(papers, feedback), version=1, enforce_style=enforce_style)
    return paper, backend.calls("writer")[0].messages[-1].content


def test_the_five_proof_style_rules_are_sent_only_when_enforced() -> None:
    _, enforced = write("Body.", [])
    _, relaxed = write("Body.", [], enforce_style=False)
    rules = PROOF_STYLE_RULES.splitlines()[1:]
    assert len(rules) == 5 and all(rule in enforced for rule in rules)
    assert not any(rule in relaxed for rule in rules)


def test_the_prompt_lists_the_macros_and_each_key_with_its_paper() -> None:
    paper, prompt = write("Body.", PAPERS)
    assert MACRO_SUMMARY in prompt
    assert "diaz2021: José Díaz, Ann Lee (2021), Parity in rings" in prompt
    assert "diaz2021a: Diaz, J., B, C et al. (2021), More parity" in prompt
    assert "unknown: unknown authors, Anonymous notes" in prompt
    listed = re.findall(r"^(\w+): ", prompt.split("Citation keys", 1)[1].split("\n\n", 1)[0], re.MULTILINE)
    assert listed == re.findall(r"^@\w+\{(\w+),", paper.bibtex, re.MULTILINE) == ["diaz2021", "diaz2021a", "unknown"]


def test_unknown_citations_leave_the_text_and_known_ones_stay() -> None:
    paper, _ = write("As in \\cite{diaz2021a, knuth1997} and \\citep{made2020up}.", PAPERS)
    assert paper.meta.removed_citations == ["knuth1997", "made2020up"]
    assert paper.meta.cited_keys == ["diaz2021a"] and "\\cite{diaz2021a}" in paper.tex
    assert "\\bibliography{references}" in paper.tex and paper.meta.bib_entries == 3


def test_without_survey_papers_nothing_is_cited_and_there_is_no_bibliography() -> None:
    paper, prompt = write("As in \\cite{diaz2021a}.", [])
    assert "(none: cite nothing)" in prompt
    assert paper.bibtex == "" and "\\bibliography" not in paper.tex and "\\cite" not in paper.tex


def test_reviewer_feedback_reaches_the_prompt() -> None:
    _, prompt = write("Body.", [], feedback="Shorten the introduction.")
    assert "Reviewer feedback to follow: Shorten the introduction." in prompt
    _, without = write("Body.", [])
    assert "Reviewer feedback" not in without
