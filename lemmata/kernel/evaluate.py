"""Exact evaluation of the formal language at given values: the executable predicate.

Integers are Python integers and reals rationals (`Fraction`), so `1/3 + 1/6 == 1/2` is decided
exactly, never by rounding. The square root of a rational is computed exactly in its quadratic
field, r + c·√d (surd.py), and so is a solver's quadratic irrational. Where the field does not
reach (a floor, two radicands, a root of a root) a surd becomes a narrow interval of rationals
around it, as does a square root too large to factor; a comparison the interval cannot decide (is
sqrt(2) + sqrt(3) equal to a rational 2**-100 away?) is `Undecided`, never a guess. Nothing here
calls Python's `eval`: the tree is walked.

An evaluation that reaches an operation outside its domain raises `Undefined`: the statement
says nothing there. Where each operation is defined is semantics.requirements, the same table
the solver's and Coq's definedness conditions are stated from. One whose numbers would grow past
what a check can afford (2**(10**9), 5000!) raises `TooLarge`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import cast

from lemmata.kernel.semantics import Kind, requirements
from lemmata.kernel.surd import Surd, SurdUndecided, compare_exact, surd, surd_arithmetic
from lemmata.kernel.tree import Const, Expr, Op, Reduce, Var

#: The largest integer a check computes, in bits (a 60,000-digit number); past it: TooLarge.
MAX_BITS = 200_000
#: Terms of sums, products, all and any one evaluation may visit.
MAX_STEPS = 20_000
MAX_FACTORIAL = 5_000
#: An irrational square root is an interval this narrow (2**-SQRT_BITS relative).
SQRT_BITS = 96
#: A square root whose radicand (pq for p/q) has more bits is an interval, not a surd: finding its
#: square factors would cost more than a sampled point is worth.
MAX_EXACT_RADICAND_BITS = 24


class Undefined(ArithmeticError):
    """An operation outside its domain: the statement says nothing at these values."""


class Undecided(ArithmeticError):
    """Interval arithmetic could not decide a comparison (or a floor) at these values."""


class TooLarge(ArithmeticError):
    """The numbers of this evaluation would grow past what a check can afford."""


@dataclass(frozen=True)
class Interval:
    """A real number known to lie in [low, high] (low < high; an exact number is a Fraction)."""

    low: Fraction
    high: Fraction

    def __post_init__(self) -> None:
        assert self.low <= self.high


#: A number outside a quadratic field: what the exact and interval arithmetic below compute.
Plain = int | Fraction | Interval
Number = Plain | Surd
Value = bool | Number


def evaluate(expr: Expr, values: Mapping[str, Value], kinds: Mapping[str, Kind]) -> Value:
    """The value of `expr` at `values`, its variables of `kinds` (a real variable may hold an
    integer value: its kind, not its value, says which rules apply); Undefined, Undecided or
    TooLarge when there is none to give."""
    return _Evaluation(values, dict(kinds)).value(expr)


class _Evaluation:
    def __init__(self, values: Mapping[str, Value], kinds: dict[str, Kind]) -> None:
        self.values = dict(values)
        self.kinds = kinds
        self.steps = 0

    def value(self, expr: Expr) -> Value:
        if isinstance(expr, Const):
            return expr.value
        if isinstance(expr, Var):
            return self.values[expr.name]
        if isinstance(expr, Reduce):
            return self._reduce(expr)
        return self._operation(expr)

    def _operation(self, expr: Op) -> Value:
        name, args = expr.name, expr.args
        if name in ("true", "false"):
            return name == "true"
        if name in ("and", "or", "implies", "not", "iff", "ite"):
            return self._logic(name, args)
        values = [self.value(arg) for arg in args]
        for position, relation, bound in requirements(expr, self.kinds):
            if not _meets(_number(values[position]), relation, bound):
                raise Undefined(f"{_SPELLED.get(name, name)} outside its domain")
        if name in COMPARE:  # even and odd have one argument
            return compare(name, *(_number(value) for value in values))
        return arithmetic(name, [_number(v) for v in values])

    def _logic(self, name: str, args: tuple[Expr, ...]) -> Value:
        if name == "not":
            return not self._truth(args[0])
        if name == "and":
            return all(self._truth(arg) for arg in args)
        if name == "or":
            return any(self._truth(arg) for arg in args)
        if name == "implies":
            return (not self._truth(args[0])) or self._truth(args[1])
        if name == "iff":
            return self._truth(args[0]) == self._truth(args[1])
        return self.value(args[1]) if self._truth(args[0]) else self.value(args[2])

    def _truth(self, expr: Expr) -> bool:
        value = self.value(expr)
        assert isinstance(value, bool)
        return value

    def _reduce(self, expr: Reduce) -> Value:
        low, high = self.value(expr.low), self.value(expr.high)
        assert isinstance(low, int) and isinstance(high, int)
        if high - low > MAX_STEPS - self.steps:
            raise TooLarge(f"a {expr.kind} over {max(0, high - low)} terms")
        outer = self.values.get(expr.index)
        outer_kind = self.kinds.get(expr.index)
        self.kinds[expr.index] = "int"
        total: Value = {"sum": 0, "prod": 1, "all": True, "any": False}[expr.kind]
        try:
            for index in range(low, high):
                self.steps += 1
                self.values[expr.index] = index
                if expr.condition is not None and not self._truth(expr.condition):
                    continue
                if expr.kind == "all" and not self._truth(expr.body):
                    return False
                if expr.kind == "any" and self._truth(expr.body):
                    return True
                if expr.kind in ("sum", "prod"):
                    term = _number(self.value(expr.body))
                    total = arithmetic("add" if expr.kind == "sum" else "mul", [_number(total), term])
        finally:
            if outer is None:
                self.values.pop(expr.index, None)
            else:
                self.values[expr.index] = outer
            if outer_kind is None:
                self.kinds.pop(expr.index, None)
            else:
                self.kinds[expr.index] = outer_kind
        return total


def _number(value: Value) -> Number:
    assert not isinstance(value, bool)
    return value


#: How the undefined operation is named in the reason.
_SPELLED = {"truediv": "division", "floordiv": "//", "mod": "%", "pow": "a power", "sqrt": "a square root"}


def _meets(value: Number, relation: str, bound: int) -> bool:
    """Whether `value` meets a requirement; Undecided when an irrational value is too close to say."""
    return compare(relation, value, bound)


# -- arithmetic -----------------------------------------------------------------------------------

COMPARE = ("eq", "ne", "lt", "le", "gt", "ge", "divides", "even", "odd")


def compare(name: str, left: Number, right: Number | None = None) -> bool:
    if name in ("divides", "even", "odd"):
        return _divisibility(name, left, right)
    assert right is not None
    if isinstance(left, Surd) or isinstance(right, Surd):
        if not isinstance(left, Interval) and not isinstance(right, Interval):
            try:
                return compare_exact(name, left, right)
            except SurdUndecided:
                pass  # two fields: their intervals may still be apart
        left, right = _enclosure(left), _enclosure(right)
    if not isinstance(left, Interval) and not isinstance(right, Interval):
        return {
            "eq": left == right,
            "ne": left != right,
            "lt": left < right,
            "le": left <= right,
            "gt": left > right,
            "ge": left >= right,
        }[name]
    a, b = _bounds(left), _bounds(right)
    if a[1] < b[0]:  # left entirely below right
        order = -1
    elif b[1] < a[0]:
        order = 1
    else:
        raise Undecided("an irrational value is too close to compare")
    return {"eq": False, "ne": True, "lt": order < 0, "le": order < 0, "gt": order > 0, "ge": order > 0}[name]


def _divisibility(name: str, left: Number, right: Number | None) -> bool:
    if name == "divides":
        divisor, multiple = _integer(left), _integer(right if right is not None else 0)
        if divisor == 0:
            raise Undefined("divides(0, n)")
        return multiple % divisor == 0
    parity = _integer(left) % 2
    return parity == 0 if name == "even" else parity == 1


def arithmetic(name: str, args: list[Number]) -> Number:
    if any(isinstance(arg, Surd) for arg in args):
        value = _in_the_field(name, args)
        if value is not None:
            if isinstance(value, Surd) and value.bits() > MAX_BITS:
                raise TooLarge(f"a number of {value.bits()} bits")
            return value
        args = [_enclosure(arg) if isinstance(arg, Surd) else arg for arg in args]
    plain = cast("list[Plain]", args)  # no Surd among them: computed in the field or enclosed above
    if any(isinstance(arg, Interval) for arg in plain) and name not in ("floor", "ceil", "ite"):
        return _interval_arithmetic(name, [_bounds(arg) for arg in plain])
    return _exact_arithmetic(name, plain)


def _exact_arithmetic(name: str, args: list[Plain]) -> Number:
    if name == "pow":
        return _power(args[0], args[1])
    if name == "sqrt":
        return _exact_sqrt(args[0])
    if name in ("floor", "ceil"):
        return _rounded(name, args[0])
    values: list[int | Fraction] = [a for a in args if not isinstance(a, Interval)]
    if name == "add":
        return _checked(values[0] + values[1])
    if name == "sub":
        return _checked(values[0] - values[1])
    if name == "mul":
        return _checked(values[0] * values[1])
    if name == "neg":
        return -values[0]
    if name == "abs":
        return -values[0] if values[0] < 0 else values[0]
    if name == "min":
        return min(values)
    if name == "max":
        return max(values)
    if name == "truediv":
        if values[1] == 0:
            raise Undefined("division by 0")
        return _normal(Fraction(values[0]) / Fraction(values[1]))
    if name in ("floordiv", "mod"):
        a, b = _integer(values[0]), _integer(values[1])
        if b == 0:
            raise Undefined(f"{'//' if name == 'floordiv' else '%'} by 0")
        return a // b if name == "floordiv" else a % b
    if name == "gcd":
        return math.gcd(_integer(values[0]), _integer(values[1]))
    if name == "lcm":
        return math.lcm(_integer(values[0]), _integer(values[1]))
    if name == "factorial":
        n = _integer(values[0])
        if n < 0:
            raise Undefined("factorial of a negative number")
        if n > MAX_FACTORIAL:
            raise TooLarge(f"{n}!")
        return math.factorial(n)
    raise ValueError(f"no arithmetic for {name}")


def _power(base: Plain, exponent: Plain) -> Plain:
    assert not isinstance(base, Interval) and not isinstance(exponent, Interval)
    if not isinstance(exponent, int) and exponent.denominator != 1:
        raise Undecided("a power with a fractional exponent is not computed exactly")
    n = int(exponent)
    assert not isinstance(base, Interval)
    if n < 0:
        if base == 0:
            raise Undefined("0 to a negative power")
        inverse = _power(base, -n)
        assert not isinstance(inverse, Interval)
        return _normal(Fraction(1) / Fraction(inverse))
    magnitude = abs(Fraction(base))
    if magnitude not in (0, 1):
        bits = max(magnitude.numerator.bit_length(), magnitude.denominator.bit_length())
        if bits * n > MAX_BITS:
            raise TooLarge(f"a power of about {bits * n} bits")
    return _normal(Fraction(base) ** n) if isinstance(base, Fraction) else base**n


def _exact_sqrt(value: Plain) -> Number:
    """√v exactly: a rational, or p/q's root √(pq)/q in its quadratic field, so (13 − √131)/4 is
    confirmed a root of 2x² − 13x + 19/4 exactly (mathd_algebra_116: an interval cannot tell
    0 from almost 0). A radicand too large to look for square factors cheaply, sampled values
    being many, stays the interval it always was."""
    assert not isinstance(value, Interval)
    if value < 0:
        raise Undefined("square root of a negative number")
    exact = Fraction(value)
    radicand = exact.numerator * exact.denominator
    if radicand.bit_length() > MAX_EXACT_RADICAND_BITS:
        return _sqrt(value)
    return surd(0, Fraction(1, exact.denominator), radicand)


def _sqrt(value: Plain) -> Plain:
    assert not isinstance(value, Interval)
    if value < 0:
        raise Undefined("square root of a negative number")
    exact = Fraction(value)
    numerator, denominator = math.isqrt(exact.numerator), math.isqrt(exact.denominator)
    if numerator * numerator == exact.numerator and denominator * denominator == exact.denominator:
        return _normal(Fraction(numerator, denominator))
    # floor(sqrt(v) * 2**k) / 2**k and one step above bound sqrt(v) from both sides.
    scale = 1 << SQRT_BITS
    root = math.isqrt(exact.numerator * scale * scale // exact.denominator)
    return Interval(Fraction(root, scale), Fraction(root + 1, scale))


def _rounded(name: str, value: Plain) -> int:
    if isinstance(value, Interval):
        low = math.floor(value.low) if name == "floor" else math.ceil(value.low)
        high = math.floor(value.high) if name == "floor" else math.ceil(value.high)
        if low != high:
            raise Undecided(f"{name} of an irrational value too close to an integer")
        return low
    return math.floor(value) if name == "floor" else math.ceil(value)


def _interval_arithmetic(name: str, bounds: list[tuple[Fraction, Fraction]]) -> Plain:
    (a, b) = bounds[0]
    if name == "neg":
        return _interval(-b, -a)
    if name == "abs":
        if a >= 0:
            return _interval(a, b)
        if b <= 0:
            return _interval(-b, -a)
        return _interval(Fraction(0), max(-a, b))
    if name == "sqrt":
        if b < 0:
            raise Undefined("square root of a negative number")
        if a < 0:
            raise Undecided("the square root of a value too close to 0")
        low, high = _sqrt(a), _sqrt(b)
        return _interval(_bounds(low)[0], _bounds(high)[1])
    if name == "pow":
        return _interval_power(bounds[0], bounds[1])
    (c, d) = bounds[1]
    if name == "add":
        return _interval(a + c, b + d)
    if name == "sub":
        return _interval(a - d, b - c)
    if name == "mul":
        products = (a * c, a * d, b * c, b * d)
        return _interval(min(products), max(products))
    if name == "truediv":
        if c <= 0 <= d:
            if c == d == 0:
                raise Undefined("division by 0")
            raise Undecided("a divisor too close to 0")
        return _interval_arithmetic("mul", [(a, b), (1 / d, 1 / c)])
    if name == "min":
        return _interval(min(a, c), min(b, d))
    if name == "max":
        return _interval(max(a, c), max(b, d))
    raise Undecided(f"{name} of an irrational value is not computed")


def _interval_power(base: tuple[Fraction, Fraction], exponent: tuple[Fraction, Fraction]) -> Plain:
    if exponent[0] != exponent[1] or exponent[0].denominator != 1:
        raise Undecided("a power with an irrational or fractional exponent is not computed")
    n = int(exponent[0])
    if n < 0:
        return _interval_arithmetic(
            "truediv", [(Fraction(1), Fraction(1)), _bounds(_interval_power(base, (-exponent[0],) * 2))]
        )
    if n > 4096:
        raise TooLarge("a large power of an irrational value")
    low, high = base
    powers = (low**n, high**n)
    if n % 2 == 0 and low < 0 < high:
        return _interval(Fraction(0), max(powers))
    return _interval(min(powers), max(powers))


def _in_the_field(name: str, args: list[Number]) -> Number | None:
    """`name` of `args` in their quadratic field; None where the field does not compute it (a
    floor, two radicands, an interval beside it): the caller then encloses each surd in an
    interval, which decides less but never wrongly."""
    if any(isinstance(arg, Interval) for arg in args):
        return None
    try:
        return surd_arithmetic(name, cast("list[int | Fraction | Surd]", args))
    except SurdUndecided:
        return None


def _enclosure(value: Number) -> Plain:
    """A surd r + c·√d as the interval r + c·[√d's bounds]; any other value as it is."""
    if not isinstance(value, Surd):
        return value
    root = _sqrt(value.radicand)
    low, high = _bounds(root)
    ends = (value.rational + value.coefficient * low, value.rational + value.coefficient * high)
    return _interval(min(ends), max(ends))


def _interval(low: Fraction, high: Fraction) -> Plain:
    return _normal(low) if low == high else Interval(low, high)


def _bounds(value: Plain) -> tuple[Fraction, Fraction]:
    if isinstance(value, Interval):
        return value.low, value.high
    exact = Fraction(value)
    return exact, exact


def _integer(value: Number) -> int:
    if isinstance(value, int):
        return value
    if isinstance(value, Fraction) and value.denominator == 1:
        return int(value)
    raise Undecided("an integer operation on a value that is not an integer")


def _normal(value: Fraction) -> int | Fraction:
    return value.numerator if value.denominator == 1 else value


def _checked(value: int | Fraction) -> int | Fraction:
    size = (
        value.bit_length() if isinstance(value, int) else value.numerator.bit_length() + value.denominator.bit_length()
    )
    if size > MAX_BITS:
        raise TooLarge(f"a number of {size} bits")
    return _normal(value) if isinstance(value, Fraction) else value
