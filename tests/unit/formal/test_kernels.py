"""The proof kernels are a registry (formal/kernels.py): a kernel that can run here is asked in
order until one proves the statement, each with the model's script in its own language; one that
cannot run is recorded `unavailable` and never passes anything. Coq is the kernel that ships;
these tests register stand-ins beside it to show how a Lean kernel would be asked — and that its
"proved" counts only once lemmata's kernel issues its certificate (lemmata/kernel/certificate.py):
a kernel outside it cannot make a statement machine-checked."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from lemmata.artifacts import MachineCheck, MachineOutcome
from lemmata.formal.checking import prove_in_kernel
from lemmata.formal.kernels import KERNELS, CoqKernel
from lemmata.kernel.statement import Statement
from lemmata.verification.ladder import evidence_in_words, proof_in_words
from support.formal import EVEN_PLUS_ODD, EVEN_SUM, KERNEL, SAMPLED, SOLVED, formal, kernel_proof, refuted


@dataclass
class StandIn:
    """A kernel that answers what it is told and notes what it was given."""

    name: str
    outcome: MachineOutcome
    script_language: str = "lean"
    missing: str = ""
    title: str = "a stand-in kernel"
    given: list[tuple[str, str]] = field(default_factory=list)

    def problem(self) -> str:
        return self.missing

    def prove(self, statement: Statement, model_script: str, seconds: float) -> MachineCheck:
        self.given.append((" ".join(v.name for v in statement.variables), model_script))
        return MachineCheck(
            checker=self.name,
            method="kernel proof",
            outcome=self.outcome,
            proof=model_script if self.outcome == "proved" else "",
            proof_source="model script" if self.outcome == "proved" else "",
        )


def test_coq_is_the_kernel_that_ships_and_the_status_names_it() -> None:
    assert [kernel.name for kernel in KERNELS] == ["coq"]
    kernel = MachineCheck(checker="coq", method="kernel proof", outcome="proved", proof_source="automation: lia")
    assert proof_in_words(kernel) == "the Coq proof kernel (automation: lia)"


def test_kernels_are_asked_in_order_until_one_proves_each_with_its_own_script() -> None:
    first, second, third = (
        StandIn("lean", "inconclusive"),
        StandIn("isabelle", "proved", "isar"),
        StandIn("hol", "proved"),
    )
    check = prove_in_kernel(
        formal("The sum of two even integers is even.", SAMPLED),
        {"lean": "by omega", "isar": "by presburger", "coq": "lia."},
        kernels=(first, second, third),
    )
    assert [c.checker for c in check.checks] == ["sampling", "lean", "isabelle"]
    assert first.given == [("a b", "by omega")] and second.given == [("a b", "by presburger")]
    assert third.given == []  # the statement was proved: nothing more to ask
    # Its "proved" carries no certificate of lemmata's kernel: it is asked, and it counts for nothing.
    assert check.verdict == "tested" and check.proofs == []
    assert "isabelle" not in evidence_in_words(check)


def test_a_proof_counts_only_with_the_kernels_certificate_of_the_statement_shown() -> None:
    assert formal("The sum of two even integers is even.", SAMPLED, KERNEL).verdict == "machine_checked"
    forged = KERNEL.model_copy(update={"certificate": "lemmata-kernel-2:" + "0" * 64})
    assert formal("The sum of two even integers is even.", SAMPLED, forged).verdict == "tested"
    other = kernel_proof(EVEN_PLUS_ODD)  # a real certificate, of another statement
    assert formal("The sum of two even integers is even.", SAMPLED, other).verdict == "tested"


def test_a_kernel_not_installed_is_said_and_never_proves() -> None:
    missing = StandIn("lean", "proved", missing="lean is not installed (see docs/verification.md)")
    check = prove_in_kernel(
        formal("The sum of two even integers is even.", SAMPLED), {"lean": "by omega"}, kernels=(missing,)
    )
    assert missing.given == []
    assert check.checks[-1].outcome == "unavailable" and "not installed" in check.checks[-1].detail
    assert check.verdict == "tested"


def test_a_kernel_that_checked_already_is_not_asked_again_and_refuted_statements_never_reach_one() -> None:
    again = StandIn("coq", "proved")
    kept = formal(
        "The sum of two even integers is even.",
        SAMPLED,
        SOLVED,
        MachineCheck(checker="coq", method="kernel proof", outcome="inconclusive"),
    )
    assert prove_in_kernel(kept, kernels=(again,)).checks == kept.checks and again.given == []
    false = refuted()
    assert prove_in_kernel(false, kernels=(again,)) == false and again.given == []


def test_a_kernel_whose_automation_failed_gets_the_models_script_in_place_of_its_failed_check() -> None:
    """A lemma's kernel is tried with lemmata's automation before any prover (stages/theory/prove.py);
    when that fails, the prover's script of the first turn still reaches the kernel."""
    retried = StandIn("coq", "proved", "coq")
    failed = formal(
        "The sum of two even integers is even.",
        SAMPLED,
        MachineCheck(checker="coq", method="kernel proof", outcome="inconclusive"),
    )
    check = prove_in_kernel(failed, {"coq": "intros. lia."}, kernels=(retried,))
    assert retried.given == [("a b", "intros. lia.")]
    assert [(c.checker, c.outcome) for c in check.checks] == [("sampling", SAMPLED.outcome), ("coq", "proved")]


def test_a_statement_a_kernel_cannot_write_out_is_not_applicable_for_it_and_the_next_is_asked() -> None:
    """Coq's statement has its sums written out, so a billion terms cannot be stated there; another
    kernel may state a sum as it is, and is asked (its stand-in "proof" still counts for nothing)."""
    endless = EVEN_SUM.model_copy(update={"hypotheses": [], "conclusion": "sum(k for k in range(1, 10**9)) > 0"})
    lean = StandIn("lean", "proved")
    check = prove_in_kernel(
        formal("A sum of a billion terms is positive.").model_copy(update={"spec": endless}),
        kernels=(CoqKernel(), lean),
    )
    assert [(c.checker, c.outcome) for c in check.checks] == [("coq", "not_applicable"), ("lean", "proved")]
    assert "1000000000 terms" in check.checks[0].detail or "terms" in check.checks[0].detail
    assert check.verdict == "unverified"


@pytest.mark.usefixtures("needs_coq")
def test_the_coq_kernel_reads_the_coq_block_of_the_models_script() -> None:
    check = prove_in_kernel(
        formal("The sum of two even integers is even.", SAMPLED),
        {"coq": "intros a b Ha Hb. Z.div_mod_to_equations. lia."},
    )
    kernel = check.checks[-1]
    assert kernel.outcome == "proved" and kernel.proof_source == "model script", kernel.detail
