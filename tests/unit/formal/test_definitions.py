"""Functions a statement defines by a formula (formal/definitions.py): taken out of the
hypotheses, written out at each call, and checked against the prose's own formula. The two
miniF2F statements are the embedded formalizer's answers (bench/formal.py, 2026-12-03), refused
before for an unknown function f."""

from __future__ import annotations

import pytest

from lemmata.artifacts import FormalSpec, FormalVariable, lemma_status
from lemmata.formal.checking import falsify, formal_reading, prove_in_kernel
from lemmata.formal.reading import read_statement
from lemmata.kernel.render import expression_text
from lemmata.kernel.tree import FormalError, free_variables

F_OF_8 = "Let $f(x) = 3\\sqrt{2x - 7} - 8$.  Find $f(8)$. Show that it is 1."
F_OF_G = "Given the two functions $f(x)=x^3+2x+1$ and $g(x)=x-1$, find $f(g(1))$. Show that it is 1."


def spec(hypotheses: list[str], conclusion: str, variables: tuple[str, ...] = ("x",)) -> FormalSpec:
    return FormalSpec(
        variables=[FormalVariable(name=name, type="real") for name in variables],
        hypotheses=hypotheses,
        conclusion=conclusion,
    )


@pytest.mark.parametrize(
    "prose, hypotheses, conclusion",
    [
        pytest.param(F_OF_8, ["f(x) = 3*sqrt(2*x - 7) - 8"], "f(8) = 1", id="mathd_algebra_433"),
        pytest.param(F_OF_G, ["f(x) = x^3 + 2x + 1", "g(x) = x - 1"], "(f(g(1))) == 1", id="mathd_algebra_616"),
    ],
)
def test_a_function_the_prose_defines_is_machine_checked_and_its_twin_refuted(
    prose: str, hypotheses: list[str], conclusion: str
) -> None:
    true = prove_in_kernel(falsify(prose, spec(hypotheses, conclusion)))
    assert lemma_status(true, False) == "machine_checked", true
    assert "f(" not in true.text and "f(" not in true.latex, true.text  # what was checked, written out
    twin_prose, twin_conclusion = prose.replace("it is 1", "it is 2"), conclusion.replace("= 1", "= 2")
    twin = prove_in_kernel(falsify(twin_prose, spec(hypotheses, twin_conclusion)))
    assert lemma_status(twin, False) == "refuted", twin


def test_a_call_is_the_formula_at_its_arguments_all_at_once() -> None:
    statement = read_statement([("a", "real"), ("b", "real")], ["g(a, b) = a - 2*b"], "g(b, a) == b - 2*a")
    assert statement.hypotheses == ()
    assert expression_text(statement.conclusion) == "b − 2·a = b − 2·a"


@pytest.mark.parametrize(
    "prose, hypotheses, conclusion, refusal",
    [
        pytest.param(
            F_OF_G, ["f(x) = x^3 + 2x", "g(x) = x - 1"], "f(g(1)) == 0", "not the one the statement writes",
            id="a-definition-the-prose-does-not-write",
        ),
        pytest.param(
            "Find $x^3 + 1$ at $x = 1$. Show that it is 2.", ["h(x) = x^3 + 1"], "h(1) == 2",
            "defines no function h", id="a-function-the-prose-never-defines",
        ),
        pytest.param(
            "Let $f(x) = x^2$. Show that $f(x) = x^2 + 1$.", ["f(x) = x**2 + 1"], "f(x) == x**2 + 1",
            "not the one the statement writes", id="the-claims-formula-is-no-definition",
        ),
        pytest.param(
            "Let $f(x) = x^2$ for positive x, and $f(x) = -x$ otherwise. Find $f(-2)$. Show that it is 2.",
            ["f(x) = -x"], "f(-2) == 2", "more than one formula", id="cases-are-not-one-formula",
        ),
    ],
)  # fmt: skip
def test_a_definition_must_be_the_proses_own(prose: str, hypotheses: list[str], conclusion: str, refusal: str) -> None:
    with pytest.raises(FormalError, match=refusal):
        formal_reading(prose, spec(hypotheses, conclusion))


@pytest.mark.parametrize(
    "hypotheses, conclusion, refusal",
    [
        pytest.param(["u(n) = 2*u(n - 1)"], "u(3) == 8", "defined by itself", id="recursion-is-a-sequence"),
        pytest.param(["f(x) = x + 1"], "f(1, 2) == 2", "called with 2", id="wrong-arity"),
        pytest.param(
            ["f(x) = sum(k*x for k in range(3))"],
            "f(k) == 0",
            "uses as an index",
            id="an-argument-an-index-would-catch",
        ),
        pytest.param(
            ["f(x) = x*x*x*x"],
            "f(f(f(f(f(f(f(x))))))) >= 0",
            "written out|more than",
            id="calls-that-grow-past-the-bounds",
        ),
    ],
)
def test_a_definition_that_cannot_be_written_out_is_refused(
    hypotheses: list[str], conclusion: str, refusal: str
) -> None:
    with pytest.raises(FormalError, match=refusal):
        read_statement([("x", "real"), ("k", "integer")], hypotheses, conclusion)


def test_a_name_the_language_has_or_a_variable_is_never_redefined() -> None:
    """`sqrt(x) = 2` is a condition on x, and `x(y) = ...` no definition of a declared variable x."""
    statement = read_statement([("x", "real")], ["sqrt(x) = 2"], "x == 4")
    assert len(statement.hypotheses) == 1 and free_variables(statement.hypotheses[0]) == {"x"}
    with pytest.raises(FormalError):
        read_statement([("x", "real"), ("y", "real")], ["x(y) = y + 1"], "x == 4")
