"""Random formal statements over the kernel's whole language, for its differential tests
(tests/unit/kernel/test_differential.py, bench/differential.py).

`statements()` draws well-typed kernel Statements: every operation of semantics.ARITY, the four
reductions (over small constant ranges, now and then over a range that depends on a variable,
which the solver and Coq cannot state), every domain, numbers as written (a negative one is `neg`
of its magnitude, a real one a finite decimal) and variable names that stress each checker's
naming: Greek letters, names Coq reserves (R, Z, S, IZR, fact), names of the form Coq's
renaming makes (v0_x), names with digits and underscores. Trees are built by kind (integer,
real, condition), so each is typed by construction (`typed` is asserted, never filtered on); they
stay small (depth ≤ 5) so that the solver and Coq answer in milliseconds.

`values_for(statement)` draws a value for each variable: small integers and small rationals,
mostly in the variable's domain and now and then just outside it (a domain is a premise too).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

from lemmata.kernel.evaluate import Value
from lemmata.kernel.semantics import Kind, kind_of
from lemmata.kernel.statement import DOMAINS, KIND_OF_DOMAIN, Domain, Statement, Variable, typed
from lemmata.kernel.tree import Const, Expr, Op, Reduce, Var, free_variables, signed_constant, walk

#: Names a variable may have, chosen to stress each checker's naming: plain ones, Greek letters,
#: names Coq reserves or reads otherwise, names of the form of Coq's renaming (v<i>_...), digits
#: and underscores, a name that is a word of Coq's vernacular, names of other scripts.
VARIABLE_NAMES = (
    "a", "b", "n", "m", "x", "y", "t",
    "α", "β", "γ", "Δ", "ℓ", "θ_1", "xα",
    "R", "Z", "N", "S", "O", "IZR", "fact", "Rabs", "Rmin", "Int_part", "up", "nat", "Prop", "fun", "match",
    "Qed", "Admitted", "lemmata_goal", "pow2_ge_0", "Z_scope",
    "v0_x", "v_R", "v1_a", "v10_", "v2__", "x_",
    "x1", "a_2", "x_1_y", "n2m", "y__z", "k9",
)  # fmt: skip
#: Names a reduction's index may have (never one of the statement's variables).
INDEX_NAMES = ("i", "j", "k", "d", "ι", "k_1", "v0_k", "S")
#: The operations and reductions a statement may use, for the coverage the bench reports.
OPERATIONS = (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "neg", "abs", "min", "max", "sqrt", "floor",
    "ceil", "gcd", "lcm", "factorial", "divides", "even", "odd", "eq", "ne", "lt", "le", "gt", "ge",
    "and", "or", "not", "implies", "iff", "ite", "true", "false",
)  # fmt: skip
REDUCTION_KINDS = ("sum", "prod", "all", "any")
#: The deepest a hypothesis or conclusion is drawn (a leaf is depth 0).
MAX_DEPTH = 4
#: Finite decimals the real constants are drawn from: a/2^i5^j, mostly small.
DENOMINATORS = (2, 4, 5, 8, 10, 20, 25, 512, 10**6)


@dataclass
class _Scope:
    """What a subtree may name: the statement's variables by kind, and the indices of the
    reductions around it (integers)."""

    variables: dict[str, Kind]
    indices: tuple[str, ...] = ()
    index_names: tuple[str, ...] = ()

    def of_kind(self, kind: Kind) -> list[str]:
        names = [name for name, own in self.variables.items() if own == kind]
        return names + list(self.indices) if kind == "int" else names

    def inner(self, index: str) -> _Scope:
        return _Scope(self.variables, (*self.indices, index), self.index_names)


Draw = Callable[[st.SearchStrategy[Any]], Any]


class _Builder:
    """Trees of one statement, drawn by kind: `integer`, `real` and `condition` each give a tree of
    exactly that kind (kind_of agrees: `_checked`)."""

    def __init__(self, draw: Draw, scope: _Scope) -> None:
        self.draw = draw
        self.scope = scope

    def choice(self, options: list[Any] | tuple[Any, ...]) -> Any:
        return self.draw(st.sampled_from(options))

    def depth_below(self, depth: int) -> int:
        """A child's depth: one less mostly, now and then less still (trees of every shape)."""
        if depth <= 1:
            return 0
        return depth - 1 if self.draw(st.integers(0, 3)) else self.draw(st.integers(0, depth - 1))

    # -- kinds ---------------------------------------------------------------------------------

    def of_kind(self, kind: Kind, depth: int) -> Expr:
        if kind == "int":
            return self.integer(depth)
        if kind == "real":
            return self.real(depth)
        return self.condition(depth)

    def number(self, depth: int) -> Expr:
        """An integer or a real."""
        return self.of_kind(self.choice(("int", "real")), depth)

    def integer(self, depth: int) -> Expr:
        if depth <= 0:
            return self.integer_leaf()
        d = self.depth_below
        form = self.choice(INTEGER_FORMS)
        if form in ("add", "sub", "mul", "floordiv", "mod", "gcd", "lcm"):
            return Op(form, (self.integer(d(depth)), self.integer(d(depth))))
        if form in ("neg", "abs"):
            return Op(form, (self.integer(d(depth)),))
        if form in ("min", "max"):
            return Op(form, tuple(self.integer(d(depth)) for _ in range(self.draw(st.integers(2, 3)))))
        if form == "pow":
            return Op("pow", (self.integer(d(depth)), self.natural_exponent()))
        if form in ("floor", "ceil"):
            return Op(form, (self.number(d(depth)),))
        if form == "factorial":
            return Op("factorial", (self.integer(min(1, d(depth))),))
        if form == "ite":
            return Op("ite", (self.condition(d(depth)), self.integer(d(depth)), self.integer(d(depth))))
        if form in ("sum", "prod"):
            return self.reduction(form, "int", depth)
        return self.integer_leaf()

    def real(self, depth: int) -> Expr:
        if depth <= 0:
            return self.real_leaf()
        d = self.depth_below
        form = self.choice(REAL_FORMS)
        if form in ("add", "sub", "mul"):
            return Op(form, self.with_a_real(2, d(depth)))
        if form in ("neg", "abs"):
            return Op(form, (self.real(d(depth)),))
        if form in ("min", "max"):
            return Op(form, self.with_a_real(self.draw(st.integers(2, 3)), d(depth)))
        if form == "truediv":
            return Op("truediv", (self.number(d(depth)), self.number(d(depth))))
        if form == "sqrt":
            return Op("sqrt", (self.number(d(depth)),))
        if form == "pow":
            return self.real_power(d(depth))
        if form == "ite":
            branches = self.with_a_real(2, d(depth))
            return Op("ite", (self.condition(d(depth)), *branches))
        if form in ("sum", "prod"):
            return self.reduction(form, "real", depth)
        return self.real_leaf()

    def condition(self, depth: int) -> Expr:
        if depth <= 0:
            return self.condition_leaf()
        d = self.depth_below
        form = self.choice(CONDITION_FORMS)
        if form in ("eq", "ne", "lt", "le", "gt", "ge"):
            return Op(form, (self.number(d(depth)), self.number(d(depth))))
        if form == "divides":
            return Op("divides", (self.integer(d(depth)), self.integer(d(depth))))
        if form in ("even", "odd"):
            return Op(form, (self.integer(d(depth)),))
        if form in ("and", "or"):
            return Op(form, tuple(self.condition(d(depth)) for _ in range(self.draw(st.integers(2, 3)))))
        if form == "not":
            return Op("not", (self.condition(d(depth)),))
        if form in ("implies", "iff"):
            return Op(form, (self.condition(d(depth)), self.condition(d(depth))))
        if form == "ite":
            return Op("ite", tuple(self.condition(d(depth)) for _ in range(3)))
        if form in ("all", "any"):
            return self.reduction(form, "bool", depth)
        return self.condition_leaf()

    # -- parts ---------------------------------------------------------------------------------

    def with_a_real(self, count: int, depth: int) -> tuple[Expr, ...]:
        """`count` numbers, one of them (at least) a real: what makes an operation real."""
        real = self.draw(st.integers(0, count - 1))
        return tuple(self.real(depth) if position == real else self.number(depth) for position in range(count))

    def natural_exponent(self) -> Expr:
        """An exponent that keeps an integer power an integer: a literal 0..4 (or −0), or the
        absolute value of a variable or index (the kernel admits a variable exponent only where
        the premises keep it natural: kernel/exponents.py; |n| is, and still needs the checkers'
        condition of definedness)."""
        names = self.scope.of_kind("int")
        form = self.choice(("literal", "literal", "minus zero", "name") if names else ("literal", "minus zero"))
        if form == "literal":
            return Const(self.draw(st.sampled_from((0, 1, 2, 2, 3, 4, 7, 12))))
        if form == "minus zero":
            return Op("neg", (Const(0),))
        return Op("abs", (self.name(self.choice(names)),))

    def real_power(self, depth: int) -> Expr:
        """A power that is a real: a real base to an integer literal (negative too), an integer base
        to a negative literal, a base to an integer variable's absolute value, or to a real exponent."""
        form = self.choice(("real base", "real base", "negative literal", "integer name", "real exponent"))
        if form == "real base":
            return Op("pow", (self.real(depth), signed_constant(self.draw(st.integers(-3, 3)))))
        if form == "negative literal":
            return Op("pow", (self.integer(depth), signed_constant(self.draw(st.integers(-3, -1)))))
        names = self.scope.of_kind("int")
        if form == "integer name" and names:
            return Op("pow", (self.real(depth), Op("abs", (self.name(self.choice(names)),))))
        return Op("pow", (self.number(depth), self.real_leaf()))

    def reduction(self, kind: str, body_kind: Kind, depth: int) -> Expr:
        free = [name for name in self.scope.index_names if name not in self.scope.indices]
        if not free:
            return self.of_kind(body_kind, 0)
        index = self.choice(free)
        low = self.draw(st.integers(-2, 3))
        low_tree, high_tree = signed_constant(low), signed_constant(low + self.draw(st.integers(-1, 4)))
        names = self.scope.of_kind("int")
        if names and self.draw(st.integers(0, 9)) == 0:  # a range that depends on a variable (or an outer index)
            high_tree = self.bound(self.name(self.choice(names)))
            if self.draw(st.integers(0, 3)) == 0:
                low_tree = self.bound(self.name(self.choice(names)))
        inner = _Builder(self.draw, self.scope.inner(index))
        body_depth = min(depth - 1, 2)
        body = inner.of_kind(body_kind, body_depth)
        if self.draw(st.booleans()):  # the index in the body, mostly
            body = inner.mention_index(body, index, body_kind)
        condition = inner.condition(min(depth - 1, 1)) if self.draw(st.integers(0, 2)) == 0 else None
        return Reduce(kind, index, low_tree, high_tree, body, condition)

    def bound(self, name: Expr) -> Expr:
        """A bound on a name in each form the rendering writes a last index in (render.last_index):
        n, n + 1, n − 1, (n − 1) + 1, 2·n."""
        form = self.draw(st.integers(0, 4))
        if form == 1:
            return Op("add", (name, Const(1)))
        if form == 2:
            return Op("sub", (name, Const(1)))
        if form == 3:
            return Op("add", (Op("sub", (name, Const(1))), Const(1)))
        if form == 4:
            return Op("mul", (Const(2), name))
        return name

    def mention_index(self, body: Expr, index: str, kind: Kind) -> Expr:
        """`body` combined with the index, so that most terms differ."""
        if kind == "bool":
            return Op(
                self.choice(("and", "or")), (body, Op(self.choice(COMPARISONS), (Var(index), self.integer_leaf())))
            )
        return Op(self.choice(("add", "mul")), (Var(index), body))

    def name(self, name: str) -> Expr:
        return Var(name)

    # -- leaves --------------------------------------------------------------------------------

    def integer_leaf(self) -> Expr:
        names = self.scope.of_kind("int")
        if names and self.draw(st.integers(0, 2)):
            return self.name(self.choice(names))
        return self.integer_constant()

    def integer_constant(self) -> Expr:
        form = self.draw(st.integers(0, 9))
        if form == 0:
            return signed_constant(-self.draw(st.integers(1, 5)))
        if form == 1:
            return Const(self.choice((10, 12, 100, 1000, 2**31, 10**15 + 37)))
        return Const(self.draw(st.integers(0, 6)))

    def real_leaf(self) -> Expr:
        names = self.scope.of_kind("real")
        if names and self.draw(st.integers(0, 2)):
            return self.name(self.choice(names))
        return self.real_constant()

    def real_constant(self) -> Expr:
        """A finite decimal: 0.5, 1.25, −0.2, and now and then a whole one written as a real (2.0)."""
        if self.draw(st.integers(0, 19)) == 0:
            return Const(Fraction(self.draw(st.integers(0, 3))))
        value = Fraction(self.draw(st.integers(1, 30)), self.choice(DENOMINATORS))
        if value.denominator == 1:
            value += Fraction(1, 2)
        return signed_constant(-value) if self.draw(st.integers(0, 3)) == 0 else Const(value)

    def condition_leaf(self) -> Expr:
        form = self.draw(st.integers(0, 9))
        if form == 0:
            return Op(self.choice(("true", "false")), ())
        return Op(self.choice(COMPARISONS), (self.number(0), self.number(0)))


COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")
INTEGER_FORMS = (
    "add", "sub", "mul", "neg", "abs", "min", "max", "floordiv", "mod", "pow", "floor", "ceil", "gcd", "lcm",
    "factorial", "ite", "sum", "prod",
)  # fmt: skip
REAL_FORMS = ("add", "sub", "mul", "neg", "abs", "min", "max", "truediv", "sqrt", "pow", "ite", "sum", "prod")
CONDITION_FORMS = (
    *COMPARISONS, *COMPARISONS, "divides", "even", "odd", "and", "or", "not", "implies", "iff", "ite", "all", "any",
)  # fmt: skip


def _checked(expr: Expr, kind: Kind, kinds: dict[str, Kind]) -> Expr:
    """The generator's own check that a tree has the kind it was drawn for: a mismatch is a defect
    of this generator, and must not pass for one of the kernel."""
    own = kind_of(expr, kinds)
    assert own == kind, f"drew a {own} for a {kind}: {expr}"
    return expr


@st.composite
def statements(draw: Draw, max_variables: int = 4) -> Statement:
    """A statement the kernel types: 0 to `max_variables` variables (those never used are left
    out), 0 to 2 hypotheses and a conclusion."""
    count = min(max_variables, draw(st.sampled_from((0, 1, 1, 2, 2, 2, 3, 3, 4))))
    names = draw(st.lists(st.sampled_from(VARIABLE_NAMES), min_size=count, max_size=count, unique=True))
    domains = [draw(st.sampled_from(DOMAINS)) for _ in names]
    kinds: dict[str, Kind] = {name: KIND_OF_DOMAIN[domain] for name, domain in zip(names, domains)}
    scope = _Scope(kinds, index_names=tuple(name for name in INDEX_NAMES if name not in kinds))
    builder = _Builder(draw, scope)
    parts = []
    for _ in range(draw(st.integers(0, 2)) + 1):
        depth = draw(st.sampled_from((2, 3, 3, MAX_DEPTH, MAX_DEPTH, MAX_DEPTH)))
        parts.append(_checked(builder.condition(depth), "bool", kinds))
    used = set().union(*(free_variables(part) for part in parts))
    variables = tuple(Variable(name, domain) for name, domain in zip(names, domains) if name in used)
    return typed(Statement(variables, tuple(parts[:-1]), parts[-1]))


# -- values ---------------------------------------------------------------------------------------


#: One value in this many is drawn just outside its variable's domain (a natural −1, a positive real 0).
OUTSIDE = 10


def _integers(domain: Domain) -> st.SearchStrategy[int]:
    if domain == "nonzero integer":
        return st.integers(0, OUTSIDE - 1).flatmap(lambda n: st.integers(-6, 8).filter(bool) if n else st.just(0))
    low = {"natural": 0, "positive integer": 1}.get(domain)
    if low is None:
        return st.one_of(st.integers(-6, 8), st.sampled_from((-30, -12, 25, 100)))
    return st.integers(0, OUTSIDE - 1).flatmap(lambda n: st.integers(low, 8) if n else st.integers(low - 2, low - 1))


def _rationals(domain: Domain) -> st.SearchStrategy[Value]:
    values = st.builds(Fraction, st.integers(-12, 12), st.sampled_from((1, 1, 2, 3, 4, 5, 8, 10)))
    if domain == "nonzero real":
        nonzero = values.filter(bool)
        values = st.integers(0, OUTSIDE - 1).flatmap(lambda n: nonzero if n else st.just(0))
    elif domain in ("positive real", "nonnegative real"):
        inside = values.map(abs).filter(lambda v: v > 0 or domain == "nonnegative real")
        outside = st.sampled_from((Fraction(-1, 2), Fraction(-3))) if domain == "nonnegative real" else st.just(0)
        values = st.integers(0, OUTSIDE - 1).flatmap(lambda n: inside if n else outside)
    return values.map(lambda v: v.numerator if Fraction(v).denominator == 1 else v)


def values_for(statement: Statement) -> st.SearchStrategy[dict[str, Value]]:
    """A value for each variable: an integer for an integer variable, a rational (an int when it is
    whole, as the solver's models and the witnesses are read) for a real one; one in OUTSIDE just
    outside its domain."""
    return st.fixed_dictionaries(
        {
            variable.name: _integers(variable.domain) if variable.kind == "int" else _rationals(variable.domain)
            for variable in statement.variables
        }
    )


# -- coverage -------------------------------------------------------------------------------------


def used_operations(statement: Statement) -> set[str]:
    """The operations and reductions a statement uses, and its variables' domains (`domain:...`)."""
    found: set[str] = {f"domain:{variable.domain}" for variable in statement.variables}
    for part in (*statement.hypotheses, statement.conclusion):
        for node in walk(part):
            if isinstance(node, Op):
                found.add(node.name)
            elif isinstance(node, Reduce):
                found.add(node.kind)
    return found
