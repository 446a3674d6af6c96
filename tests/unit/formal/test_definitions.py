"""Functions a statement defines by a formula (formal/definitions.py): taken out of the
hypotheses, written out at each call, and checked against the prose's own formula. The two
miniF2F statements are the embedded formalizer's answers (bench/formal.py, 2026-12-03), refused
before for an unknown function f."""

from __future__ import annotations

import pytest

from lemmata.artifacts import FormalSpec, FormalVariable, lemma_status
from lemmata.formal.checking import falsify, formal_reading, prove_in_kernel
from lemmata.formal.definitions import prose_definition
from lemmata.formal.reading import parse_expression, read_statement
from lemmata.kernel.render import expression_text
from lemmata.kernel.tree import FormalError, free_variables
from lemmata.stages.formal.formalize import with_the_prose_definitions

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


F_OF_1 = "Let $f(x)=3x^4-7x^3+2x^2-bx+1$. For what value of $b$ is $f(1)=1$? Show that it is -2."


def test_a_definition_the_formalizer_left_out_is_the_proses_own() -> None:
    """mathd_algebra_159's first answer on the embedded model (2026-12-02) called f and never
    defined it: the prose's definition is copied in, `bx` read as b·x, and checked as any other."""
    answer = spec(["f(1) == 1"], "b == -2", variables=("b",))
    completed = with_the_prose_definitions(F_OF_1, answer)
    assert completed.hypotheses == ["f(x) = 3x^4-7x^3+2x^2-bx+1", "f(1) == 1"]
    true = prove_in_kernel(falsify(F_OF_1, completed))
    assert lemma_status(true, False) == "machine_checked", true
    assert "b·1" in true.text and "f(" not in true.text, true.text
    twin_prose = F_OF_1.replace("it is -2", "it is -3")
    twin = prove_in_kernel(
        falsify(twin_prose, with_the_prose_definitions(twin_prose, spec(["f(1) == 1"], "b == -3", ("b",))))
    )
    assert lemma_status(twin, False) == "refuted", twin


@pytest.mark.parametrize(
    "prose",
    [
        pytest.param("Let $f(x) = x^2$ for $x > 0$. Show that $f(-1) = 1$.", id="a-condition-after"),
        pytest.param("For $x > 0$, let $f(x) = x^2$. Show that $f(-1) = 1$.", id="a-condition-before"),
        pytest.param("Let $f(x) = x^2$ if $x$ is positive. Show that $f(-1) = 1$.", id="an-if-after"),
        pytest.param("Let $f(x) = x^2$ on $[0, 1]$. Show that $f(-1) = 1$.", id="an-interval"),
        pytest.param("Let $f(x) = x^2$, where $x \\geq 0$. Show that $f(-1) = 1$.", id="a-where"),
    ],
)
def test_a_definition_its_sentence_may_restrict_is_never_written_out(prose: str) -> None:
    """f(−1) is not defined by such prose: written out, `(−1)² = 1` would be machine-checked. Both
    when the formalizer writes the definition and when it is left for the prose to give."""
    assert "may restrict f" in prose_definition(prose, "f")
    with pytest.raises(FormalError):
        formal_reading(prose, spec(["f(x) = x**2"], "f(-1) == 1"))
    left_out = spec([], "f(-1) == 1")
    assert with_the_prose_definitions(prose, left_out) == left_out
    with pytest.raises(FormalError, match="unknown function 'f'"):
        formal_reading(prose, left_out)


def test_the_prose_gives_no_definition_for_its_claim_or_a_language_function() -> None:
    """Only the conditions define, and never a function the language has."""
    claimed = spec([], "f(2) == 5")
    assert with_the_prose_definitions("Show that $f(x) = x^2 + 1$ gives $f(2) = 5$.", claimed) == claimed
    floor_call = spec([], "floor(5/2) == 2")
    assert with_the_prose_definitions("Let $floor(x) = x$. Show that it is 2.", floor_call) == floor_call


def test_a_latex_floor_reads_as_floor() -> None:
    assert parse_expression("x-y\\left \\lfloor \\frac{x}{y} \\right \\rfloor") == parse_expression("x - y*floor(x/y)")
    assert parse_expression("\\lceil \\lfloor x \\rfloor / 2 \\rceil") == parse_expression("ceil(floor(x)/2)")


@pytest.mark.parametrize(
    "prose",
    [
        pytest.param(
            "Let $f(x) = x^2$. Here $f$ is defined only for positive $x$. Show that $f(-1) = 1$.",
            id="defined-only-in-another-sentence",
        ),
        pytest.param(
            "Let $f(x) = x^2$. The domain of $f$ is the positive reals. Show that $f(-1) = 1$.",
            id="a-domain-in-another-sentence",
        ),
        pytest.param(
            "Let $f: (0, \\infty) \\to \\mathbb{R}$ be given. Let $f(x) = x^2$. Show that $f(-1) = 1$.",
            id="a-domain-as-an-arrow",
        ),
    ],
)
def test_a_domain_said_anywhere_keeps_a_definition_from_being_written_out(prose: str) -> None:
    """Found re-reading the sentence rule as an adversary (2026-12-03): a restriction in another
    sentence than the definition's was not seen, and f(−1) = 1 written out as (−1)² = 1."""
    assert "may restrict f" in prose_definition(prose, "f")
    left_out = spec([], "f(-1) == 1")
    assert with_the_prose_definitions(prose, left_out) == left_out
    with pytest.raises(FormalError):
        formal_reading(prose, spec(["f(x) = x**2"], "f(-1) == 1"))
