"""The checks a proof attempt passes, cheapest first; the first check that decides ends them.

1. structure, no call: no proof fails; an open `[GAP: …]`, a gap in the self-assessment, or a
   self-assessment that calls the proof a sketch flags it (the prover says it is incomplete: no
   checker can make it whole).
2. auto-accept, no call (the spec's rule): confidence >= AUTO_VERIFY_CONFIDENCE accepts it, unless
   the prover calls the proof partial (then the checks below decide).
3. verifier, on the head and tail of the proof (1000 characters, the spec's rule): "valid"
   naming no flaw passes; "invalid" fails the proof; anything else, or "valid" while naming a
   flaw, flags it.
4. refuter, on the whole proof: asked for the first error, it must find none. It exists because
   one model saying "valid" is weak evidence: careless verifiers say it to everything.
A check that cannot run, or answers unreadably, leaves the proof not checked.

Accepted is not verified: whether an accepted proof counts as verified depends on how far the
checking model is trusted (calibration.py), which the caller applies.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from lemmata.agents.answers import RefuterAnswer, VerifierAnswer
from lemmata.agents.client import LLMClient
from lemmata.agents.parsing import NOT_JSON, fenced_blocks, first_json_value
from lemmata.agents.prompts import render_prompt
from lemmata.agents.proof_attempt import ProofAttempt
from lemmata.artifacts import ACCEPTING_METHODS, CheckStep, VerificationMethod
from lemmata.errors import ModelOutputError, ProviderError
from lemmata.settings import Settings

VERIFIER_EXCERPT_CHARS = 1000
#: The refuter reads the whole proof up to this length; a longer proof is read in part and cannot pass.
REFUTER_PROOF_CHARS = 12000
#: What careless models write into a list of issues when they mean that there is none.
NO_ISSUE = re.compile(
    r"^(?:none|nothing|no|n/?a|-+|\.+|no (?:issues?|problems?|errors?|flaws?|gaps?|concerns?)"
    r"(?: (?:found|identified|detected))?|(?:the )?proof is (?:correct|valid|complete|fine|rigorous))[.!]?$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Verdict:
    """How the checks of one attempt ended, and each check that ran."""

    method: VerificationMethod
    steps: tuple[CheckStep, ...]

    @property
    def accepted(self) -> bool:
        return self.method in ACCEPTING_METHODS

    @property
    def rejected(self) -> bool:
        """The proof is wrong or missing, not merely unconfirmed."""
        return self.method == "failed"

    @property
    def issues(self) -> list[str]:
        """What the checks objected to, one entry per objecting check."""
        return [step.detail for step in self.steps if step.outcome in ("objected", "rejected")]

    @property
    def detail(self) -> str:
        """The checks in words, for the lemma record, the cards and the paper."""
        return "; ".join(f"{step.check.replace('_', '-')}: {step.detail}" for step in self.steps if step.detail)


def check_proof(
    client: LLMClient,
    lemma_id: str,
    statement: str,
    attempt: ProofAttempt,
    settings: Settings,
    *,
    auto_accept: bool = True,
    refute: bool = True,
) -> Verdict:
    """Run the checks on `attempt`. `auto_accept` False (a proof a user brings to `lemmata check`)
    skips the acceptance on the prover's own confidence: a self-rating is not a check. `refute`
    False skips the refuter where its pass could not make the proof verified (an untrusted
    checker): it exists to stop false verification, and its objections would only cost turns."""
    structure = structural_check(attempt)
    if structure.outcome == "rejected":
        return Verdict("failed", (structure,))
    if structure.outcome == "objected":
        return Verdict("flagged", (structure,))
    if (
        auto_accept
        and not settings.CHECK_CONFIDENT_PROOFS
        and attempt.confidence >= settings.AUTO_VERIFY_CONFIDENCE
        and not called_partial(attempt)
    ):
        return Verdict(
            "auto_accepted",
            (
                structure,
                CheckStep(
                    check="auto_accept",
                    outcome="passed",
                    detail=f"confidence {attempt.confidence:.2f} >= {settings.AUTO_VERIFY_CONFIDENCE:.2f}, no verifier call",
                ),
            ),
        )
    steps = [structure, verifier_check(client, lemma_id, statement, attempt.proof_text)]
    if steps[-1].outcome == "passed":
        steps.append(
            refuter_check(client, lemma_id, statement, attempt.proof_text)
            if refute
            else CheckStep(
                check="refuter",
                outcome="skipped",
                detail="not asked: its checker cannot verify, so its pass would change nothing",
            )
        )
    return Verdict(method_of(steps[-1]), tuple(steps))


def method_of(last: CheckStep) -> VerificationMethod:
    return {
        "passed": "verifier_pass",
        "skipped": "verifier_pass",
        "rejected": "failed",
        "objected": "flagged",
        "could_not_run": "not_checked",
    }.get(last.outcome, "not_checked")  # type: ignore[return-value]


def refuted_in_vain(steps: tuple[CheckStep, ...] | list[CheckStep]) -> bool:
    """Whether the refuter read the proof and found no error: no proof is verified without it."""
    return any(step.check == "refuter" and step.outcome == "passed" for step in steps)


def structural_check(attempt: ProofAttempt) -> CheckStep:
    """What the attempt says of itself: no proof, open gaps, or a self-assessed incomplete proof."""
    if attempt.confidence == 0.0:
        return CheckStep(check="structure", outcome="rejected", detail="no usable proof")
    if attempt.gaps:
        return CheckStep(check="structure", outcome="objected", detail="open gaps: " + "; ".join(attempt.gaps))
    if said_completeness(attempt) == "sketch":
        return CheckStep(check="structure", outcome="objected", detail="the prover calls its proof a sketch")
    return CheckStep(check="structure", outcome="passed")


def said_completeness(attempt: ProofAttempt) -> str:
    """The completeness the prover stated in its self-assessment; "" when it stated none."""
    assessment = attempt.assessment
    return assessment.completeness if assessment is not None and "completeness" in assessment.model_fields_set else ""


def called_partial(attempt: ProofAttempt) -> bool:
    return said_completeness(attempt) == "partial"


def verifier_check(client: LLMClient, lemma_id: str, statement: str, proof_text: str) -> CheckStep:
    prompt = render_prompt("verifier", lemma_id=lemma_id, statement=statement, proof_excerpt=head_and_tail(proof_text))
    try:
        answer = strict_answer(
            client.complete("verifier", prompt.system, prompt.user, json_answer=True), VerifierAnswer, "verifier"
        )
    except (ProviderError, ModelOutputError) as exc:
        return CheckStep(check="verifier", outcome="could_not_run", detail=f"could not run ({exc})")
    verdict = answer.verdict.strip().lower().rstrip(".")
    flaws = named_flaws(answer.issues)
    said = f"{verdict}" + (f" ({'; '.join(flaws)})" if flaws else "")
    if verdict == "invalid":
        return CheckStep(check="verifier", outcome="rejected", detail=said)
    if verdict == "valid" and not flaws:
        return CheckStep(check="verifier", outcome="passed", detail="valid, no flaw named")
    if verdict == "valid":
        return CheckStep(
            check="verifier", outcome="objected", detail=f"valid, yet it names a flaw ({'; '.join(flaws)})"
        )
    return CheckStep(check="verifier", outcome="objected", detail=said)


def refuter_check(client: LLMClient, lemma_id: str, statement: str, proof_text: str) -> CheckStep:
    whole = len(proof_text) <= REFUTER_PROOF_CHARS
    proof = proof_text if whole else head_and_tail(proof_text, REFUTER_PROOF_CHARS)
    prompt = render_prompt("refuter", lemma_id=lemma_id, statement=statement, proof=proof)
    try:
        answer = strict_answer(
            client.complete("refuter", prompt.system, prompt.user, json_answer=True), RefuterAnswer, "refuter"
        )
    except (ProviderError, ModelOutputError) as exc:
        return CheckStep(check="refuter", outcome="could_not_run", detail=f"could not run ({exc})")
    error = " ".join(answer.first_error.split())
    if answer.error_found or named_flaws([error]):
        return CheckStep(check="refuter", outcome="objected", detail=f"first error: {error or '(not described)'}")
    if not whole:
        return CheckStep(
            check="refuter",
            outcome="objected",
            detail=f"found no error, but read only {REFUTER_PROOF_CHARS:,} of {len(proof_text):,} characters",
        )
    return CheckStep(check="refuter", outcome="passed", detail="no error found in the whole proof")


def named_flaws(issues: list[str]) -> list[str]:
    """The issues that name something; 'none', 'no issues found' and blanks name nothing."""
    return [" ".join(issue.split()) for issue in issues if issue.strip() and not NO_ISSUE.match(issue.strip())]


M = TypeVar("M", bound=BaseModel)


def strict_answer(text: str, model: type[M], role: str) -> M:
    """A check's JSON answer, complete or not at all: unlike other roles, a truncated answer is
    not repaired, since its cut-off tail is where a flaw would have been named."""
    candidates = [text, *fenced_blocks(text)]
    for chunk in candidates:
        try:
            value = json.loads(chunk)
        except NOT_JSON:
            continue
        try:
            return model.model_validate(value)
        except ValidationError:
            continue
    value = first_json_value(text, "{")
    if isinstance(value, dict):
        try:
            return model.model_validate(value)
        except ValidationError:
            pass
    excerpt = " ".join(text.split())[:160]
    raise ModelOutputError(f"the {role} answer is not the complete JSON asked for: {excerpt!r}")


def head_and_tail(text: str, total: int = VERIFIER_EXCERPT_CHARS) -> str:
    if len(text) <= total:
        return text
    marker = "\n[…]\n"
    half = (total - len(marker)) // 2
    return text[:half] + marker + text[-(total - len(marker) - half) :]
