"""The statement as a Coq proposition, derived from the same tree the other checkers read.

Integers are Coq's `Z` (`Z.div` and `Z.modulo` round towards minus infinity, as Python does),
reals its `R`; an integer inside a real expression is `IZR n`. Every operation carries its scope
(`(a + b)%Z`, `(x * y)%R`), so nothing depends on which scope is open. The statement is

    forall (a b : Z) (x : R), <domains> -> <hypotheses> -> <definedness> -> <conclusion>

with the definedness conditions as hypotheses (Statement.premises): where Coq's own conventions
give a value to what the language leaves undefined (x / 0 = 0), the statement excludes those
inputs, so Coq proves exactly what the other checkers test. Sums and products are written out
first.

Binders are unique by construction: a name Coq could read otherwise (a keyword, a name of the
library the proposition uses, a non-ASCII letter) becomes `v<i>_…`, `i` its place among the
variables, a form no name kept as it is has; and the binders are counted once more before the
proposition is returned. Two Greek letters once became the same name, and Coq proved
`forall (v__ v__ : Z), …` — a claim about one variable — for a statement about two.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from lemmata.kernel.coq_file import REFUSED_WORDS
from lemmata.kernel.semantics import Kind, kind_of
from lemmata.kernel.statement import Statement, Variable
from lemmata.kernel.tree import Const, Expr, FormalError, Op, Reduce, Var, integer_literal

Scope = Literal["Z", "R"]
#: Names a variable cannot have in Coq (keywords, and what the statement itself uses).
COQ_RESERVED = {
    "as", "at", "cofix", "else", "end", "exists", "exists2", "fix", "for", "forall", "fun", "if", "IF", "in",
    "let", "match", "mod", "return", "then", "with", "Prop", "Set", "Type", "R", "Z", "N", "nat", "IZR",
    "sqrt", "Rabs", "Rmin", "Rmax", "pow", "fact", "Int_part", "up", "True", "False", "S", "O", "lemmata_goal",
    "negb", "andb", "orb", "true", "false", "SProp", "struct", "where", "using", "measure", "wf", "Z_scope",
    "R_scope", "pow2_ge_0", "Rinv", "Rdiv", "Ropp", "Rplus", "Rmult", "Rminus", "Zplus", "Zmult", "Zminus",
}  # fmt: skip
#: A name Coq reads as itself; one of the generated form is never kept, so the two cannot meet.
KEPT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
GENERATED_NAME = re.compile(r"v\d+_")
MAX_NATURAL_EXPONENT = 1000


class NotStatable(Exception):
    """The statement uses something this derivation cannot state in Coq."""


@dataclass(frozen=True)
class CoqStatement:
    proposition: str
    scope: Scope  # "R" when any real appears: the prelude then loads the Reals library
    hints: tuple[str, ...]  # facts that help the automation (squares are non-negative)


def coq_statement(statement: Statement) -> CoqStatement:
    """The proposition of `statement` (its sums written out here); NotStatable when part of it has
    no Coq counterpart here, or its binders would not be unique."""
    try:
        expanded = statement.expanded()
    except FormalError as error:  # a sum over a range too long to write out, or a variable one
        raise NotStatable(str(error)) from None
    names = coq_names(expanded.variables)
    printer = _Printer(expanded.kinds, names)
    premises = [printer.prop(part) for part in expanded.premises()]
    body = " -> ".join([*premises, printer.prop(expanded.conclusion)])
    binders = " ".join(
        f"({' '.join(names[v.name] for v in expanded.variables if v.kind == kind)} : {'Z' if kind == 'int' else 'R'})"
        for kind in ("int", "real")
        if any(v.kind == kind for v in expanded.variables)
    )
    proposition = f"forall {binders}, {body}" if binders else body
    uses_reals = printer.uses_reals or any(v.kind == "real" for v in expanded.variables)
    reals = [names[v.name] for v in expanded.variables if v.kind == "real"]
    return CoqStatement(proposition, "R" if uses_reals else "Z", tuple(_square_hints(reals)))


def coq_names(variables: tuple[Variable, ...]) -> dict[str, str]:
    """Each variable's name in Coq: itself when Coq reads it so, else `v<i>_` and its ASCII letters.
    NotStatable if two would coincide (they cannot: the check is the kernel's second look)."""
    names = {}
    for position, variable in enumerate(variables):
        name = variable.name
        kept = KEPT_NAME.fullmatch(name) and not GENERATED_NAME.match(name)
        if kept and name not in COQ_RESERVED and name not in REFUSED_WORDS:
            names[name] = name
        else:
            names[name] = f"v{position}_" + "".join(c if c.isascii() and c.isalnum() else "_" for c in name)
    if len(set(names.values())) != len(variables) or len(names) != len(variables):
        raise NotStatable("two variables would have the same name in Coq")
    return names


def _square_hints(reals: list[str]) -> list[str]:
    """`pow2_ge_0 t` for each real variable, and their differences and sums (at most 4 variables):
    the usual certificate of a polynomial inequality over the reals, for nra."""
    hints = [f"pow2_ge_0 {name}" for name in reals[:4]]
    for position, first in enumerate(reals[:4]):
        for second in reals[position + 1 : 4]:
            hints += [f"pow2_ge_0 ({first} - {second})", f"pow2_ge_0 ({first} + {second})"]
    return hints


class _Printer:
    def __init__(self, kinds: dict[str, Kind], names: dict[str, str]) -> None:
        self.kinds = kinds
        self.names = names
        self.uses_reals = False

    def prop(self, expr: Expr) -> str:
        """A condition as a Coq proposition."""
        if isinstance(expr, Reduce):
            raise NotStatable("a sum, product, all or any over a range that depends on a variable")
        if isinstance(expr, Const | Var):
            raise NotStatable("a number where a condition belongs")
        name, args = expr.name, expr.args
        if name in ("true", "false"):
            return "True" if name == "true" else "False"
        if name == "not":
            return f"~ ({self.prop(args[0])})"
        if name in ("and", "or"):
            joiner = " /\\ " if name == "and" else " \\/ "
            return "(" + joiner.join(f"({self.prop(arg)})" for arg in args) + ")"
        if name in ("implies", "iff"):
            arrow = " -> " if name == "implies" else " <-> "
            return f"(({self.prop(args[0])}){arrow}({self.prop(args[1])}))"
        if name == "ite":
            condition = self.prop(args[0])
            return f"((({condition}) /\\ ({self.prop(args[1])})) \\/ (~ ({condition}) /\\ ({self.prop(args[2])})))"
        if name in ("even", "odd"):
            return f"({self.term(args[0], 'int')} mod 2 = {1 if name == 'odd' else 0})%Z"
        if name == "divides":
            return f"({self.term(args[1], 'int')} mod {self.term(args[0], 'int')} = 0)%Z"
        kind = self._common(args)
        left, right = self.term(args[0], kind), self.term(args[1], kind)
        symbol = {"eq": "=", "ne": "<>", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[name]
        return f"({left} {symbol} {right})%{_scope(kind)}"

    def term(self, expr: Expr, kind: Kind) -> str:
        """A number of the given kind; an integer where a real is wanted is `IZR`'d."""
        own = kind_of(expr, self.kinds)
        if own == "int" and kind == "real":
            self.uses_reals = True
            return f"(IZR {self.term(expr, 'int')})"
        if kind == "real":
            self.uses_reals = True
        if isinstance(expr, Const):
            return _number(expr.value, kind)
        if isinstance(expr, Var):
            return self.names[expr.name]
        if isinstance(expr, Reduce):
            raise NotStatable("a sum, product, all or any over a range that depends on a variable")
        return self._operation(expr, kind)

    def _operation(self, expr: Op, kind: Kind) -> str:
        name, args = expr.name, expr.args
        scope = _scope(kind)
        if name in ("add", "sub", "mul"):
            symbol = {"add": "+", "sub": "-", "mul": "*"}[name]
            return f"({self.term(args[0], kind)} {symbol} {self.term(args[1], kind)})%{scope}"
        if name == "neg":
            return f"(- {self.term(args[0], kind)})%{scope}"
        if name == "truediv":
            return f"({self.term(args[0], 'real')} / {self.term(args[1], 'real')})%R"
        if name in ("floordiv", "mod"):
            symbol = "/" if name == "floordiv" else "mod"
            return f"({self.term(args[0], 'int')} {symbol} {self.term(args[1], 'int')})%Z"
        if name in ("abs", "min", "max", "gcd", "lcm"):
            function = {"int": {"abs": "Z.abs", "min": "Z.min", "max": "Z.max", "gcd": "Z.gcd", "lcm": "Z.lcm"},
                        "real": {"abs": "Rabs", "min": "Rmin", "max": "Rmax"}}[kind].get(name)  # fmt: skip
            if function is None:
                raise NotStatable(f"{name} of reals")
            return self._nested(function, [self.term(arg, kind) for arg in args])
        if name == "sqrt":
            return f"(sqrt {self.term(args[0], 'real')})"
        if name == "pow":
            return self._power(args[0], args[1], kind)
        if name in ("floor", "ceil"):
            inner = self.term(args[0], kind_of(args[0], self.kinds))
            if kind_of(args[0], self.kinds) == "int":
                return inner
            return f"(Int_part {inner})" if name == "floor" else f"(- Int_part (- {inner})%R)%Z"
        if name == "factorial":
            return f"(Z.of_nat (fact (Z.to_nat {self.term(args[0], 'int')})))"
        if name == "ite":
            return self._numeric_ite(expr, kind)
        raise NotStatable(f"{name} has no counterpart in Coq here")

    def _nested(self, function: str, arguments: list[str]) -> str:
        result = arguments[0]
        for argument in arguments[1:]:
            result = f"({function} {result} {argument})"
        return result if len(arguments) > 1 else f"({function} {result})"

    def _power(self, base: Expr, exponent: Expr, kind: Kind) -> str:
        literal = integer_literal(exponent)
        if kind == "int":
            return f"({self.term(base, 'int')} ^ {self.term(exponent, 'int')})%Z"
        if literal is None or abs(literal) > MAX_NATURAL_EXPONENT:
            raise NotStatable("a real power with a variable, fractional or very large exponent")
        power = f"({self.term(base, 'real')} ^ {abs(literal)})%R"
        return f"(/ {power})%R" if literal < 0 else power

    def _numeric_ite(self, expr: Op, kind: Kind) -> str:
        condition = self._boolean(expr.args[0])
        return f"(if {condition} then {self.term(expr.args[1], kind)} else {self.term(expr.args[2], kind)})"

    def _boolean(self, expr: Expr) -> str:
        """An integer condition as a Coq `bool` (what `if` needs); a real one is NotStatable."""
        if not isinstance(expr, Op):
            raise NotStatable("a number where a condition belongs")
        name, args = expr.name, expr.args
        if name in ("true", "false"):
            return name
        if name == "not":
            return f"(negb {self._boolean(args[0])})"
        if name in ("and", "or"):
            return self._nested("andb" if name == "and" else "orb", [self._boolean(arg) for arg in args])
        if name in ("even", "odd", "divides"):
            divisor, multiple = (args[0], args[1]) if name == "divides" else (Const(2), args[0])
            remainder = f"({self.term(multiple, 'int')} mod {self.term(divisor, 'int')})%Z"
            return f"(Z.eqb {remainder} {1 if name == 'odd' else 0}%Z)"
        if name in ("eq", "ne", "lt", "le", "gt", "ge") and self._common(args) == "int":
            left, right = self.term(args[0], "int"), self.term(args[1], "int")
            if name in ("gt", "ge"):
                left, right = right, left
            test = {"eq": "Z.eqb", "ne": "Z.eqb", "lt": "Z.ltb", "le": "Z.leb", "gt": "Z.ltb", "ge": "Z.leb"}[name]
            compared = f"({test} {left} {right})"
            return f"(negb {compared})" if name == "ne" else compared
        raise NotStatable(f"a choice on the condition {name} of reals")

    def _common(self, args: tuple[Expr, ...]) -> Kind:
        kinds = [kind_of(arg, self.kinds) for arg in args]
        return "real" if "real" in kinds else "int"


def _scope(kind: Kind) -> str:
    return "Z" if kind == "int" else "R"


def _number(value: int | Fraction, kind: Kind) -> str:
    """A numeral; every one stands inside a scoped operation or comparison (or an argument whose
    type binds its scope), so it is read as an integer or a real as that place wants."""
    fraction = Fraction(value)
    if fraction.denominator == 1:
        return f"({fraction.numerator})" if fraction < 0 else f"{fraction.numerator}"
    if kind == "int":
        raise NotStatable("a fraction where an integer is wanted")
    return f"({fraction.numerator} / {fraction.denominator})"
