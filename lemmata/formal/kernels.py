"""The proof kernels a formal statement is proved in, registered once (as the model backends are
in llm/registry.py). A kernel takes the typed statement (statement.py), states it in its own
language — lemmata writes that statement, never the model — and tries to prove it: the model's
script for that kernel first, then the kernel's own automation. Its acceptance, with the
certificate lemmata's kernel issues for it (lemmata/kernel/coq_file.judge), counts towards a
`machine_checked` status with method `kernel proof`.

Coq ships: Debian packages it with its standard library, so `bin/setup` installs it offline.
Lean 4 is the field's standard but cannot be installed here without network; a Lean kernel
joins this registry where a toolchain exists:

1. a class with the fields and methods of `ProofKernel` (state the statement in Lean from the
   typed one; run `lean` in the box like coq.py runs `coqc`; refuse `sorry`, `axiom`, `native_decide`
   and anything else that proves without the kernel, and read `#print axioms`);
2. an entry in `KERNELS`, after Coq or before it;
3. the prover's prompt asking for a ```lean block (agents/proof_attempt.py reads fenced blocks
   by language) and the cheat tests of tests/unit/formal/test_coq.py written again for it.

None ships untested: a kernel that cannot run here says so (`available`) and its checks are
recorded `unavailable`, never passed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from lemmata.artifacts import MachineCheck, MachineOutcome
from lemmata.formal import coq
from lemmata.kernel.coq_terms import NotStatable, coq_statement
from lemmata.kernel.statement import Statement
from lemmata.kernel.tree import FormalError


class ProofKernel(Protocol):
    #: The checker named in each MachineCheck, the status line and the paper ("coq").
    name: str
    #: How the paper and the cards name it ("the Coq proof kernel").
    title: str
    #: The language of the model's script for it: the fenced block a prover writes ("coq").
    script_language: str

    def problem(self) -> str:
        """Empty when the kernel can run here; otherwise why not and how to install it."""
        ...

    def prove(self, statement: Statement, model_script: str, seconds: float) -> MachineCheck:
        """A `kernel proof` check of the statement: proved, inconclusive, not_applicable (the
        statement uses what this kernel's derivation cannot state) or unavailable."""
        ...


class CoqKernel:
    name = "coq"
    title = "the Coq proof kernel"
    script_language = "coq"

    def problem(self) -> str:
        return coq.coq_problem()

    def prove(self, statement: Statement, model_script: str, seconds: float) -> MachineCheck:
        try:
            stated = coq_statement(statement)
        except (FormalError, NotStatable) as error:
            return MachineCheck(checker=self.name, method="kernel proof", outcome="not_applicable", detail=str(error))
        verdict = coq.prove(stated.proposition, stated.scope, model_script, stated.hints, seconds)
        outcome: MachineOutcome = "inconclusive"  # refused, failed or timed out: nothing decided
        if verdict.outcome in ("proved", "unavailable"):
            outcome = "proved" if verdict.outcome == "proved" else "unavailable"
        return MachineCheck(
            checker=self.name,
            method="kernel proof",
            outcome=outcome,
            detail=verdict.detail,
            seconds=round(verdict.seconds, 3),
            proof=verdict.script if verdict.proved else "",
            proof_source=verdict.method if verdict.proved else "",
            certificate=verdict.certificate,
        )


#: Tried in this order; the first kernel that proves a statement ends the tries.
KERNELS: tuple[ProofKernel, ...] = (CoqKernel(),)


def kernel_titles(kernels: tuple[ProofKernel, ...] = KERNELS) -> Mapping[str, str]:
    return {kernel.name: kernel.title for kernel in kernels}
