"""A formal statement as a researcher reads it: one line of plain text with Unicode symbols (the
cards, the review gate, `lemmata check`) and LaTeX (the paper), both spelled from one sequence
of tokens.

Precedence is explicit wherever a reader could take it another way: `(a mod 2)·b`, never
`a mod 2·b`; `(a + b) mod m`; `(a ∧ b) ∨ c`; `(a·b)/c`; `x^(n + 1)`; `¬(a = b)`. The grammar a
reader applies — and no other — is readback.py's, which refuses every form left out here: the
kernel admits a statement only when both renderings read back to the very tree it checks
(admission.py), so what is shown is what was checked.

The LaTeX is the same tokens spelled in LaTeX, separated by spaces (none of its tokens has one):
readback.py reads it with the same grammar.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from lemmata.kernel.statement import Domain, Statement, decimal_text
from lemmata.kernel.surd import Surd, surd_text
from lemmata.kernel.tree import Const, Expr, FormalError, Op, Reduce, Var, conjuncts

#: Token names and their two spellings (text, LaTeX). Text spacing is part of the text spelling.
SPELLINGS: dict[str, tuple[str, str]] = {
    "(": ("(", "("), ")": (")", ")"), ",": (", ", ","),
    "add": (" + ", "+"), "sub": (" − ", "-"), "mul": ("·", r"\cdot"), "truediv": ("/", "/"),
    "floordiv": (" div ", r"\mathbin{\mathrm{div}}"), "mod": (" mod ", r"\bmod"), "neg": ("−", "-"),
    "pow": ("^", "^{"), "pow_end": ("", "}"),
    "eq": (" = ", "="), "ne": (" ≠ ", r"\neq"), "lt": (" < ", "<"), "le": (" ≤ ", r"\leq"), "gt": (" > ", ">"),
    "ge": (" ≥ ", r"\geq"), "divides": (" ∣ ", r"\mid"), "even": (" even", r"\;\mathrm{even}"),
    "odd": (" odd", r"\;\mathrm{odd}"),
    "and": (" ∧ ", r"\wedge"), "or": (" ∨ ", r"\vee"), "not": ("¬", r"\neg"), "implies": (" ⇒ ", r"\Rightarrow"),
    "iff": (" ⇔ ", r"\Leftrightarrow"), "true": ("true", r"\top"), "false": ("false", r"\bot"),
    "if": (" if ", r"\;\mathrm{if}\;"), "else": (" else ", r"\;\mathrm{else}\;"),
    "abs_l": ("|", r"\lvert"), "abs_r": ("|", r"\rvert"), "floor_l": ("⌊", r"\lfloor"), "floor_r": ("⌋", r"\rfloor"),
    "ceil_l": ("⌈", r"\lceil"), "ceil_r": ("⌉", r"\rceil"), "sqrt": ("√(", r"\sqrt{"), "sqrt_end": (")", "}"),
    "gcd": ("gcd(", r"\gcd("), "lcm": ("lcm(", r"\operatorname{lcm}("), "min": ("min(", r"\min("),
    "max": ("max(", r"\max("), "factorial": ("!", "!"),
    "sum": ("Σ[", r"\sum_{\substack{"), "prod": ("Π[", r"\prod_{\substack{"), "all": ("∀[", r"\bigwedge_{\substack{"),
    "any": ("∃[", r"\bigvee_{\substack{"), "range_if": (", ", r"\\"), "range_end": ("] ", "}}"),
    "forall": ("∀ ", r"\forall"), "in": (" ∈ ", r"\in"), "colon": (": ", ":"), "claim": (" ⇒ ", r"\;\Rightarrow\;"),
    "where": (" where ", r"\;\text{where}\;"),
}  # fmt: skip
DOMAIN_SPELLINGS: dict[Domain, tuple[str, str]] = {
    "integer": ("ℤ", r"\mathbb{Z}"),
    "natural": ("ℤ≥0", r"\mathbb{Z}_{\geq0}"),
    "positive integer": ("ℤ≥1", r"\mathbb{Z}_{\geq1}"),
    "nonzero integer": ("ℤ≠0", r"\mathbb{Z}_{\neq0}"),
    "real": ("ℝ", r"\mathbb{R}"),
    "positive real": ("ℝ>0", r"\mathbb{R}_{>0}"),
    "nonnegative real": ("ℝ≥0", r"\mathbb{R}_{\geq0}"),
    "nonzero real": ("ℝ≠0", r"\mathbb{R}_{\neq0}"),
    "rational": ("ℚ", r"\mathbb{Q}"),
}
#: How tightly a bare node binds; a parent asks a least strength of each child (`_needs`), and a
#: weaker child is parenthesised.
STRENGTH = {
    "ite": 0, "implies": 1, "iff": 1, "or": 2, "and": 3, "not": 4,
    "eq": 5, "ne": 5, "lt": 5, "le": 5, "gt": 5, "ge": 5, "divides": 5, "even": 5, "odd": 5,
    "add": 6, "sub": 6, "mul": 7, "truediv": 7, "floordiv": 7, "mod": 7, "neg": 8, "pow": 9,
}  # fmt: skip
ATOM = 10
REDUCTION_STRENGTH = 6
#: Operations a reader may take as grouping otherwise, never left bare beside these parents.
REMAINDERS = ("floordiv", "mod")
QUOTIENTS = ("truediv", "floordiv", "mod")


@dataclass(frozen=True)
class Token:
    name: str  # a key of SPELLINGS, or "num", "var", "domain"
    value: str = ""  # the number, the variable's name, the domain


def strength(expr: Expr) -> int:
    if isinstance(expr, Reduce):
        return REDUCTION_STRENGTH
    if isinstance(expr, Op):
        return STRENGTH.get(expr.name, ATOM)
    return ATOM


def _allowed(parent: str, position: int, child: Expr) -> bool:
    """Whether `child` may stand bare as argument `position` of `parent`: the reader's rules."""
    bare, name = strength(child), child.name if isinstance(child, Op) else ""
    if parent in ("implies", "iff"):
        return bare >= 2
    if parent in ("and", "or", "hypothesis"):
        return bare >= 4
    if parent == "not" or parent in ("pow_base", "pow_exponent"):
        return bare >= ATOM
    if parent in ("eq", "ne", "lt", "le", "gt", "ge", "divides", "even", "odd", "bound"):
        return bare >= 6
    if parent in ("add", "sub"):
        return bare >= (6 if position == 0 else 7) and name not in REMAINDERS
    if parent == "mul":
        return bare >= 9 or (position == 0 and bare >= 7 and name not in QUOTIENTS)
    if parent in QUOTIENTS or parent == "neg":
        return bare >= 9
    if parent == "body":
        return bare >= 7
    if parent == "conclusion":
        return bare >= 2
    return bare >= 1  # inside delimiters: function arguments, ite's parts, a range's condition


class _Printer:
    def __init__(self) -> None:
        self.tokens: list[Token] = []

    def emit(self, name: str, value: str = "") -> None:
        self.tokens.append(Token(name, value))

    def child(self, parent: str, position: int, expr: Expr) -> None:
        if _allowed(parent, position, expr):
            self.node(expr)
            return
        self.emit("(")
        self.node(expr)
        self.emit(")")

    def node(self, expr: Expr) -> None:
        if isinstance(expr, Const):
            self._number(expr.value)
        elif isinstance(expr, Var):
            self.emit("var", expr.name)
        elif isinstance(expr, Reduce):
            self._reduce(expr)
        else:
            self._operation(expr)

    def _number(self, value: int | Fraction) -> None:
        if value < 0:
            raise FormalError("a negative number is written as the negation of its magnitude")
        self.emit("num", str(value) if isinstance(value, int) else decimal_text(value))

    def _operation(self, expr: Op) -> None:
        name, args = expr.name, expr.args
        if name in ("true", "false"):
            self.emit(name)
        elif name in ("neg", "not"):
            self.emit(name)
            self.child(name, 0, args[0])
        elif name in ("even", "odd"):
            self.child(name, 0, args[0])
            self.emit(name)
        elif name == "pow":
            self.child("pow_base", 0, args[0])
            self.emit("pow")
            self.child("pow_exponent", 1, args[1])
            self.emit("pow_end")
        elif name in ("abs", "floor", "ceil", "sqrt"):
            close = {"abs": "abs_r", "floor": "floor_r", "ceil": "ceil_r", "sqrt": "sqrt_end"}[name]
            self.emit({"abs": "abs_l", "floor": "floor_l", "ceil": "ceil_l", "sqrt": "sqrt"}[name])
            self.child("delimited", 0, args[0])
            self.emit(close)
        elif name in ("gcd", "lcm", "min", "max"):
            self.emit(name)
            for position, arg in enumerate(args):
                if position:
                    self.emit(",")
                self.child("delimited", position, arg)
            self.emit(")")
        elif name == "factorial":
            self.emit("(")
            self.node(args[0])
            self.emit(")")
            self.emit("factorial")
        elif name == "ite":
            self.child("delimited", 1, args[1])
            self.emit("if")
            self.child("delimited", 0, args[0])
            self.emit("else")
            self.child("delimited", 2, args[2])
        else:
            for position, arg in enumerate(args):
                if position:
                    self.emit(name)
                self.child(name, position, arg)

    def _reduce(self, expr: Reduce) -> None:
        self.emit(expr.kind)
        self.child("bound", 0, expr.low)
        self.emit("le")
        self.emit("var", expr.index)
        self.emit("le")
        self.child("bound", 1, last_index(expr.high))
        if expr.condition is not None:
            self.emit("range_if")
            self.child("delimited", 0, expr.condition)
        self.emit("range_end")
        self.child("body", 0, expr.body)


def last_index(high: Expr) -> Expr:
    """The last index of range(low, high), as a reader writes it: `9` for 10, `n` for n + 1,
    `n − 1` for n (readback.first_excluded undoes it)."""
    if isinstance(high, Const) and isinstance(high.value, int) and high.value >= 1:
        return Const(high.value - 1)
    if isinstance(high, Op) and high.name == "add" and high.args[1] == Const(1) and not _ends_in_one(high.args[0]):
        return high.args[0]
    return Op("sub", (high, Const(1)))


def _ends_in_one(expr: Expr) -> bool:
    """A last index that readback would take for another form: a number, or `X − 1`."""
    return isinstance(expr, Const) or (isinstance(expr, Op) and expr.name == "sub" and expr.args[1] == Const(1))


def statement_tokens(statement: Statement) -> list[Token]:
    printer = _Printer()
    if statement.variables:
        printer.emit("forall")
        for position, variable in enumerate(statement.variables):
            if position:
                printer.emit(",")
            printer.emit("var", variable.name)
            following = statement.variables[position + 1] if position + 1 < len(statement.variables) else None
            if following is None or following.domain != variable.domain:
                printer.emit("in")
                printer.emit("domain", variable.domain)
        printer.emit("colon")
    for position, hypothesis in enumerate(statement.hypotheses):
        if position:
            printer.emit("and")
        printer.child("hypothesis", position, hypothesis)
    if statement.hypotheses:
        printer.emit("claim")
    printer.child("conclusion", 0, statement.conclusion)
    for position, condition in enumerate(stated_conditions(statement)):
        printer.emit("where" if position == 0 else ",")
        printer.child("hypothesis", position, condition)
    return printer.tokens


#: More conditions of definedness than a reader can take in: such a statement is not admitted.
MAX_SHOWN_CONDITIONS = 24


def stated_conditions(statement: Statement) -> list[Expr]:
    """The definedness conditions as a reader needs them after the claim — those the solver and
    Coq assume, so of the statement with its sums written out (`Σ[0 ≤ k ≤ 1] 1/(x − k)` needs
    x − 0 ≠ 0 and x − 1 ≠ 0) when they can be. One guarded by the statement's own domains and
    hypotheses is shown without the guard, which the claim already states (the checkers keep
    the guard). FormalError past MAX_SHOWN_CONDITIONS."""
    try:
        checked = statement.expanded()
    except FormalError:  # no solver or Coq states it; the evaluator meets each term's conditions itself
        checked = statement
    assumed = set(checked.assumptions())
    shown: list[Expr] = []
    for condition in checked.definedness():
        if isinstance(condition, Op) and condition.name == "implies" and set(conjuncts(condition.args[0])) <= assumed:
            condition = condition.args[1]
        if condition not in shown and condition not in assumed:
            shown.append(condition)
    if len(shown) > MAX_SHOWN_CONDITIONS:
        raise FormalError(f"the statement is defined under {len(shown)} conditions, more than can be shown")
    return shown


def spelled(tokens: list[Token], latex: bool) -> str:
    index = 1 if latex else 0
    words = []
    for token in tokens:
        if token.name == "domain":
            words.append(DOMAIN_SPELLINGS[token.value][index])  # type: ignore[index]
        elif token.name == "num":
            words.append(token.value)
        elif token.name == "var":
            words.append(latex_name(token.value) if latex else token.value)
        else:
            words.append(SPELLINGS[token.name][index])
    if latex:
        return " ".join(word for word in words if word)
    return "".join(words).strip()


def latex_name(name: str) -> str:
    """`x`, `\\mathit{ab}`, `x_{1}`, `\\mathit{ab}_{c_d}`: a name's head, then what follows its first _;
    `\\mathit{x\\_}` for a name that ends at its first _ (`x_`), which a subscript would show as x."""
    head, underscore, tail = name.partition("_")
    if underscore and not tail:
        return rf"\mathit{{{head}\_}}"
    shown = head if len(head) == 1 else rf"\mathit{{{head}}}"
    return f"{shown}_{{{tail}}}" if tail else shown


def statement_text(statement: Statement) -> str:
    return spelled(statement_tokens(statement), latex=False)


def statement_latex(statement: Statement) -> str:
    return spelled(statement_tokens(statement), latex=True)


def expression_text(expr: Expr) -> str:
    printer = _Printer()
    printer.node(expr)
    return spelled(printer.tokens, latex=False)


def value_text(value: object) -> str:
    """A value as written: 3, -1/2, 13/2 + 1/2*sqrt(73), or an interval's midpoint rounded (≈1.4142)."""
    if isinstance(value, Surd):
        return surd_text(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Fraction):
        return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    low, high = getattr(value, "low", None), getattr(value, "high", None)
    if low is not None and high is not None:
        return f"≈{float((low + high) / 2):.6g}"
    return str(value)
