"""Reading a prover answer (lemmata.agents.proof_attempt), the spec's six steps.

1. inline `[GAP: ...]` tags; 2. the self-assessment JSON block (confidence, completeness
complete|partial|sketch, gaps, weakest_step, techniques_used); 3. without a valid block a
heuristic (QED, a square end-of-proof symbol, or 'this completes'); 4. citation integrity
-0.15 per uncited dependency, capped at 0.30; 5. weasel words -0.05 each, capped at 0.15;
6. the block removed from the stored proof text, and an optional Lean 4 sketch extracted.
A proof with no text is never called proven.
"""

from __future__ import annotations

import json

import pytest

from lemmata.agents.proof_attempt import (
    CUT_OFF_NOTES,
    HEURISTIC_WITH_END,
    HEURISTIC_WITHOUT_END,
    find_assessment,
    parse_proof_attempt,
    without_self_assessment,
)
from lemmata.artifacts import SelfAssessment
from support import DATA

PROOF = (
    "Let $n = 2k$ and $m = 2j$. Then $n + m = 2(k + j)$, which is divisible by two, "
    "so the sum is even by definition of evenness."
)


def block(confidence: float = 0.9, fenced: bool = True, **extra: object) -> str:
    body = json.dumps({"confidence": confidence, "completeness": "complete", "gaps": [], **extra})
    return f"```json\n{body}\n```" if fenced else body


# --------------------------------------------------------------------------- step 1: gaps


def test_inline_gaps_are_extracted_and_merged_with_assessment_gaps() -> None:
    answer = f"{PROOF} [GAP: the case $n = 0$] and also [GAP:  uniqueness ].\n" + block(
        0.6, gaps=["the case $n = 0$", "measurability"]
    )
    attempt = parse_proof_attempt(answer, [])
    # inline first, then the block's gaps not already listed
    assert attempt.gaps == ["the case $n = 0$", "uniqueness", "measurability"]
    assert attempt.confidence == pytest.approx(0.6)
    # the inline tags stay in the stored proof: they mark where the gap is
    assert "[GAP: the case $n = 0$]" in attempt.proof_text


GAP_ANSWERS = [
    pytest.param(
        f"{PROOF} [GAP: the case $n = 0$ is not treated] QED",
        ["the case $n = 0$ is not treated"],
        id="single-gap-tag-without-a-block",
    ),
    pytest.param(
        r"By dominated convergence [GAP:   an integrable majorant for $f_n$ is assumed ] we swap limit and "
        r"integral, so $\int f = \lim_n \int f_n$.[GAP: uniform integrability not checked]" + "\n" + block(0.55),
        ["an integrable majorant for $f_n$ is assumed", "uniform integrability not checked"],
        id="two-gap-tags-with-latex-and-padding-before-a-block",
    ),
    pytest.param(
        f"{PROOF} [GAP: the estimate\nholds only for $n \\ge 3$]\n{block(0.5)}",
        ["the estimate\nholds only for $n \\ge 3$"],
        id="gap-tag-spanning-two-lines",
    ),
    pytest.param(
        f"{PROOF}\n{block(0.6, gaps=['measurability of $f$'])}", ["measurability of $f$"], id="gaps-only-in-the-block"
    ),
    pytest.param(f"{PROOF} QED\n{block(0.9)}", [], id="no-gap-tags-and-an-empty-block-list"),
    pytest.param(
        f"{PROOF} [GAP: the bound $\\|f\\|_{{L^2([0,1])}} \\le C$ for all $f$] QED",
        ["the bound $\\|f\\|_{L^2([0,1])} \\le C$ for all $f$"],
        id="gap-tag-holding-an-interval-in-brackets",
    ),
]


@pytest.mark.parametrize("answer, expected_gaps", GAP_ANSWERS)
def test_gap_tags_in_messy_answers(answer: str, expected_gaps: list[str]) -> None:
    assert parse_proof_attempt(answer, []).gaps == expected_gaps


# --------------------------------------------------------------------------- step 2: the block


def test_assessment_block_is_parsed_with_all_fields() -> None:
    assessment = {
        "confidence": 0.88,
        "completeness": "partial",
        "gaps": ["g1"],
        "weakest_step": "the limit exchange",
        "techniques_used": ["induction", "dominated convergence"],
    }
    attempt = parse_proof_attempt(f"{PROOF}\n```json\n{json.dumps(assessment)}\n```", [])
    assert attempt.assessment == SelfAssessment(**assessment)
    assert attempt.confidence == pytest.approx(0.88)
    assert attempt.gaps == ["g1"]
    assert attempt.notes == []


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(f"{PROOF}\n\n```json\n{block(0.9, fenced=False)}\n```\n", id="fenced-json"),
        pytest.param(f"{PROOF}\n\n```\n{block(0.9, fenced=False)}\n```\n", id="fenced-unlabelled"),
        pytest.param(f"{PROOF}\n\n{block(0.9, fenced=False)}\n", id="bare"),
        pytest.param(f"Self-assessment first: {block(0.9, fenced=False)}\n\n{PROOF}", id="bare-before-proof"),
    ],
)
def test_block_is_removed_from_the_stored_proof(answer: str) -> None:
    attempt = parse_proof_attempt(answer, [])
    assert attempt.confidence == pytest.approx(0.9)
    assert "confidence" not in attempt.proof_text
    assert "```" not in attempt.proof_text
    assert '"completeness"' not in attempt.proof_text
    assert PROOF in attempt.proof_text


# Blocks that bend the format but are still valid: (answer, assessment read, stored proof_text).
VALID_BLOCKS = [
    pytest.param(
        f'{PROOF}\n\n```json\n{{"confidence": "0.8", "completeness": "complete", "gaps": []}}\n```',
        SelfAssessment(confidence=0.8, completeness="complete"),
        PROOF,
        id="block-with-confidence-as-string",
    ),
    pytest.param(
        f'{PROOF}\n{{"confidence": 1, "completeness": "complete"}}',
        SelfAssessment(confidence=1.0, completeness="complete"),
        PROOF,
        id="bare-block-with-integer-confidence-1",
    ),
    pytest.param(
        f'{PROOF}\n```json\n{{"confidence": 0.7}}\n```',
        SelfAssessment(confidence=0.7),
        PROOF,
        id="block-with-only-confidence",
    ),
    pytest.param(
        f'{PROOF}\n```json\n{{"confidence": 0.85, "completeness": "partial", "reasoning": "step 2 is terse", '
        f'"model": "prover-v2"}}\n```',
        SelfAssessment(confidence=0.85, completeness="partial"),
        PROOF,
        id="block-with-unknown-extra-keys",
    ),
    pytest.param(
        PROOF
        + "\n\n"
        + json.dumps({"confidence": 0.9, "completeness": "complete", "techniques_used": ["parity"]}, indent=2),
        SelfAssessment(confidence=0.9, completeness="complete", techniques_used=["parity"]),
        PROOF,
        id="bare-block-pretty-printed-over-several-lines",
    ),
    pytest.param(
        PROOF + '\r\n\r\n{\r\n  "confidence": 0.65,\r\n  "completeness": "sketch"\r\n}\r\n',
        SelfAssessment(confidence=0.65, completeness="sketch"),
        PROOF,
        id="bare-block-with-windows-line-endings",
    ),
    pytest.param(
        f"{PROOF}\n\n{block(0.9)}\n\nLet me know if any step needs more detail.",
        SelfAssessment(confidence=0.9, completeness="complete"),
        f"{PROOF}\n\n\n\nLet me know if any step needs more detail.",
        id="block-followed-by-trailing-chat",
    ),
]


@pytest.mark.parametrize("answer, assessment, proof_text", VALID_BLOCKS)
def test_a_valid_block_in_a_messy_answer(answer: str, assessment: SelfAssessment, proof_text: str) -> None:
    attempt = parse_proof_attempt(answer, [])
    assert attempt.assessment == assessment
    assert attempt.confidence == pytest.approx(assessment.confidence)
    assert attempt.proof_text == proof_text
    assert attempt.notes == []


def test_fenced_block_removal_leaves_exactly_the_proof() -> None:
    attempt = parse_proof_attempt(f"{PROOF}\n\n{block(0.9)}\n", [])
    assert attempt.proof_text == PROOF


def test_bare_block_removal_leaves_exactly_the_proof() -> None:
    attempt = parse_proof_attempt(f"{PROOF}\n{block(0.9, fenced=False)}", [])
    assert attempt.proof_text == PROOF


def test_latex_braces_in_the_proof_do_not_confuse_the_bare_block_search() -> None:
    proof = r"We have $\frac{n}{2} + \frac{m}{2} = \frac{n+m}{2}$ and $\{x\} \subseteq S$; this completes the proof."
    attempt = parse_proof_attempt(f"{proof}\n{block(0.75, fenced=False)}", [])
    assert attempt.confidence == pytest.approx(0.75)
    assert attempt.proof_text == proof


@pytest.mark.parametrize(
    "answer, expected_confidence",
    [
        pytest.param(
            # two objects, only the last is an assessment
            f'{PROOF} The map is {{"a": 1}} in JSON.\n{block(0.7, fenced=False)}',
            0.7,
            id="bare-objects-last-has-confidence",
        ),
        pytest.param(
            f'{PROOF}\n```json\n{{"trials": 10}}\n```\n```json\n{block(0.7, fenced=False)}\n```',
            0.7,
            id="fenced-objects-last-has-confidence",
        ),
        pytest.param(
            f"{PROOF}\n{block(0.3, fenced=False)}\nRevised:\n{block(0.65, fenced=False)}",
            0.65,
            id="two-assessments-last-wins",
        ),
        pytest.param(
            f"{PROOF}\n{block(0.3)}\nRevised:\n{block(0.65)}",
            0.65,
            id="two-fenced-assessments-last-wins",
        ),
        pytest.param(
            f"{PROOF}\n{json.dumps({'confidence': 0.8, 'completeness': 'complete', 'meta': {'model': 'x'}})}",
            0.8,
            id="assessment-with-nested-object",
        ),
    ],
)
def test_the_last_object_holding_confidence_is_the_assessment(answer: str, expected_confidence: float) -> None:
    attempt = parse_proof_attempt(answer, [])
    assert attempt.assessment is not None
    assert attempt.confidence == pytest.approx(expected_confidence)


def test_only_the_chosen_block_is_removed_when_there_are_two_objects() -> None:
    answer = f'{PROOF} Data: {{"a": 1}}.\n{block(0.7, fenced=False)}'
    attempt = parse_proof_attempt(answer, [])
    assert '{"a": 1}' in attempt.proof_text
    assert "confidence" not in attempt.proof_text


# --------------------------------------------------------------------------- step 3: heuristic


@pytest.mark.parametrize(
    "ending, expected",
    [
        pytest.param(" QED", HEURISTIC_WITH_END, id="QED"),
        pytest.param(" ∎", HEURISTIC_WITH_END, id="black-square"),
        pytest.param(" □", HEURISTIC_WITH_END, id="white-square"),
        pytest.param(r" \qed", HEURISTIC_WITH_END, id="latex-qed"),
        pytest.param(r" $\blacksquare$", HEURISTIC_WITH_END, id="latex-blacksquare"),
        pytest.param(" This completes the proof.", HEURISTIC_WITH_END, id="this-completes"),
        pytest.param(r" Hence $n + m \in 2\mathbb{Z}$. $\square$", HEURISTIC_WITH_END, id="latex-square-in-math-mode"),
        pytest.param(r" \hfill $\Box$", HEURISTIC_WITH_END, id="latex-Box-pushed-right"),
        pytest.param(" qed.", HEURISTIC_WITH_END, id="lowercase-qed"),
        pytest.param(
            " This completes the inductive step; the base case was done above.",
            HEURISTIC_WITH_END,
            id="this-completes-mid-paragraph",
        ),
        pytest.param(
            " QED\n\nHope this helps! Tell me if you want the Lean version.",
            HEURISTIC_WITH_END,
            id="QED-followed-by-chat",
        ),
        pytest.param("", HEURISTIC_WITHOUT_END, id="no-end-marker"),
        pytest.param(" The remaining case is left open.", HEURISTIC_WITHOUT_END, id="open-ending"),
    ],
)
def test_heuristic_without_a_block(ending: str, expected: float) -> None:
    attempt = parse_proof_attempt(PROOF + ending, [])
    assert attempt.assessment is None
    assert attempt.confidence == pytest.approx(expected)
    assert any("heuristic" in note for note in attempt.notes)


def test_heuristic_values_are_sketch_level() -> None:
    assert HEURISTIC_WITH_END == pytest.approx(0.5)
    assert HEURISTIC_WITHOUT_END == pytest.approx(0.2)


@pytest.mark.parametrize(
    "bad_block",
    [
        pytest.param('{"confidence": 1.5, "completeness": "complete"}', id="confidence-above-1"),
        pytest.param('{"confidence": -0.2, "completeness": "complete"}', id="confidence-below-0"),
        pytest.param('{"confidence": 0.9, "completeness": "full"}', id="completeness-not-allowed"),
        pytest.param('{"confidence": "very high"}', id="confidence-not-a-number"),
        pytest.param('{"confidence": 0.9, "completeness": "complete"', id="truncated-json"),
        pytest.param('{"certainty": 0.9}', id="no-confidence-key"),
    ],
)
def test_an_invalid_block_falls_back_to_the_heuristic(bad_block: str) -> None:
    attempt = parse_proof_attempt(f"{PROOF} QED\n```json\n{bad_block}\n```", [])
    assert attempt.assessment is None
    assert attempt.confidence == pytest.approx(HEURISTIC_WITH_END)


# Answers without a usable block: (answer, heuristic confidence, stored proof_text). A block that
# is JSON but fails the spec's types is cut out; other text stays in the proof, but for a self-assessment section.
MISSING_OR_INVALID_BLOCKS = [
    pytest.param(
        f"{PROOF} QED\n\nSelf-assessment: confidence 0.9, complete, no gaps.",
        HEURISTIC_WITH_END,
        f"{PROOF} QED",  # the assessment in prose is no proof either
        id="no-block-self-assessment-written-as-prose",
    ),
    pytest.param(
        f"{PROOF} QED\n{{'confidence': 0.9, 'completeness': 'complete'}}",
        HEURISTIC_WITH_END,
        f"{PROOF} QED\n{{'confidence': 0.9, 'completeness': 'complete'}}",
        id="block-as-python-dict-with-single-quotes",
    ),
    pytest.param(
        f'{PROOF} This completes the proof.\n```json\n{{"confidence": 0.9, "completeness": "Complete"}}\n```',
        HEURISTIC_WITH_END,
        f"{PROOF} This completes the proof.",
        id="block-with-capitalised-completeness",
    ),
    pytest.param(
        f'{PROOF}\n```json\n{{"confidence": 85, "completeness": "complete"}}\n```',
        HEURISTIC_WITHOUT_END,
        PROOF,
        id="block-with-confidence-as-percentage",
    ),
    pytest.param(
        f'{PROOF} ∎\n{{"confidence": 0.7, "completeness": "partial", "gaps": "none"}}',
        HEURISTIC_WITH_END,
        f"{PROOF} ∎",
        id="block-with-gaps-as-a-string",
    ),
    pytest.param(
        f'{PROOF} QED\n```json\n{{"confidence": null, "completeness": "sketch"}}\n```',
        HEURISTIC_WITH_END,
        f"{PROOF} QED",
        id="block-with-null-confidence",
    ),
    pytest.param(
        f'{PROOF} QED\n\n```json\n{{"confidence": 0.9, "completeness": "comp',
        HEURISTIC_WITH_END,
        f'{PROOF} QED\n\n```json\n{{"confidence": 0.9, "completeness": "comp',
        id="block-cut-off-by-the-token-limit-before-its-fence-closes",
    ),
]


@pytest.mark.parametrize("answer, confidence, proof_text", MISSING_OR_INVALID_BLOCKS)
def test_a_missing_or_invalid_block_gives_the_heuristic(answer: str, confidence: float, proof_text: str) -> None:
    attempt = parse_proof_attempt(answer, [])
    assert attempt.assessment is None
    assert attempt.confidence == pytest.approx(confidence)
    assert attempt.proof_text == proof_text
    assert attempt.notes == ["no self-assessment block: heuristic confidence"]


def test_an_invalid_block_is_not_trusted_but_is_still_cut_out() -> None:
    assert find_assessment('proof {"confidence": 2}') == (None, '{"confidence": 2}')
    attempt = parse_proof_attempt(f'{PROOF} QED\n```json\n{{"confidence": 1.5}}\n```', [])
    assert attempt.assessment is None and "confidence" not in attempt.proof_text


# --------------------------------------------------------------------------- step 4: citations


@pytest.mark.parametrize(
    "cited_in_text, depends_on, expected",
    [
        pytest.param("By [L1] and [L2],", ["L1", "L2"], 0.9, id="all-cited"),
        pytest.param("By [L1],", ["L1", "L2"], 0.75, id="one-uncited"),
        pytest.param("By assumption,", ["L1", "L2"], 0.6, id="two-uncited"),
        pytest.param("By assumption,", ["L1", "L2", "L3"], 0.6, id="three-uncited-capped"),
        pytest.param("By assumption,", ["L1", "L2", "L3", "L4", "L5"], 0.6, id="five-uncited-capped"),
        pytest.param("By L1 and Lemma L2,", ["L1", "L2"], 0.6, id="cited-without-brackets-counts-as-uncited"),
    ],
)
def test_citation_integrity_penalty(cited_in_text: str, depends_on: list[str], expected: float) -> None:
    attempt = parse_proof_attempt(f"{cited_in_text} {PROOF}\n{block(0.9)}", depends_on)
    assert attempt.confidence == pytest.approx(expected)


def test_citation_inside_the_block_does_not_count() -> None:
    answer = f"{PROOF}\n{block(0.9, weakest_step='applying [L1]')}"
    attempt = parse_proof_attempt(answer, ["L1"])
    assert attempt.confidence == pytest.approx(0.75)
    assert any("L1" in note for note in attempt.notes)


# --------------------------------------------------------------------------- step 5: weasel words


@pytest.mark.parametrize(
    "phrases, expected",
    [
        pytest.param([], 0.9, id="none"),
        pytest.param(["Clearly"], 0.85, id="one"),
        pytest.param(["Clearly", "obviously"], 0.8, id="two"),
        pytest.param(["Clearly", "obviously", "trivially"], 0.75, id="three"),
        pytest.param(["Clearly", "obviously", "trivially", "evidently"], 0.75, id="four-capped"),
        pytest.param(["Clearly"] * 7, 0.75, id="seven-capped"),
        pytest.param(["It is easy to see", "it is obvious", "straightforward"], 0.75, id="multi-word-forms"),
    ],
)
def test_weasel_word_penalty(phrases: list[str], expected: float) -> None:
    text = " ".join(f"{p} the claim holds." for p in phrases)
    attempt = parse_proof_attempt(f"{PROOF} {text}\n{block(0.9)}", [])
    assert attempt.confidence == pytest.approx(expected)


def test_weasel_words_inside_other_words_do_not_count() -> None:
    attempt = parse_proof_attempt(f"{PROOF} The unclearly-named set is fine.\n{block(0.9)}", [])
    assert attempt.confidence == pytest.approx(0.9)


def test_weasel_words_inside_the_block_do_not_count() -> None:
    attempt = parse_proof_attempt(f"{PROOF}\n{block(0.9, weakest_step='clearly the obvious step')}", [])
    assert attempt.confidence == pytest.approx(0.9)


def test_both_penalties_stack_with_both_caps() -> None:
    weasels = " ".join(["Clearly so."] * 5)
    attempt = parse_proof_attempt(f"{PROOF} {weasels}\n{block(0.95)}", ["L1", "L2", "L3"])
    # 0.95 - min(3 * 0.15, 0.30) - min(5 * 0.05, 0.15) = 0.50
    assert attempt.confidence == pytest.approx(0.50)
    assert len(attempt.notes) == 2


# Both penalties on a block's confidence, each below or at its cap:
# (proof, block confidence, lemma ids to cite, final confidence, notes).
PENALTY_COMBINATIONS = [
    pytest.param(
        "By [L1], $f$ is bounded on $[a, b]$. Clearly $f$ attains its supremum there.",
        0.9,
        ["L1", "L2"],
        0.70,
        ["does not cite L2", 'claims without justification: "clearly"'],
        id="block-0.9-one-uncited-one-weasel-both-below-cap",
    ),
    pytest.param(
        "Obviously $g = f \\circ h$ is continuous, and trivially $g(0) = 0$, so $g$ has a root.",
        0.9,
        ["L1", "L2"],
        0.50,
        ["does not cite L1, L2", 'claims without justification: "obviously", "trivially"'],
        id="block-0.9-uncited-at-cap-0.30-weasels-below-cap",
    ),
    pytest.param(
        "By [L2], $h$ is injective. Clearly $h$ is onto; evidently it is open; it is easy to see it is closed.",
        0.9,
        ["L1", "L2"],
        0.60,
        ["does not cite L1", 'claims without justification: "clearly", "evidently", "it is easy to see"'],
        id="block-0.9-uncited-below-cap-weasels-at-cap-0.15",
    ),
    pytest.param(
        "Clearly the series converges. Obviously the limit is $0$. Trivially, evidently, clearly so.",
        0.85,
        ["L1", "L2", "L3", "L4"],
        0.40,
        [
            "does not cite L1, L2, L3, L4",
            'claims without justification: "clearly", "evidently", "obviously", "trivially"',
        ],
        id="block-0.85-four-uncited-and-five-weasels-both-held-at-cap",
    ),
    pytest.param(
        "Clearly $A \\subseteq B$. Obviously $B \\subseteq A$. Trivially they are equal.",
        0.4,
        ["L1", "L2"],
        0.0,
        ["does not cite L1, L2", 'claims without justification: "clearly", "obviously", "trivially"'],
        id="block-0.4-both-at-cap-floors-at-zero",
    ),
]


@pytest.mark.parametrize("proof, block_confidence, cited_ids, confidence, notes", PENALTY_COMBINATIONS)
def test_penalties_combined_with_a_block_confidence(
    proof: str, block_confidence: float, cited_ids: list[str], confidence: float, notes: list[str]
) -> None:
    attempt = parse_proof_attempt(f"{proof}\n{block(block_confidence)}", cited_ids)
    assert attempt.confidence == pytest.approx(confidence)
    assert attempt.notes == notes


def test_penalties_on_the_heuristic_and_floor_at_zero() -> None:
    attempt = parse_proof_attempt(f"{PROOF} Obviously true.", ["L1", "L2"])
    # heuristic 0.2 (no end marker) - 0.30 - 0.05 -> floored at 0.0
    assert attempt.confidence == 0.0
    attempt = parse_proof_attempt(f"{PROOF} Clearly. QED", ["L1"])
    # heuristic 0.5 - 0.15 - 0.05 = 0.30
    assert attempt.confidence == pytest.approx(0.30)


# --------------------------------------------------------------------------- step 6: Lean sketch


LEAN = "theorem even_add (n m : ℕ) (hn : Even n) (hm : Even m) : Even (n + m) :=\n  Even.add hn hm"


@pytest.mark.parametrize("label", ["lean", "lean4", "Lean"])
def test_lean_sketch_is_extracted_and_removed_from_the_proof(label: str) -> None:
    answer = f"{PROOF}\n\n```{label}\n{LEAN}\n```\n\n{block(0.9)}"
    attempt = parse_proof_attempt(answer, [])
    assert attempt.lean_sketch == LEAN
    assert attempt.proof_text == PROOF
    assert attempt.confidence == pytest.approx(0.9)


def test_no_lean_fence_means_no_sketch() -> None:
    attempt = parse_proof_attempt(f"{PROOF}\n```python\nprint(1)\n```\n{block(0.9)}", [])
    assert attempt.lean_sketch == ""
    assert "print(1)" in attempt.proof_text


LEAN_CRLF = LEAN.replace("\n", "\r\n")
CRLF_BLOCK = '```json\r\n{"confidence": 0.9, "completeness": "complete"}\r\n```'

# (answer, stored proof_text, lean_sketch): the block and the sketch are both gone from the proof.
STORED_PROOFS = [
    pytest.param(f"{PROOF}\n\n{block(0.9)}\n\n```lean4\n{LEAN}\n```\n", PROOF, LEAN, id="lean4-sketch-after-the-block"),
    pytest.param(
        f"```lean\n{LEAN}\n```\n{PROOF}\n{block(0.9, fenced=False)}",
        PROOF,
        LEAN,
        id="lean-sketch-before-the-proof-and-a-bare-block",
    ),
    pytest.param(
        f"{PROOF}\r\n\r\n{CRLF_BLOCK}\r\n",
        PROOF,
        "",
        id="fenced-block-with-windows-line-endings",
    ),
    pytest.param(
        f"{PROOF}\r\n\r\n```lean4\r\n{LEAN_CRLF}\r\n```\r\n\r\n{block(0.9, fenced=False)}",
        PROOF,
        LEAN_CRLF,
        id="lean4-sketch-with-windows-line-endings",
    ),
]


@pytest.mark.parametrize("answer, proof_text, lean_sketch", STORED_PROOFS)
def test_stored_proof_lacks_the_block_and_the_lean_sketch(answer: str, proof_text: str, lean_sketch: str) -> None:
    attempt = parse_proof_attempt(answer, [])
    assert attempt.confidence == pytest.approx(0.9)
    assert attempt.proof_text == proof_text
    assert attempt.lean_sketch == lean_sketch


def test_a_complete_messy_answer_is_read_in_all_six_steps() -> None:
    proof = (
        r"**Proof.** Let $(x_n)$ be Cauchy in $\mathbb{R}$. By [L1] it is bounded, so by Bolzano-Weierstrass "
        r"a subsequence converges, $x_{n_k} \to x$ [GAP: the choice of $k$ for a given $\varepsilon$ is implicit]. "
        r"Clearly a Cauchy sequence with a convergent subsequence converges to the same limit. $\blacksquare$"
    )
    lean = (
        "theorem cauchy_conv (x : ℕ → ℝ) (hx : CauchySeq x) :\n    ∃ l, Tendsto x atTop (𝓝 l) :=\n"
        "  cauchySeq_tendsto_of_complete hx"
    )
    assessment = {
        "confidence": 0.82,
        "completeness": "complete",
        "gaps": ["the choice of $k$ for a given $\\varepsilon$ is implicit", "completeness of $\\mathbb{R}$ assumed"],
        "weakest_step": "the subsequence limit",
        "techniques_used": ["Bolzano-Weierstrass"],
    }
    answer = (
        f"Here is the proof.\n\n{proof}\n\n```lean4\n{lean}\n```\n\n"
        f"Self-assessment:\n```json\n{json.dumps(assessment, indent=2)}\n```\n"
    )
    attempt = parse_proof_attempt(answer, ["L1", "L2"])
    assert attempt.proof_text == f"Here is the proof.\n\n{proof}"
    assert attempt.lean_sketch == lean
    assert attempt.assessment == SelfAssessment(**assessment)
    assert attempt.gaps == [
        "the choice of $k$ for a given $\\varepsilon$ is implicit",
        "completeness of $\\mathbb{R}$ assumed",
    ]
    # 0.82 - 0.15 (L2 not cited) - 0.05 (one "Clearly")
    assert attempt.confidence == pytest.approx(0.62)
    assert attempt.notes == ["does not cite L2", 'claims without justification: "clearly"']


# --------------------------------------------------------------------------- no proof, no credit


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(block(1.0), id="only-fenced-block-confidence-1"),
        pytest.param(block(1.0, fenced=False), id="only-bare-block-confidence-1"),
        pytest.param(f"\n\n  {block(0.99)}  \n", id="whitespace-and-block"),
        pytest.param(f"```lean\nexact foo\n```\n{block(1.0)}", id="only-lean-sketch-and-block"),
        pytest.param(f"QED\n{block(1.0)}", id="only-QED-and-block"),
        pytest.param("", id="empty-answer"),
    ],
)
def test_an_answer_without_proof_text_gets_zero_confidence(answer: str) -> None:
    attempt = parse_proof_attempt(answer, [])
    assert attempt.confidence == 0.0
    assert "the answer contains no proof" in attempt.gaps


@pytest.mark.parametrize(
    "proof, expected",
    [
        pytest.param("By [L1, L2] the sum is even.", 0.9, id="grouped-citation-comma"),
        pytest.param("By [L1; L2] the sum is even.", 0.9, id="grouped-citation-semicolon"),
        pytest.param("By [L1,L2] and [ L3 ] it follows.", 0.9, id="grouped-without-space-and-padded"),
        pytest.param("By [L1, L12] the sum is even.", 0.75, id="L12-is-not-L2"),
    ],
)
def test_grouped_citations_count_for_each_identifier(proof: str, expected: float) -> None:
    answer = proof + "\n\n" + block(0.9)
    ids = ["L1", "L2", "L3"] if "L3" in proof else ["L1", "L2"]
    assert parse_proof_attempt(answer, ids).confidence == pytest.approx(expected)


# ------------------------------------------------ a self-assessment section is not proof
# Malformed model output, the README's main command on the embedded model (2026-11-25): the
# assessment written as a markdown list under a heading, or its heading left behind the JSON block.

MARKDOWN_ASSESSMENT = (
    "### Self-Assessment\n- **Confidence**: 0.95 (every step elementary)\n- **Completeness**: complete\n"
    "- **Gaps**: None\n- **Techniques Used**: [L4] for the definition of even numbers\n"
)


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(f"{PROOF}\n\n{MARKDOWN_ASSESSMENT}", id="markdown-list-under-a-heading"),
        pytest.param(f"{PROOF}\n\n### Self-Assessment JSON Object\n{block(0.9)}\n", id="heading-left-behind-its-block"),
        pytest.param(
            f"{PROOF}\n\n**Self-assessment:**\nConfidence: 0.9\nGaps: none\n", id="bold-heading-key-value-lines"
        ),
        # The README's main command, re-run after the first fixes (2026-11-25): a remark after the heading.
        pytest.param(
            f"{PROOF}\n\n### Self-Assessment JSON Object\n{block(0.9)}\nThis proof is elementary and uses the "
            "definition of even numbers to directly show the existence of an integer.\n",
            id="heading-block-remark",
        ),
    ],
)
def test_a_self_assessment_section_is_not_part_of_the_proof(answer: str) -> None:
    attempt = parse_proof_attempt(answer, [])
    assert attempt.proof_text == PROOF
    assert "Self" not in attempt.proof_text and "Confidence" not in attempt.proof_text


def test_citations_in_a_self_assessment_section_do_not_count() -> None:
    """A lemma cited only in "Techniques Used: [L4]" was not used by the proof."""
    attempt = parse_proof_attempt(f"{PROOF}\n\n{MARKDOWN_ASSESSMENT}", ["L4"])
    assert "does not cite L4" in attempt.notes


def test_a_self_assessment_heading_followed_by_more_proof_is_kept() -> None:
    answer = f"{PROOF}\n\n### Self-assessment of step 2\nStep 2 holds because $2k + 2j = 2(k + j)$ by distributivity."
    assert parse_proof_attempt(answer, []).proof_text == answer


#: A real prover answer of the embedded model (the README's main command, 2026-11-26): the proof,
#: then its self-assessment as five sections of their own, which the paper printed as proof.
ASSESSMENT_AS_SECTIONS = (DATA / "embedded_outputs" / "prover-assessment-as-sections.txt").read_text(encoding="utf-8")


def test_self_assessment_parts_under_headings_of_their_own_are_not_proof() -> None:
    attempt = parse_proof_attempt(ASSESSMENT_AS_SECTIONS, ["L1"])
    for heading in ("Verification", "Techniques Used", "Gaps", "Weakest Step", "Confidence Calibration"):
        assert f"### {heading}" not in attempt.proof_text
    assert attempt.proof_text.rstrip().endswith("\\]")  # the proof's own Conclusion, with its display, stays
    assert "### Conclusion" in attempt.proof_text and "a + b = 2(m + n + 1)" in attempt.proof_text
    # its "Confidence: 0.95" is no assessment block: the confidence is the heuristic one
    assert attempt.assessment is None and attempt.confidence < 0.5


def test_a_section_named_like_an_assessment_part_but_holding_proof_stays() -> None:
    text = "We bound the sum.\n\n### Gaps\nBetween consecutive primes the gap is\n\\[ g_n \\le n. \\]\nQED\n"
    assert without_self_assessment(text) == text


#: A real prover answer (the README's main command, 2026-11-26): "### Lean 4 Sketch:", its block,
#: then the self-assessment; the paper printed the heading alone at the end of the proof.
LEAN_SKETCH_HEADING = (DATA / "embedded_outputs" / "prover-lean-sketch-heading.txt").read_text(encoding="utf-8")


def test_the_heading_of_a_lean_sketch_goes_with_the_sketch() -> None:
    attempt = parse_proof_attempt(LEAN_SKETCH_HEADING, ["L2"])
    assert "Lean" not in attempt.proof_text
    assert attempt.proof_text.rstrip().endswith("This completes the proof of Lemma [L3].")
    assert attempt.lean_sketch.startswith("import data.nat.basic")


def test_a_sentence_about_lean_inside_the_proof_stays() -> None:
    text = "We follow the Lean 4 sketch below in spirit.\n\nBy [L1] the sum is even. QED\n\n```lean\nexample : True := trivial\n```\n"
    attempt = parse_proof_attempt(text, ["L1"])
    assert "We follow the Lean 4 sketch below in spirit." in attempt.proof_text


#: A real prover answer (the README's main command, 2026-11-26): the proof, "### Proof Summary",
#: a "### Verification" list, then "### JSON Self-Assessment", its block and a remark; the paper
#: printed the list, the heading and the remark as the end of the proof.
VERIFICATION_THEN_JSON_ASSESSMENT = (
    DATA / "embedded_outputs" / "prover-verification-then-json-self-assessment.txt"
).read_text(encoding="utf-8")


def test_a_verification_list_before_a_json_self_assessment_heading_is_not_proof() -> None:
    attempt = parse_proof_attempt(VERIFICATION_THEN_JSON_ASSESSMENT, ["L2"])
    assert attempt.assessment is not None and attempt.assessment.confidence == 0.95
    for leftover in ("### Verification", "JSON Self-Assessment", "This proof is elementary", "**Reasoning**"):
        assert leftover not in attempt.proof_text
    assert attempt.proof_text.rstrip().endswith("twice the sum of their integer parts plus 2.")
    assert "a + b = 2(m + n + 1) = 2k" in attempt.proof_text


#: A real prover answer (the README's main command, 2026-11-26) that the embedded model's loop
#: guard ended (finish reason "repetition") in mid-sentence; the paper showed the cut proof as
#: if whole, and the verifier had called it valid.
CUT_WHERE_IT_REPEATS = (DATA / "embedded_outputs" / "prover-cut-where-it-repeats.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("finish_reason", ["repetition", "length"])
def test_a_cut_off_answer_is_marked_and_says_why_it_is_no_whole_proof(finish_reason: str) -> None:
    attempt = parse_proof_attempt(CUT_WHERE_IT_REPEATS, [], finish_reason)
    assert attempt.cut_off and CUT_OFF_NOTES[finish_reason] in attempt.notes
    assert attempt.proof_text.rstrip().endswith("such that \\(n = 2k\\),")  # what was written is kept
    whole = parse_proof_attempt(CUT_WHERE_IT_REPEATS, [], "stop")
    assert not whole.cut_off and not any("cut off" in note for note in whole.notes)


ECHOED_FORMAL_STATEMENT = (DATA / "embedded_outputs" / "prover-echoes-its-formal-and-coq-statement.txt").read_text(
    encoding="utf-8"
)


def test_a_proof_loses_the_formal_and_coq_statements_it_restates() -> None:
    """Malformed model output, the README's main command (embedded model, 2026-11-26): shown its
    lemma's formal and Coq statements, the prover restated both under headings of their own; the
    paper printed them, and `lemmata_goal` in the Coq one broke the compile. The paper prints the
    formal statement itself; the proof keeps only its own sections."""
    attempt = parse_proof_attempt(ECHOED_FORMAL_STATEMENT, [])
    assert "lemmata_goal" not in attempt.proof_text and "Formal Statement" not in attempt.proof_text
    assert "Coq Statement" not in attempt.proof_text
    assert "#### Statement to Prove" in attempt.proof_text and "#### Proof\nTo prove this lemma" in attempt.proof_text
    assert attempt.proof_text.rstrip().endswith("Thus, the proof is complete.")
    assert attempt.confidence == 1.0
