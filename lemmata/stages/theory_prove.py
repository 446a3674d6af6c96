"""Theory, step two: one lemma proved and verified, in turns. Runs as its own job, in parallel.

Each turn is one proof attempt and its check. The loop ends at the first verified attempt or
after THEORY_STAGE_MAX_TURNS turns; the best attempt is kept. A turn that does not raise the
best confidence is stagnant; STAGNATION_WINDOW stagnant turns in a row force a refinement: the
refiner diagnoses the attempts and proposes another route, which the next turns follow. The
attempts so far reach the prover as history, compressed every CONTEXT_COMPRESS_AFTER_TURNS.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lemmata.artifacts import Lemma, ProvedLemma, TheoryPlan, VerificationMethod
from lemmata.errors import ModelOutputError, ProviderError
from lemmata.llm.client import LLMClient
from lemmata.settings import Settings
from lemmata.stages.answers import VerifierAnswer
from lemmata.stages.history import AgentHistory
from lemmata.stages.parsing import parse_json_answer, strip_fences
from lemmata.stages.proof_attempt import ProofAttempt, parse_proof_attempt
from lemmata.stages.prompts import render_prompt

CONTEXT_STATEMENT_CHARS = 120
VERIFIER_EXCERPT_CHARS = 1000
FIRST_TURN = "(none: this is the first attempt)"


@dataclass(frozen=True)
class Check:
    """The outcome of verifying one attempt."""

    method: VerificationMethod
    detail: str
    rejected: bool = False  # the verifier said the proof is wrong (not merely unconfirmed)

    @property
    def verified(self) -> bool:
        return self.method in ("auto_accepted", "verifier_pass")


@dataclass(frozen=True)
class Turn:
    number: int
    attempt: ProofAttempt
    check: Check


def approach_of(plan: TheoryPlan, lemma: Lemma) -> str:
    """The architect's route, and the reviewer's objection when it is about this lemma."""
    approach = lemma.approach or "(none)"
    if plan.rework is not None and plan.reworked(lemma.id):
        approach += f"\nThe reviewer rejected the earlier proof of this step: {plan.rework.issue}"
    return approach


def prove_lemma(client: LLMClient, plan: TheoryPlan, lemma_id: str, settings: Settings,
                dependencies: Sequence[ProvedLemma] = ()) -> ProvedLemma:
    """Prove one lemma; `dependencies` are the proved lemmas it builds on, when their jobs ran first."""
    lemma = plan.lemma(lemma_id)
    context = dependency_context(plan, lemma, dependencies)
    history = AgentHistory(client, settings.CONTEXT_COMPRESS_AFTER_TURNS)
    refinements: list[str] = []
    best: Turn | None = None
    stagnant = 0
    for number in range(1, settings.THEORY_STAGE_MAX_TURNS + 1):
        prompt = render_prompt("prover", goal=plan.goal, lemma_id=lemma.id, statement=lemma.statement,
                               context=context, approach=approach_of(plan, lemma),
                               history=history.render(FIRST_TURN))
        attempt = parse_proof_attempt(client.complete("prover", prompt.system, prompt.user), lemma.depends_on)
        turn = Turn(number, attempt, verify(client, lemma, attempt, settings))
        if best is None or turn.check.verified or _better(turn, best):
            best, stagnant = turn, 0
        else:
            stagnant += 1
        if turn.check.verified or turn.check.method == "not_checked" or number == settings.THEORY_STAGE_MAX_TURNS:
            # Done; or the checker cannot run, and another attempt could not be checked either.
            break
        history.add(turn_summary(turn))
        if stagnant >= settings.STAGNATION_WINDOW:
            refinements.append(refine(client, plan.goal, lemma, history.render()))
            history.add(f"Refined strategy (follow it now): {refinements[-1]}", is_turn=False)
            stagnant = 0
    assert best is not None  # THEORY_STAGE_MAX_TURNS >= 1
    return proved_lemma(lemma, best, attempts=number, refinements=refinements)


def _better(turn: Turn, best: Turn) -> bool:
    return turn.attempt.confidence > best.attempt.confidence


def dependency_context(plan: TheoryPlan, lemma: Lemma, dependencies: Sequence[ProvedLemma]) -> str:
    """Each dependency as `[id] statement` (at most 120 characters), flagged when its proof failed."""
    failed = {dep.id for dep in dependencies if dep.status == "failed"}
    return "\n".join(
        f"[{dep}] {short_statement(plan.lemma(dep).statement)}"
        + (" (its proof failed: do not rely on it)" if dep in failed else "")
        for dep in lemma.depends_on
    ) or "(none)"


def verify(client: LLMClient, lemma: Lemma, attempt: ProofAttempt, settings: Settings) -> Check:
    """Auto-accept at AUTO_VERIFY_CONFIDENCE without a call; otherwise the verifier decides.
    A verifier that cannot run, or answers unreadably, leaves the proof unchecked: not verified."""
    if attempt.confidence == 0.0:
        return Check("failed", "no usable proof")
    if attempt.confidence >= settings.AUTO_VERIFY_CONFIDENCE:
        return Check("auto_accepted", f"auto-accepted: confidence {attempt.confidence:.2f} "
                                      f">= {settings.AUTO_VERIFY_CONFIDENCE:.2f}")
    prompt = render_prompt(
        "verifier", lemma_id=lemma.id, statement=lemma.statement, proof_excerpt=head_and_tail(attempt.proof_text)
    )
    try:
        text = client.complete("verifier", prompt.system, prompt.user, json_answer=True)
        answer = parse_json_answer(text, VerifierAnswer, "verifier")
    except (ProviderError, ModelOutputError) as exc:
        return Check("not_checked", f"not checked: the verifier could not run ({exc})")
    verdict = answer.verdict.strip().lower().rstrip(".")
    issues = "; ".join(issue for issue in answer.issues if issue.strip())
    detail = f"verifier: {verdict}" + (f" ({issues})" if issues else "")
    return Check("verifier_pass" if verdict == "valid" else "failed", detail, rejected=verdict == "invalid")


def turn_summary(turn: Turn) -> str:
    attempt = turn.attempt
    weakest = attempt.assessment.weakest_step if attempt.assessment else ""
    parts = [f"Attempt {turn.number}: confidence {attempt.confidence:.2f}; {turn.check.detail}."]
    if attempt.gaps:
        parts.append("Gaps: " + "; ".join(attempt.gaps) + ".")
    if weakest:
        parts.append(f"Weakest step: {weakest}.")
    parts += [f"{note[0].upper()}{note[1:]}." for note in attempt.notes]
    return " ".join(parts)


def refine(client: LLMClient, goal: str, lemma: Lemma, history: str) -> str:
    prompt = render_prompt("refiner", goal=goal, lemma_id=lemma.id, statement=lemma.statement, history=history)
    try:
        text = client.complete("refiner", prompt.system, prompt.user)
    except ProviderError as exc:
        return f"(the refiner could not run: {exc}) Try a proof technique different from the ones above."
    return strip_fences(text) or "Try a proof technique different from the ones above."


def proved_lemma(lemma: Lemma, turn: Turn, attempts: int, refinements: list[str]) -> ProvedLemma:
    attempt, check = turn.attempt, turn.check
    return ProvedLemma(
        id=lemma.id,
        statement=lemma.statement,
        depends_on=lemma.depends_on,
        source=lemma.source,
        proof_text=attempt.proof_text,
        confidence=attempt.confidence,
        verified=check.verified,
        status=lemma_status(attempt, check),
        gaps=attempt.gaps,
        assessment=attempt.assessment,
        verification_method=check.method,
        verification="; ".join([check.detail, *attempt.notes]),
        lean_sketch=attempt.lean_sketch,
        attempts=attempts,
        refinements=refinements,
    )


def lemma_status(attempt: ProofAttempt, check: Check) -> str:
    if check.verified:
        return "proved"
    if attempt.confidence == 0.0 or check.rejected:
        return "failed"
    return "low_confidence"


def short_statement(statement: str) -> str:
    flat = " ".join(statement.split())
    return flat if len(flat) <= CONTEXT_STATEMENT_CHARS else flat[: CONTEXT_STATEMENT_CHARS - 1] + "…"


def head_and_tail(text: str, total: int = VERIFIER_EXCERPT_CHARS) -> str:
    if len(text) <= total:
        return text
    marker = "\n[…]\n"
    half = (total - len(marker)) // 2
    return text[:half] + marker + text[-(total - len(marker) - half):]
