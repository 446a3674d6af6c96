"""The formal language: what a model writes is read by Python's parser into a white-listed tree,
typed, and its operations' domains made explicit; nothing of it is ever evaluated by Python."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from lemmata.agents.answers import FormalizerAnswer
from lemmata.agents.parsing import parse_json_answer
from lemmata.formal.checking import formal_reading
from lemmata.formal.reading import normalised_source, parse_expression, read_statement, resolve_domain
from lemmata.kernel.expansion import expand_reductions
from lemmata.kernel.render import expression_text, statement_latex, statement_text
from lemmata.kernel.tree import Const, FormalError, Op, Reduce, Var
from lemmata.stages.formal.formalize import spec_of
from support import DATA


@pytest.mark.parametrize(
    "written, python",
    [
        pytest.param("x^2 + 1", "x**2 + 1", id="caret-is-a-power"),
        pytest.param("2a + 3(b - 1)", "2*a + 3*(b - 1)", id="juxtaposed-number"),
        pytest.param("(x - y)(x + y) = 7", "(x - y)*(x + y) == 7", id="juxtaposed-parentheses-and-single-equals"),
        pytest.param("a ≤ b ≠ c", "a <= b != c", id="unicode-relations"),
        pytest.param("a \\cdot b \\leq c", "a * b <= c", id="latex-operators"),
        pytest.param("a mod 2 = 0 && b >= 0", "a % 2 == 0  and  b >= 0", id="mod-and-c-style-and"),
        pytest.param("x1 + 1e6", "x1 + 1e6", id="names-and-scientific-numbers-kept"),
        pytest.param("x == 036", "x == 36", id="leading-zeros-of-an-aime-answer"),
        pytest.param("x == 0 or y == 0.05", "x == 0 or y == 0.05", id="zero-and-decimals-kept"),
        pytest.param(
            "or(a % 2 == 1, b % 2 == 0)", "((a % 2 == 1) or (b % 2 == 0))", id="or-written-as-a-function"
        ),  # the embedded formalizer, the README's main command 2026-11-26
        pytest.param(
            "and(x > 0, or(y > 0, z > 0))", "((x > 0) and (((y > 0) or (z > 0))))", id="nested-connective-calls"
        ),
        pytest.param("x > 0 or (y > 0)", "x > 0 or (y > 0)", id="an-operator-before-parentheses-kept"),
    ],
)
def test_the_spellings_models_use_become_python(written: str, python: str) -> None:
    assert normalised_source(written) == python


def test_a_decimal_is_the_fraction_written_not_the_nearest_binary_one() -> None:
    assert parse_expression("0.1") == Const(Fraction(1, 10))


def test_a_chained_comparison_is_a_conjunction() -> None:
    assert parse_expression("0 < x < 1") == Op("and", (Op("lt", (Const(0), Var("x"))), Op("lt", (Var("x"), Const(1)))))


def test_sums_counts_and_all_are_reductions_over_ranges() -> None:
    total = parse_expression("sum(d for d in range(1, 37) if 36 % d == 0)")
    assert isinstance(total, Reduce) and (total.kind, total.index, total.low, total.high) == (
        "sum",
        "d",
        Const(1),
        Const(37),
    )
    count = parse_expression("len([k for k in range(10) if k % 3 == 0])")
    assert isinstance(count, Reduce) and count.body == Const(1) and count.low == Const(0)
    # Written out as a balanced tree: 5,000 terms nest 13 levels deep, not 5,000.
    assert expand_reductions(parse_expression("sum(k for k in range(1, 4))")) == Op(
        "add", (Const(1), Op("add", (Const(2), Const(3))))
    )


@pytest.mark.parametrize(
    "text, complaint",
    [
        pytest.param("__import__('os').system('id')", "only named functions", id="a-call-of-a-call"),
        pytest.param("x.real", "no attributes", id="attribute"),
        pytest.param("(lambda: 1)()", "no functions of your own", id="lambda-call"),
        pytest.param("lambda: 1", "no functions of your own", id="lambda"),
        pytest.param("a[0] + 1", "no indexing", id="subscript"),
        pytest.param("open('f')", "unknown function 'open'", id="unknown-function"),
        pytest.param("max(a, *b)", "Starred is not allowed", id="starred-argument"),
        pytest.param("a & b", "use + - * / // % ** only", id="bitwise-and"),
        pytest.param("a in [1, 2]", "only ==, !=", id="membership"),
        pytest.param("'text'", "not a number", id="string"),
        pytest.param("x = ", "is not an expression", id="syntax-error"),
        pytest.param(
            "there exists an integer k such that a = k**2", "is written a % 2 == 0", id="existence-in-words"
        ),  # the embedded formalizer, the README's main command 2026-11-26 (a multiple is read since)
    ],
)
def test_anything_outside_the_language_is_refused_with_what_to_write(text: str, complaint: str) -> None:
    with pytest.raises(FormalError, match=re.escape(complaint)):
        parse_expression(text)


@pytest.mark.parametrize(
    "variables, conclusion, complaint",
    [
        pytest.param([("x", "real")], "x % 2 == 0", "about integers", id="mod-of-a-real"),
        pytest.param([("x", "integer")], "x + y > 0", "'y' is not declared", id="undeclared"),
        pytest.param([("x", "integer")], "x + 1", "must be a condition", id="a-number-as-conclusion"),
        pytest.param([("sum", "integer")], "sum > 0", "a word of the formal language", id="reserved-name"),
        pytest.param([("z", "complex")], "z == z", "cannot state", id="complex"),
        pytest.param([("f", "other")], "f == f", "cannot state", id="other"),
        pytest.param([("x", "integer"), ("x", "real")], "x > 0", "declared twice", id="twice"),
    ],
)
def test_a_statement_that_cannot_be_typed_is_refused(variables: list, conclusion: str, complaint: str) -> None:
    with pytest.raises(FormalError, match=complaint):
        read_statement(variables, [], conclusion)


def test_a_variable_declared_and_never_used_is_left_out() -> None:
    """miniF2F's mathd_numbertheory_30 (the embedded model, 2026-11-26): a to e declared for a computation."""
    statement = read_statement([(name, "integer") for name in "abcde"], [], "2**10 % 7 == 2")
    assert statement.variables == () and statement.closed


def test_a_remainder_of_a_number_inside_a_sum_is_refused_as_misread() -> None:
    """miniF2F's imo_1964_p1_2 (the embedded model, 2026-11-26): `2^n + 1 % 7 != 0` is Python's
    2^n + (1 % 7) != 0, true for every n, and was machine-checked; the prose means (2^n + 1) mod 7."""
    with pytest.raises(FormalError, match=r"put the sum in parentheses, \(\.\.\. \+ 1\) % m"):
        read_statement([("n", "natural")], [], "2^n + 1 % 7 != 0")
    fine = read_statement([("n", "natural")], [], "(2^n + 1) % 7 != 0")
    assert statement_text(fine) == "∀ n ∈ ℤ≥0: (2^n + 1) mod 7 ≠ 0"
    assert (
        statement_text(read_statement([("n", "natural")], [], "2**n + n % 7 != 0")) == "∀ n ∈ ℤ≥0: 2^n + (n mod 7) ≠ 0"
    )


@pytest.mark.parametrize(
    "written, python",
    [
        pytest.param(
            "(7b^3)^2 \\times (4b^2)^{-3} = \\frac{49}{64}", "(7*b**3)**2 * (4*b**2)**(-3) == ((49)/(64))", id="frac"
        ),
        pytest.param("|9 + 2a| < 1", "abs(9 + 2*a) < 1", id="bars"),
        pytest.param("\\sqrt{\\frac{1}{2}} \\le x^{n+1}", "sqrt(((1)/(2))) <= x**(n+1)", id="sqrt-and-braces"),
        pytest.param("\\left( a + b \\right)^2 >= 0", "( a + b )**2 >= 0", id="left-right"),
    ],
)
def test_latex_a_model_copies_from_the_prose_is_read(written: str, python: str) -> None:
    """miniF2F's mathd_algebra_89 and mathd_algebra_327 (the embedded model, 2026-11-26)."""
    assert normalised_source(written) == python


def test_juxtaposed_variables_are_a_product_when_declared() -> None:
    statement = read_statement([("a", "real"), ("b", "real")], [], "a^2 + b^2 >= 2ab")
    # 2 times the product ab: the product is one node, so its grouping is shown.
    assert expression_text(statement.conclusion) == "a^2 + b^2 ≥ 2·(a·b)"


def test_domains_have_their_synonyms() -> None:
    assert [resolve_domain("n", t) for t in ("Int", "ℕ", "positive natural", "R", "non-negative real")] == [
        "integer",
        "natural",
        "positive integer",
        "real",
        "nonnegative real",
    ]


def test_definedness_is_guarded_by_what_must_hold_to_reach_it() -> None:
    """`x != 0 and 1/x > 1` needs nothing; `1/x > 1` alone needs x != 0; a conclusion's condition
    holds where the hypotheses do."""
    guarded = read_statement([("x", "real")], ["x != 0 and 1/x > 1"], "x < 1")
    assert guarded.definedness() == []
    bare = read_statement([("x", "real")], [], "1/x > 0 or x < 0")
    assert [expression_text(c) for c in bare.definedness()] == ["x ≠ 0"]
    under = read_statement([("x", "real")], ["x > 0"], "sqrt(x) > 0")
    assert [expression_text(c) for c in under.definedness()] == ["x > 0 ⇒ x ≥ 0"]


def test_the_statement_reads_the_same_in_text_and_latex() -> None:
    statement = read_statement([("x", "positive real")], [], "x + 1/x >= 2")
    assert statement_text(statement) == "∀ x ∈ ℝ>0: x + 1/x ≥ 2 where x ≠ 0"
    # The LaTeX is the same tokens (readback.py reads both with one grammar).
    assert statement_latex(statement) == r"\forall x \in \mathbb{R}_{>0} : x + 1 / x \geq 2 \;\text{where}\; x \neq 0"


@pytest.mark.parametrize(
    "words, expression",
    [
        pytest.param("x = 2*k for some integer k", "x % 2 == 0", id="multiple-for-some-integer"),
        pytest.param("there exists an integer k such that x = 2*k", "x % 2 == 0", id="there-exists-a-multiple"),
        pytest.param("n = 3k for some k", "n % 3 == 0", id="implicit-product"),
        pytest.param("a + b is even", "(a + b) % 2 == 0", id="sum-is-even"),
        pytest.param("n is an odd integer.", "n % 2 == 1", id="is-odd"),
        pytest.param("a and b are even", "a % 2 == 0 and b % 2 == 0", id="both-even"),
        pytest.param("n is divisible by 7", "n % 7 == 0", id="divisible"),
        pytest.param("a + b ≡ 2 (mod 10)", "(a + b) % 10 == 2 % 10", id="congruence-mathd_numbertheory_110"),
        pytest.param("14u \\equiv 46 \\pmod{100}", "(14*u) % 100 == 46 % 100", id="congruence-latex-pmod"),
        pytest.param("n \\equiv 3 \\pmod 7", "n % 7 == 3 % 7", id="congruence-pmod-without-braces"),
        pytest.param("x ≢ 1 mod 3", "x % 3 != 1 % 3", id="incongruence"),
        pytest.param("a \\not\\equiv b \\pmod{n}", "a % n != b % n", id="incongruence-latex"),
    ],
)
def test_a_multiple_a_parity_or_a_divisibility_in_words_is_read_as_a_remainder(words: str, expression: str) -> None:
    """The embedded formalizer wrote L1 of the README's main command as `x = 2*k for some integer
    k` and, told how to write it, as `there exists an integer k such that x = 2*k` (2026-11-29)."""
    assert parse_expression(words) == parse_expression(expression)


@pytest.mark.parametrize(
    "words",
    [
        pytest.param("b = a*k for some k", id="factor-a-variable"),  # b % a is undefined at a = 0
        pytest.param("x = 2*k for some integer j", id="another-name-bound"),
        pytest.param("k = 2*k for some k", id="bound-name-on-both-sides"),
        pytest.param("a, b or c are even", id="not-a-list-of-names"),
    ],
)
def test_a_phrase_that_is_no_remainder_is_left_to_be_refused(words: str) -> None:
    with pytest.raises(FormalError, match="is not an expression"):
        parse_expression(words)


def test_the_formalizers_recorded_multiples_read_as_the_circular_statement_they_are() -> None:
    """Read, L1 ("An integer is even if it can be written as 2k for some integer k") is its own
    hypothesis: refused as proving nothing (a definition, not a lemma), no longer as prose."""
    for recording in ("formalizer-multiple-for-some-integer.txt", "formalizer-there-exists-after-the-hint.txt"):
        text = (DATA / "embedded_outputs" / recording).read_text(encoding="utf-8")
        spec = spec_of(parse_json_answer(text, FormalizerAnswer, "formalizer"))
        with pytest.raises(FormalError, match="the conclusion is one of the hypotheses"):
            formal_reading("An integer is even if it can be written as 2k for some integer k.", spec)
