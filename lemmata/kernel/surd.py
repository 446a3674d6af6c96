"""Exact arithmetic in a quadratic field: numbers r + c·√d (r, c rational, d a positive integer
that is not a square), so a witness such as x = 13/2 + 1/2·√73 is confirmed exactly, never by
rounding.

Only what a field has is computed: +, −, ·, /, an integer power, abs, min, max and the six
comparisons. Anything else with such a number (a floor, a square root, %, two different
radicands in one operation, an interval beside it) is Undecided: a witness or counterexample that
needs it confirms nothing. A comparison is decided from signs and squares of rationals: the sign
of r + c·√d is that of r and c when they agree, else that of r² − c²·d, which is not 0 because
d is not a square.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

#: A radicand above this many bits is not tried for square factors (the representation stays
#: exact without them; only two spellings of one radicand then fail to meet).
MAX_RADICAND_BITS = 4_000


#: The longest text read as a value: a record on disk may hold anything, and Python refuses to
#: read an integer of more than 4,300 digits (a ValueError, once a crash of the verdict).
MAX_TEXT = 3_000


class SurdUndecided(ArithmeticError):
    """An operation this field does not compute (evaluate.py raises it as Undecided)."""


@dataclass(frozen=True)
class Surd:
    """r + c·√d with c ≠ 0 and d > 1 not a square: an irrational number, exactly."""

    rational: Fraction
    coefficient: Fraction
    radicand: int

    def __post_init__(self) -> None:
        assert self.coefficient != 0 and self.radicand > 1
        assert math.isqrt(self.radicand) ** 2 != self.radicand

    def sign(self) -> int:
        r, c = self.rational, self.coefficient
        if r >= 0 and c > 0:
            return 1
        if r <= 0 and c < 0:
            return -1
        difference = r * r - c * c * self.radicand  # never 0: d is not a square
        return (1 if difference > 0 else -1) * (1 if r > 0 else -1)

    def bits(self) -> int:
        return sum(
            part.numerator.bit_length() + part.denominator.bit_length() for part in (self.rational, self.coefficient)
        )


Exact = int | Fraction | Surd


def surd(rational: Fraction | int, coefficient: Fraction | int, radicand: int) -> Exact:
    """r + c·√d in its simplest form: a rational when c or d makes it one, square factors of d
    moved into c."""
    rational, coefficient = Fraction(rational), Fraction(coefficient)
    if radicand < 0:
        raise SurdUndecided("the square root of a negative number is not real")
    root = math.isqrt(radicand)
    if coefficient == 0 or root * root == radicand:
        return _normal(rational + coefficient * root)
    outside, inside = _square_part(radicand)
    return Surd(rational, coefficient * outside, inside)


def _element(rational: Fraction, coefficient: Fraction, radicand: int) -> Exact:
    """r + c·√d for a radicand already simplified (an operand's): no factoring on every operation."""
    return _normal(rational) if coefficient == 0 else Surd(rational, coefficient, radicand)


def _square_part(radicand: int) -> tuple[int, int]:
    """(k, m) with radicand = k²·m, the square factors found by trial division (small ones)."""
    if radicand.bit_length() > MAX_RADICAND_BITS:
        return 1, radicand
    outside, inside = 1, radicand
    factor = 2
    while factor * factor <= inside and factor < 100_000:
        while inside % (factor * factor) == 0:
            inside //= factor * factor
            outside *= factor
        factor += 1
    return outside, inside


def _parts(value: Exact, radicand: int) -> tuple[Fraction, Fraction]:
    if isinstance(value, Surd):
        if value.radicand != radicand:
            raise SurdUndecided("numbers of two different quadratic fields")
        return value.rational, value.coefficient
    return Fraction(value), Fraction(0)


def _radicand(args: list[Exact]) -> int:
    for arg in args:
        if isinstance(arg, Surd):
            return arg.radicand
    raise SurdUndecided("no irrational value among the arguments")


def surd_arithmetic(name: str, args: list[Exact]) -> Exact:
    """The field's operations with at least one Surd among `args`; SurdUndecided for any other."""
    d = _radicand(args)
    if name == "neg":
        r, c = _parts(args[0], d)
        return _element(-r, -c, d)
    if name == "abs":
        return surd_arithmetic("neg", args) if sign(args[0]) < 0 else args[0]
    if name == "pow":
        return _power(args[0], args[1])
    if name in ("min", "max"):  # of two or more: every argument weighed
        best = args[0]
        for arg in args[1:]:
            if _at_most(arg, best) == (name == "min") and arg != best:
                best = arg
        return best
    if name not in ("add", "sub", "mul", "truediv"):
        raise SurdUndecided(f"{name} of an irrational value is not computed exactly")
    (a, b), (c, e) = _parts(args[0], d), _parts(args[1], d)
    if name == "add":
        return _element(a + c, b + e, d)
    if name == "sub":
        return _element(a - c, b - e, d)
    if name == "mul":
        return _element(a * c + b * e * d, a * e + b * c, d)
    norm = c * c - e * e * d  # (c + e√d)(c − e√d): 0 only when c + e√d is 0
    if norm == 0:
        raise ZeroDivisionError("division by 0")
    return _element((a * c - b * e * d) / norm, (b * c - a * e) / norm, d)


def _power(base: Exact, exponent: Exact) -> Exact:
    if isinstance(exponent, Surd) or Fraction(exponent).denominator != 1:
        raise SurdUndecided("a power with an irrational or fractional exponent is not computed exactly")
    n = int(exponent)
    if n < 0:  # √2⁻² is 1/2: the power it inverts may be rational
        inverse = _power(base, -n)
        if isinstance(inverse, Surd):
            return surd_arithmetic("truediv", [1, inverse])
        if inverse == 0:
            raise ZeroDivisionError("division by 0")
        return _normal(1 / Fraction(inverse))
    if n > 4096:
        raise SurdUndecided("a large power of an irrational value is not computed exactly")
    result: Exact = 1
    square = base
    while n:
        if n & 1:
            result = _times(result, square)
        n >>= 1
        if n:
            square = _times(square, square)
    return result


def _times(left: Exact, right: Exact) -> Exact:
    if isinstance(left, Surd) or isinstance(right, Surd):
        return surd_arithmetic("mul", [left, right])
    return _normal(Fraction(left) * Fraction(right))


def sign(value: Exact) -> int:
    if isinstance(value, Surd):
        return value.sign()
    return (value > 0) - (value < 0)


def _at_most(left: Exact, right: Exact) -> bool:
    if isinstance(left, Surd) or isinstance(right, Surd):
        return compare_exact("le", left, right)
    return Fraction(left) <= Fraction(right)


def compare_exact(name: str, left: Exact, right: Exact) -> bool:
    """A comparison with at least one Surd, decided exactly."""
    difference = sign(surd_arithmetic("sub", [left, right]))
    return {
        "eq": difference == 0,
        "ne": difference != 0,
        "lt": difference < 0,
        "le": difference <= 0,
        "gt": difference > 0,
        "ge": difference >= 0,
    }[name]


def surd_text(value: Surd) -> str:
    """As shown and read back by read_surd: `13/2 + 1/2*sqrt(73)`, `-sqrt(2)`."""
    magnitude = abs(value.coefficient)
    root = f"sqrt({value.radicand})" if magnitude == 1 else f"{_fraction_text(magnitude)}*sqrt({value.radicand})"
    if value.rational == 0:
        return root if value.coefficient > 0 else f"-{root}"
    return f"{_fraction_text(value.rational)} {'+' if value.coefficient > 0 else '-'} {root}"


_SURD = re.compile(r"^(?:(-?\d+(?:/\d+)?) ([+-]) |(-)?)(?:(\d+(?:/\d+)?)\*)?sqrt\((\d+)\)$")


def read_surd(text: str) -> Surd | None:
    """The Surd surd_text wrote, or None for any other text (a non-canonical spelling included)."""
    found = _SURD.match(text.strip()) if len(text) <= MAX_TEXT else None
    if found is None:
        return None
    rational, between, leading, magnitude, radicand = found.groups()
    coefficient = Fraction(magnitude or 1)
    if (between or leading or "+") == "-":
        coefficient = -coefficient
    value = surd(Fraction(rational or 0), coefficient, int(radicand))
    if not isinstance(value, Surd) or surd_text(value) != text.strip():
        return None
    return value


def _fraction_text(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def _normal(value: Fraction) -> int | Fraction:
    return value.numerator if value.denominator == 1 else value
