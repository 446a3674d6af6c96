"""The kernel's rendering read back: the grammar a researcher reads the printed statement with,
applied to render.py's text and LaTeX.

It is strict where a reader could hesitate, and refuses those forms rather than guess:
`a mod 2·b`, `a + b mod m`, `a·b/c`, `a ∧ b ∨ c`, `−a mod 3`, `a < b < c`, `x^y^z`, `¬a = b`. The
printer never writes them (it brackets instead), and admission.py compares what this reads with
the tree the checkers check: a rendering that reads otherwise fails closed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from lemmata.kernel.render import DOMAIN_SPELLINGS, SPELLINGS
from lemmata.kernel.statement import Statement, Variable
from lemmata.kernel.tree import Const, Expr, FormalError, Op, Reduce, Var

NUMBER = re.compile(r"\d+(?:\.\d+)?")
NAME = re.compile(r"[^\W\d_]\w*")
LATEX_NAME = re.compile(
    r"(?:(?P<one>[^\W\d_])|\\mathit\{(?P<many>[^\W\d_]\w*)\})(?:_\{(?P<tail>\w+)\})?"
    r"|\\mathit\{(?P<ending>[^\W\d_][^\W_]*)\\_\}"  # a name that ends at its first _ (render.latex_name)
)
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge", "divides")
WORDS = ("div", "mod", "even", "odd", "if", "else", "where", "true", "false")


class Misread(FormalError):
    """The rendering does not read as one statement of the grammar."""


@dataclass(frozen=True)
class _Lexeme:
    kind: str  # "sym" (a spelling), "num", "var", "domain", "end"
    text: str


@dataclass(frozen=True)
class Paren:
    """A parenthesised expression while reading: the grammar's rules look at bare children only."""

    expr: Expr


@dataclass(frozen=True)
class Reading:
    """What a rendering says: the statement, and the conditions of definedness it states."""

    statement: Statement
    conditions: tuple[Expr, ...]


def read_text(text: str) -> Reading:
    return _Reader(_text_lexemes(text), latex=False).statement()


def read_latex(latex: str) -> Reading:
    return _Reader(_latex_lexemes(latex), latex=True).statement()


def _text_lexemes(text: str) -> list[_Lexeme]:
    symbols = sorted({spelling[0].strip() for spelling in SPELLINGS.values() if spelling[0].strip()}, key=len)[::-1]
    domains = sorted(((spelling[0], domain) for domain, spelling in DOMAIN_SPELLINGS.items()), key=lambda d: -len(d[0]))
    lexemes, position = [], 0
    while position < len(text):
        if text[position].isspace():
            position += 1
            continue
        domain = next((d for spelling, d in domains if text.startswith(spelling, position)), None)
        if domain is not None:
            lexemes.append(_Lexeme("domain", domain))
            position += len(DOMAIN_SPELLINGS[domain][0])
            continue
        opener = next(
            (s for s in symbols if s.endswith(("(", "[")) and len(s) > 1 and text.startswith(s, position)), None
        )
        if opener is not None:
            lexemes.append(_Lexeme("sym", opener))
            position += len(opener)
            continue
        if found := NAME.match(text, position):
            word = found.group()
            lexemes.append(_Lexeme("sym" if word in WORDS else "var", word))
            position = found.end()
            continue
        if found := NUMBER.match(text, position):
            lexemes.append(_Lexeme("num", found.group()))
            position = found.end()
            continue
        symbol = next((s for s in symbols if text.startswith(s, position)), None)
        if symbol is None:
            raise Misread(f"the rendering holds {text[position]!r}, which the grammar does not know")
        lexemes.append(_Lexeme("sym", symbol))
        position += len(symbol)
    return [*lexemes, _Lexeme("end", "")]


def _latex_lexemes(latex: str) -> list[_Lexeme]:
    symbols = {spelling[1] for spelling in SPELLINGS.values() if spelling[1]}
    domains = {spelling[1]: domain for domain, spelling in DOMAIN_SPELLINGS.items()}
    lexemes = []
    for word in latex.split():
        if word in domains:
            lexemes.append(_Lexeme("domain", domains[word]))
        elif word in symbols:
            lexemes.append(_Lexeme("sym", word))
        elif NUMBER.fullmatch(word):
            lexemes.append(_Lexeme("num", word))
        elif (found := LATEX_NAME.fullmatch(word)) and found.group("ending"):
            lexemes.append(_Lexeme("var", found.group("ending") + "_"))
        elif found:
            head = found.group("one") or found.group("many")
            lexemes.append(_Lexeme("var", head + (f"_{found.group('tail')}" if found.group("tail") else "")))
        else:
            raise Misread(f"the LaTeX holds {word!r}, which the grammar does not know")
    return [*lexemes, _Lexeme("end", "")]


def strip(expr: Expr | Paren) -> Expr:
    return expr.expr if isinstance(expr, Paren) else expr


def _bare(expr: Expr | Paren, *names: str) -> bool:
    """`expr` is one of the operations `names`, not parenthesised."""
    return isinstance(expr, Op) and expr.name in names


def first_excluded(last: Expr) -> Expr:
    """range's `high` from the last index printed (render.last_index undone)."""
    if isinstance(last, Const) and isinstance(last.value, int):
        return Const(last.value + 1)
    if isinstance(last, Op) and last.name == "sub" and last.args[1] == Const(1):
        return last.args[0]
    return Op("add", (last, Const(1)))


class _Reader:
    def __init__(self, lexemes: list[_Lexeme], latex: bool) -> None:
        self.lexemes = lexemes
        self.position = 0
        self.column = 1 if latex else 0

    # -- tokens --------------------------------------------------------------------------------

    def spelling(self, name: str) -> str:
        return SPELLINGS[name][self.column].strip()

    def at(self, *names: str) -> str | None:
        """Which of the symbols `names` is next (their spellings may coincide: the first wins)."""
        lexeme = self.lexemes[self.position]
        if lexeme.kind != "sym":
            return None
        return next((name for name in names if self.spelling(name) == lexeme.text), None)

    def accept(self, name: str) -> bool:
        if not self.spelling(name):  # a token with no spelling here (the text's end of a power)
            return True
        if self.at(name):
            self.position += 1
            return True
        return False

    def expect(self, name: str) -> None:
        if not self.accept(name):
            raise self.error(f"`{self.spelling(name)}` expected")

    def take(self, kind: str) -> str:
        lexeme = self.lexemes[self.position]
        if lexeme.kind != kind:
            raise self.error(f"a {kind} expected")
        self.position += 1
        return lexeme.text

    def error(self, why: str) -> Misread:
        lexeme = self.lexemes[self.position]
        seen = lexeme.text or "the end"
        return Misread(f"the rendering does not read as one statement: {why}, at {seen!r}")

    # -- the statement -------------------------------------------------------------------------

    def statement(self) -> Reading:
        variables: list[Variable] = []
        if self.accept("forall"):
            names: list[str] = []
            while True:
                names.append(self.take("var"))
                if self.accept("in"):
                    domain = self.take("domain")
                    variables += [Variable(name, domain) for name in names]  # type: ignore[arg-type]
                    names = []
                    if self.accept("colon"):
                        break
                self.expect(",")
        left = self.disjunction()
        hypotheses: list[Expr] = []
        if self.accept("claim"):
            hypotheses = [strip(part) for part in (left.args if _bare(left, "and") else (left,))]  # type: ignore[union-attr]
            conclusion = strip(self.disjunction())
        else:
            conclusion = strip(left)
        conditions = []
        if self.accept("where"):
            conditions.append(strip(self.expression()))
            while self.accept(","):
                conditions.append(strip(self.expression()))
        if self.lexemes[self.position].kind != "end":
            raise self.error("the statement goes on")
        return Reading(Statement(tuple(variables), tuple(hypotheses), conclusion), tuple(conditions))

    # -- expressions, loosest first ------------------------------------------------------------

    def expression(self) -> Expr | Paren:
        left = self.disjunction()
        operator = self.at("implies", "iff")
        if operator is None:
            return left
        self.position += 1
        right = self.disjunction()
        if self.at("implies", "iff"):
            raise self.error("⇒ and ⇔ do not chain: parenthesise")
        return Op(operator, (strip(left), strip(right)))

    def disjunction(self) -> Expr | Paren:
        parts = [self.conjunction()]
        while self.accept("or"):
            parts.append(self.conjunction())
        if len(parts) == 1:
            return parts[0]
        if any(_bare(part, "and") for part in parts):
            raise self.error("∧ inside ∨ must be parenthesised")
        return Op("or", tuple(strip(part) for part in parts))

    def conjunction(self) -> Expr | Paren:
        parts = [self.negation()]
        while self.accept("and"):
            parts.append(self.negation())
        return parts[0] if len(parts) == 1 else Op("and", tuple(strip(part) for part in parts))

    def negation(self) -> Expr | Paren:
        if self.accept("not"):
            return Op("not", (strip(self.primary()),))
        return self.comparison()

    def comparison(self) -> Expr | Paren:
        left = self.additive()
        parity = self.at("even", "odd")
        operator = parity or self.at(*COMPARISONS)
        if operator is None:
            return left
        self.position += 1
        node = Op(operator, (strip(left),) if parity else (strip(left), strip(self.additive())))
        if self.at("even", "odd", *COMPARISONS):
            raise self.error("comparisons do not chain: join them with ∧")
        return node

    def additive(self) -> Expr | Paren:
        left = self.reduction() if self.at("sum", "prod", "all", "any") else self.term()
        while (operator := self.at("add", "sub")) is not None:
            self.position += 1
            right = self.term()
            if _bare(left, "floordiv", "mod") or _bare(right, "floordiv", "mod"):
                raise self.error("div and mod inside a sum must be parenthesised")
            left = Op(operator, (strip(left), strip(right)))
        return left

    def term(self) -> Expr | Paren:
        left = self.unary()
        while (operator := self.at("mul", "truediv", "floordiv", "mod")) is not None:
            self.position += 1
            right = self.unary()
            if _bare(right, "neg"):
                raise self.error("a negative right operand must be parenthesised")
            if operator == "mul" and _bare(left, "truediv", "floordiv", "mod"):
                raise self.error("a quotient or remainder before · must be parenthesised")
            if operator != "mul" and _bare(left, "mul", "truediv", "floordiv", "mod", "neg"):
                raise self.error("a product, quotient or negation before /, div or mod must be parenthesised")
            left = Op(operator, (strip(left), strip(right)))
        return left

    def unary(self) -> Expr | Paren:
        if self.accept("neg"):
            return Op("neg", (strip(self.power()),))
        return self.power()

    def power(self) -> Expr | Paren:
        base = self.primary()
        if not self.at("pow"):
            return base
        self.position += 1
        exponent = self.primary()
        self.expect("pow_end")
        if self.at("pow"):
            raise self.error("powers do not chain: parenthesise")
        return Op("pow", (strip(base), strip(exponent)))

    def primary(self) -> Expr | Paren:
        lexeme = self.lexemes[self.position]
        if lexeme.kind == "num":
            self.position += 1
            value = Fraction(lexeme.text)
            return Const(value.numerator if value.denominator == 1 and "." not in lexeme.text else value)
        if lexeme.kind == "var":
            self.position += 1
            return Var(lexeme.text)
        for word in ("true", "false"):
            if self.accept(word):
                return Op(word, ())
        if self.accept("("):
            return self.parenthesised()
        for opener, closer, name in (
            ("abs_l", "abs_r", "abs"),
            ("floor_l", "floor_r", "floor"),
            ("ceil_l", "ceil_r", "ceil"),
            ("sqrt", "sqrt_end", "sqrt"),
        ):
            if self.accept(opener):
                inner = self.expression()
                self.expect(closer)
                return Op(name, (strip(inner),))
        for function in ("gcd", "lcm", "min", "max"):
            if self.accept(function):
                args = [strip(self.expression())]
                while self.accept(","):
                    args.append(strip(self.expression()))
                self.expect(")")
                return Op(function, tuple(args))
        raise self.error("a number, a name or a parenthesis expected")

    def parenthesised(self) -> Expr | Paren:
        inner: Expr = strip(self.expression())
        if self.accept("if"):
            condition = strip(self.expression())
            self.expect("else")
            inner = Op("ite", (condition, inner, strip(self.expression())))
        self.expect(")")
        if self.accept("factorial"):
            return Op("factorial", (inner,))
        return Paren(inner)

    def reduction(self) -> Expr:
        kind = self.at("sum", "prod", "all", "any")
        assert kind is not None
        self.position += 1
        low = strip(self.additive())
        self.expect("le")
        index = self.take("var")
        self.expect("le")
        last = strip(self.additive())
        condition = None
        if self.accept("range_if"):
            condition = strip(self.expression())
        self.expect("range_end")
        body = self.term()
        return Reduce(kind, index, low, first_excluded(last), strip(body), condition)
