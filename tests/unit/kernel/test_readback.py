"""What a researcher reads is what the kernel checks: the renderings (kernel/render.py) read back
(kernel/readback.py) to the very tree, and the grammar refuses the forms a reader could take two
ways instead of guessing one (kernel/admission.py admits a statement only when both read back)."""

from __future__ import annotations

import pytest

from lemmata.formal.reading import read_statement
from lemmata.kernel.admission import admit, identical, read_admitted
from lemmata.kernel.readback import Misread, read_latex, read_text
from lemmata.kernel.statement import Statement, Variable
from lemmata.kernel.tree import Const, FormalError, Op, Var


@pytest.mark.parametrize(
    "conclusion, shown",
    [
        pytest.param("a % 2*b >= 0", "(a mod 2)·b ≥ 0", id="a-remainder-times-a-number"),
        pytest.param("a % (2*b) >= 0", "a mod (2·b) ≥ 0", id="a-remainder-of-a-product"),
        pytest.param("(a + b) % 3 == 0", "(a + b) mod 3 = 0", id="the-remainder-of-a-sum"),
        pytest.param("a + b % 3 == 0", "a + (b mod 3) = 0", id="a-remainder-inside-a-sum"),
        pytest.param("a*b // 2 == 0", "(a·b) div 2 = 0", id="a-product-then-a-quotient"),
        pytest.param("a // 2 * b == 0", "(a div 2)·b = 0", id="a-quotient-then-a-product"),
        pytest.param("a - (b - c) == 0", "a − (b − c) = 0", id="a-difference-on-the-right"),
        pytest.param("a + (b + c) == 0", "a + (b + c) = 0", id="a-sum-on-the-right-is-its-own-node"),
        pytest.param("-a % 3 == 0", "(−a) mod 3 = 0", id="a-negation-before-mod"),
        pytest.param("-(a % 3) == 0", "−(a mod 3) = 0", id="the-negation-of-a-remainder"),
        pytest.param("a**b**c == 0", "a^(b^c) = 0", id="a-tower-of-powers"),
        pytest.param("(a < b) or (b < c and c < a)", "a < b ∨ (b < c ∧ c < a)", id="and-inside-or"),
        pytest.param("not a == b", "¬(a = b)", id="a-negated-comparison"),
    ],
)
def test_precedence_a_reader_could_take_otherwise_is_bracketed(conclusion: str, shown: str) -> None:
    # A variable exponent is admitted where the premises keep it natural (kernel/exponents.py).
    integers = [(name, "natural" if "**" in conclusion else "integer") for name in "abc" if name in conclusion]
    admitted = admit(read_statement(integers, [], conclusion))
    assert shown in admitted.text
    assert identical(read_text(admitted.text).statement.conclusion, admitted.statement.conclusion)
    assert identical(read_latex(admitted.latex).statement.conclusion, admitted.statement.conclusion)


@pytest.mark.parametrize(
    "text, why",
    [
        pytest.param("∀ a, b ∈ ℤ: a mod 2·b ≥ 0", "before ·", id="mod-then-times"),
        pytest.param("∀ a, b ∈ ℤ: a·b mod 2 = 0", "before /, div or mod", id="times-then-mod"),
        pytest.param("∀ a, b ∈ ℤ: a + b mod 2 = 0", "inside a sum", id="mod-inside-a-sum"),
        pytest.param("∀ a, b ∈ ℤ: a/b/2 = 0", "before /, div or mod", id="a-chain-of-quotients"),
        pytest.param("∀ a, b ∈ ℤ: a < b ∧ b > 0 ∨ a = 0", "∧ inside ∨", id="and-then-or"),
        pytest.param("∀ a, b ∈ ℤ: a < b < 3", "do not chain", id="a-chained-comparison"),
        pytest.param("∀ a ∈ ℤ: a^2^3 = 0", "do not chain", id="a-chain-of-powers"),
        pytest.param("∀ a ∈ ℤ: −a mod 3 = 0", "before /, div or mod", id="a-negation-before-mod"),
        pytest.param("∀ a ∈ ℤ: a·−a = 0", "negative right operand", id="a-negation-on-the-right"),
        pytest.param("∀ a ∈ ℤ: a = 0 ⇒ a = 0 ⇒ a = 0", "goes on", id="implications-chained"),
        pytest.param("∀ a ∈ ℤ: 2a = 0", "goes on", id="juxtaposition"),
    ],
)
def test_the_grammar_refuses_what_a_reader_could_take_two_ways(text: str, why: str) -> None:
    with pytest.raises(Misread, match=why):
        read_text(text)


def test_the_text_of_an_admitted_statement_reads_back_to_it_and_a_tampered_one_does_not() -> None:
    statement = read_statement([("a", "integer"), ("b", "integer")], ["a % 2 == 0", "b % 2 == 0"], "(a + b) % 2 == 0")
    text = admit(statement).text
    again = read_admitted(text)
    assert again.variables == statement.variables and identical(again.conclusion, statement.conclusion)
    with pytest.raises(FormalError):
        read_admitted(text.replace("(a + b) mod 2", "a + b mod 2"))
    with pytest.raises(FormalError):
        read_admitted(text.replace(" = 0 ⇒", " = 0  ⇒"))  # not the kernel's rendering, though it reads the same


def test_definedness_conditions_are_read_back_and_compared_too() -> None:
    admitted = admit(read_statement([("x", "positive real")], [], "x + 1/x >= 2"))
    assert admitted.text == "∀ x ∈ ℝ>0: x + 1/x ≥ 2 where x ≠ 0"
    assert read_text(admitted.text).conditions == (Op("ne", (Var("x"), Const(0))),)
    with pytest.raises(FormalError):
        read_admitted(admitted.text.replace("x ≠ 0", "x ≠ 1"))


def test_a_statement_whose_rendering_would_read_as_another_is_not_admitted(monkeypatch: pytest.MonkeyPatch) -> None:
    """A printer that dropped a bracket would show one statement and check another: refused,
    whether the grammar refuses the form or reads it as another tree."""
    from lemmata.kernel import render

    monkeypatch.setattr(render, "_allowed", lambda parent, position, child: True)
    for conclusion in ("a % (2*b) >= 0", "a - (b - 1) >= 0"):
        statement = read_statement([("a", "integer"), ("b", "integer")], [], conclusion)
        with pytest.raises(FormalError, match="does not read as one statement|reads as another statement"):
            admit(statement)


def test_a_number_of_one_kind_is_not_the_same_number_of_another() -> None:
    assert identical(Const(2), Const(2)) and not identical(Const(2), Const(__import__("fractions").Fraction(2)))


def test_names_the_rendering_uses_as_words_are_no_variables() -> None:
    for name in ("mod", "div", "where", "even", "ℤ", "Σ"):
        with pytest.raises(FormalError, match="word of the formal language"):
            admit(Statement((Variable(name, "integer"),), (), Op("ge", (Var(name), Const(0)))))


def test_the_conditions_shown_are_those_the_solver_and_coq_assume_of_a_sum_written_out() -> None:
    """A division inside a sum is defined term by term: Z3 and Coq assume x − 0 ≠ 0 and x − 1 ≠ 0,
    and the statement once showed no condition at all (found by the differential tests)."""
    statement = read_statement([("x", "real")], ["x > 5"], "sum(1/(x - k) for k in range(0, 2)) > 0")
    assert admit(statement).text == "∀ x ∈ ℝ: x > 5 ⇒ Σ[0 ≤ k ≤ 1] 1/(x − k) > 0 where x − 0 ≠ 0, x − 1 ≠ 0"


def test_a_statement_defined_under_more_conditions_than_can_be_shown_is_not_admitted() -> None:
    statement = read_statement([("x", "real")], ["x > 500"], "sum(1/(x - k) for k in range(0, 100)) > 0")
    with pytest.raises(FormalError, match="more than can be shown"):
        admit(statement)
