"""The formal language of lemmata's statements: a small, typed expression language in Python's syntax.

A model writes a statement's formal form as typed variables, hypotheses and a conclusion, each an
expression such as `(a + b) % 2 == 0` or `a**2 + b**2 >= 2*a*b`. This module reads such text into
a small tree (`Expr`) with Python's own parser, keeping only a white-list of node kinds: nothing
the model wrote is ever evaluated by Python. Every checker's input — the sampled predicate
(`evaluate.py`), the solver's query (`smt.py`), the proof assistant's statement (`coq_terms.py`) —
is derived from this one tree, so the checkers can never disagree about what they check.

Semantics, shared by every checker:
- integers are unbounded; `//` and `%` round towards minus infinity (Python's, and Coq's Z.div
  and Z.modulo); `/` is exact division and gives a real;
- `and`, `or`, `implies` and `ite` read left to right: an operation is only required to be defined
  where it is reached (`x != 0 and 1/x > 1` is defined everywhere);
- a statement holds when, for every value of its variables in their domains at which each
  operation reached is defined (a divisor is not 0, a square root's argument is not negative, …),
  the hypotheses imply the conclusion. `definedness()` makes these conditions explicit, and each
  checker assumes them; the paper shows them beside the statement.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

Kind = Literal["int", "real", "bool"]


class FormalError(ValueError):
    """A formal statement that cannot be read or typed; the message says what to write instead."""


@dataclass(frozen=True)
class Const:
    value: int | Fraction


@dataclass(frozen=True)
class Var:
    name: str


@dataclass(frozen=True)
class Op:
    """An operation of OPERATIONS applied to its arguments."""

    name: str
    args: tuple[Expr, ...]


@dataclass(frozen=True)
class Reduce:
    """`kind` (sum, prod, all, any) of `body` over the integers `index` from `low` to `high` - 1
    (Python's `range`) at which `condition` holds (None: all of them)."""

    kind: str
    index: str
    low: Expr
    high: Expr
    body: Expr
    condition: Expr | None = None


Expr = Const | Var | Op | Reduce

ARITHMETIC = ("add", "sub", "mul", "neg", "abs", "min", "max")
COMPARISONS = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}
BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv"}
BINARY |= {ast.Mod: "mod", ast.Pow: "pow"}
LOGIC = ("and", "or", "not", "implies", "iff")
#: Functions a statement may call, by the names a model writes, with their arity (None: 2 or more).
FUNCTIONS: dict[str, tuple[str, int | None]] = {
    "abs": ("abs", 1),
    "min": ("min", None),
    "max": ("max", None),
    "sqrt": ("sqrt", 1),
    "floor": ("floor", 1),
    "ceil": ("ceil", 1),
    "ceiling": ("ceil", 1),
    "gcd": ("gcd", 2),
    "lcm": ("lcm", 2),
    "factorial": ("factorial", 1),
    "pow": ("pow", 2),
    "implies": ("implies", 2),
    "iff": ("iff", 2),
    "ite": ("ite", 3),
    "divides": ("divides", 2),
    "even": ("even", 1),
    "odd": ("odd", 1),
}
REDUCTIONS = {"sum": "sum", "prod": "prod", "all": "all", "any": "any"}
#: Module prefixes a model puts before a function name (`math.sqrt`): the name is what counts.
MODULE_PREFIXES = ("math", "sympy", "sp", "np", "numpy", "Math")
#: At most this many terms are expanded from sums, products, all and any (`expand_reductions`).
EXPANSION_LIMIT = 5000


# -- reading -------------------------------------------------------------------------------------

_UNICODE = {"≤": "<=", "≥": ">=", "≠": "!=", "·": "*", "×": "*", "−": "-", "∧": " and ", "∨": " or ", "¬": " not "}
_LATEX = (
    (r"\\cdot\b", "*"),
    (r"\\times\b", "*"),
    (r"\\leq?\b", "<="),
    (r"\\geq?\b", ">="),
    (r"\\neq?\b", "!="),
    (r"\\lt\b", "<"),
    (r"\\gt\b", ">"),
    (r"\\(?:left|right|big|Big|bigg|Bigg)\b\s*", ""),
    (r"\\[,;:! ]", " "),
)
#: The innermost `\frac{A}{B}` (or `\dfrac`, `\tfrac`) and `\sqrt{A}` of LaTeX a model copies from the prose.
_LATEX_FRACTION = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_LATEX_ROOT = re.compile(r"\\sqrt\s*\{([^{}]*)\}")
#: `|x + 1|`: an absolute value between bars (no bar inside).
_BARS = re.compile(r"\|([^|]+)\|")
#: Words of prose in an expression ("p and q are prime numbers"): not a name a statement declares.
_WORDS = re.compile(r"\b(?!and\b|or\b|not\b|for\b|in\b|if\b|else\b|range\b)[A-Za-z]{3,}\b(?!\s*\()")
#: An existence claim in words, which the language states as a divisibility (the embedded
#: formalizer wrote "there exists an integer k such that a = 2*k", 2026-11-26).
_EXISTENCE = re.compile(r"\b(?:there\s+(?:exists?|is|are)|for\s+some|exists?)\b", re.IGNORECASE)
_IMPLICIT_PRODUCT = re.compile(r"\b(\d+(?:\.\d+)?)(?=(?!e[+-]?\d)[A-Za-z_(])")
_CLOSE_THEN_OPERAND = re.compile(r"\)(?=[A-Za-z_(0-9])")
_SINGLE_EQUALS = re.compile(r"(?<![<>=!])=(?!=)")
#: `036`, an AIME answer: Python refuses leading zeros in an integer (not in `0.36`, `10`, `0`).
_LEADING_ZEROS = re.compile(r"(?<![\w.])0+(?=\d)")
#: `or(A, B)` and `and(A, B, C)`: the connectives written as functions (the embedded formalizer,
#: 2026-11-26), where no operand comes before them.
_CONNECTIVE_CALL = re.compile(r"(?:^|(?<=[(,\[]))\s*\b(and|or)\s*\(")


#: Parity, divisibility and being a multiple said in words, which the language states as a
#: remainder: "x = 2*k for some integer k" and "there exists an integer k such that x = 2*k" (the
#: embedded formalizer wrote both, the second even after the hint below: L1 of the README's main
#: command went unformalized, and a model-written test then "contradicted" it, 2026-11-29);
#: "a + b is even", "n is odd", "n is divisible by 3", "a and b are even". The factor must be a
#: positive integer: `b % a` is undefined at a = 0, where "b = a*k for some k" is not.
_NAME = r"[A-Za-z_]\w*"
_MULTIPLE = rf"(?P<lhs>[^=<>!]+?)\s*=\s*(?P<factor>[1-9]\d*)\s*\*?\s*(?P<k>{_NAME})"
_END = r"\s*\.?\s*$"
_SOME_INTEGER = r"(?:an?\s+|some\s+)?(?:integer\s+)?"
_EXISTS_MULTIPLE = re.compile(
    rf"^\s*there\s+(?:exists?|is)\s+{_SOME_INTEGER}(?P<bound>{_NAME})\s+(?:such\s+that|with|where)\s+{_MULTIPLE}{_END}",
    re.IGNORECASE,
)
_MULTIPLE_FOR_SOME = re.compile(
    rf"^\s*{_MULTIPLE}\s+for\s+(?:some|an?)\s+(?:integer\s+)?(?P<bound>{_NAME}){_END}", re.IGNORECASE
)
_PARITY = re.compile(
    rf"^\s*(?:both\s+)?(?P<lhs>.+?)\s+(?P<verb>is|are)\s+(?:both\s+)?(?:an?\s+)?(?P<parity>even|odd)"
    rf"(?:\s+(?:integers?|numbers?))?{_END}",
    re.IGNORECASE,
)
_DIVISIBLE = re.compile(rf"^\s*(?P<lhs>.+?)\s+is\s+divisible\s+by\s+(?P<factor>[1-9]\d*){_END}", re.IGNORECASE)
_NAMES_JOINED = re.compile(rf"^\s*{_NAME}(?:\s*,\s*{_NAME})*\s*,?\s+and\s+{_NAME}\s*$")


def phrases_as_remainders(text: str) -> str:
    """`text` with a multiple, a parity or a divisibility said in words written as a remainder
    (`(x) % 2 == 0`); anything else unchanged."""
    for pattern in (_EXISTS_MULTIPLE, _MULTIPLE_FOR_SOME):
        found = pattern.match(text)
        bound = found and found.group("k")
        if found and bound == found.group("bound") and not re.search(rf"\b{bound}\b", found.group("lhs")):
            return f"({found.group('lhs').strip()}) % {found.group('factor')} == 0"
    if found := _DIVISIBLE.match(text):
        return f"({found.group('lhs').strip()}) % {found.group('factor')} == 0"
    if found := _PARITY.match(text):
        remainder = 0 if found.group("parity").lower() == "even" else 1
        subjects = [found.group("lhs").strip()]
        if found.group("verb").lower() == "are":
            if not _NAMES_JOINED.match(subjects[0]):
                return text
            subjects = [name for name in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", subjects[0]) if name]
        return " and ".join(f"({subject}) % 2 == {remainder}" for subject in subjects)
    return text


def normalised_source(text: str) -> str:
    """The spellings models use for the same thing, in Python's: `x^2`, `2a`, `a = b`, `≤`, `\\cdot`,
    `&&`, `mod`. Nothing that changes a well-formed Python expression's meaning but `^`, which
    Python reads as exclusive or and mathematics as a power (the language has no exclusive or)."""
    for symbol, ascii_form in _UNICODE.items():
        text = text.replace(symbol, ascii_form)
    for pattern, replacement in _LATEX:
        text = re.sub(pattern, replacement, text)
    text = _latex_structures(text)
    text = text.replace("^", "**").replace("&&", " and ").replace("||", " or ")
    text = _BARS.sub(r"abs(\1)", text)
    text = re.sub(r"\bmod\b", "%", text)
    text = _SINGLE_EQUALS.sub("==", text)
    text = _LEADING_ZEROS.sub("", text)
    text = _connectives_as_operators(text)
    text = _IMPLICIT_PRODUCT.sub(r"\1*", text)
    return _CLOSE_THEN_OPERAND.sub(")*", text)


def _connectives_as_operators(text: str) -> str:
    """`or(A, B)` as `((A) or (B))`, innermost last; a call whose arguments do not split at
    top-level commas is left for the parser to refuse."""
    position = 0
    while (call := _CONNECTIVE_CALL.search(text, position)) is not None:
        arguments, end = _top_level_arguments(text, call.end())
        if end is None or len(arguments) < 2:
            position = call.end()
            continue
        joined = f" {call.group(1)} ".join(f"({argument.strip()})" for argument in arguments)
        text = text[: call.start()] + f"({joined})" + text[end + 1 :]
        position = call.start() + 1
    return text


def _top_level_arguments(text: str, start: int) -> tuple[list[str], int | None]:
    """The comma-separated arguments from `start` to the parenthesis that closes the call, and its index."""
    depth, piece_start = 0, start
    pieces: list[str] = []
    for index in range(start, len(text)):
        char = text[index]
        if char in "([":
            depth += 1
        elif char in ")]" and depth > 0:
            depth -= 1
        elif char == ")":
            return [*pieces, text[piece_start:index]], index
        elif char == "," and depth == 0:
            pieces.append(text[piece_start:index])
            piece_start = index + 1
    return pieces, None


def _latex_structures(text: str) -> str:
    """`\frac{a}{b}` as `((a)/(b))`, `\\sqrt{x}` as `sqrt(x)`, innermost first, then the braces of
    exponents and groups (`x^{n+1}`) as parentheses."""
    while True:
        changed = _LATEX_FRACTION.sub(r"((\1)/(\2))", text)
        changed = _LATEX_ROOT.sub(r"sqrt(\1)", changed)
        if changed == text:
            break
        text = changed
    return text.replace("{", "(").replace("}", ")")


def parse_expression(text: str) -> Expr:
    """The tree of one expression; FormalError naming what is not part of the language."""
    source = normalised_source(phrases_as_remainders(text.strip()))
    if not source:
        raise FormalError("an expression is empty")
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as error:
        words = _WORDS.findall(source)
        hint = f" (it holds words: {', '.join(words[:3])}; write only a Python expression)" if words else ""
        if _EXISTENCE.search(text):
            hint += "; 'there is an integer k with a = 2*k' is written a % 2 == 0, 'b = a*k for some k' b % a == 0"
        raise FormalError(f"{text.strip()!r} is not an expression: {error.msg}{hint}") from None
    return _Reader(source).read(tree.body)


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source

    def read(self, node: ast.AST) -> Expr:
        if isinstance(node, ast.Constant):
            return self._constant(node)
        if isinstance(node, ast.Name):
            return Var(node.id)
        if isinstance(node, ast.UnaryOp):
            operand = self.read(node.operand)
            if isinstance(node.op, ast.USub):
                return Op("neg", (operand,))
            if isinstance(node.op, ast.UAdd):
                return operand
            if isinstance(node.op, ast.Not):
                return Op("not", (operand,))
        if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
            return Op(BINARY[type(node.op)], (self.read(node.left), self.read(node.right)))
        if isinstance(node, ast.BoolOp):
            return Op("and" if isinstance(node.op, ast.And) else "or", tuple(self.read(v) for v in node.values))
        if isinstance(node, ast.Compare):
            return self._comparison(node)
        if isinstance(node, ast.IfExp):
            return Op("ite", (self.read(node.test), self.read(node.body), self.read(node.orelse)))
        if isinstance(node, ast.Call):
            return self._call(node)
        raise FormalError(f"{self._text(node)!r} is not part of the formal language ({_what(node)})")

    def _constant(self, node: ast.Constant) -> Expr:
        if isinstance(node.value, bool):
            return Op("true" if node.value else "false", ())
        if isinstance(node.value, int):
            return Const(node.value)
        if node.value is Ellipsis:
            raise FormalError("'...' stands for terms not written: write every term, or sum(... for k in range(a, b))")
        if isinstance(node.value, float):
            # The decimal as written (0.1 is 1/10, not the nearest binary fraction).
            value = Fraction(self._text(node))
            return Const(int(value) if value.denominator == 1 else value)
        raise FormalError(f"{self._text(node)!r} is not a number")

    def _comparison(self, node: ast.Compare) -> Expr:
        parts: list[Expr] = []
        left = self.read(node.left)
        for operator, right_node in zip(node.ops, node.comparators):
            if type(operator) not in COMPARISONS:
                raise FormalError(f"{self._text(node)!r}: only ==, !=, <, <=, >, >= compare numbers")
            right = self.read(right_node)
            parts.append(Op(COMPARISONS[type(operator)], (left, right)))
            left = right
        return parts[0] if len(parts) == 1 else Op("and", tuple(parts))

    def _call(self, node: ast.Call) -> Expr:
        name = _function_name(node.func)
        if name is None:
            raise FormalError(f"{self._text(node)!r}: only named functions can be called")
        if node.keywords:
            raise FormalError(f"{self._text(node)!r}: functions take no keyword arguments here")
        if name in REDUCTIONS or name == "len":
            return self._reduction(name, node)
        lowered = name.lower()
        if lowered not in FUNCTIONS:
            known = ", ".join(sorted({*FUNCTIONS, *REDUCTIONS}))
            raise FormalError(f"{self._text(node)!r}: unknown function {name!r} (the language knows {known})")
        operation, arity = FUNCTIONS[lowered]
        args = tuple(self.read(argument) for argument in node.args)
        if (arity is None and len(args) < 2) or (arity is not None and len(args) != arity):
            wanted = "2 or more" if arity is None else str(arity)
            raise FormalError(f"{self._text(node)!r}: {name} takes {wanted} arguments")
        return Op(operation, args)

    def _reduction(self, name: str, node: ast.Call) -> Expr:
        """`sum(f(k) for k in range(a, b) if p(k))`, `all(...)`, `any(...)`, `prod(...)`, and
        `len([k for k in range(...) if ...])` (a count: the sum of 1 over the same range)."""
        generator = node.args[0] if len(node.args) == 1 else None
        if name == "len" and isinstance(generator, ast.ListComp):
            return self._comprehension("sum", Const(1), generator.generators)
        if not isinstance(generator, ast.GeneratorExp | ast.ListComp):
            raise FormalError(
                f"{self._text(node)!r}: write {name}(EXPRESSION for k in range(LOW, HIGH)), optionally with `if CONDITION`"
            )
        return self._comprehension(REDUCTIONS.get(name, name), self.read(generator.elt), generator.generators)

    def _comprehension(self, kind: str, body: Expr, generators: list[ast.comprehension]) -> Expr:
        # Nested `for` clauses are nested reductions; sum and prod of a sum nest as the same kind.
        for generator in reversed(generators):
            if not isinstance(generator.target, ast.Name) or generator.is_async:
                raise FormalError(f"{self._text(generator)!r}: iterate one variable over range(...)")
            low, high = self._range(generator.iter)
            conditions = [self.read(condition) for condition in generator.ifs]
            condition = (
                None if not conditions else conditions[0] if len(conditions) == 1 else Op("and", tuple(conditions))
            )
            body = Reduce(kind, generator.target.id, low, high, body, condition)
        return body

    def _range(self, node: ast.AST) -> tuple[Expr, Expr]:
        if not (isinstance(node, ast.Call) and _function_name(node.func) == "range" and 1 <= len(node.args) <= 2):
            raise FormalError(f"{self._text(node)!r}: a sum, product, all or any runs over range(LOW, HIGH)")
        if len(node.args) == 1:
            return Const(0), self.read(node.args[0])
        return self.read(node.args[0]), self.read(node.args[1])

    def _text(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.source, node) or ast.dump(node)


def _function_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in MODULE_PREFIXES:
        return node.attr
    return None


def _what(node: ast.AST) -> str:
    names = {
        ast.BinOp: "use + - * / // % ** only",
        ast.Subscript: "no indexing: name each value as a variable",
        ast.Attribute: "no attributes",
        ast.Lambda: "no functions of your own",
        ast.Tuple: "no tuples: state each value on its own",
        ast.List: "no lists",
        ast.Set: "no sets",
        ast.Dict: "no dictionaries",
    }
    return names.get(type(node), f"{type(node).__name__} is not allowed")


# -- types ----------------------------------------------------------------------------------------


def kind_of(expr: Expr, variables: dict[str, Kind]) -> Kind:
    """The type of `expr` with the variables' types; FormalError on a misuse (an unknown name,
    `%` of a real, a number where a condition belongs, …)."""
    if isinstance(expr, Const):
        return "int" if isinstance(expr.value, int) else "real"
    if isinstance(expr, Var):
        if expr.name not in variables:
            raise FormalError(
                f'{expr.name!r} is not declared: add {{"name": "{expr.name}", "type": ...}} to the variables'
            )
        return variables[expr.name]
    if isinstance(expr, Reduce):
        return _reduction_kind(expr, variables)
    kinds = [kind_of(arg, variables) for arg in expr.args]
    return _operation_kind(expr, kinds)


def _reduction_kind(expr: Reduce, variables: dict[str, Kind]) -> Kind:
    for bound in (expr.low, expr.high):
        if kind_of(bound, variables) != "int":
            raise FormalError(f"the range of {expr.index!r} must have integer bounds")
    inner = {**variables, expr.index: "int"}
    if expr.condition is not None and kind_of(expr.condition, inner) != "bool":
        raise FormalError(f"the condition over {expr.index!r} must be a condition, not a number")
    body = kind_of(expr.body, inner)
    if expr.kind in ("all", "any"):
        if body != "bool":
            raise FormalError(f"{expr.kind}(...) needs a condition for each {expr.index!r}")
        return "bool"
    if body == "bool":
        raise FormalError(f"{expr.kind}(...) needs a number for each {expr.index!r}")
    return body


def _operation_kind(expr: Op, kinds: list[Kind]) -> Kind:
    name = expr.name
    if name in ("true", "false"):
        return "bool"
    if name in LOGIC:
        if any(kind != "bool" for kind in kinds):
            raise FormalError(f"{name} joins conditions, not numbers")
        return "bool"
    if name == "ite":
        if kinds[0] != "bool" or (kinds[1] == "bool") != (kinds[2] == "bool"):
            raise FormalError("`A if CONDITION else B` needs a condition and two values of one kind")
        return "bool" if kinds[1] == "bool" else _numeric(kinds[1:])
    if any(kind == "bool" for kind in kinds):
        raise FormalError(f"{_spelled(name)} takes numbers, not conditions")
    if name in ("eq", "ne", "lt", "le", "gt", "ge", "divides", "even", "odd"):
        if name in ("divides", "even", "odd") and "real" in kinds:
            raise FormalError(f"{name} is about integers")
        return "bool"
    if name in ("floordiv", "mod", "gcd", "lcm", "factorial") and "real" in kinds:
        raise FormalError(f"{_spelled(name)} is about integers: use floor(x) to round a real down")
    if name in ("truediv", "sqrt"):
        return "real"
    if name in ("floor", "ceil"):
        return "int"
    if name == "pow":
        return _power_kind(expr, kinds)
    return _numeric(kinds)


def _power_kind(expr: Op, kinds: list[Kind]) -> Kind:
    exponent = expr.args[1]
    literal = _integer_literal(exponent)
    if kinds[0] == "int" and kinds[1] == "int" and (literal is None or literal >= 0):
        return "int"  # a negative variable exponent of an integer is not defined (definedness)
    return "real"


def _numeric(kinds: list[Kind]) -> Kind:
    return "real" if "real" in kinds else "int"


def _integer_literal(expr: Expr) -> int | None:
    if isinstance(expr, Const) and isinstance(expr.value, int):
        return expr.value
    if isinstance(expr, Op) and expr.name == "neg":
        inner = _integer_literal(expr.args[0])
        return None if inner is None else -inner
    return None


def _spelled(name: str) -> str:
    return {"floordiv": "//", "mod": "%", "truediv": "/", "pow": "**"}.get(name, name)


# -- definedness ----------------------------------------------------------------------------------


def definedness(expr: Expr, variables: dict[str, Kind]) -> list[Expr]:
    """The conditions under which every operation `expr` reaches is defined, each guarded by what
    must hold to reach it (`x != 0 and 1/x > 1`: none; `1/x > 1`: x != 0). Conditions inside a
    sum, product, all or any are the evaluator's to meet, term by term, and expansion's."""
    return list(_conditions(expr, variables))


def _conditions(expr: Expr, variables: dict[str, Kind]) -> Iterator[Expr]:
    if isinstance(expr, Const | Var | Reduce):
        if isinstance(expr, Reduce):
            yield from _conditions(expr.low, variables)
            yield from _conditions(expr.high, variables)
        return
    name, args = expr.name, expr.args
    if name in ("and", "or", "implies"):
        # Read left to right: each operand's conditions hold where the operands before it let it be reached.
        for position, arg in enumerate(args):
            reached = [_reaching(name, earlier) for earlier in args[:position]]
            yield from _guarded(reached, _conditions(arg, variables))
        return
    if name == "ite":
        yield from _conditions(args[0], variables)
        for guard, branch in ((args[0], args[1]), (Op("not", (args[0],)), args[2])):
            yield from _guarded([guard], _conditions(branch, variables))
        return
    for arg in args:
        yield from _conditions(arg, variables)
    for condition in _own_conditions(expr, variables):
        if not _evidently_true(condition):
            yield condition


def _guarded(guards: list[Expr], conditions: Iterator[Expr]) -> Iterator[Expr]:
    """Each condition where the guards hold; one the guards state themselves is no condition."""
    stated = {part for guard in guards for part in conjuncts(guard)}
    for condition in conditions:
        if condition in stated:
            continue
        yield condition if not guards else Op("implies", (_conjunction(guards), condition))


def conjuncts(expr: Expr) -> list[Expr]:
    """The parts of a conjunction (`a and b and c`: a, b, c); any other condition is its own part."""
    if isinstance(expr, Op) and expr.name == "and":
        return [part for arg in expr.args for part in conjuncts(arg)]
    return [expr]


def _evidently_true(condition: Expr) -> bool:
    """A condition on constants only that holds (`2 != 0`): stating it adds nothing."""
    from lemmata.formal.evaluate import evaluate  # evaluate reads this module's trees

    if free_variables(condition):
        return False
    try:
        return evaluate(condition, {}) is True
    except ArithmeticError:
        return False


def _reaching(name: str, earlier: Expr) -> Expr:
    """What an operand before makes true where the next is read: `and`, `implies` go on past a true
    one, `or` past a false one."""
    return Op("not", (earlier,)) if name == "or" else earlier


def _own_conditions(expr: Op, variables: dict[str, Kind]) -> Iterator[Expr]:
    zero = Const(0)
    name, args = expr.name, expr.args
    if name in ("truediv", "floordiv", "mod"):
        yield Op("ne", (args[1], zero))
    elif name == "divides":
        yield Op("ne", (args[0], zero))
    elif name == "sqrt":
        yield Op("ge", (args[0], zero))
    elif name == "factorial":
        yield Op("ge", (args[0], zero))
    elif name == "pow":
        literal = _integer_literal(args[1])
        exponent_kind = kind_of(args[1], variables)
        if literal is not None and literal < 0:
            yield Op("ne", (args[0], zero))
        elif literal is None and exponent_kind == "int":
            yield Op("ge", (args[1], zero))
        elif literal is None:
            yield Op("gt", (args[0], zero))  # a real exponent: a positive base


def _conjunction(parts: list[Expr]) -> Expr:
    return parts[0] if len(parts) == 1 else Op("and", tuple(parts))


# -- rewriting ------------------------------------------------------------------------------------


def free_variables(expr: Expr) -> set[str]:
    if isinstance(expr, Const):
        return set()
    if isinstance(expr, Var):
        return {expr.name}
    if isinstance(expr, Reduce):
        inner = free_variables(expr.body) | (free_variables(expr.condition) if expr.condition else set())
        return free_variables(expr.low) | free_variables(expr.high) | (inner - {expr.index})
    return set().union(*(free_variables(arg) for arg in expr.args)) if expr.args else set()


def substitute(expr: Expr, name: str, value: Expr) -> Expr:
    if isinstance(expr, Const):
        return expr
    if isinstance(expr, Var):
        return value if expr.name == name else expr
    if isinstance(expr, Reduce):
        low, high = substitute(expr.low, name, value), substitute(expr.high, name, value)
        if expr.index == name:
            return Reduce(expr.kind, expr.index, low, high, expr.body, expr.condition)
        condition = substitute(expr.condition, name, value) if expr.condition else None
        return Reduce(expr.kind, expr.index, low, high, substitute(expr.body, name, value), condition)
    return Op(expr.name, tuple(substitute(arg, name, value) for arg in expr.args))


def has_reductions(expr: Expr) -> bool:
    if isinstance(expr, Reduce):
        return True
    return isinstance(expr, Op) and any(has_reductions(arg) for arg in expr.args)


def expand_reductions(expr: Expr, limit: int = EXPANSION_LIMIT) -> Expr:
    """`expr` with every sum, product, all and any over constant bounds written out term by term
    (`sum(k for k in range(1, 4))` is `1 + 2 + 3`), for the checkers that have no loops. FormalError
    when a bound depends on a variable or the terms would pass `limit`."""
    budget = [limit]
    return _expand(expr, budget)


def _expand(expr: Expr, budget: list[int]) -> Expr:
    if isinstance(expr, Const | Var):
        return expr
    if isinstance(expr, Op):
        return Op(expr.name, tuple(_expand(arg, budget) for arg in expr.args))
    low, high = _constant_bound(_expand(expr.low, budget)), _constant_bound(_expand(expr.high, budget))
    count = max(0, high - low)
    budget[0] -= count
    if budget[0] < 0:
        raise FormalError(f"a sum, product, all or any has more than {EXPANSION_LIMIT} terms in all to write out")
    terms = []
    for index in range(low, high):
        value = Const(index)
        body = _expand(substitute(expr.body, expr.index, value), budget)
        if expr.condition is None:
            terms.append(body)
            continue
        condition = _expand(substitute(expr.condition, expr.index, value), budget)
        terms.append(Op("ite", (condition, body, _neutral(expr.kind))))
    joined = {"sum": "add", "prod": "mul", "all": "and", "any": "or"}[expr.kind]
    if not terms:
        return _neutral(expr.kind)
    return terms[0] if len(terms) == 1 else _fold(joined, terms)


def _neutral(kind: str) -> Expr:
    """What a sum, product, all or any of no terms is."""
    neutral: dict[str, Expr] = {"sum": Const(0), "prod": Const(1), "all": Op("true", ()), "any": Op("false", ())}
    return neutral[kind]


def _fold(operation: str, terms: list[Expr]) -> Expr:
    if operation in ("and", "or"):
        return Op(operation, tuple(terms))
    result = terms[0]
    for term in terms[1:]:
        result = Op(operation, (result, term))
    return result


def _constant_bound(expr: Expr) -> int:
    from lemmata.formal.evaluate import Undefined, evaluate  # evaluate imports this module

    if free_variables(expr):
        raise FormalError("a sum, product, all or any whose range depends on a variable cannot be written out")
    try:
        value = evaluate(expr, {})
    except Undefined as error:
        raise FormalError(f"a range bound is not defined: {error}") from None
    if not isinstance(value, int) or isinstance(value, bool):
        raise FormalError("a range bound is not an integer")
    return value
