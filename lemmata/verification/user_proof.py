"""`lemmata check`: the verification stack of the theory stage on a proof the user brings, and
the JSON object it prints (with the machine checks of the statement: stages/formal/statement_check.py)."""

from __future__ import annotations

import hashlib
import time

from pydantic import Field

from lemmata.agents.client import LLMClient
from lemmata.agents.proof_attempt import parse_proof_attempt
from lemmata.artifacts import Artifact, Checker, CheckStep, LemmaStatus, MachineCheck, VerificationMethod
from lemmata.settings import Settings
from lemmata.verification.calibration import trust_in_words
from lemmata.verification.checks import check_proof
from lemmata.verification.policy import is_verified, verification_in_words

#: The label the statement gets in the checks' prompts (a lemma of a run has its identifier there).
STATEMENT_LABEL = "S"
MODEL_CHECKS = ("verifier", "refuter")


class FormalReport(Artifact):
    """The machine checks of the statement: its formal statement and what decided its status."""

    statement: str = Field(description="the formal statement checked, in one line; empty when there is none")
    checker: str | None = Field(description="the checker that decided: coq, z3 or sampling; null when none did")
    method: str | None = Field(description="kernel proof, solver or sampling; null when nothing decided")
    counterexample: dict[str, str] | None = Field(description="each variable's value, when refuted")
    instances: int = Field(description="sampled inputs that satisfied the hypotheses")
    latex: str = ""
    coq: str = Field("", description="the Coq proposition")
    not_formalized: str = Field("", description="why there is no formal statement to check")
    checks: list[MachineCheck] = Field(default_factory=list)


class ProofCheck(Artifact):
    """What `lemmata check` found: the JSON object `--json` prints. `verified` is true exactly for
    the statuses machine_checked and reviewed."""

    verified: bool
    status: LemmaStatus = "unverified"
    formal: FormalReport | None = None
    accepted: bool = Field(description="the checks accepted the proof (verified also needs a trusted checker)")
    confidence: float = Field(description="the spec's parse of the proof: its self-assessment block, else a heuristic")
    method: VerificationMethod
    issues: list[str] = Field(default_factory=list, description="what each objecting check named")
    checks: list[CheckStep] = Field(default_factory=list)
    verification: str = Field(description="the verdict in words")
    checker: Checker
    trust: str = Field(description="what the checker's verdicts are worth, in words")
    calls: int = Field(description="model calls made (retries not counted)")
    seconds: float


def check_scope(statement: str, proof: str) -> str:
    """The call-log scope of one check: the same texts always get the same scope, so a recorded
    series of checks replays each check's own answers, in any order."""
    return "check:" + hashlib.sha256(f"{statement}\0{proof}".encode()).hexdigest()[:12]


def check_user_proof(client: LLMClient, statement: str, proof: str, settings: Settings, checker: Checker) -> ProofCheck:
    """Check `proof` of `statement` as the theory stage checks a lemma's proof, with two differences
    a brought proof needs: no acceptance on its own confidence rating (a rating is not a check),
    and the confidence floor only when the proof carries a prover's self-assessment block."""
    started = time.monotonic()
    attempt = parse_proof_attempt(proof, [])
    verdict = check_proof(client, STATEMENT_LABEL, statement, attempt, settings, auto_accept=False)
    rated = attempt.assessment is not None
    verified = is_verified(verdict, attempt, checker, confidence_floor=rated)
    return ProofCheck(
        verified=verified,
        status="reviewed" if verified else "unverified",
        accepted=verdict.accepted,
        confidence=attempt.confidence,
        method=verdict.method,
        issues=verdict.issues,
        checks=list(verdict.steps),
        verification=verification_in_words(verdict, attempt, checker, confidence_floor=rated),
        checker=checker,
        trust=trust_in_words(checker),
        calls=sum(step.check in MODEL_CHECKS for step in verdict.steps),
        seconds=round(time.monotonic() - started, 2),
    )
