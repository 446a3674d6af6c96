"""The three checkers read one statement: sampling (lemmata's exact evaluator), the SMT solver Z3
and Coq's kernel, each derived from the same tree. Over true statements and their false twins,
none may prove a false one or refute a true one; where the language's semantics could drift
apart between them (rounding of `//` and `%` with negative numbers, division by zero, square
roots, sums) each case is here with its expected verdict."""

from __future__ import annotations

import pytest

from lemmata.artifacts import FormalSpec, FormalVariable
from lemmata.formal.checking import falsify, prove_in_kernel
from lemmata.formal.reading import parse_expression
from lemmata.kernel.evaluate import evaluate


def spec(variables: dict[str, str], hypotheses: list[str], conclusion: str) -> FormalSpec:
    return FormalSpec(
        variables=[FormalVariable(name=name, type=kind) for name, kind in variables.items()],  # type: ignore[arg-type]
        hypotheses=hypotheses,
        conclusion=conclusion,
    )


def prose_of(name: str, statement: FormalSpec) -> str:
    """The case's prose: its name, domains and hypotheses, as the conditions of a claim
    (faithfulness.py reads them: a hypothesis or a domain the prose does not state is refused)."""
    domains = "".join(f" for {v.type} {v.name}" for v in statement.variables)
    return f"Given {name}{domains}{''.join(f' with {h}' for h in statement.hypotheses)}, the conclusion holds."


INTEGERS = {"a": "integer", "b": "integer"}
REALS = {"x": "real", "y": "real"}
#: (name, statement, true?)
CASES = [
    ("even-plus-even", spec(INTEGERS, ["a % 2 == 0", "b % 2 == 0"], "(a + b) % 2 == 0"), True),
    ("even-plus-odd-is-even", spec(INTEGERS, ["a % 2 == 0", "b % 2 == 1"], "(a + b) % 2 == 0"), False),
    ("floor-division-rounds-down", spec({}, [], "(-7) // 2 == -4"), True),
    ("floor-division-does-not-truncate", spec({}, [], "(-7) // 2 == -3"), False),
    ("remainder-takes-the-divisors-sign", spec({}, [], "7 % (-2) == -1"), True),
    ("remainder-is-not-euclidean", spec({}, [], "7 % (-2) == 1"), False),
    ("division-identity", spec(INTEGERS, ["b != 0"], "a == b * (a // b) + a % b"), True),
    ("am-gm-two", spec(REALS, [], "x**2 + y**2 >= 2*x*y"), True),
    ("am-gm-two-strict", spec(REALS, [], "x**2 + y**2 > 2*x*y"), False),
    ("linear-system", spec(REALS, ["x + y == 7", "3*x + y == 45"], "x**2 - y**2 == 217"), True),
    ("linear-system-twin", spec(REALS, ["x + y == 7", "3*x + y == 45"], "x**2 - y**2 == 218"), False),
    ("sqrt-of-a-square", spec({"x": "real"}, [], "sqrt(x*x) == abs(x)"), True),
    ("sqrt-is-not-identity", spec({"x": "real"}, [], "sqrt(x*x) == x"), False),
    ("reciprocal", spec({"x": "positive real"}, [], "x + 1/x >= 2"), True),
    ("reciprocal-twin", spec({"x": "positive real"}, [], "x + 1/x > 2"), False),
    ("sum-of-divisors", spec({}, [], "sum(d for d in range(1, 37) if 36 % d == 0) == 91"), True),
    ("sum-of-divisors-twin", spec({}, [], "sum(d for d in range(1, 37) if 36 % d == 0) == 92"), False),
    ("big-power-remainder", spec({}, [], "1999**2000 % 5 == 1"), True),
    ("big-power-remainder-twin", spec({}, [], "1999**2000 % 5 == 2"), False),
    ("natural-domain", spec({"n": "natural"}, [], "n * n >= n"), True),
    ("integer-domain-twin", spec({"n": "integer"}, [], "n * n > n"), False),
]


@pytest.mark.parametrize("name, statement, true", [pytest.param(*case, id=case[0]) for case in CASES])
def test_sampling_and_the_solver_never_contradict_the_truth(name: str, statement: FormalSpec, true: bool) -> None:
    check = falsify(prose_of(name, statement), statement)
    assert not check.conflict
    if true:
        assert check.verdict != "refuted", check.checks
    else:
        assert check.verdict == "refuted", check.checks
        assert check.refutation is not None and check.refutation.counterexample is not None


@pytest.mark.usefixtures("needs_coq")
@pytest.mark.parametrize(
    "name, statement, true",
    [pytest.param(*case, id=case[0]) for case in CASES if case[0] in {
        "even-plus-even", "floor-division-rounds-down", "floor-division-does-not-truncate",
        "remainder-is-not-euclidean", "am-gm-two", "am-gm-two-strict", "linear-system-twin", "reciprocal",
        "sum-of-divisors", "sum-of-divisors-twin", "big-power-remainder-twin",
    }],
)  # fmt: skip
def test_the_kernel_proves_no_false_statement(name: str, statement: FormalSpec, true: bool) -> None:
    """False statements reach Coq here although sampling refuted them: nothing may prove them."""
    check = falsify(prose_of(name, statement), statement).model_copy(update={"checks": []})
    kernel = prove_in_kernel(check)
    coq = next(c for c in kernel.checks if c.checker == "coq")
    if not true:
        assert coq.outcome != "proved"
    elif name in ("even-plus-even", "floor-division-rounds-down", "am-gm-two", "reciprocal", "sum-of-divisors"):
        assert coq.outcome == "proved", coq.detail


def test_the_evaluator_follows_python_on_integer_division() -> None:
    for a in range(-9, 10):
        for b in (-4, -3, -2, -1, 1, 2, 3, 4):
            assert evaluate(parse_expression(f"({a}) // ({b})"), {}, {}) == a // b
            assert evaluate(parse_expression(f"({a}) % ({b})"), {}, {}) == a % b


def test_a_vacuous_statement_is_refused_not_proved() -> None:
    check = falsify("x > 0 and x < 0 imply anything", spec({"x": "real"}, ["x > 0", "x < 0"], "x == 1"))
    assert check.verdict == "unverified" and "no input satisfies its hypotheses" in check.not_formalized


def test_a_conclusion_copied_from_the_hypotheses_is_refused() -> None:
    check = falsify("if a is even then a is even", spec({"a": "integer"}, ["a % 2 == 0"], "a % 2 == 0"))
    assert "the conclusion is one of the hypotheses" in check.not_formalized and check.checks == []


@pytest.mark.parametrize(
    "conclusion",
    ["2**(2**40) == 0", "factorial(10**6) > 0", "sum(k for k in range(10**9)) > 0", "10**10**10 > 0"],
)
def test_a_statement_written_to_exhaust_the_machine_is_stopped_not_computed(conclusion: str) -> None:
    """The attack first: a formal statement is model output. Numbers past what a check affords are
    not computed (the evaluator's bounds), nor sent to the solver; the checks end in about a second."""
    check = falsify(conclusion, spec({}, [], conclusion))
    assert check.verdict == "unverified" and check.not_formalized == ""
    assert [(c.checker, c.outcome) for c in check.checks] == [("sampling", "inconclusive"), ("z3", "not_applicable")]
    assert "undecided" in check.checks[0].detail
