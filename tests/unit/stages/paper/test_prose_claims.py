"""General claims of the prose, checked like lemmas (issue 54 item 3): which sentences are sent,
what a refutation does to the paper, and the real machine checks behind it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lemmata.stages.formal.prose_claim import machine_refuter
from lemmata.stages.paper.fragments import render
from lemmata.stages.paper.prompt_echo import PromptEcho
from lemmata.stages.paper.prose import clean_parts
from lemmata.stages.paper.prose_claims import ProseClaimChecks, RefutedClaim, general_claims, states_a_general_claim
from lemmata.stages.paper.render import paper_items
from support.scripted_backend import scripted_client
from unit.run.test_cards import VERIFIED_THEORY

FALSE_CLAIM = "The square of every odd integer is even."
SQUARE_OF_ODD = RefutedClaim(
    sentence=FALSE_CLAIM,
    formal="∀ n ∈ ℤ: n mod 2 = 1 ⇒ n^2 mod 2 = 0",
    latex="\\forall n \\in \\mathbb{Z}: n \\bmod 2 = 1 \\Rightarrow n^{2} \\bmod 2 = 0",
    why="counterexample n = 1, found by sampling",
)


@pytest.mark.parametrize(
    "sentence",
    [
        FALSE_CLAIM,
        "Any two consecutive integers have an odd sum.",
        "For all real $x$, $x^2 \\ge 0$.",
        "The sum of two odd integers is odd.",
        "No prime is divisible by 4.",
    ],
)
def test_a_universal_claim_about_numbers_is_sent(sentence: str) -> None:
    assert states_a_general_claim(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        # An existence the language cannot state: it would come back stronger, refuted while true.
        "Any integer can be written as the sum of an even number and an odd number.",
        "There is an integer $k$ with $a = 2k$.",
        "For some integer $k$, $n = 2k + 1$.",
        # The paper's own results have statuses of their own.
        "By Lemma~\\ref{lem:L1}, the sum of two even integers is even.",
        "Every integer in [L2] is even.",
        "The main theorem holds for all integers.",
        # About the paper or its proof, or naming a subject: what the README's task sent (2026-12-04).
        "This allows us to express the sum of two even integers as the sum of two even numbers, which is itself "
        "an even number.",
        "The proof of the sum of two even integers being even is complete.",
        "We note that every odd integer is odd.",
        # Not a claim about all numbers of a kind.
        "This paper studies parity.",
        "The proof is a direct computation.",
    ],
)
def test_other_sentences_are_not_sent(sentence: str) -> None:
    assert not states_a_general_claim(sentence)


def test_a_sentence_restating_what_the_theory_checked_is_not_sent_again() -> None:
    text = "Note that the sum of two even integers is even. The square of every odd integer is even."
    assert general_claims(text, ["The sum of two even integers is even."]) == [FALSE_CLAIM]


def test_each_sentence_is_sent_once_and_no_more_than_the_limit() -> None:
    sent: list[str] = []

    def refute(sentence: str) -> RefutedClaim | None:
        sent.append(sentence)
        return SQUARE_OF_ODD if sentence == FALSE_CLAIM else None

    checks = ProseClaimChecks(refute, limit=2)
    text = f"{FALSE_CLAIM} Every even integer is even. For all integers $n$, $n \\le n$."
    assert checks.refuted_in(text) == [SQUARE_OF_ODD]
    assert checks.refuted_in(text) == [SQUARE_OF_ODD]  # the next writer turn: nothing sent again
    assert sent == [FALSE_CLAIM, "Every even integer is even."] and checks.sent == 2


def test_a_refuted_claim_leaves_the_prose_and_limitations_says_what_it_claimed() -> None:
    discussion = f"Parity is a classical topic. {FALSE_CLAIM} Sums are easy."
    checks = ProseClaimChecks(lambda s: SQUARE_OF_ODD if s == FALSE_CLAIM else None)
    cleaned = clean_parts({"discussion": discussion}, PromptEcho("", [], []), ["L1", "L2"], set(), claim_checks=checks)
    assert FALSE_CLAIM not in cleaned.fragments["discussion"].latex
    assert "Parity is a classical topic. Sums are easy." in cleaned.fragments["discussion"].latex
    assert cleaned.repairs() == {"refuted claims": 1}
    body = render(paper_items(VERIFIED_THEORY, cleaned.fragments, "", cleaned.refuted_claims), plain=set())
    limitations = body[body.index("\\section{Limitations}") :]
    assert "The square of every odd integer is even." in limitations
    assert SQUARE_OF_ODD.latex in limitations and "counterexample n = 1" in limitations


def test_a_claim_the_machines_do_not_refute_stays_and_limitations_does_not_name_it() -> None:
    checks = ProseClaimChecks(lambda s: None)
    cleaned = clean_parts({"discussion": FALSE_CLAIM}, PromptEcho("", [], []), ["L1", "L2"], set(), claim_checks=checks)
    assert FALSE_CLAIM in cleaned.fragments["discussion"].latex
    body = render(paper_items(VERIFIED_THEORY, cleaned.fragments, "", cleaned.refuted_claims), plain=set())
    assert "The draft's prose" not in body and checks.sent == 1


def formalizer_answer(hypotheses: list[str], conclusion: str) -> str:
    return json.dumps(
        {
            "formal_statement": "For every integer n, ...",
            "variables": [{"name": "n", "type": "integer"}],
            "hypotheses": hypotheses,
            "conclusion": conclusion,
            "not_formalizable_because": "",
        }
    )


def test_the_machines_refute_a_false_claim_with_a_confirmed_counterexample(tmp_path: Path) -> None:
    client, _ = scripted_client({"formalizer": [formalizer_answer(["n % 2 == 1"], "n**2 % 2 == 0")]})
    refuted = machine_refuter(client, tmp_path)(FALSE_CLAIM)
    assert refuted is not None and refuted.sentence == FALSE_CLAIM
    assert "counterexample n = " in refuted.why and "mod 2" in refuted.formal


def test_a_true_claim_and_a_failed_call_leave_the_sentence(tmp_path: Path) -> None:
    true_claim = "The square of every odd integer is odd."
    client, backend = scripted_client({"formalizer": [formalizer_answer(["n % 2 == 1"], "n**2 % 2 == 1")]})
    refute = machine_refuter(client, tmp_path)
    assert refute(true_claim) is None
    assert refute("Every integer is a square.") is None  # the script has no answer left: the call fails
    assert len(backend.calls("formalizer")) == 2
