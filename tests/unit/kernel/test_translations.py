"""The two translations of the kernel, each on its own: the statement as a question to Z3
(kernel/smt.py) and as a Coq proposition (kernel/coq_terms.py). What each must keep of the
language's semantics — Python's rounding, definedness as premises, unique binders, numbers the
solver can be given — is stated case by case; the differential tests (test_differential.py)
then hold all three checkers together on random statements."""

from __future__ import annotations

import re

import pytest

from lemmata.formal.reading import read_statement
from lemmata.kernel import smt
from lemmata.kernel.coq_terms import COQ_RESERVED, NotStatable, coq_names, coq_statement
from lemmata.kernel.statement import Variable


def statement(variables: dict[str, str], hypotheses: list[str], conclusion: str):  # type: ignore[no-untyped-def]
    return read_statement(list(variables.items()), hypotheses, conclusion)


# -- the solver -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "conclusion, holds",
    [
        pytest.param("(-7) // 2 == -4", True, id="floor-division-rounds-down"),
        pytest.param("7 % (-2) == -1", True, id="the-remainder-has-the-divisors-sign"),
        pytest.param("(-7) % 2 == 1", True, id="a-negative-dividend"),
        pytest.param("7 // (-2) == -3", False, id="not-truncated"),
    ],
)
def test_the_solver_keeps_pythons_rounding(conclusion: str, holds: bool) -> None:
    answer = smt.prove_or_find_model(statement({}, [], conclusion))
    assert answer.outcome == ("unsat" if holds else "sat")


def test_an_unsat_carries_the_certificate_of_the_statements_text() -> None:
    from lemmata.kernel.admission import admit

    even = statement({"a": "integer", "b": "integer"}, ["a % 2 == 0", "b % 2 == 0"], "(a + b) % 2 == 0")
    answer = smt.prove_or_find_model(even)
    assert answer.outcome == "unsat" and answer.certificate.startswith("lemmata-kernel-")
    assert answer.certificate != smt.prove_or_find_model(statement({"x": "real"}, [], "x*x >= 0")).certificate
    assert admit(even).text  # the text the certificate is of


def test_definedness_is_assumed_and_a_square_root_is_defined_only_where_it_is_reached() -> None:
    """1/x > 0 says nothing at x = 0: the solver may not refute it there (x / 0 is 0 in Z3)."""
    assert smt.prove_or_find_model(statement({"x": "real"}, ["x >= 0"], "1/x > 0")).outcome == "unsat"
    guarded = statement({"x": "real"}, [], "x < 0 or sqrt(x) >= 0")
    assert smt.prove_or_find_model(guarded).outcome == "unsat"


def test_hypotheses_no_input_satisfies_are_found_unsat() -> None:
    assert smt.satisfiable_assumptions(statement({"x": "real"}, ["x > 0", "x < 0"], "x == 1")).outcome == "unsat"
    witness = smt.satisfiable_assumptions(statement({"x": "real"}, ["x > 3"], "x == 1"))
    assert witness.outcome == "sat" and witness.model is not None and witness.model["x"] > 3


@pytest.mark.parametrize(
    "conclusion",
    [
        pytest.param("n > factorial(2000)", id="a-5736-digit-constant"),
        pytest.param("gcd(n, 6) == 2", id="gcd-of-a-variable"),
        pytest.param("2**abs(n) > n", id="a-variable-exponent"),
        pytest.param("sum(k for k in range(n)) >= 0", id="a-sum-over-a-variable-range"),
    ],
)
def test_what_the_solver_cannot_be_given_is_not_expressible_never_a_crash(conclusion: str) -> None:
    with pytest.raises(smt.NotExpressible):
        smt.prove_or_find_model(statement({"n": "integer"}, [], conclusion))


# -- Coq ------------------------------------------------------------------------------------------


def binders(proposition: str) -> list[str]:
    head = re.match(r"forall\s+((?:\([^()]*\)\s*)+),", proposition)
    return [name for group in re.findall(r"\(([^():]*):", head.group(1)) for name in group.split()] if head else []


@pytest.mark.parametrize(
    "names",
    [
        pytest.param(("α", "β"), id="two-greek-letters"),
        pytest.param(("R", "v_R"), id="a-reserved-name-and-its-old-renaming"),
        pytest.param(("R", "v0_R"), id="a-reserved-name-and-its-new-renaming"),
        pytest.param(("x", "x_", "x__"), id="underscores"),
        pytest.param(("fact", "Z", "S", "O", "IZR"), id="names-of-the-library"),
        pytest.param(("Qed", "Admitted", "lia"), id="words-the-refusal-reads"),
    ],
)
def test_every_variable_is_its_own_binder_in_coq(names: tuple[str, ...]) -> None:
    variables = tuple(Variable(name, "integer") for name in names)
    mapped = coq_names(variables)
    assert len(set(mapped.values())) == len(names)
    assert not set(mapped.values()) & COQ_RESERVED
    conclusion = " + ".join(names) + " >= 0"
    proposition = coq_statement(statement(dict.fromkeys(names, "integer"), [], conclusion)).proposition
    assert sorted(binders(proposition)) == sorted(mapped.values())


def test_a_kept_name_is_never_of_the_generated_form() -> None:
    mapped = coq_names((Variable("v0_x", "integer"), Variable("α", "integer")))
    assert mapped == {"v0_x": "v0_v0_x", "α": "v1__"}


def test_the_premises_of_coq_are_the_solvers() -> None:
    """Domains, hypotheses, then definedness: the same list both assume (Statement.premises)."""
    stated = statement({"n": "natural", "x": "real"}, ["x > 1"], "x / n >= 0")
    proposition = coq_statement(stated).proposition
    assert len(stated.expanded().premises()) == 3
    assert proposition.startswith("forall (n : Z) (x : R), (n >= 0)%Z -> (x > (IZR 1))%R -> ")
    assert "-> ((n <> 0)%Z)) -> " in proposition  # x / n is defined where n ≠ 0, given the others


def test_what_coq_cannot_state_here_is_not_statable() -> None:
    with pytest.raises(NotStatable):
        coq_statement(statement({"x": "real", "y": "real"}, ["x > 0"], "x**y > 0"))
    with pytest.raises(NotStatable):
        coq_statement(statement({"n": "integer"}, [], "sum(k for k in range(n)) >= 0"))
