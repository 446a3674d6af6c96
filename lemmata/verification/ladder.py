"""The status ladder in words: what each status promises, and the evidence of one lemma, said the
same way on the cards, at the review gate, in `lemmata status`, the status poll, the lemma graph
and the paper.

  machine_checked  its formal statement was proved by a proof kernel (Coq) or decided by an SMT
                   solver (Z3). It says nothing of the prose proof beside it.
  refuted          a counterexample to its formal statement, confirmed by exact arithmetic.
  tested           no counterexample among N sampled inputs: evidence, not proof.
  reviewed         the model checks passed its proof, and the checking model was measured to
                   tell wrong proofs from right ones (calibration.py).
  unverified       none of these.

Only machine_checked and reviewed are `verified`. A status applies to the formal statement shown
beside the prose; "refuted as formalized" says so where the prose may still be true.
"""

from __future__ import annotations

from lemmata.artifacts import FormalCheck, LemmaStatus, MachineCheck, ProvedLemma, refutation_in_words
from lemmata.formal.kernels import kernel_titles
from lemmata.verification.calibration import without_trust

LABELS: dict[str, str] = {
    "machine_checked": "machine-checked",
    "refuted": "refuted as formalized",
    "tested": "tested",
    "reviewed": "reviewed",
    "unverified": "unverified",
}
PROMISES: dict[str, str] = {
    "machine_checked": "its formal statement was proved by a machine: a proof kernel or a decision procedure",
    "refuted": "a counterexample to its formal statement, confirmed by exact arithmetic",
    "tested": "no counterexample among the inputs sampled: evidence, not proof",
    "reviewed": "the model checks passed its proof, by a checking model measured to tell wrong proofs from right",
    "unverified": "nothing checked it: neither a machine nor a calibrated model",
}
CHECKER_NAMES = {**kernel_titles(), "z3": "the SMT solver Z3", "sampling": "sampling"}


def label(status: LemmaStatus | str) -> str:
    return LABELS.get(status, status.replace("_", " "))


def proof_in_words(check: MachineCheck) -> str:
    """`the Coq proof kernel (automation: lia)`, `the SMT solver Z3 (unsat)`."""
    name = CHECKER_NAMES.get(check.checker, check.checker)
    if check.method == "kernel proof":
        return f"{name} ({check.proof_source})" if check.proof_source else name
    return f"{name} (no counterexample exists: unsat)"


def machine_proof_in_words(formal: FormalCheck) -> str:
    """How the machines proved a formal statement, as the proof of a lemma no model wrote one for:
    the kernel's accepted script and who wrote it, the solver's unsat."""
    sentences = []
    for check in formal.proofs:
        name = CHECKER_NAMES.get(check.checker, check.checker)
        if check.method == "kernel proof":
            source = f" ({check.proof_source})" if check.proof_source else ""
            sentences.append(f"{name[0].upper()}{name[1:]} accepted the proof script{source}: {check.proof.strip()}")
        else:
            sentences.append(
                f"{name[0].upper()}{name[1:]} found no input that satisfies the hypotheses and not the conclusion (unsat)."
            )
    return "\n".join(sentences)


def evidence_in_words(formal: FormalCheck | None) -> str:
    """What the machines found, in one sentence; "" when nothing was formalized."""
    if formal is None:
        return ""
    if formal.not_formalized:
        return f"no formal statement a machine could check ({not_formalized_in_words(formal)})"
    judged = formal.judged
    if formal.conflict:
        return f"the machine checks disagree: {formal.conflict}"
    if formal.proofs:
        words = "machine-checked by " + " and ".join(proof_in_words(check) for check in formal.proofs)
        return words + witness_in_words(judged.witness)
    refused = f" (a machine proof on record does not count: {judged.why})" if judged.why else ""
    if formal.refutation is not None:
        return f"refuted as formalized: {refutation_in_words(formal)}"
    if formal.instances:
        return f"tested: no counterexample in {formal.instances} sampled inputs (not a proof){refused}"
    return f"no machine decided its formal statement{refused}"


def witness_in_words(witness: tuple[tuple[str, str], ...]) -> str:
    """`; its premises hold at a = 0, b = 2 (not vacuous)`: the input that shows a proof from them
    proves something; "" for a statement without premises."""
    if not witness:
        return ""
    values = ", ".join(f"{name} = {value}" for name, value in witness)
    return f"; its hypotheses hold at {values}, so the proof is not vacuous"


def not_formalized_in_words(formal: FormalCheck, limit: int = 160) -> str:
    """Why there is no formal statement, short: the formalizer's own reason, or that its statement
    was refused and why (the first clause)."""
    reason = " ".join(formal.not_formalized.split())
    prefix = "the formal statement was refused: "
    if reason.startswith(prefix):
        reason = "the formalizer's statement was refused: " + reason[len(prefix) :]
    return reason if len(reason) <= limit else reason[: limit - 1].rstrip() + "…"


def checkers_in_short(formal: FormalCheck) -> str:
    """`in Coq`, `by the SMT solver Z3`, `in Coq and by the SMT solver Z3`: who proved it."""
    kernel = any(check.method == "kernel proof" for check in formal.proofs)
    solver = any(check.method == "solver" for check in formal.proofs)
    return " and ".join([*(["in Coq"] if kernel else []), *(["by the SMT solver Z3"] if solver else [])])


def model_checks_in_words(lemma: ProvedLemma) -> str:
    """What the model checks said of the lemma's proof, without the sentence on the checker's
    trust: the paper and the cards explain that once, not on every lemma."""
    words = lemma.verification
    if lemma.checked_by is not None:
        words = without_trust(words, lemma.checked_by, "its checker verifies nothing (see How the lemmas were checked)")
    return " ".join(words.split()).strip(" ;")


def status_line(lemma: ProvedLemma) -> str:
    """The lemma's status and what it rests on, in one sentence: the paper's status line."""
    if lemma.status == "machine_checked":
        assert lemma.formal is not None
        evidence = evidence_in_words(lemma.formal)
        if lemma.proved_by_machine_alone:
            return f"{evidence[0].upper()}{evidence[1:]}"
        return f"{evidence[0].upper()}{evidence[1:]}; the proof above is the model's prose and was not checked"
    parts = [evidence_in_words(lemma.formal)] if lemma.formal is not None else ["no formal statement was made"]
    checks = model_checks_in_words(lemma)
    if checks:
        parts.append(f"model checks: {checks}")
    text = "; ".join(part for part in parts if part)
    return text[0].upper() + text[1:]
