"""Reading a model's formal statement: its text, in Python's syntax and the spellings models use,
into the kernel's tree (lemmata/kernel), and its variables' types into domains.

A model writes a statement as typed variables, hypotheses and a conclusion, each an expression
such as `(a + b) % 2 == 0` or `a**2 + b**2 >= 2*a*b`:

    {"variables": [{"name": "a", "type": "integer"}, {"name": "b", "type": "integer"}],
     "hypotheses": ["a % 2 == 0", "b % 2 == 0"],
     "conclusion": "(a + b) % 2 == 0"}

This module reads such text with Python's own parser, keeping only a white-list of node kinds:
nothing the model wrote is ever evaluated by Python. It is lenient (`x^2`, `2a`, `≤`, `\\cdot`,
"n is even"), and it is not trusted: the kernel admits the tree only when it is well typed and its
rendering reads back to it, and the researcher sees that rendering beside the prose. Any failure
of reading — a depth or a size past the kernel's bounds included — is a FormalError with the
reason, never a crash.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from fractions import Fraction

from lemmata.formal.definitions import MAX_DEFINITIONS, Definition, definition_parts, written_out
from lemmata.kernel.semantics import ARITY
from lemmata.kernel.statement import DOMAINS, Domain, Statement, Variable, typed
from lemmata.kernel.tree import (
    MAX_DEPTH,
    MAX_NODES,
    Const,
    Expr,
    FormalError,
    Op,
    Reduce,
    Var,
    bounded,
    free_variables,
)

BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv"}
BINARY |= {ast.Mod: "mod", ast.Pow: "pow"}
COMPARISONS = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}
#: Functions a statement may call, by the names a model writes, with their operation.
FUNCTIONS: dict[str, str] = {
    "abs": "abs", "min": "min", "max": "max", "sqrt": "sqrt", "floor": "floor", "ceil": "ceil",
    "ceiling": "ceil", "gcd": "gcd", "lcm": "lcm", "factorial": "factorial", "pow": "pow", "implies": "implies",
    "iff": "iff", "ite": "ite", "divides": "divides", "even": "even", "odd": "odd",
}  # fmt: skip
REDUCTIONS = {"sum": "sum", "prod": "prod", "all": "all", "any": "any"}
#: Module prefixes a model puts before a function name (`math.sqrt`): the name is what counts.
MODULE_PREFIXES = ("math", "sympy", "sp", "np", "numpy", "Math")
#: The longest expression read, in characters (a formal statement is a line or two).
MAX_CHARS = 20_000


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
#: The innermost `\lfloor A \rfloor` and `\lceil A \rceil` (the prose's floor and ceiling).
_LATEX_FLOOR = re.compile(r"\\lfloor((?:(?!\\[lr]floor).)*)\\rfloor", re.DOTALL)
_LATEX_CEIL = re.compile(r"\\lceil((?:(?!\\[lr]ceil).)*)\\rceil", re.DOTALL)
#: `|x + 1|`: an absolute value between bars (no bar inside).
_BARS = re.compile(r"\|([^|]+)\|")
#: Words of prose in an expression ("p and q are prime numbers"): not a name a statement declares.
_WORDS = re.compile(r"\b(?!and\b|or\b|not\b|for\b|in\b|if\b|else\b|range\b)[A-Za-z]{3,}\b(?!\s*\()")
#: An existence claim in words, which the language states as a divisibility (the embedded
#: formalizer wrote "there exists an integer k such that a = 2*k", 2026-11-26).
_EXISTENCE = re.compile(r"\b(?:there\s+(?:exists?|is|are)|for\s+some|exists?)\b", re.IGNORECASE)
_IMPLICIT_PRODUCT = re.compile(r"\b(\d+(?:\.\d+)?)(?=(?!e[+-]?\d)[A-Za-z_(])")
#: `0x10`, `0o7`, `0b11`, `1_000`: Python's other ways of writing a number, which a reader of the
#: prose takes for something else (`0x10` was once read as `0*x10`). Refused, not guessed.
_OTHER_NUMERALS = re.compile(r"(?<![\w.])0[xXoObB][0-9A-Fa-f_]+|(?<![\w.])\d+_\d[\d_]*")
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
#: A congruence: `a + b ≡ 2 (mod 10)`, `14u \\equiv 46 \\pmod{100}`, `x ≢ 1 mod 3`, as the
#: embedded formalizer copies it from the prose (miniF2F's mathd_numbertheory_110, 2026-12-02).
_CONGRUENCE = re.compile(
    r"^\s*(?P<lhs>[^≡≢]+?)\s*(?P<relation>≡|≢|\\equiv|\\not\s*\\equiv|\\not\s*\\text\s*\{\s*equiv\s*\})\s*(?P<rhs>[^≡≢]+?)\s*"
    r"(?:\(\s*(?:\\text\s*\{\s*)?mod\s*\}?\s*(?P<m1>[^()]+?)\s*\)|\\pmod\s*\{(?P<m2>[^{}]+)\}|\\pmod\s*(?P<m3>\w+)"
    r"|(?:\\bmod|\\mod|\bmod)\s*(?P<m4>\w+|\{[^{}]+\}))\s*\.?\s*$"
)
_NAMES_JOINED = re.compile(rf"^\s*{_NAME}(?:\s*,\s*{_NAME})*\s*,?\s+and\s+{_NAME}\s*$")


def phrases_as_remainders(text: str) -> str:
    """`text` with a multiple, a parity or a divisibility said in words written as a remainder
    (`(x) % 2 == 0`), and a congruence as remainders compared (`(a + b) % (10) == (2) % (10)`);
    anything else unchanged."""
    if found := _CONGRUENCE.match(text):
        modulus = next(found.group(key) for key in ("m1", "m2", "m3", "m4") if found.group(key)).strip("{} ")
        relation = "!=" if found.group("relation") in ("≢",) or "not" in found.group("relation") else "=="
        return f"({found.group('lhs')}) % ({modulus}) {relation} ({found.group('rhs')}) % ({modulus})"
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
    """`\frac{a}{b}` as `((a)/(b))`, `\\sqrt{x}` as `sqrt(x)`, `\\lfloor x \\rfloor` as `floor(x)`,
    innermost first, then the braces of exponents and groups (`x^{n+1}`) as parentheses."""
    while True:
        changed = _LATEX_FRACTION.sub(r"((\1)/(\2))", text)
        changed = _LATEX_ROOT.sub(r"sqrt(\1)", changed)
        changed = _LATEX_FLOOR.sub(lambda found: _call_after_operand(found, "floor"), changed)
        changed = _LATEX_CEIL.sub(lambda found: _call_after_operand(found, "ceil"), changed)
        if changed == text:
            break
        text = changed
    return text.replace("{", "(").replace("}", ")")


def _call_after_operand(found: re.Match[str], name: str) -> str:
    """`name(…)` for a LaTeX bracket pair, a product after an operand: `y\\lfloor x \\rfloor` is y·⌊x⌋."""
    before = found.string[: found.start()].rstrip()
    operand = re.search(r"\\?[A-Za-z]+$|[\w)]$", before)  # a letter, not a LaTeX command's
    times = "*" if operand and not operand.group().startswith("\\") else ""
    return f"{times}{name}({found.group(1)})"


def parse_expression(text: str, definitions: Mapping[str, Definition] | None = None) -> Expr:
    """The tree of one expression, each call of a function of `definitions` written out;
    FormalError naming what is not part of the language, or that it is too long, too deep or too
    large to check."""
    if len(text) > MAX_CHARS:
        raise FormalError(f"an expression is longer than {MAX_CHARS} characters: write it shorter")
    other = _OTHER_NUMERALS.search(text)
    if other:
        raise FormalError(
            f"{other.group()!r} is not a number as the statement writes numbers: write it in decimal digits"
        )
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
    except (RecursionError, MemoryError, ValueError) as error:  # nesting past the parser's limits, a huge literal
        raise FormalError(f"an expression could not be read ({type(error).__name__}): write it shorter") from None
    _within_bounds(tree.body)
    return bounded(_Reader(source, definitions or {}).read(tree.body), "an expression")


def _within_bounds(node: ast.AST) -> None:
    """FormalError when Python's tree is deeper or larger than the kernel's bounds, measured
    without recursion before anything recursive reads it (a sum of 340 terms is 340 levels deep)."""
    nodes = 0
    stack = [(node, 1)]
    while stack:
        current, depth = stack.pop()
        nodes += 1
        if depth > MAX_DEPTH * 2 or nodes > MAX_NODES * 4:
            raise FormalError(
                f"an expression is nested more than {MAX_DEPTH} levels deep or has more than {MAX_NODES} parts: "
                "write it in smaller parts, or as sum(... for k in range(a, b))"
            )
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(current))


class _Reader:
    def __init__(self, source: str, definitions: Mapping[str, Definition]) -> None:
        self.source = source
        self.definitions = definitions

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
            if node.value.bit_length() > 200_000:
                raise FormalError("a number has more than 60,000 digits")
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
        if name in self.definitions:
            return written_out(self.definitions[name], [self.read(argument) for argument in node.args])
        lowered = name.lower()
        if lowered not in FUNCTIONS:
            known = ", ".join(sorted({*FUNCTIONS, *REDUCTIONS}))
            raise FormalError(f"{self._text(node)!r}: unknown function {name!r} (the language knows {known})")
        operation = FUNCTIONS[lowered]
        arity = ARITY[operation]
        args = tuple(self.read(argument) for argument in node.args)
        if (arity is None and len(args) < 2) or (arity is not None and len(args) != arity):
            wanted = "2 or more" if arity is None else str(arity)
            raise FormalError(f"{self._text(node)!r}: {name} takes {wanted} arguments")
        return Op(operation, args)

    def _reduction(self, name: str, node: ast.Call) -> Expr:
        """`sum(f(k) for k in range(a, b) if p(k))`, `all(...)`, `any(...)`, `prod(...)`, and
        `len([k for k in range(...) if ...])` (a count: the sum of 1 over the same range)."""
        generator = node.args[0] if len(node.args) == 1 else None
        if name == "len":
            if not isinstance(generator, ast.GeneratorExp | ast.ListComp):
                raise FormalError(f"{self._text(node)!r}: count with len([k for k in range(LOW, HIGH) if CONDITION])")
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


# -- statements -------------------------------------------------------------------------------

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
    "non-zero real": "nonzero real",
    "nonzero real number": "nonzero real",
    "non-zero integer": "nonzero integer",
    "q": "rational",
    "ℚ": "rational",
    "rational number": "rational",
}
#: Domains the checkers cannot state: the statement is not formalizable, and says why.
UNSUPPORTED_DOMAINS = ("other", "complex", "ℂ", "matri", "vector", "function", "set", "sequence", "polynomial")


def read_statement(variables: Sequence[tuple[str, str]], hypotheses: Sequence[str], conclusion: str) -> Statement:
    """The typed statement; FormalError saying what to change (one problem at a time)."""
    declared = tuple(_variable(name, domain) for name, domain in variables)
    names = [variable.name for variable in declared]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise FormalError(f"the variable {duplicates[0]!r} is declared twice")
    split = _ProductSplitter(set(names))
    definitions, conditions = read_definitions(hypotheses, set(names))
    statement = Statement(
        variables=declared,
        hypotheses=tuple(split(_condition(text, "a hypothesis", definitions)) for text in conditions if text.strip()),
        conclusion=split(_condition(conclusion, "the conclusion", definitions)),
    )
    # A variable declared and never used says nothing: it is left out (a model declares a to z for a
    # computation). Its domain alone could make a statement vacuous or not; without it, neither.
    parts = (*statement.hypotheses, statement.conclusion)
    used = tuple(v for v in declared if any(_mentions(part, v.name) for part in parts))
    statement = typed(Statement(used, statement.hypotheses, statement.conclusion))
    for part in parts:
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


def _condition(text: str, what: str, definitions: Mapping[str, Definition] | None = None) -> Expr:
    try:
        return parse_expression(text, definitions)
    except FormalError as error:
        raise FormalError(f"{what}: {error}") from None


def read_definitions(hypotheses: Sequence[str], names: set[str]) -> tuple[dict[str, Definition], list[str]]:
    """The functions the hypotheses define by a formula (formal/definitions.py), in order, each
    body read with the ones before it known, and the other hypotheses. FormalError for a
    definition that calls itself (a sequence), that cannot be read, or one too many."""
    taken = {*FUNCTIONS, *REDUCTIONS, "len", "range", *names}
    definitions: dict[str, Definition] = {}
    others: list[str] = []
    for text in hypotheses:
        parts = definition_parts(text, taken | set(definitions))
        if parts is None:
            others.append(text)
            continue
        name, params, body = parts
        if re.search(rf"(?<![\w.]){re.escape(name)}\s*\(", body):
            raise FormalError(
                f"{name} is defined by itself (a recursion, as a sequence is): the language has no sequences"
            )
        if len(definitions) == MAX_DEFINITIONS:
            raise FormalError(f"a statement defines at most {MAX_DEFINITIONS} functions")
        body_read = _condition(body, f"the definition of {name}", definitions)
        definitions[name] = Definition(name, params, products_split(body_read, names | set(params)))
    return definitions, others


def products_split(expr: Expr, names: set[str]) -> Expr:
    """`expr` with each undeclared name that declared `names` spell end to end (`bx`) read as
    their product (`b*x`)."""
    return _ProductSplitter(names)(expr)


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
