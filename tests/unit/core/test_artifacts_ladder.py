"""The status ladder is structural (issue 34, item 6): a lemma's status is derived from its
evidence — the machine checks of its formal statement, then the model checks of its proof by a
calibrated checker — and an artifact that claims more is refused. `verified` is true exactly for
machine_checked and reviewed."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from lemmata.artifacts import CheckStep, MachineCheck, ProvedLemma, chain_numbers, lemma_status
from support import formal as formal_checks
from support.checkers import TRUSTED, UNCALIBRATED


def lemma(status: str, verified: bool, formal=None, method: str = "flagged", checker=UNCALIBRATED) -> ProvedLemma:
    return ProvedLemma(
        id="L1",
        statement="s",
        proof_text="p",
        confidence=0.9,
        verified=verified,
        status=status,  # type: ignore[arg-type]
        verification_method=method,  # type: ignore[arg-type]
        checked_by=checker,
        formal=formal,
    )


def test_a_tested_lemma_is_never_verified() -> None:
    tested = lemma("tested", False, formal_checks.tested())
    assert (tested.status, tested.verified) == ("tested", False)
    with pytest.raises(ValidationError, match="contradict the evidence"):
        lemma("tested", True, formal_checks.tested())
    with pytest.raises(ValidationError, match="it is tested"):
        lemma("machine_checked", True, formal_checks.tested())


def test_machine_checked_needs_a_machines_proof_of_the_formal_statement() -> None:
    checked = lemma("machine_checked", True, formal_checks.machine_checked())
    assert checked.verified and checked.machine_checked
    with pytest.raises(ValidationError, match="it is unverified"):
        lemma("machine_checked", True, None)


def test_a_refuted_formal_statement_makes_the_lemma_refuted_whatever_the_model_checks_said() -> None:
    passed = [CheckStep(check="structure", outcome="passed"), CheckStep(check="verifier", outcome="passed"),
              CheckStep(check="refuter", outcome="passed")]  # fmt: skip
    refuted = formal_checks.refuted()
    assert lemma_status(refuted, reviewed=True) == "refuted"
    with pytest.raises(ValidationError, match="it is refuted"):
        ProvedLemma(
            id="L1", statement="s", proof_text="p", confidence=0.9, verified=True, status="reviewed",
            verification_method="verifier_pass", checks=passed, checked_by=TRUSTED, formal=refuted,
        )  # fmt: skip


def test_checkers_that_disagree_decide_nothing() -> None:
    """A solver's unsat of a false statement (a defect a checker could have) beside a counterexample
    exact evaluation confirms: neither is used."""
    false = formal_checks.refuted()
    conflicting = false.model_copy(
        update={"checks": [formal_checks.solved(formal_checks.EVEN_PLUS_ODD), *false.checks]}
    )
    assert conflicting.conflict.startswith("z3 proved the formal statement and sampling refuted it")
    assert conflicting.verdict == "unverified" and lemma_status(conflicting, reviewed=False) == "unverified"


def test_sampling_can_refute_but_never_prove() -> None:
    with pytest.raises(ValidationError, match="sampling proves nothing"):
        MachineCheck(checker="sampling", method="sampling", outcome="proved")
    with pytest.raises(ValidationError, match="a refutation has a counterexample"):
        MachineCheck(checker="z3", method="solver", outcome="refuted")


@pytest.mark.parametrize(
    "older, method, status",
    [
        ("proved", "auto_accepted", "reviewed"),
        ("low_confidence", "flagged", "unverified"),
        ("failed", "failed", "unverified"),
    ],
)
def test_a_lemma_recorded_before_the_ladder_still_reads(older: str, method: str, status: str) -> None:
    record = {"id": "L1", "statement": "s", "proof_text": "p", "confidence": 0.9, "verified": older == "proved",
              "status": older, "verification_method": method}  # fmt: skip
    assert ProvedLemma.model_validate(record).status == status


@pytest.mark.parametrize(
    "ids, numbers",
    [
        pytest.param(["L1", "L2", "L3"], [1, 2, 3], id="plan-order"),
        pytest.param(["L2", "L3", "L5"], [2, 3, 5], id="refuted-ones-left-gaps"),
        pytest.param(["parity", "sum"], [1, 2], id="word-ids-by-place"),
        pytest.param(["L1", "parity"], [1, 2], id="mixed-by-place"),
        pytest.param(["L3", "L2"], [1, 2], id="out-of-order-by-place"),
        pytest.param(["L0", "L01"], [1, 2], id="not-a-plan-number"),
        pytest.param([], [], id="empty"),
    ],
)
def test_a_chain_goes_by_its_own_numbers_only_when_every_id_carries_one_in_order(ids, numbers):
    assert chain_numbers(ids) == numbers
