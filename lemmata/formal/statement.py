"""A formal statement as the model writes it, read and typed: variables with their domains,
hypotheses and a conclusion (language.py), with the conditions under which it is defined.

The model's form is small on purpose — a 1.5B model writes it reliably under a JSON grammar:

    {"variables": [{"name": "a", "type": "integer"}, {"name": "b", "type": "integer"}],
     "hypotheses": ["a % 2 == 0", "b % 2 == 0"],
     "conclusion": "(a + b) % 2 == 0"}

Every variable is universally quantified over its domain. `Statement` is what the checkers read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import get_args

from lemmata.artifacts import FormalDomain
from lemmata.formal.language import (
    FUNCTIONS,
    REDUCTIONS,
    Const,
    Expr,
    FormalError,
    Kind,
    Op,
    Reduce,
    Var,
    definedness,
    free_variables,
    kind_of,
    parse_expression,
)

#: The domains a variable may have, as the formalizer's grammar offers them.
Domain = FormalDomain
DOMAINS: tuple[Domain, ...] = get_args(FormalDomain)
#: Other spellings of the domains.
DOMAIN_SYNONYMS: dict[str, Domain] = {
    "int": "integer",
    "integers": "integer",
    "z": "integer",
    "ℤ": "integer",
    "nat": "natural",
    "natural number": "natural",
    "nonnegative integer": "natural",
    "non-negative integer": "natural",
    "ℕ": "natural",
    "positive int": "positive integer",
    "positive natural": "positive integer",
    "r": "real",
    "reals": "real",
    "real number": "real",
    "ℝ": "real",
    "non-negative real": "nonnegative real",
    "q": "rational",
    "ℚ": "rational",
    "rational number": "rational",
}
KIND_OF_DOMAIN: dict[Domain, Kind] = {
    "integer": "int",
    "natural": "int",
    "positive integer": "int",
    "real": "real",
    "positive real": "real",
    "nonnegative real": "real",
    "rational": "real",
}
#: Domains the checkers cannot state: the statement is not formalizable, and says why.
UNSUPPORTED_DOMAINS = ("other", "complex", "ℂ", "matri", "vector", "function", "set", "sequence", "polynomial")
RESERVED = {*FUNCTIONS, *REDUCTIONS, "len", "range", "True", "False"}


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
        bounds = {
            "natural": ("ge", 0),
            "positive integer": ("ge", 1),
            "positive real": ("gt", 0),
            "nonnegative real": ("ge", 0),
        }
        if self.domain not in bounds:
            return None
        comparison, bound = bounds[self.domain]
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
        conclusion's where the hypotheses hold (language.definedness)."""
        chained: Expr = self.conclusion
        if self.assumptions():
            chained = Op("implies", (_conjunction([*self.assumptions()]), self.conclusion))
        return definedness(chained, self.kinds)

    @property
    def closed(self) -> bool:
        """No variables: the statement is a computation."""
        return not self.variables


def read_statement(variables: Sequence[tuple[str, str]], hypotheses: Sequence[str], conclusion: str) -> Statement:
    """The typed statement; FormalError saying what to change (one problem at a time)."""
    declared = tuple(_variable(name, domain) for name, domain in variables)
    names = [variable.name for variable in declared]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise FormalError(f"the variable {duplicates[0]!r} is declared twice")
    split = _ProductSplitter(set(names))
    statement = Statement(
        variables=declared,
        hypotheses=tuple(split(_condition(text, "a hypothesis")) for text in hypotheses if text.strip()),
        conclusion=split(_condition(conclusion, "the conclusion")),
    )
    # A variable declared and never used says nothing: it is left out (a model declares a to z for a
    # computation). Its domain alone could make a statement vacuous or not; without it, neither.
    parts = (*statement.hypotheses, statement.conclusion)
    used = tuple(v for v in declared if any(_mentions(part, v.name) for part in parts))
    statement = Statement(used, statement.hypotheses, statement.conclusion)
    kinds = statement.kinds
    for part, what in [*((h, "a hypothesis") for h in statement.hypotheses), (statement.conclusion, "the conclusion")]:
        if kind_of(part, kinds) != "bool":
            raise FormalError(f"{what} must be a condition (a comparison such as x >= 0), not a number")
        misread = misread_remainder(part)
        if misread:
            raise FormalError(misread)
    return statement


def misread_remainder(expr: Expr) -> str:
    """Why `expr` holds a remainder that is surely misread, "" if none: `2**n + 1 % 7` is
    `2**n + (1 % 7)` in Python and "2^n + 1 mod 7" to a mathematician (miniF2F's imo_1964_p1_2, the
    embedded model, 2026-11-26: machine-checked, and not the prose's statement). A `%` or `//` of a
    number, inside a sum or a difference, is refused."""
    if isinstance(expr, Op):
        if expr.name in ("add", "sub"):
            for arg in expr.args:
                if isinstance(arg, Op) and arg.name in ("mod", "floordiv") and isinstance(arg.args[0], Const):
                    symbol = "%" if arg.name == "mod" else "//"
                    number = arg.args[0].value
                    return (
                        f"`{number} {symbol} ...` inside a sum takes the remainder of the number {number} alone: "
                        f"put the sum in parentheses, (... + {number}) {symbol} m"
                    )
        for arg in expr.args:
            found = misread_remainder(arg)
            if found:
                return found
    if isinstance(expr, Reduce):
        for part in (expr.low, expr.high, expr.body, *([expr.condition] if expr.condition else [])):
            found = misread_remainder(part)
            if found:
                return found
    return ""


def _variable(name: str, domain: str) -> Variable:
    name = name.strip()
    if not name.isidentifier() or name.startswith("_"):
        raise FormalError(f"{name!r} is not a variable name: use letters, digits and _ (x, a1, x_2)")
    if name in RESERVED:
        raise FormalError(f"{name!r} is the name of a function: call the variable something else")
    return Variable(name, resolve_domain(name, domain))


def resolve_domain(name: str, domain: str) -> Domain:
    """The domain a type names (`int`, `positive real`, `ℕ`); FormalError for one the checkers
    cannot state (complex numbers, functions, "other") or do not know."""
    spelled = " ".join(domain.strip().lower().split())
    if spelled in UNSUPPORTED_DOMAINS or spelled.startswith(UNSUPPORTED_DOMAINS):
        raise FormalError(f"{name!r} is of type {domain!r}, which the checkers cannot state (integers and reals only)")
    resolved = spelled if spelled in DOMAINS else DOMAIN_SYNONYMS.get(spelled)
    if resolved is None:
        raise FormalError(f"{name!r} has the unknown type {domain!r}: use one of {', '.join(DOMAINS)}")
    return resolved


def _condition(text: str, what: str) -> Expr:
    try:
        return parse_expression(text)
    except FormalError as error:
        raise FormalError(f"{what}: {error}") from None


class _ProductSplitter:
    """`ab` read as `a*b` when `ab` is not declared and `a`, `b` are: mathematicians' juxtaposition
    (`2ab`, `xyz = 1`), as models copy it from the prose."""

    def __init__(self, names: set[str]) -> None:
        self.names = names

    def __call__(self, expr: Expr, bound: frozenset[str] = frozenset()) -> Expr:
        if isinstance(expr, Var):
            if expr.name in self.names or expr.name in bound:
                return expr
            parts = self._parts(expr.name)
            if parts is None:
                return expr
            product: Expr = Var(parts[0])
            for part in parts[1:]:
                product = Op("mul", (product, Var(part)))
            return product
        if isinstance(expr, Op):
            return Op(expr.name, tuple(self(arg, bound) for arg in expr.args))
        if isinstance(expr, Reduce):
            inner = bound | {expr.index}
            condition = self(expr.condition, inner) if expr.condition is not None else None
            return Reduce(
                expr.kind, expr.index, self(expr.low, bound), self(expr.high, bound), self(expr.body, inner), condition
            )
        return expr

    def _parts(self, name: str) -> list[str] | None:
        """The declared names that spell `name` end to end, longest first; None when there are none."""
        if not name:
            return []
        for length in range(len(name), 0, -1):
            head = name[:length]
            if head in self.names:
                rest = self._parts(name[length:])
                if rest is not None:
                    return [head, *rest]
        return None


def _mentions(expr: Expr, name: str) -> bool:
    return name in free_variables(expr)


def _conjunction(parts: list[Expr]) -> Expr:
    return parts[0] if len(parts) == 1 else Op("and", tuple(parts))
