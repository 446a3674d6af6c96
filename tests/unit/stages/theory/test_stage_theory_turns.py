"""Proving one lemma in turns, honestly.

Spec, theory stage: stagnation over STAGNATION_WINDOW iterations forces a refinement step;
agent loop history is compressed every CONTEXT_COMPRESS_AFTER_TURNS turns; auto-accept at
AUTO_VERIFY_CONFIDENCE without a model call. Issue 4: a proof that failed or was never checked
is never `verified`; a failed model call never becomes proof text; a checker that could not
run is a failure, not a pass; each lemma says how it was verified.
"""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from lemmata.artifacts import Lemma, ProvedLemma, TheoryPlan
from lemmata.errors import ProviderError, TransientProviderError
from lemmata.llm.base import ChatRequest
from lemmata.stages.theory.prove import FIRST_TURN, prove_lemma
from support.checkers import TRUSTED
from support.scripted_backend import scripted_client

GOAL = "The sum of two even integers is even."
PLAN = TheoryPlan(
    goal=GOAL,
    level="full",
    lemmas=[
        Lemma(id="L1", statement="An integer $n$ is even iff $n = 2k$ for some integer $k$."),
        Lemma(
            id="L2",
            statement="$2m + 2n = 2(m + n)$ for all integers $m, n$.",
            depends_on=["L1"],
            approach="Distributivity, then [L1].",
        ),
    ],
)


def attempt(confidence: float, weakest: str = "the last step", body: str = "") -> str:
    body = body or f"By [L1], $2m + 2n = 2(m+n)$ by distributivity (attempt at {confidence})."
    block = {
        "confidence": confidence,
        "completeness": "complete" if confidence >= 0.85 else "partial",
        "gaps": [],
        "weakest_step": weakest,
        "techniques_used": ["algebra"],
    }
    return f"{body}\n\n```json\n{json.dumps(block)}\n```"


def verdict(word: str, *issues: str) -> str:
    return json.dumps({"verdict": word, "issues": list(issues)})


NO_ERROR = json.dumps({"error_found": False, "first_error": ""})


def user_text(request: ChatRequest) -> str:
    return request.messages[-1].content


def history_of(request: ChatRequest) -> str:
    return user_text(request).split("Earlier attempts at this lemma:\n", 1)[1].strip()


# =========================================================================== turns


def test_first_turn_is_told_it_is_the_first_and_gets_the_architects_route() -> None:
    client, backend = scripted_client({"prover": [attempt(0.95)]})
    prove_lemma(client, PLAN, "L2", client.settings, checker=TRUSTED)
    prompt = user_text(backend.calls("prover")[0])
    assert history_of(backend.calls("prover")[0]) == FIRST_TURN
    assert "Suggested approach: Distributivity, then [L1]." in prompt


def test_an_unverified_attempt_is_retried_with_what_the_check_found() -> None:
    client, backend = scripted_client(
        {
            "prover": [attempt(0.6, weakest="distributivity not justified"), attempt(0.95)],
            "verifier": [verdict("invalid", "step 2 divides by zero")],
        }
    )
    proved = prove_lemma(client, PLAN, "L2", client.settings, checker=TRUSTED)
    assert proved.accepted is True and proved.verification_method == "auto_accepted"
    assert proved.attempts == 2
    assert proved.confidence == pytest.approx(0.95)
    second = history_of(backend.calls("prover")[1])
    assert "Attempt 1: confidence 0.60" in second
    assert "step 2 divides by zero" in second
    assert "distributivity not justified" in second
    assert backend.pending() == 0


def test_the_verifier_can_pass_a_later_turn() -> None:
    client, backend = scripted_client(
        {
            "prover": [attempt(0.5), attempt(0.7)],
            "verifier": [verdict("uncertain", "gap"), verdict("valid")],
            "refuter": [NO_ERROR],
        }
    )
    proved = prove_lemma(client, PLAN, "L2", client.settings, checker=TRUSTED)
    assert (proved.verified, proved.verification_method, proved.attempts) == (True, "verifier_pass", 2)
    assert proved.proof_text.endswith("(attempt at 0.7).")


def test_after_every_turn_fails_the_best_attempt_is_kept_and_not_verified() -> None:
    confidences = [0.5, 0.7, 0.6]
    client, backend = scripted_client(
        {"prover": [attempt(c) for c in confidences], "verifier": [verdict("uncertain", f"gap {i}") for i in range(3)]},
        THEORY_STAGE_MAX_TURNS=3,
        STAGNATION_WINDOW=5,
    )
    proved = prove_lemma(client, PLAN, "L2", client.settings, checker=TRUSTED)
    assert proved.verified is False
    assert proved.status == "unverified"
    assert proved.verification_method == "flagged"
    assert proved.attempts == 3
    assert proved.confidence == pytest.approx(0.7)
    assert "gap 1" in proved.verification  # the check of the kept (second) attempt
    assert len(backend.calls("prover")) == 3


def test_turns_are_capped_by_theory_stage_max_turns() -> None:
    client, backend = scripted_client(
        {"prover": [attempt(0.5)] * 6, "verifier": [verdict("uncertain")] * 6, "refiner": ["Try induction."] * 6},
    )
    assert client.settings.THEORY_STAGE_MAX_TURNS == 6
    proved = prove_lemma(client, PLAN, "L2", client.settings, checker=TRUSTED)
    assert proved.attempts == 6
    assert len(backend.calls("prover")) == 6


# =========================================================================== stagnation


@pytest.mark.parametrize(
    "confidences, window, refiner_calls",
    [
        pytest.param([0.5, 0.5, 0.5, 0.5, 0.5, 0.5], 2, 2, id="flat-window-2-refines-twice"),
        pytest.param([0.5, 0.5, 0.5, 0.5, 0.5, 0.5], 3, 1, id="flat-window-3-refines-once"),
        pytest.param([0.3, 0.4, 0.5, 0.6, 0.7, 0.8], 2, 0, id="steady-progress-never-refines"),
        pytest.param([0.6, 0.5, 0.4, 0.7, 0.6, 0.5], 2, 1, id="drop-counts-as-stagnant-none-after-last-turn"),
        pytest.param([0.5, 0.5, 0.5], 3, 0, id="window-longer-than-the-turns-left"),
    ],
)
def test_stagnation_forces_a_refinement(confidences: list[float], window: int, refiner_calls: int) -> None:
    turns = len(confidences)
    client, backend = scripted_client(
        {
            "prover": [attempt(c) for c in confidences],
            "verifier": [verdict("uncertain")] * turns,
            "refiner": [f"Route {i}: use induction on $m$." for i in range(turns)],
        },
        THEORY_STAGE_MAX_TURNS=turns,
        STAGNATION_WINDOW=window,
    )
    proved = prove_lemma(client, PLAN, "L2", client.settings, checker=TRUSTED)
    assert len(backend.calls("refiner")) == refiner_calls
    assert len(proved.refinements) == refiner_calls


def test_the_refined_strategy_reaches_the_next_turn() -> None:
    client, backend = scripted_client(
        {
            "prover": [attempt(0.5), attempt(0.5), attempt(0.95)],
            "verifier": [verdict("uncertain")] * 2,
            "refiner": ["```\nUse induction on $m$ instead of distributivity.\n```"],
        },
        STAGNATION_WINDOW=1,
    )
    proved = prove_lemma(client, PLAN, "L2", client.settings, checker=TRUSTED)
    assert proved.refinements == ["Use induction on $m$ instead of distributivity."]
    refiner_prompt = user_text(backend.calls("refiner")[0])
    assert "Attempt 1: confidence 0.50" in refiner_prompt and "Attempt 2: confidence 0.50" in refiner_prompt
    assert "Refined strategy (follow it now): Use induction on $m$" in history_of(backend.calls("prover")[2])
    assert proved.accepted is True


def test_a_refiner_that_cannot_run_does_not_lose_the_attempts() -> None:
    client, backend = scripted_client(
        {
            "prover": [attempt(0.5), attempt(0.5), attempt(0.95)],
            "verifier": [verdict("uncertain")] * 2,
            "refiner": [ProviderError("HTTP 400: bad request")],
        },
        STAGNATION_WINDOW=1,
    )
    proved = prove_lemma(client, PLAN, "L2", client.settings, checker=TRUSTED)
    assert proved.accepted is True and proved.attempts == 3
    assert "the refiner could not run" in proved.refinements[0]


# =========================================================================== history compression


def test_history_is_compressed_every_context_compress_after_turns() -> None:
    turns = 5
    client, backend = scripted_client(
        {
            "prover": [attempt(0.3 + 0.1 * i) for i in range(turns)],
            "verifier": [verdict("uncertain")] * turns,
            "compress": ["SUMMARY-A: attempts 1-2 reached 0.40.", "SUMMARY-B: attempts 1-4 reached 0.60."],
        },
        THEORY_STAGE_MAX_TURNS=turns,
        CONTEXT_COMPRESS_AFTER_TURNS=2,
    )
    prove_lemma(client, PLAN, "L2", client.settings, checker=TRUSTED)
    histories = [history_of(call) for call in backend.calls("prover")]
    assert "Attempt 1:" in histories[1]  # below the period: raw turns
    assert histories[2].startswith("Summary of earlier turns: SUMMARY-A")
    assert "Attempt 1:" not in histories[2] and "Attempt 2:" not in histories[2]
    assert "Attempt 3:" in histories[3]
    assert histories[4].startswith("Summary of earlier turns: SUMMARY-B")
    compress_calls = backend.calls("compress")
    assert len(compress_calls) == 2
    assert "SUMMARY-A" in user_text(compress_calls[1])  # the old summary is folded in, not dropped
    assert compress_calls[0].max_tokens == client.settings.MAX_TOKENS_COMPRESS


def test_a_failed_compression_keeps_a_digest_of_the_turns() -> None:
    client, backend = scripted_client(
        {
            "prover": [attempt(0.4), attempt(0.5), attempt(0.6)],
            "verifier": [verdict("uncertain", "gap-x")] * 3,
            "compress": [TransientProviderError("HTTP 503")] * 5,
        },
        THEORY_STAGE_MAX_TURNS=3,
        CONTEXT_COMPRESS_AFTER_TURNS=2,
        STAGNATION_WINDOW=5,
    )
    prove_lemma(client, PLAN, "L2", client.settings, checker=TRUSTED)
    third = history_of(backend.calls("prover")[2])
    assert third.startswith("Summary of earlier turns: Attempt 1: confidence 0.40")
    assert "Attempt 2: confidence 0.50" in third


# =========================================================================== honesty


@pytest.mark.parametrize(
    "verifier_answer",
    [
        pytest.param(ProviderError("HTTP 401: invalid key"), id="verifier-call-fails"),
        pytest.param("I think it is mostly fine.", id="verifier-answer-not-json"),
        pytest.param('{"issues": ["no verdict field"]}', id="verifier-answer-without-verdict"),
    ],
)
def test_a_verifier_that_cannot_run_leaves_the_lemma_not_checked(verifier_answer: object) -> None:
    client, backend = scripted_client({"prover": [attempt(0.7)], "verifier": [verifier_answer]})
    proved = prove_lemma(client, PLAN, "L2", client.settings, checker=TRUSTED)
    assert proved.verified is False
    assert proved.status == "unverified"
    assert proved.verification_method == "not_checked"
    assert proved.verification.startswith("verifier: could not run")
    # Further turns could not be checked either: no more prover calls are spent.
    assert len(backend.calls("prover")) == 1


def test_a_failed_prover_call_never_becomes_proof_text() -> None:
    client, backend = scripted_client({"prover": [ProviderError("HTTP 400: context too long")]})
    with pytest.raises(ProviderError):
        prove_lemma(client, PLAN, "L2", client.settings, checker=TRUSTED)
    assert backend.calls("verifier") == []


def test_an_invalid_verdict_marks_the_lemma_failed() -> None:
    client, _ = scripted_client(
        {"prover": [attempt(0.7)], "verifier": [verdict("Invalid.", "wrong sign")]}, THEORY_STAGE_MAX_TURNS=1
    )
    proved = prove_lemma(client, PLAN, "L2", client.settings, checker=TRUSTED)
    assert (proved.status, proved.verification_method, proved.verified) == ("unverified", "failed", False)
    assert proved.proof_failed


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param({"verified": True, "status": "proved", "verification_method": "failed"}, id="verified-but-failed"),
        pytest.param(
            {"verified": True, "status": "proved", "verification_method": "not_checked"}, id="verified-but-not-checked"
        ),
        pytest.param(
            {"verified": False, "status": "proved", "verification_method": "failed"}, id="proved-not-verified"
        ),
        pytest.param(
            {"verified": False, "status": "low_confidence", "verification_method": "verifier_pass"},
            id="passed-but-not-verified",
        ),
    ],
)
def test_no_artifact_can_call_an_unchecked_proof_verified(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError, match="contradict the evidence"):
        ProvedLemma(id="L1", statement="s", proof_text="p", confidence=0.9, **fields)
