"""A formal statement the kernel checks: typed variables, each universally quantified over its
domain, hypotheses and a conclusion, with the conditions under which it is defined.

`Statement` is built by the reading of a model's text (lemmata/formal/reading.py, outside the
kernel) and by the kernel's readback of its own rendering; `typed` is the kernel's admission of
either: a statement that fails it is refused, with the reason, and never checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, get_args

from lemmata.kernel.definedness import definedness
from lemmata.kernel.expansion import expand_reductions
from lemmata.kernel.exponents import check_exponents, stated_bounds
from lemmata.kernel.semantics import Kind, kind_of
from lemmata.kernel.tree import (
    Const,
    Expr,
    FormalError,
    Op,
    Reduce,
    Var,
    bounded,
    conjunction,
    free_variables,
    walk,
)

#: The domains a variable may have, as the formalizer's grammar offers them.
Domain = Literal[
    "integer", "natural", "positive integer", "nonzero integer",
    "real", "positive real", "nonnegative real", "nonzero real", "rational",
]  # fmt: skip
DOMAINS: tuple[Domain, ...] = get_args(Domain)
KIND_OF_DOMAIN: dict[Domain, Kind] = {
    "integer": "int",
    "natural": "int",
    "positive integer": "int",
    "nonzero integer": "int",
    "real": "real",
    "positive real": "real",
    "nonnegative real": "real",
    "nonzero real": "real",
    "rational": "real",
}
#: A domain beyond its kind, as a bound on the variable.
DOMAIN_BOUNDS: dict[Domain, tuple[str, int]] = {
    "natural": ("ge", 0),
    "positive integer": ("ge", 1),
    "positive real": ("gt", 0),
    "nonnegative real": ("ge", 0),
    # "For all nonzero reals x and y": the embedded formalizer, offered no such domain, declared
    # them nonnegative (miniF2F's amc12a_2017_p2 and mathd_algebra_89, 2026-12-03), refused.
    "nonzero integer": ("ne", 0),
    "nonzero real": ("ne", 0),
}
#: A name: a letter, then letters, digits and _ (Unicode letters included: α, β).
NAME = re.compile(r"[^\W\d_]\w*")
#: Names a variable cannot have: the language's functions and the words and symbols of its
#: rendering (a variable `mod` or `Σ` would read back as something else).
RESERVED = frozenset({
    "abs", "min", "max", "sqrt", "floor", "ceil", "ceiling", "gcd", "lcm", "factorial", "pow", "implies", "iff",
    "ite", "divides", "even", "odd", "sum", "prod", "all", "any", "len", "range", "True", "False", "true",
    "false", "div", "mod", "where", "if", "else", "and", "or", "not", "in", "for", "is", "lambda",
    "ℤ", "ℝ", "ℚ", "Σ", "Π",
})  # fmt: skip


#: The letters the rendering spells domains with (ℤ≥0, ℝ): a name may not start with one, which
#: the text would read as the domain (`ℤx` as ℤ, then x).
DOMAIN_LETTERS = ("ℤ", "ℝ", "ℚ")


@dataclass(frozen=True)
class Variable:
    name: str
    domain: Domain

    @property
    def kind(self) -> Kind:
        return KIND_OF_DOMAIN[self.domain]

    @property
    def rational_only(self) -> bool:
        """A rational variable: the checkers work over the reals, and a counterexample must be rational."""
        return self.domain == "rational"

    def domain_condition(self) -> Expr | None:
        """The domain as a condition on the variable, beyond its kind; None for integer, real, rational."""
        if self.domain not in DOMAIN_BOUNDS:
            return None
        comparison, bound = DOMAIN_BOUNDS[self.domain]
        return Op(comparison, (Var(self.name), Const(bound)))


@dataclass(frozen=True)
class Statement:
    """For all values of `variables` in their domains at which it is defined, the hypotheses imply
    the conclusion."""

    variables: tuple[Variable, ...]
    hypotheses: tuple[Expr, ...]
    conclusion: Expr

    @property
    def kinds(self) -> dict[str, Kind]:
        return {variable.name: variable.kind for variable in self.variables}

    def domain_conditions(self) -> list[Expr]:
        return [c for c in (variable.domain_condition() for variable in self.variables) if c is not None]

    def assumptions(self) -> list[Expr]:
        """Domains, then hypotheses: what the conclusion may assume (definedness apart)."""
        return [*self.domain_conditions(), *self.hypotheses]

    def definedness(self) -> list[Expr]:
        """Where the statement is defined: its hypotheses' conditions read in order, then the
        conclusion's where the hypotheses hold."""
        chained: Expr = self.conclusion
        if self.assumptions():
            chained = Op("implies", (conjunction(self.assumptions()), self.conclusion))
        return definedness(chained, self.kinds)

    def premises(self) -> list[Expr]:
        """Everything the solver and Coq assume: domains, hypotheses, then definedness. A proof
        from these is sound only where some input satisfies them all (a witness: verdict.py)."""
        return [*self.assumptions(), *self.definedness()]

    def expanded(self) -> Statement:
        """Sums and products over constant ranges written out (for the solver and Coq);
        FormalError when one cannot be."""
        return Statement(
            self.variables,
            tuple(expand_reductions(hypothesis) for hypothesis in self.hypotheses),
            expand_reductions(self.conclusion),
        )

    @property
    def closed(self) -> bool:
        """No variables: the statement is a computation."""
        return not self.variables


def typed(statement: Statement) -> Statement:
    """`statement` when the kernel admits it: names it can print and read back, each variable
    declared once and used, trees within bounds, every number as written, every part a condition
    of the right kinds. FormalError naming the first problem otherwise."""
    names = [variable.name for variable in statement.variables]
    for variable in statement.variables:
        _check_name(variable.name, "a variable")
        if variable.domain not in DOMAINS:
            raise FormalError(f"{variable.name!r} has the unknown domain {variable.domain!r}")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise FormalError(f"the variable {repeated[0]!r} is declared twice")
    parts = [*((h, "a hypothesis") for h in statement.hypotheses), (statement.conclusion, "the conclusion")]
    kinds = statement.kinds
    used: set[str] = set()
    for part, what in parts:
        bounded(part, what)
        _check_nodes(part, what)
        if kind_of(part, kinds) != "bool":
            raise FormalError(f"{what} must be a condition (a comparison such as x >= 0), not a number")
        used |= free_variables(part)
    unused = [name for name in names if name not in used]
    if unused:
        raise FormalError(f"the variable {unused[0]!r} is declared but never used")
    check_exponents([part for part, _ in parts], kinds, premise_bounds(statement))
    return statement


def premise_bounds(statement: Statement) -> dict[str, Fraction]:
    """The lower bounds the statement's premises put on its variables by a number: a domain's
    (natural: 0, positive: 1 or above 0) and a hypothesis's (`n >= 2`), the larger of the two."""
    bounds = stated_bounds(list(statement.hypotheses), statement.kinds)
    for variable in statement.variables:
        relation, value = DOMAIN_BOUNDS.get(variable.domain, ("ne", 0))
        if relation in ("ge", "gt"):
            bounds[variable.name] = max(bounds.get(variable.name, Fraction(value)), Fraction(value))
    return bounds


def _check_nodes(expr: Expr, what: str) -> None:
    for node in walk(expr):
        if isinstance(node, Const):
            if node.value < 0:
                raise FormalError(f"{what} holds the negative number {node.value} as one number: write -{-node.value}")
            if isinstance(node.value, Fraction) and not finite_decimal(node.value):
                raise FormalError(f"{what} holds the number {node.value}, which is no decimal: write it as a quotient")
        elif isinstance(node, Reduce):
            _check_name(node.index, "an index")


def _check_name(name: str, what: str) -> None:
    if not NAME.fullmatch(name):
        raise FormalError(f"{name!r} is not a name for {what}: use letters, digits and _ (x, a1, x_2)")
    if name in RESERVED:
        raise FormalError(f"{name!r} is a word of the formal language: call {what} something else")
    if name[0] in DOMAIN_LETTERS:
        raise FormalError(
            f"{name!r} starts with {name[0]}, which the rendering reads as a domain: call {what} otherwise"
        )


def finite_decimal(value: Fraction) -> bool:
    """Whether `value` has finitely many decimals: no prime but 2 and 5 divides its denominator."""
    denominator = value.denominator
    for prime in (2, 5):
        while denominator % prime == 0:
            denominator //= prime
    return denominator == 1


def decimal_text(value: Fraction) -> str:
    """A finite decimal as written: 1/2 is `0.5`, 5/4 `1.25`, and a whole real `2.0` (`2` is an
    integer, which reads back as another kind of number). FormalError for a fraction that is no
    decimal (1/3): its digits would never end."""
    if not finite_decimal(value):
        raise FormalError(f"{value} is no finite decimal")
    digits = 0
    denominator = value.denominator
    while denominator != 1:
        digits += 1
        denominator = (value * 10**digits).denominator
    scaled = value * 10**digits
    whole, fraction = divmod(int(scaled), 10**digits)
    return f"{whole}.{fraction:0{digits}d}" if digits else f"{whole}.0"
