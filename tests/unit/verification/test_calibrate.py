"""The pure parts of `lemmata calibrate`: the shipped proofs, their order, the forecast, the
progress file and the calibration made of it."""

from __future__ import annotations

import json

import pytest

from lemmata.errors import UserError
from lemmata.verification.calibrate import (
    MOST_CALLS_PER_PROOF,
    LabelledProof,
    ProofOutcome,
    bundled_proofs,
    calibration_of,
    estimate_in_words,
    forecast,
    interleaved,
    parse_labelled,
    read_progress,
    record_progress,
)
from lemmata.verification.calibration import STACK_VERSION


def outcome(ident: str, label: str, accepted: bool, dataset: str = "d1", **fields) -> ProofOutcome:
    return ProofOutcome(
        id=ident,
        label=label,
        accepted=accepted,
        unreadable=False,
        calls=2,
        seconds=3.0,
        cost_usd=0.01,
        dataset=dataset,
        **fields,
    )


def test_the_package_ships_sixty_correct_and_sixty_incorrect_proofs():
    proofs, digest = bundled_proofs()
    assert len(proofs) == 120 and len({proof.id for proof in proofs}) == 120
    assert sum(proof.label == "correct" for proof in proofs) == 60
    assert len(digest) == 12


def test_any_first_proofs_hold_both_labels_in_the_files_proportion():
    proofs = [LabelledProof(f"i{n}", "p", "q", "incorrect") for n in range(6)] + [
        LabelledProof(f"c{n}", "p", "q", "correct") for n in range(3)
    ]
    mixed = interleaved(proofs)
    assert [proof.label[0] for proof in mixed] == list("iciiciici")
    assert sorted(proof.id for proof in mixed) == sorted(proof.id for proof in proofs)


def test_a_row_without_a_label_is_named_by_its_line():
    text = json.dumps({"id": "a", "problem": "p", "proof": "q", "label": "correct"}) + "\n" + json.dumps({"id": "b"})
    with pytest.raises(UserError, match=r"labelled\.jsonl:2: a row needs id, problem, proof and a label"):
        parse_labelled(text, "labelled.jsonl")


def test_the_forecast_is_an_upper_bound_priced_at_the_model():
    proofs = [LabelledProof("a", "x" * 400, "y" * 3600, "correct")] * 3
    plan = forecast(proofs, 1024, lambda tokens_in, tokens_out: tokens_in * 1e-6 + tokens_out * 1e-5, 40.0)
    assert plan.calls == 3 * MOST_CALLS_PER_PROOF
    assert plan.tokens_out == plan.calls * 1024
    assert plan.tokens_in > 3 * MOST_CALLS_PER_PROOF * 1000  # 4,000 characters of text a call, and the prompt
    assert plan.cost_usd == pytest.approx(plan.tokens_in * 1e-6 + plan.tokens_out * 1e-5)
    assert plan.seconds == 120.0
    assert forecast(proofs, 1024, lambda *_: None, None).cost_usd is None


def test_progress_measured_with_other_checks_or_other_proofs_is_measured_again(tmp_path):
    path = tmp_path / "calibration" / "m.progress.jsonl"
    record_progress(path, outcome("a", "correct", True))
    record_progress(path, outcome("b", "incorrect", False, dataset="d0"))
    record_progress(path, outcome("c", "incorrect", True, stack_version=STACK_VERSION - 1))
    with open(path, "a") as handle:
        handle.write('{"id": "torn')  # a line cut by a kill
    assert list(read_progress(path, "d1")) == ["a"]
    assert read_progress(tmp_path / "none.jsonl", "d1") == {}


def test_the_calibration_counts_what_the_checks_accepted_against_the_human_labels():
    outcomes = [outcome(f"i{n}", "incorrect", n < 2) for n in range(20)] + [
        outcome(f"c{n}", "correct", n < 9) for n in range(10)
    ]
    calibration = calibration_of(outcomes, "local", "judge")
    assert (calibration.incorrect, calibration.false_accepts) == (20, 2)
    assert (calibration.correct, calibration.correct_accepted) == (10, 9)
    assert calibration.calls == 60 and calibration.seconds == 90.0
    assert calibration.trust() == "calibrated"
    assert calibration_of(outcomes[:25], "local", "judge").trust() == "not_discriminating"  # 5 correct: too few


def test_a_quick_estimate_says_which_way_its_rates_lean_and_never_more():
    leaning_yes = [outcome(f"i{n}", "incorrect", False) for n in range(5)] + [
        outcome(f"c{n}", "correct", n < 3) for n in range(5)
    ]
    assert estimate_in_words(calibration_of(leaning_yes, "local", "judge")).startswith(
        "at these rates the checks would earn trust: 0% of wrong proofs accepted"
    )
    # The embedded model's 20-proof estimate (2026-11-27): 1 of 10 wrong accepted, 0 of 10 right.
    rejects_all = [outcome(f"i{n}", "incorrect", n < 1) for n in range(10)] + [
        outcome(f"c{n}", "correct", False) for n in range(10)
    ]
    words = estimate_in_words(calibration_of(rejects_all, "embedded", "qwen"))
    assert words.startswith("at these rates the checks would not earn trust: 10% of wrong proofs accepted")
    assert "-10 points more of the right ones (20 needed)" in words
    one_label = [outcome(f"i{n}", "incorrect", False) for n in range(3)]
    assert "only one label" in estimate_in_words(calibration_of(one_label, "local", "judge"))
