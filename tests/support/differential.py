"""The kernel's differential checks, shared by the CI run (tests/unit/kernel/test_differential.py)
and the long run (bench/differential.py): one statement is read by every checker of the kernel,
and they must agree.

- `round_trip`: the kernel admits the statement (both renderings read back to the very tree), and
  what it admits reads back, by a comparison of this module's own, to the same statement; the text
  and the LaTeX read back alike. A refusal of a well-typed statement is a *reach* defect of the
  printer; an admitted rendering that reads otherwise would be a soundness defect.
- `binder_problems`: the Coq proposition's binders are the variables' Coq names, pairwise
  distinct, none a name Coq reserves.
- `exact_verdict`: the exact evaluator at closed values (the statement's own reading, and that of
  its sums written out), with its definedness conditions read in order: a condition that fails
  must be exactly where evaluation is undefined.
- `solver_comparison`: the solver asked the same question with the variables fixed to the values
  (as hypotheses `x = value`): `unsat` for "premises and not conclusion" exactly where the
  evaluator says the conclusion holds or a premise fails, and its premises satisfiable exactly
  where they hold.
- `coq_goals` and `CoqBatch`: the Coq proposition applied to the values (`(fun (a : Z) => P) 3`),
  or its negation, as the evaluator decides it, each proved by a decision tactic in one file of
  many goals; and the premises alone likewise (the conclusion replaced by `C ∧ false`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from lemmata.kernel import smt
from lemmata.kernel.admission import admit, read_admitted
from lemmata.kernel.coq_terms import COQ_RESERVED, NotStatable, coq_names, coq_statement
from lemmata.kernel.evaluate import Interval, TooLarge, Undecided, Undefined, Value, evaluate
from lemmata.kernel.readback import Reading, read_latex, read_text
from lemmata.kernel.render import stated_conditions
from lemmata.kernel.statement import Statement, finite_decimal
from lemmata.kernel.surd import Surd
from lemmata.kernel.tree import Const, Expr, FormalError, Op, Reduce, Var, conjunction, signed_constant, walk

# -- renderings -----------------------------------------------------------------------------------


def same_tree(first: Expr, second: Expr) -> bool:
    """The same tree node for node, a number the same number of the same kind (2 is not 2.0):
    this module's own comparison, independent of admission.identical."""
    if isinstance(first, Const) and isinstance(second, Const):
        return type(first.value) is type(second.value) and first.value == second.value
    if isinstance(first, Var) and isinstance(second, Var):
        return first.name == second.name
    if isinstance(first, Op) and isinstance(second, Op):
        return (
            first.name == second.name
            and len(first.args) == len(second.args)
            and all(same_tree(a, b) for a, b in zip(first.args, second.args))
        )
    if isinstance(first, Reduce) and isinstance(second, Reduce):
        parts = (first.low, first.high, first.body), (second.low, second.high, second.body)
        conditions = first.condition, second.condition
        return (
            first.kind == second.kind
            and first.index == second.index
            and all(same_tree(a, b) for a, b in zip(*parts))
            and (conditions[0] is None) == (conditions[1] is None)
            and (conditions[0] is None or same_tree(conditions[0], conditions[1]))  # type: ignore[arg-type]
        )
    return False


def same_statement(first: Statement, second: Statement) -> bool:
    return (
        first.variables == second.variables
        and len(first.hypotheses) == len(second.hypotheses)
        and all(same_tree(a, b) for a, b in zip(first.hypotheses, second.hypotheses))
        and same_tree(first.conclusion, second.conclusion)
    )


def _same_conditions(first: Sequence[Expr], second: Sequence[Expr]) -> bool:
    return len(first) == len(second) and all(same_tree(a, b) for a, b in zip(first, second))


@dataclass(frozen=True)
class RoundTrip:
    """What the renderings of one statement came to."""

    admitted: bool
    refusal: str = ""  # why admit refused it (a reach defect of the printer)
    mismatches: tuple[str, ...] = ()  # an admitted rendering that reads otherwise (a soundness defect)


def round_trip(statement: Statement) -> RoundTrip:
    try:
        admitted = admit(statement)
    except FormalError as error:
        return RoundTrip(False, refusal=str(error))
    mismatches = []
    conditions = stated_conditions(statement)
    readings: dict[str, Reading] = {}
    for what, read, shown in (("text", read_text, admitted.text), ("LaTeX", read_latex, admitted.latex)):
        try:
            readings[what] = read(shown)
        except FormalError as error:
            mismatches.append(f"the admitted {what} {shown!r} does not read back: {error}")
            continue
        if not same_statement(readings[what].statement, statement):
            mismatches.append(f"the admitted {what} {shown!r} reads as another statement")
        if not _same_conditions(readings[what].conditions, conditions):
            mismatches.append(f"the admitted {what} {shown!r} states other conditions")
    if len(readings) == 2 and not (
        same_statement(readings["text"].statement, readings["LaTeX"].statement)
        and _same_conditions(readings["text"].conditions, readings["LaTeX"].conditions)
    ):
        mismatches.append(f"the text {admitted.text!r} and the LaTeX {admitted.latex!r} read differently")
    try:
        again = read_admitted(admitted.text)
    except FormalError as error:
        mismatches.append(f"read_admitted refuses the admitted text {admitted.text!r}: {error}")
    else:
        if not same_statement(again, statement):
            mismatches.append(f"read_admitted reads the admitted text {admitted.text!r} as another statement")
    return RoundTrip(True, mismatches=tuple(mismatches))


# -- binders --------------------------------------------------------------------------------------

BINDERS = re.compile(r"forall ((?:\([^()]*\) ?)+), ")
GROUP = re.compile(r"\(([^():]+) : ([ZR])\)")


def binders_of(proposition: str) -> tuple[list[tuple[str, str]], str, str]:
    """The binders of `forall (a b : Z) (x : R), body` as (name, type), their text
    `(a b : Z) (x : R)` and the body; none, "" and the whole proposition when it does not start
    with forall."""
    found = BINDERS.match(proposition)
    if not found:
        return [], "", proposition
    binders = [(name, kind) for names, kind in GROUP.findall(found.group(1)) for name in names.split()]
    return binders, found.group(1).strip(), proposition[found.end() :]


def binder_problems(statement: Statement) -> list[str] | None:
    """What is wrong with the Coq proposition's binders; None when Coq cannot state the statement."""
    try:
        proposition = coq_statement(statement).proposition
        expanded = statement.expanded()
    except (NotStatable, FormalError):
        return None
    problems = []
    names = coq_names(expanded.variables)
    if len(set(names.values())) != len(names) or set(names) != {v.name for v in expanded.variables}:
        problems.append(f"coq_names is not injective: {names}")
    reserved = sorted(name for name in names.values() if name in COQ_RESERVED)
    if reserved:
        problems.append(f"Coq names {reserved} are reserved")
    binders, _, _ = binders_of(proposition)
    bound = [name for name, _ in binders]
    if len(set(bound)) != len(bound):
        problems.append(f"the binders {bound} are not pairwise distinct")
    if sorted(bound) != sorted(names.values()):
        problems.append(f"the binders {bound} are not the variables' Coq names {sorted(names.values())}")
    if expanded.variables and not binders:
        problems.append(f"the proposition binds none of the variables: {proposition[:80]}")
    return problems


# -- the exact evaluator --------------------------------------------------------------------------

Outcome = Literal["holds", "fails", "vacuous", "undecided"]


@dataclass(frozen=True)
class Exact:
    """The evaluator's verdict of a statement at closed values: `holds` (the premises hold and so
    does the conclusion), `fails` (the premises hold, the conclusion does not), `vacuous` (a
    premise fails: a domain, a hypothesis or a definedness condition), `undecided` (undecided or
    too large to compute); and what was inconsistent in the evaluator's own readings."""

    outcome: Outcome
    defined: bool | None = None
    problems: tuple[str, ...] = ()
    expandable: bool = True

    @property
    def premises_hold(self) -> bool:
        return self.outcome in ("holds", "fails")

    @property
    def instance_holds(self) -> bool:
        """What the solver's unsat and Coq's proposition at these values say: premises imply conclusion."""
        return self.outcome != "fails"


def chained(statement: Statement) -> Expr:
    """The statement as one condition: its assumptions imply its conclusion."""
    assumptions = statement.assumptions()
    return Op("implies", (conjunction(assumptions), statement.conclusion)) if assumptions else statement.conclusion


def _value(expr: Expr, values: Mapping[str, Value], statement: Statement) -> Value | str:
    """The value of `expr`, or the name of the exception that stopped it."""
    try:
        return evaluate(expr, values, statement.kinds)
    except (Undefined, Undecided, TooLarge) as error:
        return type(error).__name__


def exact_verdict(statement: Statement, values: Mapping[str, Value]) -> Exact:
    try:
        expanded: Statement | None = statement.expanded()
    except FormalError:
        expanded = None
    own = expanded if expanded is not None else statement
    problems: list[str] = []
    defined: bool | None = True
    for condition in own.definedness():
        value = _value(condition, values, own)
        if value == "Undefined" and expanded is None:
            # Unexpanded, a condition may name a sum whose terms' own conditions are not stated
            # (definedness.py): undefined there, it is a condition that fails.
            defined = False
            break
        if value == "Undefined":
            problems.append(f"the definedness condition {condition} is undefined where those before it hold")
            defined = None
            break
        if isinstance(value, str):
            return Exact("undecided", None, tuple(problems), expanded is not None)
        if value is not True:
            defined = False
            break
    reading = _value(chained(statement), values, statement)
    if expanded is not None:
        written_out = _value(chained(expanded), values, expanded)
        if "TooLarge" not in (reading, written_out) and reading != written_out:
            problems.append(f"the sums written out evaluate to {written_out!r}, the statement to {reading!r}")
    if reading in ("Undecided", "TooLarge") or defined is None:
        return Exact("undecided", defined, tuple(problems), expanded is not None)
    undefined = reading == "Undefined"
    if defined is False and not undefined:
        problems.append("a definedness condition fails where the statement evaluates")
    if defined is True and undefined and expanded is not None:
        problems.append("the statement is undefined where every definedness condition holds")
    if defined is False or undefined:
        return Exact("vacuous", defined, tuple(problems), expanded is not None)
    assumptions = statement.assumptions()
    if assumptions and _value(conjunction(assumptions), values, statement) is not True:
        return Exact("vacuous", defined, tuple(problems), expanded is not None)
    conclusion = _value(statement.conclusion, values, statement)
    if not isinstance(conclusion, bool):
        problems.append(f"the conclusion is {conclusion} where the statement evaluates")
        return Exact("undecided", defined, tuple(problems), expanded is not None)
    return Exact("holds" if conclusion else "fails", defined, tuple(problems), expanded is not None)


# -- the solver -----------------------------------------------------------------------------------

Comparison = Literal["agree", "disagree", "unknown", "not expressible", "undecided"]


@dataclass(frozen=True)
class SolverComparison:
    verdict: Comparison  # unsat of premises ∧ ¬conclusion, against the evaluator
    definedness: Comparison  # satisfiability of the premises, against the evaluator
    detail: str = ""


def pinned(statement: Statement, values: Mapping[str, Value]) -> Statement:
    """The statement with each variable fixed to its value by a first hypothesis `x = value`."""
    pins = tuple(Op("eq", (Var(v.name), _constant(values[v.name]))) for v in statement.variables)
    return Statement(statement.variables, (*pins, *statement.hypotheses), statement.conclusion)


def _constant(value: Value) -> Expr:
    """A value as the kernel writes a number: a finite decimal, or a quotient (1/3 is `1 / 3`)."""
    assert isinstance(value, int | Fraction) and not isinstance(value, bool)
    fraction = Fraction(value)
    if finite_decimal(fraction):
        return signed_constant(value)
    return Op("truediv", (signed_constant(fraction.numerator), Const(fraction.denominator)))


def solver_comparison(
    statement: Statement, values: Mapping[str, Value], exact: Exact, timeout_seconds: float = 5.0
) -> SolverComparison:
    if exact.outcome == "undecided":
        return SolverComparison("undecided", "undecided")
    question = pinned(statement, values)
    try:
        answer = smt.prove_or_find_model(question, timeout_seconds)
        premises = smt.satisfiable_assumptions(question, timeout_seconds)
    except smt.NotExpressible as error:
        return SolverComparison("not expressible", "not expressible", str(error))
    details = []
    verdict: Comparison = "unknown"
    if answer.outcome != "unknown":
        verdict = "agree" if (answer.outcome == "unsat") == exact.instance_holds else "disagree"
        if verdict == "disagree":
            details.append(f"the solver answers {answer.outcome}, the evaluator {exact.outcome}")
        elif answer.outcome == "sat" and not _model_is(answer.model or {}, values):
            verdict = "disagree"
            details.append(f"the solver's model {answer.model} is not the values {dict(values)}")
    definedness: Comparison = "unknown"
    if premises.outcome != "unknown":
        definedness = "agree" if (premises.outcome == "sat") == exact.premises_hold else "disagree"
        if definedness == "disagree":
            details.append(f"the solver finds the premises {premises.outcome}, the evaluator {exact.outcome}")
    return SolverComparison(verdict, definedness, "; ".join(details))


def _model_is(model: Mapping[str, Value], values: Mapping[str, Value]) -> bool:
    return all(not isinstance(model.get(name), Interval) and model.get(name) == value for name, value in values.items())


# -- Coq ------------------------------------------------------------------------------------------

#: The file's prelude: the libraries, a few lemmas, and the tactics a goal is proved by. A goal is
#: a closed proposition: `closed_decide` computes each integer and boolean subterm to its value
#: (vm_compute), takes absolute values, minima and maxima of reals by cases, states what each
#: inverse `/ t` of a real is (t * / t = 1, linear in it, or t = 0), decides each comparison left
#: (a case split whose other case lia or lra refutes), rewrites each decided one to True or False
#: and the connectives of those away (tauto alone took minutes on large goals). A square root and
#: the integer part of a real are no computation in Coq: the goal's hints (`coq_hints`) name
#: candidate values, and Coq rewrites with one only where lra proves it is the value
#: (lemmata_int_part, sqrt_lem_1) or bounds it (lemmata_sqrt_between). Nothing here takes the
#: evaluator's word: Coq proves the goal, or fails.
COQ_PRELUDE = r"""Require Import Reals Lra Psatz Lia ZArith Setoid.
Lemma lemmata_true : forall A : Prop, A -> (A <-> True). Proof. tauto. Qed.
Lemma lemmata_false : forall A : Prop, ~ A -> (A <-> False). Proof. tauto. Qed.
Lemma lemmata_and_true_l : forall A : Prop, (True /\ A) <-> A. Proof. tauto. Qed.
Lemma lemmata_and_true_r : forall A : Prop, (A /\ True) <-> A. Proof. tauto. Qed.
Lemma lemmata_and_false_l : forall A : Prop, (False /\ A) <-> False. Proof. tauto. Qed.
Lemma lemmata_and_false_r : forall A : Prop, (A /\ False) <-> False. Proof. tauto. Qed.
Lemma lemmata_or_true_l : forall A : Prop, (True \/ A) <-> True. Proof. tauto. Qed.
Lemma lemmata_or_true_r : forall A : Prop, (A \/ True) <-> True. Proof. tauto. Qed.
Lemma lemmata_or_false_l : forall A : Prop, (False \/ A) <-> A. Proof. tauto. Qed.
Lemma lemmata_or_false_r : forall A : Prop, (A \/ False) <-> A. Proof. tauto. Qed.
Lemma lemmata_imp_true_l : forall A : Prop, (True -> A) <-> A. Proof. tauto. Qed.
Lemma lemmata_imp_false_l : forall A : Prop, (False -> A) <-> True. Proof. tauto. Qed.
Lemma lemmata_imp_true_r : forall A : Prop, (A -> True) <-> True. Proof. tauto. Qed.
Lemma lemmata_iff_true_l : forall A : Prop, (True <-> A) <-> A. Proof. tauto. Qed.
Lemma lemmata_iff_true_r : forall A : Prop, (A <-> True) <-> A. Proof. tauto. Qed.
Lemma lemmata_iff_false_l : forall A : Prop, (False <-> A) <-> ~ A. Proof. tauto. Qed.
Lemma lemmata_iff_false_r : forall A : Prop, (A <-> False) <-> ~ A. Proof. tauto. Qed.
Lemma lemmata_not_true : ~ True <-> False. Proof. tauto. Qed.
Lemma lemmata_not_false : ~ False <-> True. Proof. tauto. Qed.
#[local] Hint Rewrite lemmata_and_true_l lemmata_and_true_r lemmata_and_false_l lemmata_and_false_r lemmata_or_true_l lemmata_or_true_r lemmata_or_false_l lemmata_or_false_r lemmata_imp_true_l lemmata_imp_false_l lemmata_imp_true_r lemmata_iff_true_l lemmata_iff_true_r lemmata_iff_false_l lemmata_iff_false_r lemmata_not_true lemmata_not_false : lemmata_truth.
Lemma lemmata_int_part : forall (r : R) (z : Z), (IZR z <= r < IZR z + 1)%R -> Int_part r = z.
Proof. intros r z [H1 H2]. unfold Int_part. rewrite <- (tech_up r (z + 1)); [ring | rewrite plus_IZR; lra | rewrite plus_IZR; lra]. Qed.
Lemma lemmata_sqrt_between : forall t lo hi : R, (0 <= lo)%R -> (lo <= hi)%R -> (lo * lo < t < hi * hi)%R -> (lo < sqrt t < hi)%R.
Proof. intros t lo hi H0 H1 [H2 H3]. split; [rewrite <- (sqrt_square lo H0) | rewrite <- (sqrt_square hi ltac:(lra))]; apply sqrt_lt_1_alt; split; (nra || assumption). Qed.
Ltac znumerals := repeat match goal with |- context [?z] => lazymatch type of z with Z => lazymatch z with Z0 => fail | Zpos _ => fail | Zneg _ => fail | context [Int_part _] => fail | _ => let v := eval vm_compute in z in change z with v end end end.
Ltac bnumerals := repeat match goal with |- context [?b] => lazymatch type of b with bool => lazymatch b with true => fail | false => fail | context [Int_part _] => fail | _ => let v := eval vm_compute in b in change b with v end end end; cbv iota.
Ltac known P := lazymatch goal with _ : P |- _ => idtac | _ : ~ P |- _ => idtac end.
Ltac zatoms := repeat (match goal with
  | |- context [@eq Z ?x ?y] => tryif known (x = y) then fail else destruct (Z.eq_dec x y)
  | |- context [(?x < ?y)%Z] => tryif known (x < y)%Z then fail else destruct (Z_lt_dec x y)
  | |- context [(?x <= ?y)%Z] => tryif known (x <= y)%Z then fail else destruct (Z_le_dec x y)
  | |- context [(?x > ?y)%Z] => tryif known (x > y)%Z then fail else destruct (Z_gt_dec x y)
  | |- context [(?x >= ?y)%Z] => tryif known (x >= y)%Z then fail else destruct (Z_ge_dec x y)
  end; try (exfalso; lia)).
Ltac ratoms := repeat (match goal with
  | |- context [(?x < ?y)%R] => tryif known (x < y)%R then fail else destruct (Rlt_dec x y)
  | |- context [(?x <= ?y)%R] => tryif known (x <= y)%R then fail else destruct (Rle_dec x y)
  | |- context [(?x > ?y)%R] => tryif known (x > y)%R then fail else destruct (Rgt_dec x y)
  | |- context [(?x >= ?y)%R] => tryif known (x >= y)%R then fail else destruct (Rge_dec x y)
  | |- context [@eq R ?x ?y] => tryif known (x = y) then fail else destruct (Req_dec x y)
  end; try (exfalso; lra)).
Ltac rcases := unfold Rabs, Rmin, Rmax; repeat match goal with |- context [if ?c then _ else _] => lazymatch c with context [if _ then _ else _] => fail | _ => destruct c end end; try (exfalso; lra).
Ltac sqrt_is y := repeat match goal with |- context [sqrt ?t] => rewrite (sqrt_lem_1 t y) by lra end.
Ltac sqrt_within lo hi := repeat match goal with |- context [sqrt ?t] => lazymatch goal with _ : (lo < sqrt t < hi)%R |- _ => fail | _ => pose proof (lemmata_sqrt_between t lo hi ltac:(lra) ltac:(lra) ltac:(lra)) end end.
Ltac int_part_is z := repeat match goal with |- context [Int_part ?t] => rewrite (lemmata_int_part t z) by lra end.
Ltac rinverses := repeat match goal with |- context [(/ ?t)%R] => lazymatch goal with _ : (t * / t = 1)%R |- _ => fail | _ : (t = 0)%R |- _ => fail | _ => first [assert ((t * / t = 1)%R) by (apply Rinv_r; lra) | assert ((t = 0)%R) by lra] end end.
Ltac settle := repeat match goal with
  | H : ~ ?B |- _ => lazymatch B with True => fail | False => fail | _ => rewrite (lemmata_false B H) end
  | H : ?A |- _ => lazymatch type of A with Prop => lazymatch A with True => fail | False => fail | _ => rewrite (lemmata_true A H) end end
  end.
Ltac closed_decide := znumerals; bnumerals; rcases; rinverses; zatoms; ratoms; settle; autorewrite with lemmata_truth; first [exact I | tauto].
"""  # noqa: E501
#: Seconds Coq may spend on one goal: a tactic that cannot prove a false goal may search long.
GOAL_SECONDS = 20
#: The largest factorial argument a goal may compute (in unary, as Coq's `fact` does).
MAX_COQ_FACTORIAL = 8
#: The digits of the bounds of an irrational square root a goal's hint gives (the evaluator's own
#: intervals are 2**-96 narrow).
SQRT_DIGITS = 32


@dataclass(frozen=True)
class CoqGoal:
    """One goal of a Coq file: `claim` (a closed proposition) or its negation, as the evaluator
    says; `hints`, tactics naming candidate values of its square roots and integer parts; what it
    is about, for the report."""

    claim: str
    holds: bool
    about: str  # "verdict" or "definedness"
    label: str  # the statement and values, for the report
    hints: tuple[str, ...] = ()

    def text(self, negated: bool = False) -> str:
        stated = self.claim if self.holds != negated else f"~ ({self.claim})"
        steps = ["cbv beta", "znumerals", "bnumerals", "unfold Rdiv", "rewrite ?Rinv_opp"]
        if self.hints:  # a root or an integer part may stand inside a minimum, and a minimum inside it
            steps += ["rinverses", *self.hints, "znumerals", "rcases"] * 2
        steps.append("closed_decide")
        return f"Goal {stated}. Proof. timeout {GOAL_SECONDS} ({'; '.join(steps)}). Qed."


def coq_value(value: Value, kind: str) -> str:
    assert isinstance(value, int | Fraction) and not isinstance(value, bool)
    if kind == "Z":
        return f"({value})%Z"
    fraction = Fraction(value)
    if fraction.denominator == 1:
        return f"({fraction.numerator})%R"
    return f"(({fraction.numerator}) / {fraction.denominator})%R"


def instance(proposition: str, statement: Statement, values: Mapping[str, Value]) -> str:
    """The proposition applied to the values: `(fun (a : Z) (x : R) => body) (3)%Z (1/2)%R`."""
    binders, text, body = binders_of(proposition)
    if not binders:
        return f"({proposition})"
    names = coq_names(statement.expanded().variables)
    by_coq_name = {coq: name for name, coq in names.items()}
    arguments = " ".join(coq_value(values[by_coq_name[name]], kind) for name, kind in binders)
    return f"((fun {text} => {body}) {arguments})"


def _children_first(expr: Expr) -> list[Expr]:
    """Every node of `expr`, children before parents (a hint for an inner root comes first)."""
    return list(reversed(list(walk(expr))))


def coq_hints(statement: Statement, values: Mapping[str, Value]) -> tuple[tuple[str, ...], str]:
    """The hints of the statement's goals at the values: candidate values of each square root
    and integer part (floor, ceil) of a real, from the evaluator, which Coq then proves or not;
    and why no goal can be decided here ("" when one may: Coq states it, and no square root is
    of an irrational number, no factorial too large for Coq's unary numbers)."""
    try:
        expanded = statement.expanded()
        coq_statement(statement)
    except (NotStatable, FormalError) as error:
        return (), f"not statable: {error}"
    hints: list[str] = []
    for part in (*expanded.premises(), expanded.conclusion):
        for node in _children_first(part):
            if not isinstance(node, Op) or node.name not in ("sqrt", "floor", "ceil", "factorial"):
                continue
            argument = _value(node.args[0], values, expanded)
            if argument == "Undefined":
                continue  # not reached where the premises hold
            if isinstance(argument, str):
                return (), f"an argument of {node.name} is {argument}"
            if node.name == "factorial":
                if not isinstance(argument, int) or argument > MAX_COQ_FACTORIAL:
                    return (), "a factorial too large for Coq's unary numbers"
                continue
            if isinstance(argument, Surd):
                # r + c·√d (kernel/surd.py, since exact square roots): Coq's hints are for rationals
                return (), f"an argument of {node.name} is irrational"
            if node.name == "sqrt":
                if isinstance(argument, Interval):
                    return (), "a square root of an irrational number"
                hints.extend(_sqrt_hints(Fraction(argument)))
            elif isinstance(argument, Interval):
                hints.extend(_integer_part_hints(node.name, argument))
            else:  # a whole number too: a real variable may hold 4
                hints.extend(_integer_part_hints(node.name, Fraction(argument)))  # type: ignore[arg-type]
    return tuple(dict.fromkeys(hints)), ""


def _sqrt_hints(argument: Fraction) -> list[str]:
    if argument < 0:
        return []
    numerator, denominator = math.isqrt(argument.numerator), math.isqrt(argument.denominator)
    if numerator**2 == argument.numerator and denominator**2 == argument.denominator:
        return [f"sqrt_is {coq_value(Fraction(numerator, denominator), 'R')}"]
    scale = 10**SQRT_DIGITS
    low = math.isqrt(argument.numerator * scale * scale // argument.denominator)
    return [f"sqrt_within {coq_value(Fraction(low, scale), 'R')} {coq_value(Fraction(low + 1, scale), 'R')}"]


def _integer_part_hints(name: str, argument: Interval | Fraction) -> list[str]:
    """Coq's floor is `Int_part t`, its ceiling `- Int_part (- t)`: the integers around the
    evaluator's value, of which Coq proves one or none."""
    low, high = (argument.low, argument.high) if isinstance(argument, Interval) else (argument, argument)
    if name == "floor":
        centres = {math.floor(low), math.floor(high)}
    else:
        centres = {-math.ceil(low), -math.ceil(high)}
    candidates = sorted({centre + step for centre in centres for step in (-1, 0, 1)})
    return [f"int_part_is {coq_value(candidate, 'Z')}" for candidate in candidates]


def coq_goals(statement: Statement, values: Mapping[str, Value], exact: Exact, label: str) -> list[CoqGoal]:
    """The goals that check the evaluator's verdict and definedness in Coq; none when it is
    undecided or Coq cannot state the statement or decide it (coq_hints)."""
    if exact.outcome == "undecided":
        return []
    hints, skip = coq_hints(statement, values)
    if skip:
        return []
    stated = coq_statement(statement)
    premises_only = Statement(
        statement.variables, statement.hypotheses, Op("and", (statement.conclusion, Op("false", ())))
    )
    premises = coq_statement(premises_only)
    return [
        CoqGoal(instance(stated.proposition, statement, values), exact.instance_holds, "verdict", label, hints),
        CoqGoal(
            instance(premises.proposition, premises_only, values), not exact.premises_hold, "definedness", label,
            hints,
        ),
    ]  # fmt: skip


@dataclass
class CoqBatch:
    """Goals checked in files of at most `per_file`, with lemmata.formal.coq.check_file. A goal
    that fails stops coqc: it is taken out and the rest checked again; then its negation is
    tried, and a negation Coq proves is a disagreement, one it proves neither way undecided."""

    per_file: int = 60
    timeout_seconds: float = 180.0
    proved: list[CoqGoal] = field(default_factory=list)
    disagreements: list[tuple[CoqGoal, str]] = field(default_factory=list)
    undecided: list[tuple[CoqGoal, str]] = field(default_factory=list)
    runs: int = 0

    def check(self, goals: Iterable[CoqGoal]) -> None:
        failed = self._prove([(goal, False) for goal in goals])
        neither = {id(goal) for goal, _ in self._prove([(goal, True) for goal, _ in failed])}
        for goal, error in failed:
            if id(goal) in neither:
                self.undecided.append((goal, error))
            else:
                self.disagreements.append((goal, f"Coq proves the opposite of the evaluator ({error})"))

    def _prove(self, goals: list[tuple[CoqGoal, bool]]) -> list[tuple[CoqGoal, str]]:
        """The goals (negated where asked) that do not check, with Coq's error; the others are
        recorded as proved when not negated."""
        from lemmata.formal.coq import check_file

        failures: list[tuple[CoqGoal, str]] = []
        pending = list(goals)
        while pending:
            chunk, pending = pending[: self.per_file], pending[self.per_file :]
            while chunk:
                lines = [goal.text(negated) for goal, negated in chunk]
                self.runs += 1
                line, error = check_file(COQ_PRELUDE + "\n".join(lines) + "\n", self.timeout_seconds)
                if line is None:
                    self.proved.extend(goal for goal, negated in chunk if not negated)
                    break
                if line == 0 and "did not finish" not in error:
                    raise RuntimeError(f"coqc could not check the file: {error}")
                if line == 0 and len(chunk) > 1:  # the whole file ran out of time: half of it again
                    chunk, pending = chunk[: len(chunk) // 2], chunk[len(chunk) // 2 :] + pending
                    continue
                position = 0 if line == 0 else line - COQ_PRELUDE.count("\n") - 1
                if not 0 <= position < len(chunk):
                    raise RuntimeError(f"coqc failed outside the goals (line {line}): {error}")
                self.proved.extend(goal for goal, negated in chunk[:position] if not negated)
                failures.append((chunk[position][0], error))
                chunk = chunk[position + 1 :]
        return failures
