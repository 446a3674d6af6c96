"""Formal checks as the machine checks leave them, for tests that need a lemma of each status
without running a solver or Coq: a machine-checked one, a tested one, a refuted one.

Their texts, certificates and witnesses are the kernel's own (lemmata/kernel): a machine check
counts only when its certificate is the kernel's for the statement shown, so these records say
exactly what a real run's would."""

from __future__ import annotations

from lemmata.artifacts import FormalCheck, FormalSpec, FormalVariable, MachineCheck
from lemmata.formal.reading import read_statement
from lemmata.kernel.admission import admit
from lemmata.kernel.certificate import coq_certificate, solver_certificate
from lemmata.kernel.coq_terms import coq_statement


def spec(variables: dict[str, str], hypotheses: list[str], conclusion: str) -> FormalSpec:
    return FormalSpec(
        variables=[FormalVariable(name=name, type=kind) for name, kind in variables.items()],  # type: ignore[arg-type]
        hypotheses=hypotheses,
        conclusion=conclusion,
    )


EVEN_SUM = spec({"a": "integer", "b": "integer"}, ["a % 2 == 0", "b % 2 == 0"], "(a + b) % 2 == 0")
EVEN_PLUS_ODD = spec({"a": "integer", "b": "integer"}, ["a % 2 == 0", "b % 2 == 1"], "(a + b) % 2 == 0")
EVEN_SUM_TEXT = "∀ a, b ∈ ℤ: a mod 2 = 0 ∧ b mod 2 = 0 ⇒ (a + b) mod 2 = 0"
EVEN_SUM_LATEX = (
    r"\forall a , b \in \mathbb{Z} : a \bmod 2 = 0 \wedge b \bmod 2 = 0 \;\Rightarrow\; ( a + b ) \bmod 2 = 0"
)
#: An input at which the even sum's hypotheses hold: its proofs are not vacuous.
EVEN_SUM_WITNESS = {"a": "0", "b": "0"}
SAMPLED = MachineCheck(checker="sampling", method="sampling", outcome="no_counterexample", instances=893)


def _statement(formal_spec: FormalSpec):  # type: ignore[no-untyped-def]
    return read_statement(
        [(v.name, v.type) for v in formal_spec.variables], formal_spec.hypotheses, formal_spec.conclusion
    )


def solved(formal_spec: FormalSpec = EVEN_SUM) -> MachineCheck:
    """The solver's unsat, with the certificate the kernel issues for it."""
    text = admit(_statement(formal_spec)).text
    return MachineCheck(
        checker="z3", method="solver", outcome="proved", detail="unsat", certificate=solver_certificate(text)
    )


def kernel_proof(formal_spec: FormalSpec = EVEN_SUM) -> MachineCheck:
    """Coq's acceptance, with the certificate the kernel issues for it."""
    proposition = coq_statement(_statement(formal_spec)).proposition
    return MachineCheck(
        checker="coq",
        method="kernel proof",
        outcome="proved",
        proof="Z.div_mod_to_equations; lia",
        proof_source="automation: mod/div as equations, lia",
        certificate=coq_certificate(proposition),
    )


SOLVED = solved()
KERNEL = kernel_proof()


def formal(prose: str = "The sum of two even integers is even.", *checks: MachineCheck) -> FormalCheck:
    return FormalCheck(
        prose=prose,
        spec=EVEN_SUM,
        text=EVEN_SUM_TEXT,
        latex=EVEN_SUM_LATEX,
        checks=list(checks),
        witness=dict(EVEN_SUM_WITNESS),
    )


def machine_checked(prose: str = "The sum of two even integers is even.") -> FormalCheck:
    return formal(prose, SAMPLED, SOLVED, KERNEL)


def tested(prose: str = "The sum of two even integers is even.", instances: int = 893) -> FormalCheck:
    return formal(prose, SAMPLED.model_copy(update={"instances": instances}))


def refuted(prose: str = "The sum of an even and an odd integer is even.", **values: str) -> FormalCheck:
    """Refuted as formalized: a = 0, b = 1 (or `values`) is a counterexample to `EVEN_PLUS_ODD`."""
    found = MachineCheck(
        checker="sampling",
        method="sampling",
        outcome="refuted",
        instances=1,
        counterexample=values or {"a": "0", "b": "1"},
    )
    admitted = admit(_statement(EVEN_PLUS_ODD))
    return FormalCheck(prose=prose, spec=EVEN_PLUS_ODD, text=admitted.text, latex=admitted.latex, checks=[found])


def not_formalized(prose: str = "The regret is O(sqrt(T)).", why: str = "an asymptotic bound") -> FormalCheck:
    return FormalCheck(prose=prose, not_formalized=why)
