"""A formal statement as a researcher reads it: one line of plain text with Unicode symbols (the
cards, the review gate, `lemmata check`) and LaTeX (the paper). Both print the statement the
checkers checked, definedness conditions included, so the prose and the formal statement can be
compared line by line."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from lemmata.formal.language import Const, Expr, Op, Reduce, Var, conjuncts
from lemmata.formal.statement import Domain, Statement


@dataclass(frozen=True)
class Notation:
    domains: dict[str, str]
    symbols: dict[str, str]  # infix and prefix operators
    functions: dict[str, str]  # name -> format with {0}, {1}, ...
    forall: str
    member: str
    implies: str
    true: str
    false: str
    reduce: str  # format with kind, index, low, high, condition


TEXT = Notation(
    domains={
        "integer": "ℤ",
        "natural": "ℤ≥0",
        "positive integer": "ℤ≥1",
        "real": "ℝ",
        "positive real": "ℝ>0",
        "nonnegative real": "ℝ≥0",
        "rational": "ℚ",
    },
    symbols={
        "add": " + ", "sub": " − ", "mul": "·", "truediv": "/", "floordiv": " div ", "mod": " mod ", "neg": "−",
        "eq": " = ", "ne": " ≠ ", "lt": " < ", "le": " ≤ ", "gt": " > ", "ge": " ≥ ",
        "and": " ∧ ", "or": " ∨ ", "not": "¬", "implies": " ⇒ ", "iff": " ⇔ ",
    },
    functions={
        "abs": "|{0}|", "sqrt": "√({0})", "floor": "⌊{0}⌋", "ceil": "⌈{0}⌉", "gcd": "gcd({0}, {1})",
        "lcm": "lcm({0}, {1})", "factorial": "({0})!", "divides": "{0} ∣ {1}", "even": "{0} even", "odd": "{0} odd",
        "min": "min({args})", "max": "max({args})",
    },
    forall="∀ ",
    member=" ∈ ",
    implies=" ⇒ ",
    true="true",
    false="false",
    reduce="{symbol}[{index} = {low}..{last}{condition}] {body}",
)  # fmt: skip

LATEX = Notation(
    domains={
        "integer": r"\mathbb{Z}",
        "natural": r"\mathbb{Z}_{\geq 0}",
        "positive integer": r"\mathbb{Z}_{\geq 1}",
        "real": r"\mathbb{R}",
        "positive real": r"\mathbb{R}_{>0}",
        "nonnegative real": r"\mathbb{R}_{\geq 0}",
        "rational": r"\mathbb{Q}",
    },
    symbols={
        "add": " + ", "sub": " - ", "mul": r" \cdot ", "truediv": " / ", "floordiv": r" \mathbin{\mathrm{div}} ",
        "mod": r" \bmod ", "neg": "-", "eq": " = ", "ne": r" \neq ", "lt": " < ", "le": r" \leq ", "gt": " > ",
        "ge": r" \geq ", "and": r" \wedge ", "or": r" \vee ", "not": r"\neg ", "implies": r" \Rightarrow ",
        "iff": r" \Leftrightarrow ",
    },
    functions={
        "abs": r"\lvert {0} \rvert", "sqrt": r"\sqrt{{{0}}}", "floor": r"\lfloor {0} \rfloor",
        "ceil": r"\lceil {0} \rceil", "gcd": r"\gcd({0}, {1})", "lcm": r"\operatorname{{lcm}}({0}, {1})",
        "factorial": "({0})!", "divides": r"{0} \mid {1}", "even": r"2 \mid {0}", "odd": r"2 \nmid {0}",
        "min": r"\min({args})", "max": r"\max({args})",
    },
    forall=r"\forall ",
    member=r" \in ",
    implies=r" \;\Rightarrow\; ",
    true=r"\top",
    false=r"\bot",
    reduce=r"{symbol}_{{\substack{{{low} \leq {index} \leq {last}{condition}}}}} {body}",
)  # fmt: skip

#: Binding strength: a lower one is parenthesised inside a higher one.
PRECEDENCE = {
    "implies": 1, "iff": 1, "or": 2, "and": 3, "not": 4,
    "eq": 5, "ne": 5, "lt": 5, "le": 5, "gt": 5, "ge": 5,
    "add": 6, "sub": 6, "mul": 7, "truediv": 7, "floordiv": 7, "mod": 7, "neg": 8, "pow": 9,
}  # fmt: skip
ATOM = 10


def statement_text(statement: Statement) -> str:
    return _render(statement, TEXT)


def statement_latex(statement: Statement) -> str:
    return _render(statement, LATEX)


def expression_text(expr: Expr) -> str:
    return _Printer(TEXT).show(expr)


def _render(statement: Statement, notation: Notation) -> str:
    printer = _Printer(notation)
    premises = [printer.show(part, PRECEDENCE["and"] + 1) for part in statement.hypotheses]
    conclusion = printer.show(statement.conclusion, PRECEDENCE["implies"] + 1)
    claim = (notation.symbols["and"].join(premises) + notation.implies + conclusion) if premises else conclusion
    conditions = [printer.show(part, PRECEDENCE["and"] + 1) for part in _stated_conditions(statement)]
    if conditions:
        where = r"\text{ where }" if notation is LATEX else " where "
        claim += where + ", ".join(conditions)
    groups = _grouped(statement, notation)
    return f"{notation.forall}{groups}: {claim}" if groups else claim


def _stated_conditions(statement: Statement) -> list[Expr]:
    """The definedness conditions as a reader needs them after the claim: one guarded by the
    statement's own domains and hypotheses is shown without the guard, which the claim already
    states (the checkers keep the guard)."""
    assumed = set(statement.assumptions())
    shown: list[Expr] = []
    for condition in statement.definedness():
        if isinstance(condition, Op) and condition.name == "implies" and set(conjuncts(condition.args[0])) <= assumed:
            condition = condition.args[1]
        if condition not in shown and condition not in assumed:
            shown.append(condition)
    return shown


def _grouped(statement: Statement, notation: Notation) -> str:
    """`a, b ∈ ℤ, x ∈ ℝ`: variables of one domain together, in order of first appearance."""
    order: dict[Domain, list[str]] = {}
    for variable in statement.variables:
        order.setdefault(variable.domain, []).append(variable.name)
    return ", ".join(
        f"{', '.join(names)}{notation.member}{notation.domains[domain]}" for domain, names in order.items()
    )


class _Printer:
    def __init__(self, notation: Notation) -> None:
        self.notation = notation
        self.latex = notation is LATEX

    def show(self, expr: Expr, context: int = 0) -> str:
        text, strength = self._shown(expr)
        return f"({text})" if strength < context else text

    def _shown(self, expr: Expr) -> tuple[str, int]:
        if isinstance(expr, Const):
            return self._number(expr.value)
        if isinstance(expr, Var):
            return (self._variable(expr.name), ATOM)
        if isinstance(expr, Reduce):
            return (self._reduce(expr), PRECEDENCE["add"])
        return self._operation(expr)

    def _operation(self, expr: Op) -> tuple[str, int]:
        name, args = expr.name, expr.args
        symbols = self.notation.symbols
        if name in ("true", "false"):
            return (self.notation.true if name == "true" else self.notation.false, ATOM)
        if name in ("neg", "not"):
            return (symbols[name] + self.show(args[0], PRECEDENCE[name]), PRECEDENCE[name])
        if name == "pow":
            base = self.show(args[0], ATOM)
            exponent = self.show(args[1], 0 if self.latex else ATOM)
            return (f"{base}^{{{exponent}}}" if self.latex else f"{base}^{exponent}", PRECEDENCE["pow"])
        if name == "truediv" and self.latex:
            return (rf"\frac{{{self.show(args[0])}}}{{{self.show(args[1])}}}", ATOM)
        if name in PRECEDENCE:
            strength = PRECEDENCE[name]
            # Left-associative: the right operand of - / div mod binds tighter.
            right_strength = strength + 1 if name in ("sub", "truediv", "floordiv", "mod", "implies") else strength
            shown = [self.show(args[0], strength + (1 if name in ("implies", "iff") else 0))]
            shown += [self.show(arg, right_strength) for arg in args[1:]]
            if name in ("add", "sub"):
                # "a + b mod m" reads as (a + b) mod m to a mathematician: a remainder in a sum is bracketed.
                shown = [
                    self.show(arg, ATOM) if isinstance(arg, Op) and arg.name in ("mod", "floordiv") else text
                    for arg, text in zip(args, shown)
                ]
            return (symbols[name].join(shown), strength)
        if name == "ite":
            condition, then, otherwise = (self.show(arg) for arg in args)
            word = (r"\text{ if } ", r"\text{ else } ") if self.latex else (" if ", " else ")
            return (f"{then}{word[0]}{condition}{word[1]}{otherwise}", 0)
        template = self.notation.functions[name]
        shown_args = [self.show(arg) for arg in args]
        strength = PRECEDENCE["eq"] if name in ("divides", "even", "odd") else ATOM
        return (template.format(*shown_args, args=", ".join(shown_args)), strength)

    def _reduce(self, expr: Reduce) -> str:
        symbol = {"sum": r"\sum" if self.latex else "Σ", "prod": r"\prod" if self.latex else "Π",
                  "all": r"\bigwedge" if self.latex else "∀", "any": r"\bigvee" if self.latex else "∃"}[expr.kind]  # fmt: skip
        last = _minus_one(expr.high)
        condition = ""
        if expr.condition is not None:
            condition = (r" \\ " if self.latex else ", ") + self.show(expr.condition)
        return self.notation.reduce.format(
            symbol=symbol,
            index=self._variable(expr.index),
            low=self.show(expr.low),
            last=self.show(last),
            condition=condition,
            body=self.show(expr.body, PRECEDENCE["mul"]),
        )

    def _number(self, value: int | Fraction) -> tuple[str, int]:
        if isinstance(value, int):
            return (str(value), ATOM if value >= 0 else PRECEDENCE["neg"])
        sign = "-" if value < 0 else ""
        if self.latex:
            return (
                rf"{sign}\frac{{{abs(value.numerator)}}}{{{value.denominator}}}",
                ATOM if not sign else PRECEDENCE["neg"],
            )
        return (f"{value.numerator}/{value.denominator}", PRECEDENCE["truediv"])

    def _variable(self, name: str) -> str:
        if not self.latex:
            return name
        head, _, tail = name.partition("_")
        escaped = head if len(head) == 1 else rf"\mathit{{{head}}}"
        return f"{escaped}_{{{tail}}}" if tail else escaped


def _minus_one(expr: Expr) -> Expr:
    """The last index of range(low, high): `n` for `n + 1`, `9` for `10`."""
    if isinstance(expr, Const) and isinstance(expr.value, int):
        return Const(expr.value - 1)
    if isinstance(expr, Op) and expr.name == "add" and expr.args[1] == Const(1):
        return expr.args[0]
    return Op("sub", (expr, Const(1)))


def value_text(value: object) -> str:
    """A counterexample's value as written: 3, -1/2, or an interval's midpoint rounded (≈1.4142)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Fraction):
        return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    low, high = getattr(value, "low", None), getattr(value, "high", None)
    if low is not None and high is not None:
        return f"≈{float((low + high) / 2):.6g}"
    return str(value)
