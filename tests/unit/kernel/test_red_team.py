"""The red team: formal statements written as an adversary would — and, for the worst case, as an
honest formalizer did — each of which main (a53e6da) called machine-checked although it is false
or not the prose's, or turned into a crash. Each case runs the real checks (sampling, Z3, Coq's
kernel where named) through the entry points a run uses, and asks what a researcher would: is a
false statement, or a statement the prose does not make, ever machine-checked?

Every test here failed before its fix: on a53e6da (issue 52 lists how), or, for the cases found
by attacking this issue's own rules (each says so, dated), on the commit before theirs. Run it with
the old package on PYTHONPATH to see them fail."""

from __future__ import annotations

import re

import pytest

from lemmata.artifacts import FormalCheck, FormalSpec, FormalVariable
from lemmata.formal.checking import falsify, prove_in_kernel


def spec(variables: dict[str, str], hypotheses: list[str], conclusion: str) -> FormalSpec:
    return FormalSpec(
        variables=[FormalVariable(name=name, type=kind) for name, kind in variables.items()],  # type: ignore[arg-type]
        hypotheses=hypotheses,
        conclusion=conclusion,
    )


def checked(prose: str, formal: FormalSpec, coq_script: str = "") -> FormalCheck:
    """What a lemma's job would make of it: falsified, then proved in Coq where it can be."""
    check = falsify(prose, formal)
    return prove_in_kernel(check, {"coq": coq_script} if coq_script else None)


def binders(proposition: str) -> list[str]:
    """The names a Coq proposition's `forall` binds, in order."""
    head = re.match(r"forall\s+((?:\([^()]*\)\s*)+),", proposition)
    if head is None:
        return []
    return [name for group in re.findall(r"\(([^():]*):", head.group(1)) for name in group.split()]


# -- 1. binders that collide -----------------------------------------------------------------------

PELL = "For all positive integers α and β, α² − 61β² ≠ 1."


@pytest.mark.usefixtures("needs_coq")
def test_two_greek_letters_stay_two_variables_and_pells_equation_is_not_machine_checked() -> None:
    """Honest formalization, false statement (1766319049² − 61·226153980² = 1). Both letters
    became `v__` in Coq, `forall (v__ v__ : Z)` is a claim about one variable, and lia proved it."""
    check = checked(PELL, spec({"α": "positive integer", "β": "positive integer"}, [], "α**2 - 61*β**2 != 1"))
    assert len(set(binders(check.coq))) == 2, check.coq
    assert check.verdict != "machine_checked", check.checks


def test_a_renamed_variable_cannot_meet_one_of_the_name_it_is_given() -> None:
    """`R` (Coq's reals) became `v_R`, the name of the other variable: one binder for two."""
    check = falsify(
        "For all reals R and v_R, R^2 + v_R^2 > 2 R v_R.",
        spec({"R": "real", "v_R": "real"}, [], "R**2 + v_R**2 > 2*R*v_R"),
    )
    assert len(set(binders(check.coq))) == 2, check.coq


# -- 2. a vacuity check that fails open ------------------------------------------------------------


@pytest.mark.usefixtures("needs_coq")
def test_hypotheses_no_input_satisfies_prove_nothing_where_the_solver_cannot_say_so() -> None:
    """gcd(a, b) > a + b holds for no positive a, b; the solver cannot state gcd of variables, so
    the vacuity check was skipped, and Coq proves anything from it."""
    prose = "For positive integers a and b with gcd(a, b) > a + b, a = 7."
    script = "intros. pose proof (Z.divide_pos_le (Z.gcd a b) a ltac:(lia) (Z.gcd_divide_l a b)). lia."
    check = checked(
        prose, spec({"a": "positive integer", "b": "positive integer"}, ["gcd(a, b) > a + b"], "a == 7"), script
    )
    assert any(c.checker == "coq" and c.outcome == "proved" for c in check.checks), check.checks  # from nothing
    assert check.verdict != "machine_checked" and check.witness is None
    assert "could hold vacuously" in check.judged.why


@pytest.mark.usefixtures("needs_coq")
def test_a_number_too_large_for_the_solver_loses_neither_sampling_nor_the_vacuity_check() -> None:
    """`factorial(2000)` has 5,736 digits, past Python's limit for turning an integer into text,
    which the solver's encoding reached: the checking process crashed, both its verdicts were lost,
    and Coq proved the statement from its contradictory hypotheses."""
    prose = "For every integer n with n > 2000! and n < 0, n = 5."
    check = checked(prose, spec({"n": "integer"}, ["n > factorial(2000)", "n < 0"], "n == 5"))
    assert check.verdict != "machine_checked", check.checks
    assert not any("checking process failed" in c.detail for c in check.checks), check.checks


def test_a_power_with_a_negative_exponent_is_undefined_for_every_checker() -> None:
    """`2**n` for n < 0 was a fraction to the evaluator and undefined (n ≥ 0) to the solver and Coq;
    where the premises keep n natural, it is undefined for n < 0 to every checker alike."""
    from lemmata.formal.reading import read_statement
    from lemmata.kernel.evaluate import Undefined, evaluate

    statement = read_statement([("n", "natural")], [], "2**n > 0")
    with pytest.raises(Undefined):
        evaluate(statement.conclusion, {"n": -1}, statement.kinds)


@pytest.mark.parametrize(
    "variables, hypotheses, conclusion",
    [
        pytest.param({"n": "integer"}, [], "2**n >= 1", id="an-integer-exponent"),
        pytest.param({"n": "integer"}, ["n > -3"], "2**n >= 1", id="a-bound-that-allows-negative-ones"),
        pytest.param({"n": "positive integer"}, [], "2**(n - 2) >= 1", id="a-difference-below-zero-at-n-1"),
        pytest.param({}, [], "all(2**k >= 1 for k in range(-1, 3))", id="an-index-from-minus-one"),
    ],
)
def test_a_power_whose_exponent_may_be_negative_is_refused_not_checked_on_naturals(
    variables: dict[str, str], hypotheses: list[str], conclusion: str
) -> None:
    """ "For every integer n, 2^n ≥ 1" is false (2^-1 = 1/2), and was machine-checked "where n ≥ 0":
    the solver and Coq state natural exponents only, and the definedness they assumed was a
    hypothesis the statement never made (found by a held-out red team, 2026-12-04). Refused now:
    the statement stays unchecked; the formalizer is told why."""
    check = prove_in_kernel(falsify("For every integer n, 2^n >= 1.", spec(variables, hypotheses, conclusion)))
    assert check.verdict != "machine_checked"
    assert "may be negative" in check.not_formalized


def test_a_real_power_false_at_a_zero_base_is_not_machine_checked_where_the_base_is_positive() -> None:
    """The one definedness condition left that is the checkers' and not mathematics': a real
    exponent is checked "where x > 0", which leaves out 0^0.5 = 0. Nothing proves a real power
    today; this holds the line for the day something does (docs/verification.md)."""
    check = prove_in_kernel(
        falsify("For every nonnegative real x, x^0.5 > 0.", spec({"x": "nonnegative real"}, [], "x**0.5 > 0"))
    )
    assert check.verdict != "machine_checked"


@pytest.mark.parametrize(
    "prose, variables, hypotheses, conclusion",
    [
        pytest.param("For every natural n, 2^n >= 1.", {"n": "natural"}, [], "2**n >= 1", id="a-natural-exponent"),
        pytest.param(
            "For every integer n >= 0, 2^n >= 1.", {"n": "integer"}, ["n >= 0"], "2**n >= 1", id="a-stated-bound"
        ),
        pytest.param(
            "For every integer n > 1, 2^(n-2) >= 1.",
            {"n": "integer"},
            ["n > 1"],
            "2**(n - 2) >= 1",
            id="a-strict-bound-on-an-integer",
        ),
        pytest.param(
            "For every positive integer n, 2^(n-1) >= 1.",
            {"n": "positive integer"},
            [],
            "2**(n - 1) >= 1",
            id="a-positive-domain",
        ),
    ],
)
def test_a_power_whose_premises_keep_the_exponent_natural_is_checked(
    prose: str, variables: dict[str, str], hypotheses: list[str], conclusion: str
) -> None:
    check = prove_in_kernel(falsify(prose, spec(variables, hypotheses, conclusion)))
    assert check.not_formalized == "" and check.verdict == "machine_checked"


# -- 3. printed is not checked ----------------------------------------------------------------------


def test_a_remainder_times_a_number_is_printed_as_it_is_checked() -> None:
    """`a % 2*b` is (a mod 2)·b, and was printed "a mod 2·b": a mod (2b) to a reader, the false
    prose it was meant to state ("a mod 2b ≥ 0" holds; "(a mod 2)·b ≥ 0" does not)."""
    check = falsify(
        "For all integers a and b, a mod 2b ≥ 0.", spec({"a": "integer", "b": "integer"}, [], "a % 2*b >= 0")
    )
    assert "(a mod 2)·b" in check.text and "mod 2·b" not in check.text.replace("(a mod 2)·b", "")
    assert r"( a \bmod 2 ) \cdot b" in check.latex


# -- 4. faithfulness guards that count, not read -------------------------------------------------------

TWIN = "Given $x+y = 7$ and $3x+y = 45$, show that $x^2-y^2 = 218$."
REALS = {"x": "real", "y": "real"}


def test_a_number_parked_in_a_hypothesis_that_says_nothing_is_not_the_statements() -> None:
    """The false twin's 218 in `218 > 0`, the true 217 in the conclusion: every number appeared."""
    parked = spec(REALS, ["x + y == 7", "3*x + y == 45", "218 > 0"], "x**2 - y**2 == 217")
    assert checked(TWIN, parked).verdict != "machine_checked"
    hidden = spec(REALS, ["x + y == 7", "3*x + y == 45", "x - x + 218 > 0"], "x**2 - y**2 == 217")
    assert checked(TWIN, hidden).verdict != "machine_checked"


def test_an_or_that_adds_the_true_value_to_the_false_one_is_refused() -> None:
    added = spec(REALS, ["x + y == 7", "3*x + y == 45"], "x**2 - y**2 == 217 or x**2 - y**2 == 218")
    check = checked(TWIN, added)
    assert check.verdict != "machine_checked" and check.not_formalized, check.checks


def test_a_circular_statement_hidden_in_an_or_is_refused() -> None:
    """ "If a is even, then a + b is even" is false; `(a + b) even ∨ a even` under `a even` is not."""
    prose = "If a is even, then a + b is even."
    circular = spec({"a": "integer", "b": "integer"}, ["a % 2 == 0"], "(a + b) % 2 == 0 or a % 2 == 0")
    check = checked(prose, circular)
    assert check.verdict != "machine_checked" and check.not_formalized, check.checks


def test_the_answer_parked_in_a_hypothesis_is_not_stated() -> None:
    answer = "If $x + y = 7$ and $3x + y = 45$, what is $x^2 - y^2$? Show that it is 218."
    parked = spec(REALS, ["x + y == 7", "3*x + y == 45", "x < 218"], "x**2 - y**2 == 217")
    check = checked(answer, parked)
    assert check.verdict != "machine_checked" and "answer" in check.not_formalized, check.checks


# -- 5. a weaker statement checked for the prose's -------------------------------------------------


def test_hypotheses_the_prose_does_not_state_make_no_machine_checked_lemma() -> None:
    """A held-out task's lemma, as the embedded formalizer wrote it (2026-12-01): `n even and n
    divisible by 3` assumed, "for all integers n" stated; Z3 proved it, and the lemma was verified."""
    prose = "For all integers n, n^3 - n is divisible by 2 and 3."
    weaker = spec({"n": "integer"}, ["n % 2 == 0", "n % 3 == 0"], "(n**3 - n) % 2 == 0 and (n**3 - n) % 3 == 0")
    check = checked(prose, weaker)
    assert check.verdict != "machine_checked" and "remainder" in check.not_formalized, check.checks
    faithful = spec({"n": "integer"}, [], "(n**3 - n) % 2 == 0 and (n**3 - n) % 3 == 0")
    assert falsify(prose, faithful).not_formalized == ""


@pytest.mark.parametrize(
    "prose, hypothesis",
    [
        # Each prose is false (n = 0, or n = -5); the bound makes it true. Found 2026-12-02 by
        # attacking this issue's own rule: the bound was taken as said when the prose compared n
        # with its number in any direction, inside a power (`n^2 > n` read as "2 > n"), or with the
        # sign dropped, and not looked for at all once the prose had a condition word.
        pytest.param("For every integer n, n^2 > n.", "n >= 2", id="the-number-of-a-power"),
        pytest.param("For all integers n < 5, n^2 >= 25.", "n >= 5", id="the-bound-turned-around"),
        pytest.param("For all integers n > -3, n^2 > 4.", "n > 3", id="the-sign-dropped"),
        pytest.param("Let n be an integer. Then n^2 > n.", "n >= 2", id="after-a-condition-word"),
    ],
)
def test_a_bound_the_prose_does_not_say_makes_no_false_statement_machine_checked(prose: str, hypothesis: str) -> None:
    conclusion = prose.split(",")[-1].split("Then")[-1].strip(" .").replace("^", "**")
    check = checked(prose, spec({"n": "integer"}, [hypothesis], conclusion))
    assert check.verdict != "machine_checked" and check.not_formalized.startswith("the formal statement was refused")


def test_a_sign_word_said_of_another_variable_bounds_no_other() -> None:
    """Found 2026-12-02 attacking this rule: "positive" anywhere in the prose admitted `n >= 1`."""
    prose = "For every integer n and every positive real x, n*x > 0."  # false at n = 0
    check = checked(prose, spec({"n": "integer", "x": "positive real"}, ["n >= 1"], "n*x > 0"))
    assert check.verdict != "machine_checked" and "bounds a variable" in check.not_formalized


@pytest.mark.parametrize(
    "prose, variables, hypothesis, conclusion",
    [
        # Each prose is false (x = 1; n = -2; x = -2); found 2026-12-02 attacking this rule: once the
        # prose had a condition word, any hypothesis but a bound or a remainder was taken as its.
        pytest.param(
            "Let x be a real number. Then x^2 + 1 > 2x.",
            {"x": "real"},
            "(x - 1)**2 > 0",
            "x**2 + 1 > 2*x",
            id="a-condition-where-the-prose-gives-only-a-domain",
        ),
        pytest.param(
            "Let n be an integer. Then n^2 = 4 implies n = 2.",
            {"n": "integer"},
            "n == 2",
            "n**2 == 4",
            id="a-value-where-the-prose-gives-only-a-domain",
        ),
        pytest.param(
            "Let x be a real number with x^2 = 4. Then x = 2.",
            {"x": "real"},
            "x > 0",
            "x == 2",
            id="a-sign-beside-a-condition-the-prose-gives",
        ),
        pytest.param(
            "Let x be a real number with x > 0. Then x^2 > x.",
            {"x": "real"},
            "x > 0 and x**3 > x**2",
            "x**2 > x",
            id="a-number-the-prose-does-not-write",
        ),
    ],
)
def test_a_hypothesis_after_a_condition_word_is_still_the_proses_or_refused(
    prose: str, variables: dict[str, str], hypothesis: str, conclusion: str
) -> None:
    check = checked(prose, spec(variables, [hypothesis], conclusion))
    assert check.verdict != "machine_checked" and check.not_formalized.startswith("the formal statement was refused")


@pytest.mark.parametrize(
    "prose, variables, conclusion",
    [
        # Each prose is false (n = -2; x = -1; x = 1/2); found 2026-12-02 attacking this issue's
        # rules: a domain narrower than the prose's restricts as a hypothesis does, unread.
        pytest.param("For every integer n, n^3 >= n.", {"n": "natural"}, "n**3 >= n", id="natural-for-integer"),
        pytest.param("For every real x, x + 1/x >= 2.", {"x": "positive real"}, "x + 1/x >= 2", id="positive-for-real"),
        pytest.param("For all real numbers x, x^2 >= x.", {"x": "integer"}, "x**2 >= x", id="integer-for-real"),
    ],
)
def test_a_domain_narrower_than_the_proses_makes_no_false_statement_machine_checked(
    prose: str, variables: dict[str, str], conclusion: str
) -> None:
    check = checked(prose, spec(variables, [], conclusion))
    assert check.verdict != "machine_checked" and "domain" in check.not_formalized


def test_a_condition_the_prose_states_is_kept() -> None:
    """The README's task: the parity of its two integers is the prose's condition."""
    prose = "The sum of two even integers is even."
    check = falsify(prose, spec({"a": "integer", "b": "integer"}, ["a % 2 == 0", "b % 2 == 0"], "(a + b) % 2 == 0"))
    assert check.not_formalized == "" and check.witness == {"a": "0", "b": "0"}


# -- 6. model answers that crashed the check ---------------------------------------------------------


@pytest.mark.parametrize(
    "conclusion",
    [
        pytest.param(" + ".join(["x"] * 340) + " == 340*x", id="a-sum-of-340-terms"),
        pytest.param("len(k for k in range(5)) == 5", id="len-of-a-generator"),
        pytest.param("(" * 150 + "x" + ")" * 150 + " == x", id="150-parentheses"),
        pytest.param("x == " + "9" * 5000, id="a-5000-digit-number"),
    ],
)
def test_a_malformed_or_huge_answer_is_a_refusal_or_a_check_never_a_crash(conclusion: str) -> None:
    check = falsify("For every integer x, the identity holds.", spec({"x": "integer"}, [], conclusion))
    assert check.not_formalized or check.checks


def test_a_hexadecimal_number_is_not_read_as_a_product() -> None:
    """`0x10` was read as `0*x10`, and `0x10 == 0` machine-checked."""
    check = falsify("Sixteen is 0.", spec({"x10": "integer"}, [], "0x10 == 0"))
    assert check.verdict != "machine_checked" and "decimal" in check.not_formalized


def test_a_defect_of_lemmatas_reached_while_reading_is_a_refusal_not_an_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever a reading of the model's text raises — `len(…)` over a generator raised KeyError
    deep inside, a chain of additions RecursionError — the statement is refused, named as lemmata's
    defect, and the job goes on."""
    from lemmata.formal import checking

    def broken(prose: str, statement: object) -> str:
        raise KeyError("len")

    monkeypatch.setattr(checking, "unfaithful", broken)
    check = falsify("For every integer x, x = x.", spec({"x": "integer"}, [], "x == x"))
    assert "its own defect" in check.not_formalized and check.verdict == "unverified"


# -- a cache on the way to a verdict ---------------------------------------------------------------


@pytest.fixture
def coqc_runs(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The files coqc really ran on, in its box."""
    from lemmata.formal import coq

    runs: list[bytes] = []
    real_run = coq._run_in_box

    def counted(argv: list[str], stdin: bytes, timeout: float) -> object:
        runs.append(stdin)
        return real_run(argv, stdin, timeout)

    monkeypatch.setattr(coq, "_run_in_box", counted)
    return runs


@pytest.mark.usefixtures("needs_coq")
def test_every_kernel_verdict_comes_from_a_coqc_run_of_its_own(coqc_runs: list[bytes]) -> None:
    """On a53e6da a file coqc had accepted once was answered from the user's cache ever after:
    whatever stood in that folder (an entry of an older lemmata whose translation was wrong, one
    left by any program of the user's) stood for Coq's kernel. Now nothing remembered can."""
    from lemmata.formal.coq import check_file, check_script
    from lemmata.kernel.coq_file import coq_source

    commutes = "forall a b : Z, a + b = b + a"
    assert check_script(commutes, "Z", "intros; lia.").proved
    assert check_script(commutes, "Z", "intros; lia.").proved
    source = coq_source(commutes, "Z", "intros; lia.")
    assert check_file(source) == check_file(source) == (None, "")
    assert len(coqc_runs) == 4
