"""A prover's proof (and other short model text) as LaTeX inside lemmata's environments."""

from __future__ import annotations

import pytest

from lemmata.latex.proof_text import (
    cite_lemmas,
    latex_paragraphs,
    lemma_label,
    plain_text_latex,
    proof_latex,
    sentence_latex,
)
from support import DATA

IDS = ["L1", "L2", "L3"]

PROOFS = [
    pytest.param(
        "### Proof of Lemma [L2]: The sum of two integers is even if each integer is even.\n\n"
        "**Step 1: Assume both are even.**\nBy the earlier lemma [L1], $a = 2k_1$.",
        "\\textbf{Step 1: Assume both are even.}\nBy the earlier Lemma~\\ref{lem:L1}, $a = 2k_1$.",
        id="markdown-proof-heading-restating-the-lemma",
    ),  # the embedded model, run 1
    pytest.param("**Proof.** By [L1], $a = 2m$. QED", "By Lemma~\\ref{lem:L1}, $a = 2m$.", id="bold-proof-and-qed"),
    pytest.param("Proof: Since $n = 2k$, done. $\\blacksquare$", "Since $n = 2k$, done.", id="proof-colon-and-box"),
    pytest.param(
        "Proof of Lemma L3. Distributivity gives it. ∎", "Distributivity gives it.", id="proof-of-lemma-title"
    ),
    pytest.param(
        "\\begin{proof}[Proof of L2]\nWe add.\n\\end{proof}", "We add.", id="the-prover-s-own-proof-environment"
    ),
    pytest.param(
        "## Step 1\nAdd.\n\\section{Step 2}\nFactor.",
        "\\textbf{Step 1}\nAdd.\n\n\\textbf{Step 2}\nFactor.",
        id="headings-inside-the-proof",
    ),
    pytest.param(
        "By [L1, L3] and Lemma L2 the claim holds.",
        "By Lemmas~\\ref{lem:L1} and~\\ref{lem:L3} and Lemma~\\ref{lem:L2} the claim holds.",
        id="citation-groups-and-bare-lemma-ids",
    ),
    pytest.param(
        "Closure is assumed. [GAP: closure of $\\ZZ$ is taken from the axioms]",
        "Closure is assumed. [GAP: closure of $\\ZZ$ is taken from the axioms]",
        id="gap-tags-stay",
    ),
    pytest.param(
        "For all n ∈ ℤ, n² ≥ 0 [L9].",
        "For all n \\ensuremath{\\in} {\\ensuremath{\\mathbb{Z}}}",
        id="unicode-math-and-unknown-id",
    ),
]


@pytest.mark.parametrize("proof, expected", PROOFS)
def test_a_prover_proof_becomes_clean_latex(proof: str, expected: str) -> None:
    latex = proof_latex(proof, IDS)
    assert latex.startswith(expected) or expected in latex, latex
    assert "###" not in latex and "\\begin{proof}" not in latex and "\\end{proof}" not in latex
    assert "QED" not in latex and "Proof of Lemma" not in latex


def test_citations_are_left_alone_where_brackets_mean_something_else() -> None:
    text = "\\begin{lemma}[L1] x \\cite[p.~3]{k} and the interval [0, 1] and [a link](http://x)"
    assert cite_lemmas(text, IDS) == text


def test_labels_hold_only_characters_a_key_can_hold() -> None:
    assert lemma_label("L1") == "lem:L1" and lemma_label("step 2/b{x}") == "lem:step-2-b-x-"


def test_plain_text_keeps_a_markdown_headings_words_not_its_hashes() -> None:
    """A replay of the embedded model's AM-GM run (2026-11-27): a paragraph of the assembled proof
    that broke the compile opened with "### Proof of Lemma [L1]: ..." and was printed with its hashes."""
    assert plain_text_latex("### Proof of Lemma [L1]: $a^2 \\geq 0$\nStep 1 #2") == (
        "Proof of Lemma [L1]: \\$a\\textasciicircum{}2 \\textbackslash{}geq 0\\$\nStep 1 \\#2"
    )


def test_a_markdown_heading_behind_the_assemblers_proof_label_is_no_markdown() -> None:
    """A replay of the embedded model's AM-GM run (2026-11-27): the assembled proof copied a lemma
    with the label of its prompt, "Proof: ### Proof of Lemma [L1]: ...", printed with its hashes."""
    latex = proof_latex("Step 2.\n\nProof: ### Proof of Lemma [L1]: $a^2 \\geq 0$\n\nStep 3.", ["L1"])
    assert "#" not in latex and "Step 2." in latex and "Step 3." in latex
    assert "\\textbf{Step 1}" in proof_latex("Proof: ### Step 1\nLet $a = 2m$.", ["L1"])


def test_plain_text_prints_every_character_and_keeps_paragraphs() -> None:
    assert plain_text_latex("Let $x^{1}^{2}$ & 50% #1\n\nNext_par \\foo") == (
        "Let \\$x\\textasciicircum{}\\{1\\}\\textasciicircum{}\\{2\\}\\$ \\& 50\\% \\#1\n\n"
        "Next\\_par \\textbackslash{}foo"
    )


def test_the_prompts_formal_and_coq_statements_echoed_in_a_proof_are_dropped() -> None:
    """Malformed model output, the embedded main command 2026-11-26: the prover copied its prompt's
    statements into the proof, and `2%Z` commented out the rest of a \\text line, breaking the compile."""
    proof = (
        "### Proof of Lemma [L3]: The sum of two even integers is even\n\n"
        "#### Formal Statement\nThe formal statement is:\n\\[\n\\forall a, b \\in \\mathbb{Z}: a \\mod 2 = 0\n\\]\n\n"
        "#### Coq Statement\nThe Coq statement is:\n\\[\n\\text{Theorem lemmata_goal : forall (a b : Z), "
        "((a mod 2%Z)%Z = 0%Z)%Z.\n\\]\n\n"
        "#### Proof\nWrite $a = 2m$ and $b = 2n$.\n\nThe theorem lemmata_goal holds.\n\nSo $a + b = 2(m + n)$."
    )
    latex = proof_latex(proof, IDS)
    assert "lemmata_goal" not in latex and "Coq" not in latex and "Formal Statement" not in latex
    assert "Write $a = 2m$ and $b = 2n$." in latex and latex.endswith("So $a + b = 2(m + n)$.")


def test_a_proof_splits_into_paragraphs_only_outside_environments_and_displays() -> None:
    latex = (
        "First.\n\nA display \\[ x\n\n y \\] ends.\n\n\\begin{align}a\n\nb\\end{align}\n\n"
        "$$c\n\nd$$\n\nA price of \\$$5.\n\nLast."
    )
    assert latex_paragraphs(latex) == [
        "First.",
        "A display \\[ x\n\n y \\] ends.",
        "\\begin{align}a\n\nb\\end{align}",
        "$$c\n\nd$$",
        "A price of \\$$5.",
        "Last.",
    ]


def test_a_lemmata_command_in_a_sentence_is_typewriter_with_its_double_hyphens():
    latex = sentence_latex("Measure them with `lemmata calibrate --backend local --model q4_k_m`; 10% of $x$.")
    assert latex == (
        "Measure them with \\texttt{lemmata calibrate -{}-backend local -{}-model q4\\_k\\_m}; 10\\% of $x$."
    )


def test_a_heading_for_each_direction_of_the_proof_keeps_its_words() -> None:
    """The embedded prover headed the two directions "#### Proof of the Implication \\( \\Rightarrow \\)"
    and "... \\Leftarrow"; the headings became proof environments with a title and the titles went
    with the tags: the PDF showed two lists under no heading (the main command, 2026-11-29)."""
    text = (DATA / "embedded_outputs" / "prover-proof-of-each-direction-as-headings.txt").read_text(encoding="utf-8")
    latex = proof_latex(text, ["L1"])
    assert "\\textbf{Proof of the Implication \\( \\Rightarrow \\)}" in latex
    assert "\\textbf{Proof of the Implication \\( \\Leftarrow \\)}" in latex
    assert "\\begin{proof}" not in latex and "\\end{proof}" not in latex
    assert "Proof of Lemma" not in latex  # the leading heading restating the lemma still goes


@pytest.mark.parametrize(
    "recording",
    [
        "assembler-echoes-the-retry-note.txt",
        "sketch-copies-the-assembled-proof.txt",
        "prover-assessment-as-sections.txt",
        "crystallizer-statement-then-proof.txt",
    ],
)
def test_a_proof_ending_with_its_claim_framed_ends_in_words(recording: str) -> None:
    """The embedded model closes a proof the way it closes a computation: its claim again, centred
    in a box (`\\[ \\boxed{\\text{...}} \\]`), the last thing in the PDF's proof of the main result
    (the main command, 2026-11-29). The frame goes; its words stay unless the text before says them."""
    text = (DATA / "embedded_outputs" / recording).read_text(encoding="utf-8")
    latex = proof_latex(text, ["L1"])
    assert "\\boxed" not in latex


def test_a_framed_sentence_stays_as_words_unless_just_said() -> None:
    said = "Therefore, the sum of two even integers is even.\n\n\\[\n\\boxed{\\text{The sum of two even integers is even.}}\n\\]"
    assert proof_latex(said, []) == "Therefore, the sum of two even integers is even."
    new = "Hence $a+b=2(m+n)$.\n\n### Conclusion\n\\[\n\\boxed{\\text{The sum of two integers is even if both are odd.}}\n\\]"
    latex = proof_latex(new, [])
    # (the "Conclusion" heading is scaffolding: test_the_scaffolding_of_a_school_answer_goes)
    assert latex == "Hence $a+b=2(m+n)$.\n\nThe sum of two integers is even if both are odd."
    # A framed formula is mathematics, not a repeated sentence: left to the model.
    assert "\\boxed{a+b=2(m+n)}" in proof_latex("So\n\\[\n\\boxed{a+b=2(m+n)}\n\\]", [])


#: The README's main command on the embedded model (2026-12-03): L1's proof and the main result's
#: sketch as the prover and the assembler wrote them (shortened), printed so in the PDF.
L1_SCAFFOLDED = (
    "**Restatement of the Lemma**\nAn integer \\( n \\) is even if there exists an integer \\( k \\) such that "
    "\\( n = 2k \\).\n\nTo prove this, we will use the definition of even integers. This directly satisfies "
    "the condition of the lemma.\n\n**Conclusion**\nWe have shown that an integer \\( n \\) is even. Therefore, "
    "the lemma is proven."
)
SKETCH_SCAFFOLDED = (
    "To prove the goal that the sum of two even integers is even, we will use the following lemma:\n\n"
    "We need to show that the sum of two even integers is also even.\n\\[ a + b = 2(m + n) \\]\n\n"
    "### Conclusion\n\nThe sum of two even integers is even. [L1]"
)


@pytest.mark.parametrize(
    "proof, expected",
    [
        pytest.param(
            L1_SCAFFOLDED,
            "To prove this, we will use the definition of even integers. This directly satisfies the condition of "
            "the lemma.\n\nWe have shown that an integer \\( n \\) is even. Therefore, the lemma is proven.",
            id="a-restatement-and-a-conclusion-heading",
        ),
        pytest.param(
            SKETCH_SCAFFOLDED,
            "We need to show that the sum of two even integers is also even.\n\\[ a + b = 2(m + n) \\]\n\n"
            "The sum of two even integers is even, by Lemma~\\ref{lem:L1}.",
            id="a-lemma-announced-and-none-following-and-a-trailing-citation",
        ),
        pytest.param(
            "**Conclusion:** Hence $a + b$ is even.", "Hence $a + b$ is even.", id="a-run-in-conclusion-title"
        ),
        pytest.param(
            "We use the following lemma:\n\n[L1] gives $a = 2m$, so $a + b$ is even.",
            "We use the following lemma:\n\nLemma~\\ref{lem:L1} gives $a = 2m$, so $a + b$ is even.",
            id="an-announced-lemma-that-follows-stays",
        ),
        pytest.param(
            "**Restatement of the Lemma**\n\n" + "The long first paragraph of the proof itself. " * 12,
            ("The long first paragraph of the proof itself. " * 12).strip(),
            id="a-long-paragraph-after-a-restatement-heading-is-the-proof",
        ),
    ],
)
def test_the_scaffolding_of_a_school_answer_goes(proof: str, expected: str) -> None:
    """The paper prints each statement above its proof and closes a proof with the box: a
    restatement, a "Conclusion" heading, an announcement of a lemma that never comes and a
    citation after the last full stop are the model's scaffolding, not the proof."""
    assert proof_latex(proof, IDS) == expected
