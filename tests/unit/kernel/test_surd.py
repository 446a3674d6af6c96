"""Exact arithmetic in a quadratic field (kernel/surd.py): a witness or counterexample the solver
gives as r + c·√d is confirmed exactly, and anything the field does not compute confirms nothing.

The arithmetic is tested differentially against Python's decimal arithmetic at 120 digits: the
two must agree on every value to far more digits than any rounding could explain, and on every
comparison the decimals can decide."""

from __future__ import annotations

from decimal import Decimal, localcontext
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lemmata.artifacts import FormalCheck, MachineCheck
from lemmata.formal import worker
from lemmata.formal.reading import read_statement
from lemmata.kernel.admission import admit
from lemmata.kernel.evaluate import Interval, Undecided, arithmetic, compare, evaluate
from lemmata.kernel.render import value_text
from lemmata.kernel.surd import Surd, read_surd, surd, surd_text
from lemmata.kernel.verdict import exact_values, formal_verdict
from support.formal import SAMPLED, solved, spec

DIGITS = 120

#: mathd_algebra_510 of miniF2F: the only inputs satisfying its hypotheses are (13 ± √73)/2.
SUM_AND_PRODUCT = spec({"x": "real", "y": "real"}, ["x + y == 13", "x*y == 24"], "sqrt(x**2 + y**2) == 11")
SUM_AND_PRODUCT_PROSE = "For real numbers x and y with x + y = 13 and xy = 24, the square root of x² + y² is 11."


def decimal(value: int | Fraction | Surd) -> Decimal:
    if isinstance(value, Surd):
        r, c = value.rational, value.coefficient
        return decimal(r) + Decimal(c.numerator) / Decimal(c.denominator) * Decimal(value.radicand).sqrt()
    exact = Fraction(value)
    return Decimal(exact.numerator) / Decimal(exact.denominator)


fractions = st.fractions(min_value=-1000, max_value=1000, max_denominator=50)
radicands = st.integers(min_value=2, max_value=400).filter(lambda d: int(d**0.5) ** 2 != d)


@st.composite
def numbers(draw: st.DrawFn, radicand: int) -> int | Fraction | Surd:
    value = surd(draw(fractions), draw(fractions), radicand)
    return value


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), radicands, st.sampled_from(["add", "sub", "mul", "truediv", "pow", "neg", "abs", "min", "max"]))
def test_the_fields_arithmetic_agrees_with_decimals(data: st.DataObject, d: int, name: str) -> None:
    left, right = data.draw(numbers(d)), data.draw(numbers(d))
    exponent = data.draw(st.integers(min_value=-3, max_value=6))
    args = {"pow": [left, exponent], "neg": [left], "abs": [left]}.get(name, [left, right])
    if not any(isinstance(arg, Surd) for arg in args):
        return  # rationals only: evaluate.py's exact arithmetic, tested elsewhere
    with localcontext() as context:
        context.prec = DIGITS
        a, b = decimal(left), decimal(right)
        if name == "truediv" and b == 0:
            return
        expected = {
            "add": lambda: a + b,
            "sub": lambda: a - b,
            "mul": lambda: a * b,
            "truediv": lambda: a / b,
            "pow": lambda: a**exponent,
            "neg": lambda: -a,
            "abs": lambda: abs(a),
            "min": lambda: min(a, b),
            "max": lambda: max(a, b),
        }[name]()
        got = decimal(arithmetic(name, args))  # type: ignore[arg-type]
        assert abs(got - expected) <= abs(expected) * Decimal(10) ** (20 - DIGITS) + Decimal(10) ** (30 - DIGITS)


@settings(max_examples=300, deadline=None)
@given(st.data(), radicands, st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge"]))
def test_comparisons_agree_with_decimals_wherever_decimals_can_tell(data: st.DataObject, d: int, name: str) -> None:
    left, right = data.draw(numbers(d)), data.draw(numbers(d))
    if not isinstance(left, Surd) and not isinstance(right, Surd):
        return
    with localcontext() as context:
        context.prec = DIGITS
        difference = decimal(left) - decimal(right)
    if abs(difference) < Decimal(10) ** (10 - DIGITS):  # numbers this small this close are equal
        assert left == right and compare(name, left, right) is (name in ("eq", "le", "ge"))
        return
    order = 1 if difference > 0 else -1
    expected = {"eq": False, "ne": True, "lt": order < 0, "le": order < 0, "gt": order > 0, "ge": order > 0}[name]
    assert compare(name, left, right) is expected


def test_a_number_with_a_square_part_or_none_is_written_simplest() -> None:
    assert surd(1, 2, 8) == Surd(Fraction(1), Fraction(4), 2)  # 1 + 2√8 = 1 + 4√2
    assert surd(3, 5, 49) == 38 and surd(Fraction(1, 2), 0, 7) == Fraction(1, 2)
    assert arithmetic("mul", [surd(0, 1, 2), surd(0, 1, 2)]) == 2  # √2·√2 is the integer 2
    assert arithmetic("sub", [surd(1, 1, 3), surd(0, 1, 3)]) == 1


def test_the_sign_of_a_near_miss_is_exact() -> None:
    """√2 − 1.41421356237 is positive and √2 − 1.41421356238 negative: decided by squares, not digits."""
    below, above = Fraction(141421356237, 10**11), Fraction(141421356238, 10**11)
    assert compare("gt", surd(0, 1, 2), below) and compare("lt", surd(0, 1, 2), above)
    assert compare("ne", surd(-below, 1, 2), 0)


def test_beyond_the_field_a_surd_is_enclosed_and_decides_only_what_its_interval_decides() -> None:
    """A floor, a root of a root, two radicands: computed on √d's interval (96 bits), so what the
    interval decides is decided and the rest stays Undecided, never a guess."""
    root_two, root_three = surd(0, 1, 2), surd(0, 1, 3)
    assert arithmetic("floor", [arithmetic("mul", [root_two, 10])]) == 14
    assert compare("lt", root_two, root_three)  # two fields, far apart
    fourth_root = arithmetic("sqrt", [root_two])
    assert isinstance(fourth_root, Interval)  # 2^(1/4) = 1.189207...
    assert Fraction(118920, 10**5) < fourth_root.low < fourth_root.high < Fraction(118921, 10**5)
    assert isinstance(arithmetic("add", [root_two, Interval(Fraction(1), Fraction(2))]), Interval)
    for name, args in [
        ("mod", [root_two, 2]),
        ("pow", [2, root_two]),
    ]:
        with pytest.raises(Undecided):
            arithmetic(name, args)  # type: ignore[arg-type]
    both = arithmetic("add", [root_two, root_three])
    assert isinstance(both, Interval)
    with pytest.raises(Undecided):  # √2 + √3 against a rational inside its interval: no verdict
        compare("eq", both, (both.low + both.high) / 2)
    with pytest.raises(Undecided):
        compare("even", root_two)


def test_the_square_root_of_a_rational_is_exact() -> None:
    """mathd_algebra_116: (13 − √131)/4 is a root of 2x² − 13x + 19/4, exactly 0, where an interval
    could not tell 0 from almost 0 and the true statement's witness stayed unconfirmed."""
    x = arithmetic("truediv", [arithmetic("sub", [13, arithmetic("sqrt", [131])]), 4])
    assert x == surd(Fraction(13, 4), Fraction(-1, 4), 131)
    quadratic = arithmetic("sub", [arithmetic("mul", [2, arithmetic("pow", [x, 2])]), arithmetic("mul", [13, x])])
    assert arithmetic("add", [quadratic, Fraction(19, 4)]) == 0
    assert compare("ne", arithmetic("add", [quadratic, Fraction(5)]), 0)
    assert arithmetic("sqrt", [Fraction(8, 3)]) == surd(0, Fraction(2, 3), 6)  # √(8/3) = √24/3 = 2√6/3
    assert arithmetic("sqrt", [Fraction(9, 4)]) == Fraction(3, 2)
    assert compare("eq", arithmetic("sqrt", [8]), arithmetic("mul", [2, arithmetic("sqrt", [2])]))
    huge = arithmetic("sqrt", [2**40 + 1])  # too large to factor on every sampled point: an interval
    assert isinstance(huge, Interval)


def test_only_the_canonical_text_is_read_back() -> None:
    for value in (
        surd(Fraction(13, 2), Fraction(1, 2), 73),
        surd(0, -1, 2),
        surd(-1, 3, 5),
        surd(0, Fraction(2, 3), 6),
    ):
        assert isinstance(value, Surd) and read_surd(surd_text(value)) == value
        assert value_text(value) == surd_text(value)
    assert surd_text(surd(Fraction(13, 2), Fraction(-1, 2), 73)) == "13/2 - 1/2*sqrt(73)"
    for text in (
        "1/2*sqrt(73) + 13/2",
        "sqrt(4)",
        "0 + sqrt(2)",
        "13/2 + 2/4*sqrt(73)",
        "1*sqrt(2)",
        "sqrt(8)",
        "sqrt(-2)",
        "1 + sqrt(2) + 1",
        "1.5 + sqrt(2)",
        "sqrt (2)",
    ):
        assert read_surd(text) is None, text
    # A record on disk may hold anything: digits past Python's int-reading limit are no value, not a crash.
    assert read_surd("1 + sqrt(" + "7" * 5000 + ")") is None
    assert read_surd("1 + " + "3" * 5000 + "*sqrt(2)") is None


def test_a_real_takes_a_surd_and_an_integer_does_not() -> None:
    statement = read_statement([("n", "integer"), ("x", "real")], [], "n + x > 0")
    assert exact_values(statement, {"n": "1", "x": "1 - sqrt(2)"}) == {"n": 1, "x": surd(1, -1, 2)}
    assert exact_values(statement, {"n": "sqrt(2)", "x": "0"}) is None


def test_the_solvers_quadratic_witness_is_confirmed_and_a_proof_from_it_counts() -> None:
    statement = read_statement([("x", "real"), ("y", "real")], SUM_AND_PRODUCT.hypotheses, SUM_AND_PRODUCT.conclusion)
    report = worker.check(statement, 0.5, 10.0)
    assert report["witness"] == {"x": "13/2 + 1/2*sqrt(73)", "y": "13/2 - 1/2*sqrt(73)"} or report["witness"] == {
        "x": "13/2 - 1/2*sqrt(73)",
        "y": "13/2 + 1/2*sqrt(73)",
    }
    assert [check["outcome"] for check in report["checks"]] == ["inconclusive", "proved"]
    admitted = admit(statement)
    check = FormalCheck(
        prose=SUM_AND_PRODUCT_PROSE,
        spec=SUM_AND_PRODUCT,
        text=admitted.text,
        latex=admitted.latex,
        checks=[SAMPLED.model_copy(update={"outcome": "inconclusive", "instances": 0}), solved(SUM_AND_PRODUCT)],
        witness=report["witness"],
    )
    judged = formal_verdict(check)
    assert judged.word == "machine_checked" and dict(judged.witness) == report["witness"]


def test_a_surd_that_misses_a_hypothesis_witnesses_nothing() -> None:
    admitted = admit(
        read_statement([("x", "real"), ("y", "real")], SUM_AND_PRODUCT.hypotheses, SUM_AND_PRODUCT.conclusion)
    )
    for wrong in (
        {"x": "13/2 + 1/2*sqrt(74)", "y": "13/2 - 1/2*sqrt(74)"},  # the sum holds, the product does not
        {"x": "13/2 + 1/2*sqrt(73)", "y": "13/2 + 1/2*sqrt(73)"},  # both the same root
        {"x": "13/2 + 1/2*sqrt(73)", "y": "≈3.227998"},
    ):
        check = FormalCheck(
            prose=SUM_AND_PRODUCT_PROSE,
            spec=SUM_AND_PRODUCT,
            text=admitted.text,
            latex=admitted.latex,
            checks=[solved(SUM_AND_PRODUCT)],
            witness=wrong,
        )
        assert formal_verdict(check).word == "unverified", wrong


def test_an_irrational_counterexample_refutes_only_once_confirmed_exactly() -> None:
    """x² + y² is exactly 121 at the roots: a twin saying 122 is refuted there, by exact evaluation."""
    twin = read_statement([("x", "real"), ("y", "real")], SUM_AND_PRODUCT.hypotheses, "x**2 + y**2 == 122")
    solver = next(check for check in worker.check(twin, 0.5, 10.0)["checks"] if check["checker"] == "z3")
    assert solver["outcome"] == "refuted"
    values = exact_values(twin, solver["counterexample"])
    assert values is not None and evaluate(twin.conclusion, values, twin.kinds) is False
    holds = read_statement([("x", "real"), ("y", "real")], SUM_AND_PRODUCT.hypotheses, "x**2 + y**2 == 121")
    assert not any(check["outcome"] == "refuted" for check in worker.check(holds, 0.5, 10.0)["checks"]), (
        "a true statement refuted"
    )


def test_a_root_of_a_cubic_stays_an_interval_and_confirms_nothing() -> None:
    cube = read_statement([("x", "real")], ["x**3 == 2"], "x > 1")
    report = worker.check(cube, 0.5, 10.0)
    assert report["witness"] is None  # ∛2 is not in a quadratic field: no exact witness
    assert MachineCheck.model_validate(report["checks"][-1]).outcome == "proved"


@pytest.mark.parametrize(
    "name, args, expected",
    [
        pytest.param("min", [3, 5, surd(0, 1, 2)], surd(0, 1, 2), id="min-the-surd-last"),
        pytest.param("max", [surd(0, 1, 2), 1, 7], 7, id="max-a-rational-last"),
        pytest.param("min", [Fraction(3, 2), surd(0, 1, 2), 2], surd(0, 1, 2), id="min-the-surd-between"),
        pytest.param("max", [2, 1, surd(1, 1, 3)], surd(1, 1, 3), id="max-of-three"),
    ],
)
def test_min_and_max_of_more_than_two_weigh_every_argument(name: str, args: list, expected: object) -> None:
    """The differential bench's 5,000 statements (2026-12-03) stopped on min(a, b, c) with a surd
    third: the first two rationals were compared as if one were a surd (a crash), and had they been
    compared, c would never have been: min(3, 5, √2) would have been 3."""
    assert arithmetic(name, args) == expected
