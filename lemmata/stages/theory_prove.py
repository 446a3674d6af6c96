"""Theory, step two: one lemma proved and verified. Runs as its own job, in parallel."""

from __future__ import annotations

from collections.abc import Sequence

from lemmata.artifacts import Lemma, ProvedLemma, TheoryPlan
from lemmata.llm.client import LLMClient
from lemmata.settings import Settings
from lemmata.stages.answers import VerifierAnswer
from lemmata.stages.parsing import parse_json_answer
from lemmata.stages.proof_attempt import ProofAttempt, parse_proof_attempt
from lemmata.stages.prompts import render_prompt

CONTEXT_STATEMENT_CHARS = 120
VERIFIER_EXCERPT_CHARS = 1000


def prove_lemma(client: LLMClient, plan: TheoryPlan, lemma_id: str, settings: Settings,
                dependencies: Sequence[ProvedLemma] = ()) -> ProvedLemma:
    """Prove one lemma; `dependencies` are the proved lemmas it builds on, when their jobs ran first."""
    lemma = plan.lemma(lemma_id)
    failed = {dep.id for dep in dependencies if dep.status == "failed"}
    context = "\n".join(
        f"[{dep}] {short_statement(plan.lemma(dep).statement)}"
        + (" (its proof failed: do not rely on it)" if dep in failed else "")
        for dep in lemma.depends_on
    ) or "(none)"
    prompt = render_prompt(
        "prover", goal=plan.goal, lemma_id=lemma.id, statement=lemma.statement, context=context
    )
    attempt = parse_proof_attempt(client.complete("prover", prompt.system, prompt.user), lemma.depends_on)
    verified, how = verify(client, lemma, attempt, settings)
    return ProvedLemma(
        id=lemma.id,
        statement=lemma.statement,
        depends_on=lemma.depends_on,
        source=lemma.source,
        proof_text=attempt.proof_text,
        confidence=attempt.confidence,
        verified=verified,
        status=lemma_status(attempt, verified, how),
        gaps=attempt.gaps,
        assessment=attempt.assessment,
        verification="; ".join([how, *attempt.notes]),
        lean_sketch=attempt.lean_sketch,
    )


def verify(client: LLMClient, lemma: Lemma, attempt: ProofAttempt, settings: Settings) -> tuple[bool, str]:
    """Auto-accept at AUTO_VERIFY_CONFIDENCE without a call; otherwise the verifier decides."""
    if attempt.confidence == 0.0:
        return False, "not verified: no usable proof"
    if attempt.confidence >= settings.AUTO_VERIFY_CONFIDENCE:
        return True, f"auto-accepted: confidence {attempt.confidence:.2f} >= {settings.AUTO_VERIFY_CONFIDENCE:.2f}"
    prompt = render_prompt(
        "verifier", lemma_id=lemma.id, statement=lemma.statement, proof_excerpt=head_and_tail(attempt.proof_text)
    )
    answer = parse_json_answer(client.complete("verifier", prompt.system, prompt.user, json_answer=True), VerifierAnswer, "verifier")
    verdict = answer.verdict.strip().lower()
    issues = "; ".join(answer.issues)
    return verdict == "valid", f"verifier: {verdict}" + (f" ({issues})" if issues else "")


def lemma_status(attempt: ProofAttempt, verified: bool, how: str) -> str:
    if verified:
        return "proved"
    if attempt.confidence == 0.0 or how.startswith("verifier: invalid"):
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
