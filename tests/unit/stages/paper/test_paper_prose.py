"""The writer model's parts, cleaned for lemmata's skeleton: prompt echoes, markers, restated lemmas,
headings and markdown go; lemmata's own text stands in for a part the model never wrote."""

from __future__ import annotations

import pytest

from lemmata.agents.prompts import render_prompt
from lemmata.artifacts import ConsistencyCheck, ProvedLemma, Theory
from lemmata.latex.macros import MACRO_SUMMARY
from lemmata.stages.paper.claims import claims_unfounded_significance, lemmas_named, methods_named, methods_used_by
from lemmata.stages.paper.prompt_echo import PromptEcho
from lemmata.stages.paper.prose import clean_parts, fallback_parts
from lemmata.stages.paper.writer import PROOF_STYLE_RULES
from support import DATA
from support.formal import machine_checked

STATEMENT = "The sum of two integers is even if each integer is even."
PROMPT = (
    render_prompt("writer_followup", problem="x", parts="y").user
    + "\n"
    + MACRO_SUMMARY
    + "\nCitation keys (key: authors (year), title; cite with exactly these keys, or none):\n"
    "diaz2021: José Díaz, Ann Lee (2021), Parity in rings\n"
    '- Cite only with \\cite{key} and only the keys listed under "Citation keys"; if none are listed, cite nothing.\n'
    f"[L2] NOT VERIFIED (verifier: invalid (step 2 assumes the claim)). Statement: {STATEMENT}\n"
    "The prover's proof begins: **Proof:** By [L1], write $a = 2m$. Then the claim follows. QED\n"
    "- CONCLUSION: one short paragraph.\n"
    # The writer's style skill, as the briefing appends it: its sentences wrap over lines.
     + (DATA.parent.parent / "lemmata" / "skills" / "latex-theorem-proof.md").read_text().split("---\n")[-1]
)
GOAL = "The sum of two even integers is even."
ECHO = PromptEcho(PROMPT + f"Goal: {GOAL}\n", allowed=[GOAL], statements=[STATEMENT, "Zero is even."])


def embedded_preliminaries() -> str:
    """The Preliminaries the embedded 1.5B model wrote in run 1: the macro list of its prompt."""
    answer = (DATA / "embedded-run-1.writer-answer.txt").read_text(encoding="utf-8")
    return answer.split("\\section{Preliminaries}", 1)[1].split("\\section{Lemmas}", 1)[0]


def cleaned(key: str, text: str) -> str:
    fragments = clean_parts({key: text}, ECHO, ["L1", "L2"], {"diaz2021"}).fragments
    return fragments[key].latex if key in fragments else ""


def test_the_macro_list_echoed_in_the_preliminaries_is_removed() -> None:
    """Malformed model output, the real case: the embedded model printed the macro list as its Preliminaries."""
    text = embedded_preliminaries() + "\nAn integer $n$ is even if $n = 2k$ for some integer $k$.\n"
    assert "Number sets" in text and "\\cA, \\cB" in text  # the case as it was
    latex = cleaned("preliminaries", text)
    assert latex == "An integer $n$ is even if $n = 2k$ for some integer $k$."


def test_a_part_that_is_only_the_macro_list_is_missing() -> None:
    assert cleaned("preliminaries", embedded_preliminaries()) == ""


ECHOES = [
    pytest.param("- Number sets, expectation, probability (blackboard bold): \\RR \\NN \\ZZ", id="macro-line-verbatim"),
    pytest.param("* Bold Greek: \\balpha, \\bbeta, bgamma, \\bdelta", id="macro-line-shortened"),
    pytest.param("We use the macros of the package throughout.", id="talks-about-macros"),
    pytest.param("diaz2021: José Díaz, Ann Lee (2021), Parity in rings", id="citation-key-line"),
    pytest.param("Cite only with \\cite{key} and only the keys listed under Citation keys.", id="a-rule"),
    pytest.param("Write only these parts, each after its marker line, then the line %%% END:", id="the-request"),
    # The embedded 1.5B model, asked for the parts (2026-11-25): each lemma's entry under its marker,
    # the format's description of a part as the part, the lemma statements as its preliminaries.
    pytest.param(
        "NOT VERIFIED (verifier: invalid (step 2 assumes the claim)). Statement: The sum of two integers "
        "is even if each integer is even.",
        id="a-lemma-entry-copied",
    ),
    pytest.param(
        "The prover's proof begins: **Proof:** By [L1], write \\(a = 2m\\). Then the claim follows.",
        id="the-shortened-proof-copied",
    ),
    pytest.param(
        "The prover's proof begins: \\#\\#\\# Proof of Lemma~\\ref{lem:L3}: If a is even then -a is even. By "
        "[L2], write a = 2m, then go on far beyond what the request showed.",
        id="a-copied-line-continued",
    ),
    pytest.param("One short paragraph.", id="a-part-s-description-as-the-part"),
    pytest.param("- The sum of two integers is even if each integer is even.", id="a-lemma-statement-listed"),
    pytest.param("Zero is even.", id="a-short-lemma-statement-restated"),
    pytest.param(f"Goal: {GOAL}", id="a-labelled-line-of-the-request"),
    # The README's main command on the embedded model (2026-11-25): the macro list retold as prose in
    # the Preliminaries, and the request's own material talked about in the Introduction.
    pytest.param(
        "The definitions and notation used in the proof are listed in the Preliminaries section. The symbols "
        "\\RR, \\NN, \\ZZ, \\QQ, \\CC, \\FF, \\EE, \\PP, and \\cA \\cB \\cC are used to denote sets and "
        "vectors.",
        id="the-macro-list-retold-as-prose",
    ),
    pytest.param(
        "The operators \\argmin \\argmax \\Var \\Cov \\tr \\rank \\diag \\supp \\sign \\dist are used "
        "to denote arguments, maximums, variances, covariances, traces.",
        id="the-operators-retold",
    ),
    pytest.param(
        'Citation keys are provided to cite the theorem and its proof. The main result is stated as "The sum '
        'of two even integers is even", and it is not verified yet.',
        id="talks-about-the-citation-keys",
    ),
    pytest.param(
        "The survey summary provides additional context about the proof and its significance in number theory.",
        id="talks-about-the-survey-summary",
    ),
    # The README's main command on the embedded model (2026-11-25, this run's Introduction): the
    # writer's style rules, wrapped over lines in the prompt, retold as the paper's outline.
    pytest.param(
        "• Lemmas: The main result is stated in its environment before it is used, and followed at once by "
        "its proof environment. Each lemma is stated in words and symbols together, with the quantifiers "
        "of the statement explicit; never leave constants unnamed when they are known.",
        id="the-style-rules-retold-as-the-outline",
    ),
    # The README's main command on the embedded model (2026-11-26): the whole Preliminaries.
    pytest.param(
        "The bold vectors and bold matrices are used to represent vectors and matrices, respectively.",
        id="the-macro-groups-retold",
    ),
    # The README's main command on the embedded model (2026-11-27), the writer's last turn: the
    # format retold as the Introduction, a part's description as the Conclusion, the brief talked about.
    pytest.param(
        "The paper is organized into three main sections: ABSTRACT, INTRODUCTION, and PRELIMINARIES. The "
        "ABSTRACT provides a brief overview of the question, the approach used, and the result as far as it "
        "is established.",
        id="the-parts-named-by-their-markers",
    ),
    pytest.param(
        "The paper concludes with a short paragraph summarizing the main result and its implications.",
        id="the-conclusion-s-description-as-the-conclusion",
    ),
    pytest.param(
        "The research brief provides a brief overview of the problem, the approach, and the result as far as "
        "it is established.",
        id="talks-about-the-research-brief",
    ),
    # The same command, run again: what was left of the macro list, the whole Preliminaries.
    pytest.param("- \\bm{x}", id="a-macro-alone-in-a-list-item"),
    pytest.param("\\(\\RR\\), \\(\\NN\\)", id="macros-alone-in-formulas"),
]


@pytest.mark.parametrize("line", ECHOES)
def test_a_line_echoing_the_prompt_is_dropped(line: str) -> None:
    assert ECHO.is_echo(line)


KEPT = [
    pytest.param(GOAL, id="the-goal-restated"),
    pytest.param("Bold vectors such as $\\bx$ are columns; the other integer is odd.", id="one-macro-group-named"),
    pytest.param("- $\\bx \\in \\RR^n$", id="a-formula-using-macros"),
    pytest.param("\\[ \\norm{\\bx} \\le 1 \\]", id="a-display-using-macros"),
    pytest.param(f"We show that {GOAL.lower()[:-1]}, using the lemmas below in turn.", id="a-sentence-about-the-goal"),
    pytest.param("Thus zero is even.", id="a-sentence-around-a-short-statement"),
    pytest.param("Note: the idea is to add the witnesses.", id="a-short-label-of-its-own"),
    pytest.param("The idea is simple: add the two witnesses of evenness.", id="a-sentence-with-a-colon"),
    pytest.param(
        "Let $\\bx, \\by \\in \\RR^n$ and $\\abs{x} \\leq \\norm{\\bx}$ for all vectors.", id="macros-in-a-formula"
    ),
    pytest.param("Proof.", id="short-line"),
    pytest.param(
        "Let $x \\in \\RR$, $n \\in \\NN$, $k \\in \\ZZ$, $q \\in \\QQ$, $z \\in \\CC$ and $p \\in \\PP$.",
        id="many-macros-each-in-its-formula",
    ),
    pytest.param("Over \\RR and \\CC the claim fails.", id="two-macros-in-prose"),
    pytest.param("Parity is the first invariant of integer arithmetic.", id="ordinary-prose"),
    pytest.param(
        "Each lemma is stated before it is used; the proofs then follow the order of the plan, and the "
        "last section assembles them into the main result.",
        id="the-paper-s-own-outline",
    ),
]


@pytest.mark.parametrize("line", KEPT)
def test_a_line_of_the_paper_s_own_is_kept(line: str) -> None:
    assert not ECHO.is_echo(line)


PARTS = [
    pytest.param(
        "introduction",
        "# Introduction\n**Parity** matters, see [L2].\n## Background\nOld.",
        "\\textbf{Parity} matters, see Lemma~\\ref{lem:L2}.\n\\subsection{Background}\nOld.",
        id="markdown-heading-repeated-and-a-subheading",
    ),
    pytest.param(
        "introduction",
        "Text.\n\\section{Background}\nOld.",
        "Text.\n\\subsection{Background}\nOld.",
        id="a-section-inside-a-part-becomes-a-subsection",
    ),
    pytest.param(
        "discussion",
        "\\unverified As shown [Unverified step] in \\cite{diaz2021, knuth1997}.",
        "As shown in \\cite{diaz2021}.",
        id="own-markers-and-an-unknown-citation",
    ),
    pytest.param(
        "preliminaries",
        "\\begin{Lem}[L1] Restated.\\end{Lem}\\begin{proof}Again.\\end{proof}\n\\begin{defin}Even.\\end{defin}",
        "\\begin{definition}Even.\\end{definition}",
        id="a-restated-lemma-with-its-proof-goes",
    ),
    pytest.param(
        "abstract",
        "\\begin{abstract}\n\\section{Abstract}\nWe prove it.\n\\end{abstract}",
        "We prove it.",
        id="abstract-in-its-own-environment",
    ),
    pytest.param(
        "lemma:L1",
        "We unfold the definition.\n\n\\begin{proof}A whole proof.\\end{proof}\nMore.",
        "We unfold the definition.",
        id="explanation-keeps-its-first-paragraph",
    ),
]


@pytest.mark.parametrize("key, text, expected", PARTS)
def test_a_part_is_cleaned_for_the_skeleton(key: str, text: str, expected: str) -> None:
    assert cleaned(key, text) == expected


AM_GM_PRELIMINARIES = r"""The definitions and notation the lemmas use are as follows:
- \(\RR\) is the set of real numbers.
- \(\FF\) is the set of finite fields.
- \(\EE\) is the set of elliptic curves.
- \(\cA\), \(\cB\), \(\cC\) are calligraphic letters.
- \(\bm{x}\) is a bold symbol.
- \(\defeq\) is the symbol for the colon-equals operator.
We work with real $a$ and $b$ throughout."""


def test_the_macro_list_retold_as_definitions_is_removed_with_its_introduction() -> None:
    """Malformed model output, an embedded run of "a^2 + b^2 >= 2ab" (2026-11-25): the package's
    macros as a list of definitions, each alone in its formula ("F is the set of finite fields")."""
    assert cleaned("preliminaries", AM_GM_PRELIMINARIES) == "We work with real $a$ and $b$ throughout."


def test_the_macro_list_retold_in_three_lines_is_removed() -> None:
    """Malformed model output, the README's main command re-run after the first fixes (2026-11-25)."""
    text = (
        "The definitions and notation used in this proof are as follows:\n"
        "- \\(\\RR\\), \\(\\NN\\), \\(\\ZZ\\), \\(\\QQ\\), \\(\\CC\\) are the sets of real, natural, integer, "
        "rational and complex numbers, respectively.\n"
        "- \\(\\cA\\), \\(\\cB\\), \\(\\cC\\) are the calligraphic letters used in this proof.\n"
        "- \\(\\bm{x}\\) is a bold symbol used in this proof."
    )
    assert cleaned("preliminaries", text) == ""


def test_the_line_introducing_an_echoed_macro_list_goes_with_it() -> None:
    """The README's main command on the embedded model (2026-11-25, run again): its Preliminaries
    were an introduction and the macro list; the list went, the introduction stood alone."""
    text = (
        "The definitions and notation used in the proof are as follows:\n"
        "- Number sets: \\(\\RR\\), \\(\\NN\\), \\(\\ZZ\\), \\(\\QQ\\), \\(\\CC\\), \\(\\FF\\)\n"
        "- Bold vectors: \\(\\ba\\), \\(\\bb\\), \\(\\bc\\), \\(\\bd\\), \\(\\be\\)\n"
    )
    assert cleaned("preliminaries", text) == ""
    kept = "The notation is as follows:\n\n$n$ is an integer and $k = n/2$."
    assert cleaned("preliminaries", kept) == kept  # an introduction to the paper's own notation stays


def test_a_few_notation_lines_of_the_paper_s_own_are_kept() -> None:
    text = "We write $\\RR$ for the real numbers.\nLet $x \\in \\RR$ and $n \\in \\NN$.\nOver \\RR the claim holds."
    assert cleaned("preliminaries", text) == text


def test_paragraphs_repeating_an_earlier_part_are_dropped() -> None:
    """Malformed model output, the README's main command on the embedded model (2026-11-25): the
    introduction's paragraphs given again as the discussion and as the conclusion."""
    intro = (
        "The problem at hand is to prove that the sum of two even integers is indeed even.\n\n"
        "Adding the two witnesses gives $2k + 2m = 2(k + m)$, an even number."
    )
    parts = clean_parts(
        {
            "conclusion": intro,
            "discussion": intro + "\n\nA new remark on odd sums and their parity.",
            "introduction": intro,
        },
        ECHO,
        ["L1", "L2"],
        set(),
    )
    assert "The problem at hand" in parts.fragments["introduction"].latex
    assert parts.fragments["discussion"].latex == "A new remark on odd sums and their parity."
    assert "conclusion" not in parts.fragments  # missing: asked for again, or lemmata writes it
    assert parts.repeated_paragraphs == 4


def test_a_lemma_idea_that_is_the_introduction_again_is_dropped_but_the_abstract_may_be_repeated() -> None:
    """Malformed model output, an embedded run of "a^2 + b^2 >= 2ab" (2026-11-25)."""
    said = (
        " is to prove the inequality $a^2 + b^2 \\geq 2ab$ for all real numbers $a$ and $b$. It is a well-known "
        "consequence of the inequality of arithmetic and geometric means."
    )
    parts = clean_parts(
        {"abstract": "The aim" + said, "introduction": "The problem" + said, "lemma:L1": "The idea" + said},
        ECHO,
        ["L1"],
        set(),
    )
    assert "introduction" in parts.fragments and "lemma:L1" not in parts.fragments
    assert parts.repeated_paragraphs == 1


def test_a_lemma_explanation_stops_where_the_copied_proof_begins() -> None:
    """Malformed model output, the README's main command re-run after the first fixes (2026-11-25):
    after its idea, the request's shortened proof, its markdown headings flattened into the line."""
    text = (
        "The idea is that for all integers \\( c \\), if \\( c \\) is even, then \\( c + 2 \\) is also even.\n"
        "#### Step 1: Restate the Lemma The statement we need to prove is:\n"
        "\\[ \\text{For all integers } c \\] #### Step 2: Introduce Objects and Existence We need to show it."
    )
    assert cleaned("lemma:L1", text) == (
        "The idea is that for all integers \\( c \\), if \\( c \\) is even, then \\( c + 2 \\) is also even."
    )


def test_short_paragraphs_may_repeat() -> None:
    parts = clean_parts({"introduction": "We prove it.", "conclusion": "We prove it."}, ECHO, ["L1"], set())
    assert parts.fragments["conclusion"].latex == "We prove it." and parts.repeated_paragraphs == 0


def theory(established: bool) -> Theory:
    lemmas = [
        ProvedLemma(
            id="L1",
            statement="S1.",
            proof_text="P.",
            confidence=0.9,
            verified=True,
            status="proved",
            verification_method="auto_accepted",
        ),
        ProvedLemma(
            id="L2",
            statement="S2.",
            depends_on=["L1"],
            proof_text="P.",
            confidence=0.9,
            verified=established,
            status="proved" if established else "low_confidence",
            verification_method="auto_accepted" if established else "failed",
        ),
    ]
    return Theory(
        goal="g",
        theorem_statement="T.",
        lemmas=lemmas,
        assembled_proof="By [L1].",
        consistency=ConsistencyCheck(passed=True),
        proof_status="proved",
        formal_statement="$\\forall n$",
    )


def test_lemmata_writes_what_the_model_never_did() -> None:
    keys = ["abstract", "introduction", "preliminaries", "lemma:L1", "lemma:L2", "discussion", "conclusion"]
    filled = fallback_parts(keys, theory(False), "Sums of evens are even.", "Add witnesses.")
    assert set(filled) == set(keys) - {"discussion"}
    assert filled["lemma:L1"].latex == "This lemma does not rely on an earlier lemma of the chain."
    assert filled["lemma:L2"].latex == "This lemma builds on Lemma~\\ref{lem:L1}."
    assert (
        "not established" in filled["conclusion"].latex and "2 lemmas, 1 of them verified" in filled["abstract"].latex
    )
    assert not any(fragment.by_writer for fragment in filled.values())
    # "Formally" is the word of the statement the machines checked, not of the crystallized prose.
    assert filled["preliminaries"].latex == "Stated precisely, the result reads: $\\forall n$"
    assert fallback_parts(["conclusion"], theory(True), "g", "")["conclusion"].latex.endswith(
        "from 2 lemmas, each verified."
    )


def test_lemmatas_conclusion_never_calls_an_unverified_lemma_verified() -> None:
    """The README's main command on the embedded model (2026-11-27): the writer left out the
    Conclusion and lemmata's own sentence said 'We proved the main result, Theorem 1, from 2
    verified lemmas.' while L1 was unverified: the main result was established by the machines
    on its own formal statement, not by the chain."""
    checked = theory(False).model_copy(update={"goal_check": machine_checked()})
    assert checked.main_result_established and sum(lemma.verified for lemma in checked.lemmas) == 1
    conclusion = fallback_parts(["conclusion"], checked, "g", "")["conclusion"].latex
    assert "verified lemmas" not in conclusion and "each verified" not in conclusion
    assert conclusion == (
        "The main result, Theorem~\\ref{thm:main}, is machine-checked. Its prose proof rests on 2 lemmas, "
        "1 of them verified; the Limitations section lists the others."
    )
    # One lemma, unverified (the README's main command, 2026-11-27): no "0 of them", no "the others".
    alone = checked.model_copy(update={"lemmas": checked.lemmas[1:]})
    assert fallback_parts(["conclusion"], alone, "g", "")["conclusion"].latex.endswith(
        "Its prose proof rests on 1 lemma, which is not verified; the Limitations section says why."
    )


CLAIMING = (
    "The sum of two even integers is even. This result is established by showing that if two numbers are both "
    "divisible by 2, their sum is also divisible by 2. The proof is based on the definition of even numbers."
)


def test_a_claim_of_proof_goes_when_the_main_result_is_not_established() -> None:
    """Malformed model output, the README's main command re-run after the first fixes (2026-11-25): an
    abstract and a conclusion saying "This result is established" of a paper with every lemma unverified."""
    parts = clean_parts(
        {
            "abstract": CLAIMING,
            "conclusion": "We have proved the claim.\nIt rests on parity.",
            "lemma:L1": "The idea is proved by unfolding the definition.",
        },
        ECHO,
        ["L1"],
        set(),
        established=False,
    )
    assert parts.fragments["abstract"].latex == (
        "The sum of two even integers is even. The proof is based on the definition of even numbers."
    )
    assert parts.fragments["conclusion"].latex == "It rests on parity."
    assert "is proved" in parts.fragments["lemma:L1"].latex  # an explanation may say how a lemma is proved
    assert parts.unfounded_claims == 2


def test_a_discussion_saying_the_checks_showed_the_proof_correct_loses_that_sentence() -> None:
    """Malformed model output, the README's main command on the embedded model (2026-11-26): the
    discussion of a paper with both lemmas unverified, one of them never tested, said "The numerical
    checks showed that the proof was correct"."""
    text = (DATA / "embedded_outputs" / "writer-discussion-checks-showed-the-proof-correct.txt").read_text()
    parts = clean_parts({"discussion": text}, ECHO, ["L1"], set(), established=False)
    discussion = parts.fragments["discussion"].latex
    # Its "numerous applications in various fields" goes too: nothing of the run looked into any.
    assert "correct" not in discussion and "applications" not in discussion and parts.unfounded_claims == 2
    assert discussion.endswith("The next step would be to verify the remaining unverified steps.")


def test_numbers_vouching_for_a_machine_checked_result_lose_their_sentence() -> None:
    """Malformed model output, the README's main command on the embedded model (2026-11-27): the
    discussion of a paper whose main result was machine-checked, while the one lemma tested
    numerically (L1) had failed its test, said "The numerical checks showed that the proof was
    correct". Sampled inputs never show a proof correct, whatever else checked the result."""
    text = (DATA / "embedded_outputs" / "writer-discussion-numbers-vouch-for-a-machine-checked-result.txt").read_text()
    parts = clean_parts({"discussion": text, "lemma:L1": "Tests confirmed the lemma."}, ECHO, ["L1"], set())
    discussion = parts.fragments["discussion"].latex
    assert "numerical" not in discussion and "correct" not in discussion
    assert discussion.startswith("The result of the proof is that the sum of two even integers is even.")
    assert discussion.endswith("The next step would be to verify the unverified steps.")
    assert "lemma:L1" not in parts.fragments  # its one sentence had the tests vouch for it
    assert "applications" not in discussion
    assert parts.unfounded_claims == 3  # the vouching two, and "numerous applications in mathematics"
    # The next run's discussion (2026-11-27, same command): the checks made every lemma "verified".
    said = "The numerical checks performed on the lemmas [L1], [L2], and [L3] showed that they were all verified."
    assert (
        clean_parts({"discussion": f"{said} Parity is an invariant."}, ECHO, ["L1"], set())
        .fragments["discussion"]
        .latex
        == "Parity is an invariant."
    )


@pytest.mark.parametrize(
    "sentence",
    [
        "The numerical checks found no counterexample among 10,000 sampled pairs.",
        "We tested the lemma on small cases; the proof itself is checked by Coq.",
        "Numerical experiments suggest the bound is sharp.",
        "The numerical test of L1 found 4,997 violations in 10,000 trials, so L1 is not verified.",
        "The numerical checks did not show that the proof is correct.",
    ],
)
def test_what_numbers_did_find_may_be_said(sentence: str) -> None:
    parts = clean_parts({"discussion": sentence}, ECHO, ["L1"], set())
    assert parts.fragments["discussion"].latex == sentence and parts.unfounded_claims == 0


def test_the_planners_brief_is_printed_as_its_unchecked_words() -> None:
    """The README's task on the embedded model (2026-11-27): the planner's brief held a false
    "the sum of any two integers is odd if and only if at least one of the integers is odd", and
    lemmata's own introduction printed it as the paper's claim."""
    brief = "The proof relies on the fact that the sum of any two integers is odd if and only if at least one is odd."
    introduction = fallback_parts(["introduction"], theory(True), "Sums of evens are even.", brief)["introduction"]
    assert introduction.latex.endswith(f"The approach, in the words of the planning model (not checked): {brief}")
    assert fallback_parts(["introduction"], theory(True), "g.", " ")["introduction"].latex.endswith("goal. g.")


def test_an_established_result_may_be_called_proved() -> None:
    parts = clean_parts({"abstract": CLAIMING}, ECHO, ["L1"], set(), established=True)
    assert "This result is established" in parts.fragments["abstract"].latex and parts.unfounded_claims == 0


IDEA_RUNNING_INTO_DISPLAYS = (DATA / "embedded_outputs" / "writer-lemma-idea-runs-into-displays.txt").read_text(
    encoding="utf-8"
)


def test_a_lemma_idea_does_not_end_on_the_colon_of_a_display_it_stops_before() -> None:
    """Malformed model output, the README's main command on the embedded model (2026-11-25, after
    issue 24): the lemma's idea went on into displays and numbered steps; cut before the first
    display, it ended "there exists an integer \\( k_a \\) such that:", introducing nothing."""
    idea = cleaned("lemma:L1", IDEA_RUNNING_INTO_DISPLAYS)
    assert not idea.rstrip().endswith(":")
    assert idea.startswith("The idea is to show that")
    assert idea.rstrip().endswith("to \\( a \\) and \\( b \\).")


@pytest.mark.parametrize("part", ["\\[\n   \\]\n", "   \\]\n", "\\[\na + b = 2(k + m)\n\\]\n"])
def test_a_lemma_idea_that_is_only_a_display_is_no_idea(part: str) -> None:
    """The same run printed "Idea." over an empty display: a part with no words outside math
    explains nothing, so the lemma gets no Idea paragraph."""
    fragments = clean_parts({"lemma:L1": part}, ECHO, ["L1", "L2"], {"diaz2021"}).fragments
    assert "lemma:L1" not in fragments


def test_a_rule_of_the_prompt_at_the_end_of_a_paragraph_goes_and_the_paragraph_stays() -> None:
    """Malformed model output, the README's main command on the embedded model (2026-11-26): its
    Discussion, two sentences of its own and then the writer's marker rule, which the paper printed."""
    echo = PromptEcho(PROOF_STYLE_RULES, allowed=[GOAL])
    own = (
        "The proof of the main result involves proving that if one integer is even and the other is odd, their "
        "sum is even. This is done by using the identity for the sum of an even and an odd integer."
    )
    copied = (
        "The low-confidence lemmas are tagged with an orange bold marker: lemmata adds it after each lemma "
        "marked NOT VERIFIED; do not write it yourself."
    )
    assert not echo.is_echo(own + " " + copied)  # most of the paragraph is the model's own
    kept, echoed = echo.remove(own + " " + copied + "\n\nA second paragraph.")
    assert kept == own + "\n\nA second paragraph." and echoed == 1


def test_a_paragraph_about_the_requests_own_material_goes() -> None:
    """Malformed model output, the README's main command on the embedded model (2026-11-26): the
    writer's description of the Introduction retold as the Introduction's second paragraph."""
    echo = PromptEcho(PROOF_STYLE_RULES, allowed=[GOAL])
    own = "The problem is to prove that the sum of two even integers is even."
    retold = (
        "The introduction provides a brief overview of the problem, why it matters, related work (citing the "
        "listed keys), and how the paper is organised. The preliminary section defines the necessary symbols "
        "and notation, including the definitions of even integers and the operations used in the proof."
    )
    kept, _ = echo.remove(own + "\n\n" + retold)
    assert kept.strip() == own


def test_a_paragraph_loses_only_its_sentence_about_the_survey_summary() -> None:
    """Malformed model output, the README's main command on the embedded model (2026-11-27): an
    introduction of the model's own whose last sentence talked about the request's survey summary;
    the whole paragraph went, and the writer spent a turn asking for an introduction again."""
    echo = PromptEcho(PROOF_STYLE_RULES, allowed=[GOAL])
    own = (
        "Modulo 2 is a fundamental property of integers that can be used to prove the sum of two even integers "
        "is even. The definition of even numbers is also crucial in this proof."
    )
    kept, _ = echo.remove(f"{own} The survey summary highlights the importance of this result in various proofs.")
    assert kept.strip() == own


def test_a_heading_that_heads_nothing_and_an_empty_display_are_dropped():
    """The README's task on the embedded model (2026-11-27): the introduction ended in an empty
    `\\subsection{Proof}` ("1.1 Proof" and nothing) and the Conclusion was one empty display."""
    parts = clean_parts(
        {
            "introduction": "Modulo 2 tells even from odd.\n\n#### Proof\n\\[\n\\]\n",
            "conclusion": "\\[\n\\]\n",
            "discussion": "\\subsection{Outlook} Sums of $k$ evens. \\begin{equation}\n\\end{equation}",
        },
        ECHO,
        ["L1", "L2"],
        set(),
    ).fragments
    assert parts["introduction"].latex == "Modulo 2 tells even from odd."
    assert "conclusion" not in parts  # nothing left: the paper has no empty Conclusion
    assert parts["discussion"].latex == "Sums of $k$ evens."  # (a leading heading goes: the skeleton has one)


# --- the README's main command on the embedded model, 2026-12-03 ------------------------------

EMBEDDED_INTRODUCTION = (
    "The problem of determining whether the sum of two even integers is even is fundamental in number theory. "
    "The goal of this paper is to provide a proof of this result using mathematical induction."
)


def test_a_method_no_proof_of_the_record_used_is_not_claimed() -> None:
    parts = clean_parts({"introduction": EMBEDDED_INTRODUCTION}, ECHO, ["L1"], set(), methods_used=frozenset())
    text = parts.fragments["introduction"].latex
    assert "induction" not in text and "fundamental in number theory." in text
    assert parts.unfounded_claims == 1


def test_a_method_the_proofs_used_may_be_named() -> None:
    proved_by_induction = theory(True).model_copy(update={"assembled_proof": "By induction on n, using [L1]."})
    used = methods_used_by(proved_by_induction)
    assert used == {"induction"}
    parts = clean_parts({"introduction": EMBEDDED_INTRODUCTION}, ECHO, ["L1"], set(), methods_used=used)
    assert "using mathematical induction." in parts.fragments["introduction"].latex


@pytest.mark.parametrize(
    "sentence",
    [
        "The proof needs no induction.",
        "We argue directly, not by contradiction.",
        "Here induction is not needed.",
        "We prove it without induction.",
    ],
)
def test_a_sentence_denying_a_method_is_kept(sentence: str) -> None:
    parts = clean_parts({"discussion": sentence}, ECHO, ["L1"], set())
    assert parts.fragments["discussion"].latex == sentence


def test_a_machine_proof_by_induction_counts_as_the_record_using_induction() -> None:
    record = theory(True)
    assert methods_used_by(record) == frozenset()
    assert methods_named('{"proof": "intros n. induction n; lia."}') == {"induction"}


def test_a_lemma_idea_that_stops_mid_sentence_is_no_idea_and_lemmata_writes_one() -> None:
    parts = clean_parts({"lemma:L1": "The idea is to prove that the sum of two even integers is"}, ECHO, ["L1"], set())
    assert "lemma:L1" not in parts.fragments and parts.unfinished_sentences == 1


def test_only_the_unfinished_last_sentence_of_a_part_goes() -> None:
    parts = clean_parts(
        {"conclusion": "Both integers are multiples of 2.\n\nTheir sum is a multiple of 2. Hence the sum,"},
        ECHO,
        ["L1"],
        set(),
    )
    assert parts.fragments["conclusion"].latex == "Both integers are multiples of 2.\n\nTheir sum is a multiple of 2."


@pytest.mark.parametrize(
    "ending",
    [
        "It is even.",
        "We get $a + b = 2(m + n)$",
        "\\[ a + b = 2k \\]",
        "See Lemma~\\ref{lem:L1}",
        "and $n$ time; \\QED",
    ],
)
def test_a_part_ending_in_punctuation_math_or_a_reference_is_finished(ending: str) -> None:
    parts = clean_parts({"conclusion": ending}, ECHO, ["L1"], set())
    assert parts.unfinished_sentences == 0


@pytest.mark.parametrize(
    "sentence",
    [
        "Lemma 2 has been verified by the checks.",
        "We have shown that [L2] holds for every pair of integers.",
        "Lemmas 1 and 2 are proven.",
        "L2 is correct, so the theorem follows.",
    ],
)
def test_a_sentence_calling_an_unverified_lemma_proved_goes_even_when_the_result_is_established(
    sentence: str,
) -> None:
    parts = clean_parts(
        {"discussion": f"Parity is an invariant. {sentence}"},
        ECHO,
        ["L1", "L2"],
        set(),
        established=True,
        unverified_lemmas=frozenset({"L2"}),
    )
    assert parts.fragments["discussion"].latex == "Parity is an invariant."


@pytest.mark.parametrize(
    "sentence",
    ["Lemma 1 has been verified by the checks.", "Lemma 2 is not verified.", "Lemma 2 states the closure of 2Z."],
)
def test_what_the_statuses_support_about_a_lemma_may_be_said(sentence: str) -> None:
    parts = clean_parts({"discussion": sentence}, ECHO, ["L1", "L2"], set(), unverified_lemmas=frozenset({"L2"}))
    assert parts.fragments["discussion"].latex.startswith(sentence.split()[0])


def test_lemmas_are_named_by_their_chain_numbers_after_a_refuted_first_lemma() -> None:
    assert lemmas_named("Lemma 3 and [L2] and Lemma~\\ref{lem:L4}", ["L2", "L3", "L4"]) == {"L2", "L3", "L4"}
    assert lemmas_named("Lemma 1 and Lemma 2", ["A", "B"]) == {"A", "B"}


#: The Conclusion of the README's task on the embedded model (2026-12-04), whose survey retrieved nothing.
EMBEDDED_CONCLUSION = (
    "The proof of the sum of two even integers being even is complete. We have shown that if a and b are even, "
    "then a + b is also even. This result has important applications in number theory and computer science."
)


def test_applications_nothing_of_the_run_looked_into_are_not_claimed() -> None:
    parts = clean_parts({"conclusion": EMBEDDED_CONCLUSION}, ECHO, ["L1"], set())
    text = parts.fragments["conclusion"].latex
    assert "applications" not in text and "then a + b is also even." in text
    assert parts.unfounded_claims == 1


@pytest.mark.parametrize(
    "sentence, claims",
    [
        ("Parity arguments are widely used in combinatorics.", True),
        ("The result has many implications for cryptography.", True),
        ("This result has no practical applications.", False),
        ("Its applications are not studied here.", False),
        ("We apply Lemma 1 twice.", False),
    ],
)
def test_what_counts_as_claimed_significance(sentence: str, claims: bool) -> None:
    assert claims_unfounded_significance(sentence) is claims


def test_a_sentence_leaning_on_one_that_went_goes_with_it() -> None:
    """Malformed model output, the README's main command on the embedded model (2026-12-04): its
    Preliminaries were L1's statement, which lemmata prints itself, and "This is a well-known
    property of even numbers, which we will use in our proof", which alone said nothing."""
    statement = "An integer is even if it can be written as 2k for some integer k."
    echo = PromptEcho(f"[L1] UNVERIFIED. Statement: {statement}", [], [statement])
    said = f"{statement} This is a well-known property of even numbers, which we will use in our proof."
    parts = clean_parts({"preliminaries": said}, echo, ["L1"], set())
    assert "preliminaries" not in parts.fragments
    # A sentence of its own after one that went stays; so does "This ..." after one that stayed.
    kept = clean_parts(
        {"discussion": f"{statement} {OWN} This makes sums of any length easy to reason about."}, echo, ["L1"], set()
    ).fragments["discussion"]
    assert kept.latex == f"{OWN} This makes sums of any length easy to reason about."


OWN = "Parity is the first invariant of integer arithmetic, preserved by every sum of even terms."
