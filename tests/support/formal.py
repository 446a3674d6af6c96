"""Formal checks as the machine checks leave them, for tests that need a lemma of each status
without running a solver or Coq: a machine-checked one, a tested one, a refuted one."""

from __future__ import annotations

from lemmata.artifacts import FormalCheck, FormalSpec, FormalVariable, MachineCheck

EVEN_SUM = FormalSpec(
    variables=[FormalVariable(name="a", type="integer"), FormalVariable(name="b", type="integer")],
    hypotheses=["a % 2 == 0", "b % 2 == 0"],
    conclusion="(a + b) % 2 == 0",
)
EVEN_SUM_TEXT = "∀ a, b ∈ ℤ: a mod 2 = 0 ∧ b mod 2 = 0 ⇒ (a + b) mod 2 = 0"
EVEN_SUM_LATEX = r"\forall a, b \in \mathbb{Z}: a \bmod 2 = 0 \wedge b \bmod 2 = 0 \;\Rightarrow\; (a + b) \bmod 2 = 0"
SAMPLED = MachineCheck(checker="sampling", method="sampling", outcome="no_counterexample", instances=893)
SOLVED = MachineCheck(checker="z3", method="solver", outcome="proved", detail="unsat")
KERNEL = MachineCheck(
    checker="coq",
    method="kernel proof",
    outcome="proved",
    proof="Z.div_mod_to_equations; lia",
    proof_source="automation: mod/div as equations, lia",
)


def formal(prose: str = "The sum of two even integers is even.", *checks: MachineCheck) -> FormalCheck:
    return FormalCheck(prose=prose, spec=EVEN_SUM, text=EVEN_SUM_TEXT, latex=EVEN_SUM_LATEX, checks=list(checks))


def machine_checked(prose: str = "The sum of two even integers is even.") -> FormalCheck:
    return formal(prose, SAMPLED, SOLVED, KERNEL)


def tested(prose: str = "The sum of two even integers is even.", instances: int = 893) -> FormalCheck:
    return formal(prose, SAMPLED.model_copy(update={"instances": instances}))


def refuted(prose: str = "The sum of an even and an odd integer is even.", **values: str) -> FormalCheck:
    found = MachineCheck(
        checker="sampling",
        method="sampling",
        outcome="refuted",
        instances=1,
        counterexample=values or {"a": "0", "b": "1"},
    )
    return formal(prose, found)


def not_formalized(prose: str = "The regret is O(sqrt(T)).", why: str = "an asymptotic bound") -> FormalCheck:
    return FormalCheck(prose=prose, not_formalized=why)
