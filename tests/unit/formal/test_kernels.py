"""The proof kernels are a registry (formal/kernels.py): a kernel that can run here is asked in
order until one proves the statement, each with the model's script in its own language; one that
cannot run is recorded `unavailable` and never passes anything. Coq is the kernel that ships;
these tests register stand-ins beside it to show a Lean kernel would join without other changes."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from lemmata.artifacts import MachineCheck, MachineOutcome
from lemmata.formal.checking import prove_in_kernel
from lemmata.formal.kernels import KERNELS, CoqKernel
from lemmata.formal.statement import Statement
from lemmata.verification.ladder import evidence_in_words, proof_in_words
from support.formal import EVEN_SUM, SAMPLED, SOLVED, formal


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
    assert check.verdict == "machine_checked"
    assert "isabelle" in evidence_in_words(check)


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
    refuted = formal(
        "The sum of an even and an odd integer is even.",
        MachineCheck(checker="sampling", method="sampling", outcome="refuted", counterexample={"a": "0", "b": "1"}),
    )
    assert prove_in_kernel(refuted, kernels=(again,)) == refuted and again.given == []


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


def test_a_statement_no_kernel_can_write_out_is_not_applicable_for_each() -> None:
    endless = EVEN_SUM.model_copy(update={"hypotheses": [], "conclusion": "sum(k for k in range(1, 10**9)) > 0"})
    lean = StandIn("lean", "proved")
    check = prove_in_kernel(
        formal("A sum of a billion terms is positive.").model_copy(update={"spec": endless}),
        kernels=(CoqKernel(), lean),
    )
    assert [(c.checker, c.outcome) for c in check.checks] == [("coq", "not_applicable"), ("lean", "not_applicable")]
    assert lean.given == [] and check.checks[0].detail


@pytest.mark.usefixtures("needs_coq")
def test_the_coq_kernel_reads_the_coq_block_of_the_models_script() -> None:
    check = prove_in_kernel(
        formal("The sum of two even integers is even.", SAMPLED),
        {"coq": "intros a b Ha Hb. Z.div_mod_to_equations. lia."},
    )
    kernel = check.checks[-1]
    assert kernel.outcome == "proved" and kernel.proof_source == "model script", kernel.detail
