"""Theory, step two: one lemma proved and verified, in turns. Runs as its own job, in parallel.

A lemma whose formal statement a counterexample refuted is never proved. One that has a formal
statement gets lemmata's kernel automation first (formal/checking.py): a statement a machine
proves (the kernel, or the solver at planning) needs no prover, and its proof is the machine's. Otherwise the
prover's ```coq block is tried in its first turn; once a machine checked it, that turn's prose
proof is kept as the model's and no model check is spent on it. Otherwise each turn is one proof attempt and its
model checks (lemmata/verification). The loop ends at the first
attempt the checks accept, or after THEORY_STAGE_MAX_TURNS turns; the best attempt is kept. An
accepted attempt is verified only when its checker is trusted (measured on labelled proofs). A turn that does not raise the
best confidence is stagnant; STAGNATION_WINDOW stagnant turns in a row force a refinement: the
refiner diagnoses the attempts and proposes another route, which the next turns follow. The
attempts so far reach the prover as history, compressed every CONTEXT_COMPRESS_AFTER_TURNS.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lemmata.agents.client import LLMClient
from lemmata.agents.history import AgentHistory
from lemmata.agents.parsing import strip_fences
from lemmata.agents.prompts import render_prompt
from lemmata.agents.proof_attempt import ProofAttempt, parse_proof_attempt
from lemmata.artifacts import (
    VERIFIED_STATUSES,
    Checker,
    CheckStep,
    FormalCheck,
    Lemma,
    ProvedLemma,
    TheoryPlan,
    lemma_status,
)
from lemmata.errors import ProviderError
from lemmata.formal.checking import DEFAULT_BUDGET, Budget, prove_in_kernel
from lemmata.settings import Settings
from lemmata.verification.checks import Verdict, check_proof
from lemmata.verification.ladder import machine_proof_in_words
from lemmata.verification.policy import is_verified, verification_in_words

CONTEXT_STATEMENT_CHARS = 120
FIRST_TURN = "(none: this is the first attempt)"


@dataclass(frozen=True)
class Turn:
    number: int
    attempt: ProofAttempt
    verdict: Verdict


def approach_of(plan: TheoryPlan, lemma: Lemma) -> str:
    """The architect's route, and the reviewer's objection when it is about this lemma."""
    approach = lemma.approach or "(none)"
    if plan.rework is not None and plan.reworked(lemma.id):
        approach += f"\nThe reviewer rejected the earlier proof of this step: {plan.rework.issue}"
    return approach


def prove_lemma(
    client: LLMClient,
    plan: TheoryPlan,
    lemma_id: str,
    settings: Settings,
    dependencies: Sequence[ProvedLemma] = (),
    *,
    checker: Checker,
    budget: Budget = DEFAULT_BUDGET,
) -> ProvedLemma:
    """Prove one lemma; `dependencies` are the proved lemmas it builds on, when their jobs ran first.
    A lemma with a formal statement gets a kernel proof tried in its first turn (the prover's Coq
    script, then lemmata's automation): once a machine checked it, its prose proof is the model's,
    printed as such, and no model check or further turn is spent on it. Otherwise the turns end at
    the first attempt the model checks accept; whether it is verified is the checker's trust (a
    model measured not to tell wrong proofs from right ones verifies nothing)."""
    lemma = plan.lemma(lemma_id)
    formal = lemma.formal
    if formal is not None and formal.verdict == "refuted":
        return refuted_lemma(lemma, formal, checker)  # never reaches the prover
    if formal is not None:
        # lemmata's own kernel automation first: a statement a machine proves needs no model's
        # proof (on the embedded model, a prose proof of such a lemma took 26-34 s and was printed
        # as "not checked" beside the machine's proof; the README's main command, 2026-11-27).
        formal = prove_in_kernel(formal, budget=budget)
        if formal.verdict == "machine_checked":
            return machine_proved_lemma(lemma, formal, checker)
    context = dependency_context(plan, lemma, dependencies)
    history = AgentHistory(client, settings.CONTEXT_COMPRESS_AFTER_TURNS)
    refinements: list[str] = []
    best: Turn | None = None
    stagnant = 0
    for number in range(1, settings.THEORY_STAGE_MAX_TURNS + 1):
        prompt = render_prompt(
            "prover",
            goal=plan.goal,
            lemma_id=lemma.id,
            statement=lemma.statement,
            formal=formal_block(formal),
            context=context,
            approach=approach_of(plan, lemma),
            history=history.render(FIRST_TURN),
        )
        reply = client.complete_reply("prover", prompt.system, prompt.user)
        attempt = parse_proof_attempt(reply.text, lemma.depends_on, reply.finish_reason)
        if formal is not None and number == 1:
            formal = prove_in_kernel(formal, attempt.kernel_scripts, budget)
        if formal is not None and formal.verdict == "machine_checked":  # settled in the first turn
            best = Turn(number, attempt, machine_checked_verdict(formal))
            break
        verdict = check_proof(client, lemma.id, lemma.statement, attempt, settings, refute=checker.can_verify)
        turn = Turn(number, attempt, verdict)
        if best is None or turn.verdict.accepted or _better(turn, best):
            best, stagnant = turn, 0
        else:
            stagnant += 1
        if turn.verdict.accepted or turn.verdict.method == "not_checked" or number == settings.THEORY_STAGE_MAX_TURNS:
            # Done; or a check cannot run, and another attempt could not be checked either.
            break
        history.add(turn_summary(turn))
        if stagnant >= settings.STAGNATION_WINDOW:
            refinements.append(refine(client, plan.goal, lemma, history.render()))
            history.add(f"Refined strategy (follow it now): {refinements[-1]}", is_turn=False)
            stagnant = 0
    assert best is not None  # THEORY_STAGE_MAX_TURNS >= 1
    return proved_lemma(lemma, best, attempts=number, refinements=refinements, checker=checker, formal=formal)


def formal_block(formal: FormalCheck | None) -> str:
    """The lemma's formal statement for the prover, and the Coq statement its script would prove."""
    if formal is None or formal.not_formalized:
        return ""
    lines = [f"Formal statement (checked by machine): {formal.text}"]
    if formal.coq:
        lines.append(f"Coq statement: Theorem lemmata_goal : {formal.coq}.")
    return "\n".join(lines)


def machine_proved_lemma(lemma: Lemma, formal: FormalCheck, checker: Checker) -> ProvedLemma:
    """A lemma a machine proved before any prover was asked: its proof is the machine's, in words."""
    detail = "not asked: a machine proved the formal statement before any proof was written"
    return ProvedLemma(
        id=lemma.id,
        statement=lemma.statement,
        depends_on=lemma.depends_on,
        source=lemma.source,
        proof_text=machine_proof_in_words(formal),
        confidence=1.0,
        verified=lemma_status(formal, reviewed=False) in VERIFIED_STATUSES,
        status=lemma_status(formal, reviewed=False),
        verification_method="not_checked",
        verification=detail,
        checks=[CheckStep(check="verifier", outcome="skipped", detail=detail)],
        checked_by=checker,
        formal=formal,
        attempts=0,
    )


def machine_checked_verdict(formal: FormalCheck) -> Verdict:
    """No model check of the prose proof of a machine-checked lemma: the machine settled the statement."""
    detail = "not asked: the formal statement is machine-checked, and the prose proof is the model's"
    return Verdict("not_checked", (CheckStep(check="verifier", outcome="skipped", detail=detail),))


def refuted_lemma(lemma: Lemma, formal: FormalCheck, checker: Checker) -> ProvedLemma:
    return ProvedLemma(
        id=lemma.id,
        statement=lemma.statement,
        depends_on=lemma.depends_on,
        source=lemma.source,
        proof_text="",
        confidence=0.0,
        verified=False,
        status="refuted",
        verification_method="failed",
        verification="not proved: a counterexample refuted its formal statement before any proof",
        checked_by=checker,
        formal=formal,
    )


def _better(turn: Turn, best: Turn) -> bool:
    return not best.verdict.accepted and turn.attempt.confidence > best.attempt.confidence


def dependency_context(plan: TheoryPlan, lemma: Lemma, dependencies: Sequence[ProvedLemma]) -> str:
    """Each dependency as `[id] statement` (at most 120 characters), flagged when its proof failed."""
    failed = {dep.id for dep in dependencies if dep.proof_failed and not dep.verified}
    return (
        "\n".join(
            f"[{dep}] {short_statement(plan.lemma(dep).statement)}"
            + (" (its proof failed: do not rely on it)" if dep in failed else "")
            for dep in lemma.depends_on
        )
        or "(none)"
    )


def turn_summary(turn: Turn) -> str:
    attempt = turn.attempt
    weakest = attempt.assessment.weakest_step if attempt.assessment else ""
    parts = [
        f"Attempt {turn.number}: confidence {attempt.confidence:.2f}; {turn.verdict.detail or turn.verdict.method}."
    ]
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


def proved_lemma(
    lemma: Lemma, turn: Turn, attempts: int, refinements: list[str], checker: Checker, formal: FormalCheck | None = None
) -> ProvedLemma:
    attempt, verdict = turn.attempt, turn.verdict
    status = lemma_status(formal, is_verified(verdict, attempt, checker))
    return ProvedLemma(
        id=lemma.id,
        statement=lemma.statement,
        depends_on=lemma.depends_on,
        source=lemma.source,
        proof_text=attempt.proof_text,
        confidence=attempt.confidence,
        verified=status in VERIFIED_STATUSES,
        status=status,
        gaps=attempt.gaps,
        assessment=attempt.assessment,
        verification_method=verdict.method,
        verification=verification_in_words(verdict, attempt, checker),
        checks=list(verdict.steps),
        checked_by=checker,
        formal=formal,
        lean_sketch=attempt.lean_sketch,
        attempts=attempts,
        refinements=refinements,
    )


def short_statement(statement: str) -> str:
    flat = " ".join(statement.split())
    return flat if len(flat) <= CONTEXT_STATEMENT_CHARS else flat[: CONTEXT_STATEMENT_CHARS - 1] + "…"
