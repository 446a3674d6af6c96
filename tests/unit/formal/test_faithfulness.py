"""A formal statement must say what the prose says (issue 34, item 5): every number of the prose,
with its sign, appears in it; its conclusion is not among its hypotheses. Each rule here guards a
way a machine check of the wrong statement would fool a reader."""

from __future__ import annotations

from fractions import Fraction

import pytest

from lemmata.formal.conditions import unstated_hypothesis
from lemmata.formal.faithfulness import SIDE_ASSUMED, equivalence_is_the_claim, prose_numbers, unfaithful
from lemmata.formal.reading import read_statement

#: miniF2F's amc12a_2002_p1, with its answer choices: the choices are options, the answer is 7/2.
CHOICES = (
    "Compute the sum of all the roots of\n$(2x+3)(x-4)+(2x+3)(x-6)=0 $\n\n$ \\textbf{(A) } \\frac{7}{2}\\qquad "
    "\\textbf{(B) } 4\\qquad \\textbf{(C) } 5\\qquad \\textbf{(D) } 7\\qquad \\textbf{(E) } 13 $ "
    "Show that it is \\textbf{(A) }7/2."
)


@pytest.mark.parametrize(
    "prose, numbers",
    [
        pytest.param("For all reals $a, b$: $a^2 + b^2 \\geq 2ab$.", ["2"], id="exponents-are-structure"),
        pytest.param(
            "Given $x+y = 7$ and $3x+y = 45$, show that $x^2-y^2 = 217$.", ["7", "3", "45", "217"], id="answer"
        ),
        pytest.param(CHOICES, ["2", "3", "4", "6", "0", "7/2"], id="multiple-choice-keeps-its-answer"),
        pytest.param("Show that it is \\textbf{(B) }-\\frac19.", ["-1/9"], id="negative-short-fraction"),
        pytest.param("By Lemma 2 and [L3], for $x_1, x_{12}$ it is -2.", ["-2"], id="references-and-subscripts"),
        pytest.param("The value is 1,000 or 0.5.", ["1000", "1/2"], id="thousands-and-decimals"),
        pytest.param("We have $x - 2 = 5$.", ["2", "5"], id="a-subtraction-is-no-sign"),
        pytest.param("$(30)^4$, $2^{100}$ and $10^{-3}$, but $x^3$.", ["30", "4", "2", "100", "10", "-3"], id="powers"),
    ],
)
def test_the_numbers_a_statement_names(prose: str, numbers: list[str]) -> None:
    assert prose_numbers(prose) == [Fraction(n) for n in numbers]


def statement(
    conclusion: str,
    hypotheses: tuple[str, ...] = ("x > -100",),
    variables: tuple[tuple[str, str], ...] = (("x", "real"),),
):
    """A statement for the prose's numbers; its default hypothesis keeps x from being left free."""
    return read_statement(list(variables), list(hypotheses), conclusion)


def test_a_formalization_that_writes_the_models_answer_instead_of_the_statements_is_refused() -> None:
    """The false twin "Show that it is 218" formalized as the true answer 217."""
    prose = "Given $x+y = 7$ and $3x+y = 45$, show that $x^2-y^2 = 218$."
    reals = (("x", "real"), ("y", "real"))
    wrong = statement("x**2 - y**2 == 217", ("x + y == 7", "3*x + y == 45"), reals)
    assert unfaithful(prose, wrong).startswith("the formal statement leaves out 218")
    right = statement("x**2 - y**2 == 218", ("x + y == 7", "3*x + y == 45"), reals)
    assert unfaithful(prose, right) == ""


def test_a_sign_is_part_of_the_number() -> None:
    """ "Show that it is 2" formalized as `== -2`: a -2 holds no 2."""
    assert "leaves out 2" in unfaithful("Show that $b$ is 2 for $x > -100$.", statement("x == -2"))
    assert unfaithful("Show that $b$ is -2 for $x > -100$.", statement("x == -2")) == ""


def test_a_fraction_of_the_prose_may_be_written_as_a_quotient_or_a_decimal() -> None:
    assert unfaithful("For $x > -100$, show that $x = \\frac{1}{2}$.", statement("x == 1/2")) == ""
    assert unfaithful("For $x > -100$, show that $x = 0.5$.", statement("x == 1/2")) == ""
    assert unfaithful("For $x > -100$, show that $x = \\frac{1}{2}$.", statement("2*x == 1")) != ""


@pytest.mark.parametrize(
    "hypotheses, conclusion",
    [
        pytest.param(("x > 0",), "x > 0", id="the-hypothesis-itself"),
        pytest.param(("x > 0", "x < 1"), "x < 1 and x > 0", id="a-conjunction-of-hypotheses"),
        pytest.param(("x > 0",), "True", id="true"),
    ],
)
def test_a_conclusion_that_says_nothing_is_refused(hypotheses: tuple[str, ...], conclusion: str) -> None:
    assert unfaithful("A statement about a real x.", statement(conclusion, hypotheses)) != ""


SOLVE = "Solve for $a$: $\\frac15|9+2a|<1$.  Express your answer in interval notation. Show that it is (-7, -2)."


def test_one_direction_of_a_solution_set_is_refused() -> None:
    """miniF2F's mathd_algebra_327 (the embedded model, 2026-11-26): "|9 + 2a| < 1/5 implies
    -7 < a < -2" was machine-checked; it holds for the false twin's (-8, -2) too. Both directions
    are asked for."""
    one_way = statement("-7 < a < -2", ("abs(9 + 2*a) < 1/5",), (("a", "real"),))
    assert unfaithful(SOLVE, one_way).startswith("the statement asks for all solutions")
    both_ways = statement("iff(1/5*abs(9 + 2*a) < 1, -7 < a < -2)", (), (("a", "real"),))
    assert unfaithful(SOLVE, both_ways) == ""


@pytest.mark.parametrize(
    "prose, asks",
    [
        pytest.param(
            "What is the smallest positive integer $n$ with $n^2 > 20$? Show that it is 5.", "the smallest", id="min"
        ),
        pytest.param("How many integers $n$ satisfy $n^2 < 10$? Show that it is 7.", "how many", id="count"),
        pytest.param("Find the sum of all $x$ with $x^2 = 4$. Show that it is 0.", "sum or product", id="sum-of-all"),
    ],
)
def test_an_extremum_a_count_or_a_sum_of_all_is_not_one_instance(prose: str, asks: str) -> None:
    instance = statement("n == 5 and 7 > 0 and 10 > 0 and 4 > 0 and 0 == 0", ("n**2 > 20",), (("n", "integer"),))
    assert asks in unfaithful(prose, instance)


def test_at_least_is_no_extremum() -> None:
    assert unfaithful("If $x > 1$ then $x^2$ is at least 1.", statement("x**2 >= 1", ("x > 1",))) == ""


def test_a_free_variable_set_to_the_answer_is_refused() -> None:
    """miniF2F's amc12b_2003_p6 (the embedded model, 2026-11-26): "for all a, b, c: b = 2 and c = 6
    imply a = -2*sqrt(3)/3" was refuted at a = -0.15: a true statement refuted, for a formalization
    that says nothing of a."""
    prose = (
        "The second and fourth terms of a geometric sequence are $2$ and $6$. Show that the first is $-2\\sqrt{3}/3$."
    )
    variables = (("a", "real"), ("b", "real"), ("c", "real"))
    free = statement("a == -2*sqrt(3)/3", ("b == 2", "c == 6"), variables)
    assert unfaithful(prose, free).startswith("the conclusion sets a to a value while no hypothesis")
    bound = statement("a == -2*sqrt(3)/3", ("b == 2", "c == 6", "a*c == b*b*b/a"), variables)
    assert "sets a to a value" not in unfaithful(prose, bound)


def test_a_case_another_hypothesis_rules_out_is_refused() -> None:
    """Malformed model output, the README's main command 2026-11-26: "one of them is even" came as
    `a % 2 == 0` and `or(a % 2 == 1, b % 2 == 0)`, which assumes both even: true, and not the prose."""
    prose = "The sum of two integers is even if one of them is even."
    integers = [("a", "integer"), ("b", "integer")]
    mangled = read_statement(integers, ["a % 2 == 0", "or(a % 2 == 1, b % 2 == 0)"], "(a + b) % 2 == 0")
    assert "the case a mod 2 = 1 of the hypothesis" in unfaithful(prose, mangled)
    assert "contradicts the hypothesis a mod 2 = 0" in unfaithful(prose, mangled)
    faithful = read_statement(integers, ["a % 2 == 0 or b % 2 == 0"], "(a + b) % 2 == 0")
    assert unfaithful(prose, faithful) == ""  # false, and for the counterexample search to refute


def test_one_direction_of_an_if_and_only_if_is_refused() -> None:
    """Malformed model output, the AM-GM recording on the embedded model (2026-11-26): the lemma
    "a^2 + b^2 = 2ab if and only if a = b" came as its forward direction and was machine-checked."""
    prose = "For all real numbers $a$ and $b$, $a^2 + b^2 = 2ab$ if and only if $a = b$."
    reals = [("a", "real"), ("b", "real")]
    forward = read_statement(reals, ["a**2 + b**2 == 2*a*b"], "a == b")
    assert "says 'if and only if'" in unfaithful(prose, forward) and "iff(P, Q)" in unfaithful(prose, forward)
    both = read_statement(reals, [], "iff(a**2 + b**2 == 2*a*b, a == b)")
    assert unfaithful(prose, both) == ""


@pytest.mark.parametrize(
    "hypotheses",
    [
        pytest.param(["n % 2 == 0"], id="the-side-itself"),
        pytest.param(["n % 2 == 0", "n > 0"], id="the-side-among-others"),
    ],
)
def test_an_equivalence_one_of_whose_sides_is_assumed_is_refused(hypotheses: list[str]) -> None:
    """Malformed model output, `lemmata check` of "An integer n is even if and only if n^2 is even"
    on the embedded model (2026-11-29): told to join its hypothesis and conclusion by iff, it kept
    the hypothesis: `n % 2 == 0` and then iff(n % 2 == 0, n**2 % 2 == 0), one direction only, which
    the machines checked as if it were the equivalence."""
    prose = "An integer n is even if and only if n^2 is even."
    kept = read_statement([("n", "integer")], hypotheses, "iff(n % 2 == 0, n**2 % 2 == 0)")
    assert unfaithful(prose, kept) == SIDE_ASSUMED
    assert unfaithful(prose, read_statement([("n", "integer")], [], "iff(n % 2 == 0, n**2 % 2 == 0)")) == ""
    other = read_statement([("n", "integer")], ["n > 0"], "iff(n % 2 == 0, n**2 % 2 == 0)")
    positive = "A positive integer n is even if and only if n^2 is even."
    assert unfaithful(positive, other) == ""  # a condition of the statement, not a side
    assert "bounds a variable" in unfaithful(prose, other)  # which this prose does not state


@pytest.mark.parametrize(
    "prose, claim",
    [
        pytest.param("The sum of two integers is even if and only if at least one of them is even.", True, id="claim"),
        pytest.param(
            "For all reals a and b, a^2 + b^2 = 2ab if and only if a = b.", True, id="for-all-is-no-condition"
        ),
        pytest.param("n is even exactly when n^2 is even.", True, id="exactly-when"),
        pytest.param("Let n be even iff m is odd. Then n + m is odd.", False, id="let"),
        pytest.param("If x > 0, then x^2 > 1 iff x > 1.", False, id="if-beside-it"),
        pytest.param("For n with n > 2, n is prime iff n is odd.", False, id="with"),
        pytest.param("a = b iff a - b = 0, and a = 0 iff -a = 0.", False, id="two-equivalences"),
        pytest.param("The sum of two even integers is even.", False, id="no-equivalence"),
    ],
)
def test_an_equivalence_is_the_claim_only_with_nothing_conditional_beside_it(prose: str, claim: bool) -> None:
    assert equivalence_is_the_claim(prose) == claim


def test_a_number_whose_power_the_prose_names_is_not_a_hypothesis_about_every_n() -> None:
    """Malformed model output, miniF2F's mathd_numbertheory_543 on the embedded model (2026-11-27):
    "the number of divisors of $(30)^4$ excluding 1 and $(30)^4$ is 123" came as "for every
    positive n with n != 1 and n != 30 it has 123 divisors", which n = 2 refuted: a true statement
    refuted. The 30 was there only to please the number check; the 4 was never asked for."""
    prose = "Find the number of distinct positive divisors of $(30)^4$ excluding 1 and $(30)^4$. Show that it is 123."
    every_n = read_statement(
        [("n", "positive integer")], ["n != 1", "n != 30"], "len([d for d in range(2, n) if n % d == 0]) == 123"
    )
    assert unfaithful(prose, every_n).startswith("the formal statement leaves out 4")
    this_number = read_statement([], [], "len([d for d in range(2, 30**4) if 30**4 % d == 0]) == 123")
    assert unfaithful(prose, this_number) == ""


@pytest.mark.parametrize(
    "prose, variables, hypotheses, faithful",
    [
        pytest.param(
            "The product of two consecutive positive integers is 506. What is their sum? Show that it is 45.",
            (("n", "positive integer"),),
            ("n*(n + 1) == 506",),
            True,
            id="givens-as-sentences-before-a-question",
        ),
        pytest.param(
            "For all integers n >= 1, 2^n > n.", (("n", "integer"),), ("n >= 1",), True, id="a-bound-the-prose-says"
        ),
        pytest.param(
            "For all positive reals x, x + 1/x >= 2.", (("x", "real"),), ("x > 0",), True, id="positive-as-a-bound"
        ),
        pytest.param(
            "For all integers n, 2^n > n.", (("n", "integer"),), ("n >= 1",), False, id="a-bound-the-prose-does-not-say"
        ),
        pytest.param(
            "Let n be an integer with $1 \\le n \\le 100$. Show that n^2 + n > 0.",
            (("n", "integer"),),
            ("n >= 1", "n <= 100"),
            True,
            id="a-chain-of-bounds",
        ),
        pytest.param(
            "If $0 < x < 3$, then x + 1/x >= 2.", (("x", "real"),), ("x > 0",), True, id="a-bound-in-a-chain-read-back"
        ),
        pytest.param(
            "If x is real, then x + 1/x >= 2.", (("x", "real"),), ("x > 0",), False, id="a-bound-after-a-condition-word"
        ),
        pytest.param(
            "For all integers n with 2n > 3, n^2 + n > 0.",
            (("n", "integer"),),
            ("n > 3",),
            False,
            id="a-number-of-a-product",
        ),
        pytest.param(
            "For every integer n, n^2 + n is even.",
            (("n", "integer"),),
            ("n > 0 and n*n > 1",),
            False,
            id="an-equation",
        ),
        pytest.param(
            "If n is odd, then n^2 is odd.", (("n", "integer"),), ("n % 2 == 1",), True, id="parity-the-condition-names"
        ),
        pytest.param(
            "For every odd integer n, n^2 - 1 is divisible by 8.",
            (("n", "integer"),),
            ("n % 2 == 1",),
            True,
            id="parity-as-an-adjective",
        ),
        pytest.param(
            "For every integer n, n^2 - 1 is divisible by 8.",
            (("n", "integer"),),
            ("n % 2 == 1",),
            False,
            id="parity-the-prose-does-not-assume",
        ),
    ],
)
def test_a_hypothesis_is_kept_only_when_the_prose_states_it(
    prose: str, variables: tuple[tuple[str, str], ...], hypotheses: tuple[str, ...], faithful: bool
) -> None:
    """Hypotheses the prose does not state make a weaker statement (issue 52 class 5)."""
    conclusion = {"n": "n**2 + n > 0", "x": "x + 1/x >= 2"}[variables[0][0]]
    reason = unstated_hypothesis(prose, read_statement(list(variables), list(hypotheses), conclusion))
    assert (reason == "") == faithful, reason


#: miniF2F statements whose first formalization on the embedded model was faithful and refused
#: (bench/formal.py, 2026-12-03): each must pass, and its unfaithful neighbours must not.
APPLES = (
    "Together, Amy and Betty have 20 apples. Amy has three times the number of apples that Betty has. "
    "How many more apples than Betty does Amy have? Show that it is 10."
)
TWO_DIGIT = "What positive two-digit integer is exactly twice the sum of its digits? Show that it is 18."
CONGRUENCES = (
    "In this problem, $a$ and $b$ are integers, such that $a \\ge b.$\n\nIf $a+b\\equiv 2\\pmod{10}$ and "
    "$2a+b\\equiv 1\\pmod{10}$, then what is the last digit of $a-b$? Show that it is 6."
)
SQUARES = (
    "Find the remainder when $$33818^2 + 33819^2 + 33820^2 + 33821^2 + 33822^2$$is divided by 17. Show that it is 0."
)
#: A tens digit, as mathd_numbertheory_24 asks it (written out: that statement elides its terms).
TENS = "What is the tens digit in the sum $7^2 + 3^3$? Show that it is 7."
PINNED = (
    "What is the positive value of the expression $\\sqrt{x^3 - 2^y}$ when $x = 5$ and $y = 2$? Show that it is 11."
)


@pytest.mark.parametrize(
    "prose, variables, hypotheses, conclusion",
    [
        pytest.param(
            APPLES, (("a", "integer"), ("b", "integer")), ("a + b == 20", "a = 3*b"), "(a - b) == 10",
            id="mathd_algebra_123-how-many-more-than-is-a-difference",
        ),
        pytest.param(
            TWO_DIGIT, (("x", "integer"),), ("10 <= x < 100", "x == 2*(x//10 + x%10)"), "x == 18",
            id="mathd_numbertheory_284-two-digit-bounds-the-unnamed-subject",
        ),
        pytest.param(
            PINNED, (("x", "natural"), ("y", "natural")), ("x = 5", "y = 2"), "sqrt(5^3 - 2^2) == 11",
            id="mathd_algebra_547-a-domain-the-hypotheses-pin-assumes-nothing",
        ),
        pytest.param(
            CONGRUENCES, (("a", "integer"), ("b", "integer")), ("a + b ≡ 2 (mod 10)", "2a + b ≡ 1 (mod 10)", "a >= b"),
            "a - b ≡ 6 (mod 10)", id="mathd_numbertheory_110-congruences",
        ),
        pytest.param(
            SQUARES, tuple((name, "integer") for name in "abcde"),
            ("a = 33818", "b = 33819", "c = 33820", "d = 33821", "e = 33822"),
            "(a^2 + b^2 + c^2 + d^2 + e^2) % 17 == 0", id="mathd_numbertheory_30-names-for-the-proses-numbers",
        ),
        pytest.param(
            TENS, (), (), "((7**2 + 3**3) // 10) % 10 == 7",
            id="mathd_numbertheory_24-a-tens-digit-divides-by-ten",
        ),
    ],
)  # fmt: skip
def test_a_faithful_first_formalization_of_minif2f_passes(
    prose: str, variables: tuple[tuple[str, str], ...], hypotheses: tuple[str, ...], conclusion: str
) -> None:
    assert unfaithful(prose, read_statement(list(variables), list(hypotheses), conclusion)) == ""


@pytest.mark.parametrize(
    "prose, variables, hypotheses, conclusion, refusal",
    [
        pytest.param(
            "How many integers $n$ satisfy $n^2 < 10$? Show that it is 7.", (("n", "integer"),), ("n**2 < 10",),
            "n == 7", "asks how many", id="how-many-without-than-is-a-count",
        ),
        pytest.param(
            "Find the number of integers $n$ with $n^2 < 10$. Show that it is 7.", (("n", "integer"),),
            ("n**2 < 10",), "n == 7", "asks how many", id="the-number-of-in-the-claim-is-a-count",
        ),
        pytest.param(
            "How many more multiples of 3 than of 5 are there? Show that it is 2.", (("n", "integer"),),
            ("n > 3", "n < 5"), "n == 2", "bounds a variable", id="how-many-more-than-keeps-every-other-check",
        ),
        pytest.param(
            TWO_DIGIT, (("x", "integer"),), ("50 <= x < 100", "x == 2*(x//10 + x%10)"), "x == 18",
            "bounds a variable", id="a-bound-two-digits-do-not-give",
        ),
        pytest.param(
            "Let n be a two-digit number and m an integer with n = 2m. Show that m > 4.",
            (("n", "integer"), ("m", "integer")), ("10 <= n", "10 <= m", "n == 2*m"), "m > 4",
            "bounds a variable", id="two-digit-said-of-another-variable",
        ),
        pytest.param(
            APPLES, (("a", "integer"), ("b", "integer")), ("a + b == 20", "a = 7*b"), "(a - b) == 10",
            "holds 7", id="a-number-no-word-of-the-prose-writes",
        ),
        pytest.param(
            PINNED, (("x", "natural"), ("y", "positive integer")), ("x = 5",), "sqrt(5^3 - 2^y) == 11",
            "domain of y", id="a-domain-only-a-bound-meets",
        ),
        pytest.param(
            "Let $x = 57$. Show that $x + 1 = 58$.", (("x", "integer"),),
            ("sum(k for k in range(1, 100)) == 4950 + x - x",), "x + 1 == 58", "leaves out 57",
            id="a-range-writes-no-number-of-the-prose-but-its-own",
        ),
        pytest.param(
            "Show that for every integer $n \\geq 1$, $n^2 \\geq 2n$.", (("m", "integer"),), ("m >= 1", "m == 2"),
            "m**2 >= 2*m", "bounds a variable", id="a-name-for-a-number-where-the-prose-has-a-variable",
        ),
        pytest.param(
            "For every real $\\alpha \\ge 1$, show that $\\alpha^2 \\ge 2\\alpha$.", (("m", "real"),), ("m == 2",),
            "m**2 >= 2*m*1", "bounds a variable", id="a-name-for-a-number-where-the-prose-has-a-greek-variable",
        ),
        pytest.param(
            "For every real α ≥ 1, show that α² ≥ 2α.", (("m", "real"),), ("m == 2",), "m**2 >= 2*m*1",
            "bounds a variable", id="a-name-for-a-number-where-the-prose-has-a-unicode-variable",
        ),
        pytest.param(
            "Show that the square of every integer at least 1 is at least twice it: 1 and 2 are examples.",
            (("m", "integer"),), ("m == 2",), "m**2 >= 2*m*1", "bounds a variable",
            id="a-name-for-a-number-where-the-prose-quantifies-in-words",
        ),
        pytest.param(
            SQUARES, tuple((name, "integer") for name in "ab"), ("a = 33818", "b = 40000"),
            "(a^2 + 33819^2 + 33820^2 + 33821^2 + 33822^2 + 0*b) % 17 == 0", "bounds a variable",
            id="a-name-for-a-number-the-prose-does-not-write",
        ),
        pytest.param(
            TENS, (), (), "(7**2 + 3**3) % 10 == 7", "N % 10 is the units digit",
            id="mathd_numbertheory_24-a-tens-digit-is-not-the-units-digit",
        ),
    ],
)  # fmt: skip
def test_the_faithful_readings_let_no_neighbour_through(
    prose: str, variables: tuple[tuple[str, str], ...], hypotheses: tuple[str, ...], conclusion: str, refusal: str
) -> None:
    reason = unfaithful(prose, read_statement(list(variables), list(hypotheses), conclusion))
    assert refusal in reason, reason


RECIPROCALS = (
    "The sum of two nonzero real numbers is 4 times their product. What is the sum of the reciprocals of the two "
    "numbers? Show that it is 4."
)


def test_a_nonzero_domain_the_statements_own_division_needs_assumes_nothing() -> None:
    """miniF2F's amc12a_2017_p2: the prose names no variable, and 1/x, 1/y make x, y ≠ 0 anyway."""
    nonzero = (("x", "nonzero real"), ("y", "nonzero real"))
    assert unfaithful(RECIPROCALS, statement("1/x + 1/y == 4", ("x + y == 4*x*y",), nonzero)) == ""
    positive = (("x", "positive real"), ("y", "positive real"))
    assert "domain of x" in unfaithful(RECIPROCALS, statement("1/x + 1/y == 4", ("x + y == 4*x*y",), positive))


def test_a_domain_only_one_branch_needs_is_still_narrower() -> None:
    """At x = −1 the first branch is defined and false: a nonnegative x would hide it."""
    branches = statement("(x > 5) if x < 0 else (sqrt(x) >= 0)", (), (("x", "nonnegative real"),))
    assert "domain of x" in unfaithful("For every real x, the claim holds.", branches)


def test_a_nonzero_domain_the_prose_says() -> None:
    prose = "Simplify $(7b^3)^2 \\cdot (4b^2)^{-3},$ given that $b$ is non-zero. Show that it is \\frac{49}{64}."
    assert unfaithful(prose, statement("(7*b**3)**2 * (4*b**2)**(-3) == 49/64", (), (("b", "nonzero real"),))) == ""
