"""The kernel's differential tests (the CI run; bench/differential.py is the long one): random
formal statements over the whole language (support/statements.py) read by every checker of the
kernel, which must agree (support/differential.py):

- both renderings read back to the statement, and the text and the LaTeX read alike;
- the Coq proposition's binders are unique, and no name Coq reserves;
- on closed instances the exact evaluator and the solver give the same verdict, and the same
  definedness; and the evaluator's definedness conditions fail exactly where it is undefined;
- on closed instances Coq proves what the evaluator says, verdict and definedness alike.

Each check is also shown to fail on a planted defect, and each defect these tests found is kept
below as a named case."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from lemmata.formal.reading import read_statement
from lemmata.kernel import admission, coq_terms, definedness, render, smt
from lemmata.kernel.coq_terms import NotStatable, coq_statement
from lemmata.kernel.evaluate import Undefined, evaluate
from lemmata.kernel.readback import read_latex, read_text
from lemmata.kernel.semantics import ARITY, REDUCTIONS
from lemmata.kernel.statement import DOMAINS, Statement, Variable, decimal_text, typed
from lemmata.kernel.tree import Const, FormalError, Op, Reduce, Var
from support.differential import (
    CoqBatch,
    CoqGoal,
    Exact,
    binder_problems,
    coq_goals,
    exact_verdict,
    round_trip,
    same_statement,
    solver_comparison,
)
from support.statements import VARIABLE_NAMES, statements, used_operations, values_for

settings.register_profile(
    "kernel-differential",
    max_examples=300,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
DIFFERENTIAL = settings.get_profile("kernel-differential")
#: Statements drawn once for the tests that count over a sample (coverage, the solver's reach, Coq).
SAMPLE_SIZE = 300


def drawn(count: int) -> list[tuple[Statement, dict]]:
    """`count` statements with values for their variables, the same every run."""
    found: list[tuple[Statement, dict]] = []

    @settings(DIFFERENTIAL, max_examples=count, phases=[Phase.generate])
    @given(st.data())
    def collect(data: st.DataObject) -> None:
        statement = data.draw(statements())
        found.append((statement, data.draw(values_for(statement))))

    collect()
    return found


@pytest.fixture(scope="module")
def sample() -> list[tuple[Statement, dict]]:
    return drawn(SAMPLE_SIZE)


def spec(variables: dict[str, str], hypotheses: list[str], conclusion: str) -> Statement:
    return read_statement(list(variables.items()), hypotheses, conclusion)


# -- the generator ------------------------------------------------------------------------------


GREEK = {"α", "β", "γ", "Δ", "θ_1", "xα"}
COQ_WORDS = {"R", "Z", "N", "S", "O", "IZR", "fact", "Rabs", "Int_part", "Qed", "Admitted", "lemmata_goal"}
GENERATED_FORM = {"v0_x", "v1_a", "v10_", "v2__"}
DIGITS_AND_UNDERSCORES = {"x1", "a_2", "x_1_y", "n2m", "y__z", "k9", "x_"}


def test_the_generator_draws_the_whole_language(sample: list[tuple[Statement, dict]]) -> None:
    used: Counter[str] = Counter()
    for statement, _ in sample:
        assert typed(statement) is statement
        used.update(used_operations(statement))
        used.update(f"name:{v.name}" for v in statement.variables)
    missing = [name for name in (*ARITY, *REDUCTIONS) if not used[name]]
    missing += [domain for domain in DOMAINS if not used[f"domain:{domain}"]]
    assert not missing, f"never drawn: {missing}"
    names = {name for name in VARIABLE_NAMES if used[f"name:{name}"]}
    assert len(names) >= 0.75 * len(VARIABLE_NAMES)
    for stressing in (GREEK, COQ_WORDS, GENERATED_FORM, DIGITS_AND_UNDERSCORES):
        assert names & stressing, stressing


# -- a. renderings ------------------------------------------------------------------------------


@DIFFERENTIAL
@given(statements())
def test_every_statement_is_admitted_and_reads_back_as_itself(statement: Statement) -> None:
    checked = round_trip(statement)
    assert checked.admitted, f"a reach defect of the printer: {checked.refusal}"
    assert not checked.mismatches


@DIFFERENTIAL
@given(statements())
def test_the_text_and_the_latex_read_back_as_one_tree(statement: Statement) -> None:
    text, latex = read_text(render.statement_text(statement)), read_latex(render.statement_latex(statement))
    assert same_statement(text.statement, latex.statement)
    assert len(text.conditions) == len(latex.conditions)
    assert all(admission.identical(a, b) for a, b in zip(text.conditions, latex.conditions))


# -- b. binders ---------------------------------------------------------------------------------


@DIFFERENTIAL
@given(statements())
def test_coq_binds_each_variable_once_by_a_name_it_does_not_reserve(statement: Statement) -> None:
    problems = binder_problems(statement)
    assert not problems


# -- c. the evaluator and the solver -----------------------------------------------------------


@DIFFERENTIAL
@given(st.data())
def test_the_evaluator_and_the_solver_agree_on_closed_instances(data: st.DataObject) -> None:
    statement = data.draw(statements())
    values = data.draw(values_for(statement))
    exact = exact_verdict(statement, values)
    assert not exact.problems
    compared = solver_comparison(statement, values, exact)
    assert "disagree" not in (compared.verdict, compared.definedness), compared.detail


def test_the_solver_decides_most_of_the_sample(sample: list[tuple[Statement, dict]]) -> None:
    """The comparison above is no comparison where the solver cannot be asked: it must be asked
    of most statements, and decide them."""
    verdicts = Counter(solver_comparison(s, v, exact_verdict(s, v)).verdict for s, v in sample)
    assert verdicts["disagree"] == 0
    assert verdicts["agree"] >= 0.5 * len(sample), verdicts


# -- d. the evaluator and Coq -------------------------------------------------------------------

#: Instances checked by Coq in CI (two goals each: the verdict and the definedness).
COQ_INSTANCES = 45


@pytest.mark.usefixtures("needs_coq")
def test_the_evaluator_and_coq_agree_on_closed_instances(sample: list[tuple[Statement, dict]]) -> None:
    pairs = [coq_goals(s, v, exact_verdict(s, v), f"sample #{n}") for n, (s, v) in enumerate(sample)]
    hinted = [pair for pair in pairs if pair and pair[0].hints][: COQ_INSTANCES // 3]
    plain = [pair for pair in pairs if pair and not pair[0].hints][: COQ_INSTANCES - len(hinted)]
    goals: list[CoqGoal] = [goal for pair in hinted + plain for goal in pair]
    assert len(goals) >= 2 * COQ_INSTANCES * 0.9
    batch = CoqBatch(per_file=50)
    batch.check(goals)
    assert not batch.disagreements, batch.disagreements[:3]
    assert len(batch.proved) >= 0.9 * len(goals), batch.undecided[:3]
    assert any(goal.hints for goal in batch.proved)  # square roots and integer parts are among them


# -- e. planted defects -------------------------------------------------------------------------

TWO_VARIABLES = spec({"a": "integer", "b": "integer"}, ["b > 0"], "a // b <= a")


def test_a_planted_name_collision_is_seen_by_the_binder_check(monkeypatch: pytest.MonkeyPatch) -> None:
    assert binder_problems(TWO_VARIABLES) == []
    monkeypatch.setattr(coq_terms, "coq_names", lambda variables: {v.name: "x" for v in variables})
    problems = binder_problems(TWO_VARIABLES)
    assert problems and any("not pairwise distinct" in problem for problem in problems)


def test_a_printer_that_drops_parentheses_is_seen_by_the_round_trip(monkeypatch: pytest.MonkeyPatch) -> None:
    statement = spec({"a": "integer", "b": "integer"}, [], "(a + b) * a == 0")
    assert round_trip(statement).admitted
    monkeypatch.setattr(render, "_allowed", lambda parent, position, child: True)
    assert render.statement_text(statement) == "∀ a, b ∈ ℤ: a + b·a = 0"
    refused = round_trip(statement)
    assert not refused.admitted and "reads as another statement" in refused.refusal
    # And were admission blind to it, the round trip's own comparison still sees it.
    monkeypatch.setattr(admission, "identical", lambda first, second: True)
    blind = round_trip(statement)
    assert blind.admitted and any("reads as another statement" in mismatch for mismatch in blind.mismatches)


def test_a_solver_with_euclidean_division_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    statement = spec({"a": "integer", "b": "integer"}, [], "a // b == -4")
    values = {"a": -7, "b": 2}
    exact = exact_verdict(statement, values)
    assert exact.outcome == "holds" and solver_comparison(statement, values, exact).verdict == "agree"
    # Z3's own div and mod are Euclidean: 7 div −2 is −3, where Python's 7 // −2 is −4.
    euclidean = {"floordiv": lambda a, b: a / b, "mod": lambda a, b: a % b}
    monkeypatch.setattr(smt._Translation, "_floor_division", lambda self, name, a, b: euclidean[name](a, b))
    values = {"a": 7, "b": -2}
    assert solver_comparison(statement, values, exact_verdict(statement, values)).verdict == "disagree"


def test_definedness_conditions_that_miss_an_operation_are_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    statement = spec({"x": "real"}, [], "1 / x > 0")
    assert exact_verdict(statement, {"x": 0}) == Exact("vacuous", defined=False)
    monkeypatch.setattr(definedness, "requirements", lambda expr, variables: [])
    missed = exact_verdict(statement, {"x": 0})
    assert "the statement is undefined where every definedness condition holds" in missed.problems


@pytest.mark.usefixtures("needs_coq")
def test_a_coq_translation_with_truncating_division_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    statement = spec({"a": "integer", "b": "integer"}, [], "a // b == -4")
    truncating = coq_terms._Printer._operation

    def planted(self: coq_terms._Printer, expr: Op, kind: str) -> str:
        if expr.name == "floordiv":
            return f"(Z.quot {self.term(expr.args[0], 'int')} {self.term(expr.args[1], 'int')})"
        return truncating(self, expr, kind)  # type: ignore[arg-type]

    monkeypatch.setattr(coq_terms._Printer, "_operation", planted)
    values = {"a": -7, "b": 2}
    batch = CoqBatch()
    batch.check(coq_goals(statement, values, exact_verdict(statement, values), "planted"))
    assert [goal.about for goal, _ in batch.disagreements] == ["verdict"]


# -- defects found, kept -------------------------------------------------------------------------


def test_even_and_odd_evaluate_instead_of_crashing() -> None:
    """The evaluator handed even and odd two arguments from a list of one (IndexError)."""
    assert evaluate(Op("even", (Const(4),)), {}, {}) is True
    assert evaluate(Op("odd", (Op("neg", (Const(3),)),)), {}, {}) is True
    statement = spec({"n": "integer"}, ["even(n)"], "odd(n + 1)")
    for n in (-3, 0, 4):
        exact = exact_verdict(statement, {"n": n})
        assert exact.outcome == ("holds" if n % 2 == 0 else "vacuous")
        assert solver_comparison(statement, {"n": n}, exact).verdict == "agree"


def test_a_whole_real_number_is_rendered_as_a_real() -> None:
    """A real constant 2.0 was rendered `2`, which reads back as an integer: admission refused a
    well-typed statement. It is rendered `2.0` now."""
    statement = Statement((Variable("x", "real"),), (), Op("eq", (Var("x"), Const(Fraction(2)))))
    assert decimal_text(Fraction(2)) == "2.0" and decimal_text(Fraction(5, 4)) == "1.25"
    admitted = admission.admit(statement)
    assert admitted.text == "∀ x ∈ ℝ: x = 2.0"
    assert admission.identical(admission.read_admitted(admitted.text).conclusion, statement.conclusion)


def test_a_fraction_that_is_no_decimal_is_refused_by_the_printer_instead_of_looping() -> None:
    """decimal_text looked for the last digit of 1/3 forever: any untyped tree holding it (the
    solver renders what it is given) hung its caller."""
    with pytest.raises(FormalError, match="no finite decimal"):
        decimal_text(Fraction(1, 3))


def test_a_name_that_ends_at_its_first_underscore_reads_back_from_its_latex() -> None:
    """`x_` was shown in LaTeX as x with its subscript, the empty rest of the name: as `x`, which
    read back as another variable, and admission refused the statement. It is `\\mathit{x\\_}` now."""
    assert render.latex_name("x_") == r"\mathit{x\_}" and render.latex_name("x_1") == "x_{1}"
    for names in (("x_",), ("x", "x_", "x__"), ("v10_", "a_b_", "θ_")):
        variables = tuple(Variable(name, "integer") for name in names)
        conclusion = Op("ge", (Op("add", (Var(names[0]), Var(names[-1]))), Const(0)))
        statement = Statement(variables, tuple(Op("ne", (Var(n), Const(1))) for n in names[1:-1]), conclusion)
        checked = round_trip(statement)
        assert checked.admitted and not checked.mismatches, checked


def test_a_name_that_starts_with_a_domain_letter_is_refused_with_the_reason() -> None:
    """`ℤx` was typed, then its text read back as the domain ℤ and a name x: admission refused it
    saying only that the rendering does not read. The kernel refuses the name now, saying why."""
    for name in ("ℤx", "ℝ2", "ℚ_1"):
        with pytest.raises(FormalError, match="reads as a domain"):
            typed(Statement((Variable(name, "integer"),), (), Op("ge", (Var(name), Const(0)))))
    assert round_trip(Statement((Variable("Σx", "integer"),), (), Op("ge", (Var("Σx"), Const(0))))).admitted


def test_a_power_with_the_index_as_its_exponent_is_not_written_out_where_the_index_is_negative() -> None:
    """`2**k` needs k ≥ 0 while k is a variable (an index is), so the sum below is undefined; written
    out, the term at k = −2 became `2**−2`, the real 0.25, and the solver proved the sum equal to
    1.75, a verdict about another statement. It is not written out now: the solver and Coq cannot
    state it, and only the evaluator reads it."""
    # Now the kernel does not admit it (kernel/exponents.py): the index may be negative.
    with pytest.raises(FormalError, match="may be negative"):
        spec({}, [], "sum(2**k for k in range(-2, 1)) == 1.75")
    with pytest.raises(FormalError, match="may be negative"):
        spec({}, [], "all(k**k >= 0 for k in range(-1, 2))")
    # Built past the admission, it is still undefined to every checker, never written out.
    admitted = read_statement([], [], "sum(2**abs(k) for k in range(-2, 1)) == 1.75")
    statement = Statement((), (), _with_plain_exponent(admitted.conclusion))
    with pytest.raises(Undefined):
        evaluate(statement.conclusion, {}, {})
    with pytest.raises(FormalError, match="negative exponent"):
        statement.expanded()
    with pytest.raises(smt.NotExpressible):
        smt.prove_or_find_model(statement)
    with pytest.raises(NotStatable):
        coq_statement(statement)
    assert exact_verdict(statement, {}).outcome == "vacuous" and not exact_verdict(statement, {}).problems
    # A power of the index that stays natural is written out and checked as before.
    natural = spec({}, [], "sum(2**k for k in range(0, 3)) == 7")
    assert smt.prove_or_find_model(natural).outcome == "unsat"


def _with_plain_exponent(expr):
    """`expr` with each `abs(k)` exponent replaced by `k`: the tree the admission refuses."""
    if isinstance(expr, Op):
        if expr.name == "abs" and isinstance(expr.args[0], Var):
            return expr.args[0]
        return Op(expr.name, tuple(_with_plain_exponent(arg) for arg in expr.args))
    if isinstance(expr, Reduce):
        return Reduce(expr.kind, expr.index, expr.low, expr.high, _with_plain_exponent(expr.body), expr.condition)
    return expr
