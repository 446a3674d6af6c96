"""The rule that turns machine checks into a verdict, and verdicts into a status.

`formal_verdict` reads the formal statement back from the text the researcher is shown
(admission.read_admitted) and decides from that statement alone:
- machine_checked: a proof whose certificate is the kernel's for this statement (certificate.py)
  — Coq's kernel accepted its proposition, or the solver answered unsat for it — and, when the
  statement has premises, a **witness**: an input at which every premise (domains, hypotheses,
  definedness) holds, confirmed here by exact evaluation. Without one a proof may rest on
  premises no input satisfies, and prove anything; such a proof is not counted, and the verdict
  says why;
- refuted: a counterexample confirmed here by exact evaluation (the premises hold at it, the
  conclusion fails), and no valid proof beside it (both would be a defect of a checker);
- tested: sampling found no counterexample among inputs that satisfied the hypotheses;
- unverified: anything else, the text that does not read back included.
Nothing here trusts what a check says it found: each verdict is derived again from the statement.
`lemma_status` then adds the calibrated model review. This module, and nothing outside the
kernel, says `machine_checked`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Literal, Protocol

from lemmata.kernel.admission import read_admitted
from lemmata.kernel.certificate import coq_certificate, solver_certificate
from lemmata.kernel.coq_terms import NotStatable, coq_statement
from lemmata.kernel.evaluate import Value, evaluate
from lemmata.kernel.statement import Statement
from lemmata.kernel.surd import read_surd
from lemmata.kernel.tree import FormalError

Word = Literal["machine_checked", "refuted", "tested", "unverified"]
#: What is known of a lemma or the main result, one word each, everywhere (the cards, the gate, the
#: status, research_output.json, the lemma graph, the paper).
LemmaStatus = Literal["machine_checked", "refuted", "tested", "reviewed", "unverified"]
#: The statuses the spec's `verified` stands for.
VERIFIED_STATUSES: tuple[LemmaStatus, ...] = ("machine_checked", "reviewed")


class CheckRecord(Protocol):
    """What the rule reads of one machine check (artifacts.MachineCheck has these fields)."""

    @property
    def checker(self) -> str: ...
    @property
    def method(self) -> str: ...
    @property
    def outcome(self) -> str: ...
    @property
    def certificate(self) -> str: ...
    @property
    def instances(self) -> int: ...
    @property
    def counterexample(self) -> dict[str, str] | None: ...


class FormalRecord(Protocol):
    """What the rule reads of a statement's formal check (artifacts.FormalCheck)."""

    @property
    def text(self) -> str: ...
    @property
    def not_formalized(self) -> str: ...
    @property
    def witness(self) -> dict[str, str] | None: ...
    @property
    def checks(self) -> Sequence[CheckRecord]: ...


@dataclass(frozen=True)
class Verdict:
    word: Word
    #: Why a proof or a counterexample on record does not count, or that the checkers disagree; "".
    why: str = ""
    #: The witness as confirmed (its values as shown), for a machine-checked statement with premises.
    witness: tuple[tuple[str, str], ...] = ()
    #: The positions among the checks of the proofs that count (machine_checked only).
    proofs: tuple[int, ...] = ()
    #: The position of the counterexample that counts (refuted only).
    refutation: int | None = None
    #: A checker proved what another refuted: a defect of one of them, never a verdict.
    conflict: bool = False


def formal_verdict(record: FormalRecord) -> Verdict:
    checks = tuple(
        (c.checker, c.method, c.outcome, c.certificate, c.instances, tuple(sorted((c.counterexample or {}).items())))
        for c in record.checks
    )
    witness = tuple(sorted(record.witness.items())) if record.witness is not None else None
    return _verdict(record.text, bool(record.not_formalized), checks, witness)


_Check = tuple[str, str, str, str, int, tuple[tuple[str, str], ...]]


@lru_cache(maxsize=4096)
def _verdict(
    text: str, refused: bool, checks: tuple[_Check, ...], witness: tuple[tuple[str, str], ...] | None
) -> Verdict:
    if refused or not text:
        return Verdict("unverified")
    try:
        statement = read_admitted(text)
    except FormalError as error:
        return Verdict("unverified", f"the formal statement shown does not read back as the kernel's ({error})")
    proofs = [index for index, check in enumerate(checks) if check[2] == "proved"]
    valid = [index for index in proofs if _certified(statement, text, checks[index])]
    refutations = [index for index, check in enumerate(checks) if check[2] == "refuted"]
    confirmed = [index for index in refutations if counterexample_confirmed(statement, dict(checks[index][5]))]
    if valid and confirmed:
        why = (
            f"{checks[valid[0]][0]} proved the formal statement and {checks[confirmed[0]][0]} refuted it: "
            "one of the checkers is wrong, so neither verdict is used"
        )
        return Verdict("unverified", why, conflict=True)
    why = ""
    if proofs and not valid:
        why = "the proof on record is not the kernel's proof of the statement shown"
    elif valid:
        shown = _witness_shown(statement, witness)
        if shown is not None:
            return Verdict("machine_checked", witness=shown, proofs=tuple(valid))
        why = (
            "no input was found that satisfies all its premises (hypotheses, domains, definedness), "
            "so a proof from them could hold vacuously"
        )
    if confirmed:
        return Verdict("refuted", why, refutation=confirmed[0])
    if refutations:
        why = why or "the counterexample on record is not one by exact evaluation"
    sampled = max(
        (check[4] for check in checks if check[1] == "sampling" and check[2] == "no_counterexample"), default=0
    )
    return Verdict("tested" if sampled > 0 else "unverified", why)


def _certified(statement: Statement, text: str, check: _Check) -> bool:
    checker, method, _, certificate, _, _ = check
    if method == "solver":
        return certificate == solver_certificate(text)
    if method == "kernel proof" and checker == "coq":
        try:
            return certificate == coq_certificate(coq_statement(statement).proposition)
        except NotStatable:
            return False
    return False


def _witness_shown(
    statement: Statement, witness: tuple[tuple[str, str], ...] | None
) -> tuple[tuple[str, str], ...] | None:
    """The witness, when the statement needs one and it satisfies every premise; () when the
    statement has no premise; None when it needs one and has none that holds."""
    try:
        premises = statement.expanded().premises()
    except FormalError:
        return None
    if not premises:
        return ()
    if witness is None:
        return None
    values = exact_values(statement, dict(witness))
    if values is None:
        return None
    try:
        holds = all(evaluate(premise, values, statement.kinds) is True for premise in premises)
    except ArithmeticError:  # undefined, undecided or too large at the witness: it witnesses nothing
        return None
    return witness if holds else None


def counterexample_confirmed(statement: Statement, counterexample: Mapping[str, str]) -> bool:
    """Whether the values make the premises hold and the conclusion fail, by exact evaluation."""
    values = exact_values(statement, counterexample)
    if values is None:
        return False
    try:
        expanded = statement.expanded()
        premises = expanded.premises()
        conclusion = expanded.conclusion
    except FormalError:
        premises, conclusion = [*statement.assumptions(), *statement.definedness()], statement.conclusion
    try:
        if not all(evaluate(premise, values, statement.kinds) is True for premise in premises):
            return False
        return evaluate(conclusion, values, statement.kinds) is False
    except ArithmeticError:
        return False


def exact_values(statement: Statement, shown: Mapping[str, str]) -> dict[str, Value] | None:
    """Each variable's value read from its text (`3`, `-1/2`, a real's `13/2 + 1/2*sqrt(73)`), when
    every variable has one, in its domain's kind; None when any is missing, extra or not an exact
    number (`≈1.414`)."""
    if set(shown) != {variable.name for variable in statement.variables}:
        return None
    values: dict[str, Value] = {}
    for variable in statement.variables:
        irrational = read_surd(shown[variable.name]) if variable.kind == "real" else None
        if irrational is not None:
            values[variable.name] = irrational
            continue
        try:
            value = Fraction(shown[variable.name].strip())
        except (ValueError, ZeroDivisionError):
            return None
        if value.denominator != 1 and variable.kind == "int":
            return None
        values[variable.name] = value.numerator if value.denominator == 1 else value
    return values


def lemma_status(verdict: Word, reviewed: bool) -> LemmaStatus:
    """The status the evidence supports: the machines' verdict first, then the calibrated review."""
    if verdict in ("machine_checked", "refuted"):
        return verdict
    if reviewed:
        return "reviewed"
    return "tested" if verdict == "tested" else "unverified"


def main_result_status(goal: Word, argument_holds: bool) -> LemmaStatus:
    """machine_checked: the goal's own formal statement was proved by a machine; reviewed: every
    lemma it rests on is verified, the assembled proof consistent and the theorem stated from it."""
    if goal in ("machine_checked", "refuted"):
        return goal
    if argument_holds:
        return "reviewed"
    return "tested" if goal == "tested" else "unverified"
