"""When a proof the checks accepted counts as verified, and how to say why it does or does not."""

from __future__ import annotations

from lemmata.agents.proof_attempt import ProofAttempt
from lemmata.artifacts import CHECKED_METHOD, VERIFIED_MIN_CONFIDENCE, Checker
from lemmata.verification.calibration import trust_in_words
from lemmata.verification.checks import Verdict, refuted_in_vain


def is_verified(verdict: Verdict, attempt: ProofAttempt, checker: Checker, *, confidence_floor: bool = True) -> bool:
    """Passed the checks (not merely auto-accepted on its own rating), by a checker measured to tell
    wrong from right, with no open gap, not cut off, and (`confidence_floor`) a confidence the
    prover itself does not call incomplete or possibly wrong."""
    floor_met = not confidence_floor or attempt.confidence >= VERIFIED_MIN_CONFIDENCE
    return (
        verdict.method == CHECKED_METHOD
        and refuted_in_vain(verdict.steps)
        and checker.can_verify
        and not attempt.gaps
        and not attempt.cut_off
        and floor_met
    )


def verification_in_words(
    verdict: Verdict, attempt: ProofAttempt, checker: Checker, *, confidence_floor: bool = True
) -> str:
    """Why the proof is or is not verified: the checks, then what keeps an accepted proof unverified."""
    words = [verdict.detail or verdict.method.replace("_", " ")]
    if verdict.method == "auto_accepted":
        words.append(
            "accepted on the prover's own rating without a check (the specification's auto-accept), so not verified"
        )
    elif verdict.accepted and not checker.can_verify:
        words.append("accepted by the checks, but not verified: " + trust_in_words(checker))
    elif verdict.accepted and confidence_floor and attempt.confidence < VERIFIED_MIN_CONFIDENCE:
        words.append(
            f"accepted by the checks, but not verified: the prover rates it {attempt.confidence:.2f}, "
            f"below {VERIFIED_MIN_CONFIDENCE:.2f} (an incomplete proof or a possibly wrong approach)"
        )
    return "; ".join(part.rstrip(". ") for part in [*words, *attempt.notes])
