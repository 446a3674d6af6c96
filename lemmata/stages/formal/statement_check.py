"""`lemmata check`: the machine checks of a statement, and the model checks of a proof if one is
brought, decided into one status as a lemma of a run is (artifacts.lemma_status).

The statement is formalized as a lemma is (stages/formal/formalize.py), falsified by sampling and the
SMT solver, then given to Coq: the proof's own ```coq block first when the proof has one, then
lemmata's automation. Without a proof, only the machines decide: machine_checked, refuted,
tested or unverified.
"""

from __future__ import annotations

import time
from pathlib import Path

from lemmata.agents.client import LLMClient
from lemmata.agents.proof_attempt import parse_proof_attempt
from lemmata.artifacts import VERIFIED_STATUSES, Checker, FormalCheck, MachineCheck, lemma_status
from lemmata.formal.checking import prove_in_kernel
from lemmata.settings import Settings
from lemmata.stages.formal.formalize import formal_check, formalization, stored_formalization
from lemmata.verification.calibration import trust_in_words
from lemmata.verification.ladder import evidence_in_words
from lemmata.verification.user_proof import FormalReport, ProofCheck, check_user_proof

NO_PROOF = "no proof was given: only the machine checks ran"


def check_statement(
    client: LLMClient, statement: str, proof: str | None, settings: Settings, checker: Checker, cache_dir: Path
) -> ProofCheck:
    started = time.monotonic()
    asked = not stored_formalization(statement, cache_dir).exists()
    record = formalization(client, statement, cache_dir)
    scripts = parse_proof_attempt(proof, []).kernel_scripts if proof else {}
    formal = prove_in_kernel(formal_check(record), scripts)
    formalizer_calls = record.attempts if asked else 0
    if proof is None:
        model = ProofCheck(
            verified=False,
            accepted=False,
            confidence=0.0,
            method="not_checked",
            verification=NO_PROOF,
            checker=checker,
            trust=trust_in_words(checker),
            calls=0,
            seconds=0.0,
        )
    else:
        model = check_user_proof(client, statement, proof, settings, checker)
    status = lemma_status(formal, model.status == "reviewed")
    return model.model_copy(
        update={
            "status": status,
            "verified": status in VERIFIED_STATUSES,
            "formal": formal_report(formal),
            "verification": "; ".join(filter(None, [evidence_in_words(formal), model.verification])),
            "calls": model.calls + formalizer_calls,
            "seconds": round(time.monotonic() - started, 2),
        }
    )


def formal_report(formal: FormalCheck) -> FormalReport:
    decisive = _decisive(formal)
    return FormalReport(
        statement=formal.text,
        checker=decisive.checker if decisive else None,
        method=decisive.method if decisive else None,
        counterexample=formal.refutation.counterexample if formal.refutation and not formal.conflict else None,
        instances=formal.instances,
        latex=formal.latex,
        coq=formal.coq,
        not_formalized=formal.not_formalized,
        checks=formal.checks,
    )


def _decisive(formal: FormalCheck) -> MachineCheck | None:
    """The check the status rests on: a kernel proof before a solver's; the refutation; the sampling."""
    if formal.conflict:
        return None
    if formal.proofs:
        return min(formal.proofs, key=lambda check: check.method != "kernel proof")
    if formal.refutation is not None:
        return formal.refutation
    sampled = [check for check in formal.checks if check.method == "sampling" and check.instances]
    return sampled[0] if sampled else None
