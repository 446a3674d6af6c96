"""Hypotheses the prose does not state: the commonest way a machine check fools its user.

A formalization that adds a hypothesis proves a weaker statement than the prose's. On a held-out
task ("for every integer n, n³ − n is divisible by 6") the planned lemma "for all integers n,
n³ − n is divisible by 2 and 3" came with the hypotheses `n % 2 == 0` and `n % 3 == 0`, which the
prose never states; Z3 proved that, and the lemma was called machine-checked (2026-12-01). An
end-to-end audit of autoformalization found more than half of one benchmark's pairs mismatched,
added hypotheses and weakened conclusions the commonest kinds.

The prose is read in two parts: its conditions (the subject and what comes before "show that",
"then", "what is" …: "the sum of two *even* integers", "if n is odd", "let x > 0 with x + y = 7")
and its claim (what follows). Refused:
- a hypothesis fixing a remainder (`n % 3 == 0`, n even) whose property the conditions do not
  name: parity words for 2, "divisible by m", "multiple of m", "mod m", "≡ … (mod m)" otherwise;
- a bound on a variable (`n >= 2`, `x > 0`, `a != b`) the prose does not say: "n ≥ 2" or "2 ≤ n"
  before the statement's consequence ("then", "implies": after it a comparison is claimed), with
  that variable and that number, signed, in that direction, neither inside a longer
  expression (`n^2 > n` says nothing of n and 2), or a word said of that variable ("positive
  integers a and b", "x is positive", "distinct", "two-digit": 10 to 99, "digits": 0 to 9) or,
  when the statement's one variable is a name the prose never writes, of the prose's subject
  ("What positive two-digit integer …");
- a domain narrower than the prose says (a natural x for "the value when x = 5" passes: the
  hypothesis x = 5 already pins it inside);
- in a statement whose conditions have no condition word at all ("if", "let", "suppose", "given",
  "with", "such that", "where", "when" …) and come before no question or "show that" (miniF2F's
  "The product of two consecutive positive integers is 506. What is their sum?" states its givens
  as sentences), any other hypothesis.
The rule is the prose's words, read; it can refuse a faithful statement (the formalizer is then
asked again, with the reason), and it cannot see a hypothesis the prose states in other words.
"""

from __future__ import annotations

import re
from fractions import Fraction

from lemmata.kernel.render import expression_text
from lemmata.kernel.statement import DOMAIN_BOUNDS, Statement, Variable
from lemmata.kernel.tree import Const, Expr, Op, Var, conjunction, conjuncts, integer_literal

#: Where the claim begins, earliest first: what precedes is the statement's conditions.
_CLAIM_MARKERS = re.compile(
    r"\b(?:show|prove|verify|deduce|conclude)\s+that\b|\bthen\b|\bwhat\s+is\b|\bwhat\s+are\b|\bfind\b|\bcompute\b"
    r"|\bdetermine\b|\bevaluate\b|\bhow\s+many\b|\bwe\s+have\b|\bit\s+follows\b",
    re.IGNORECASE,
)
#: The last verb of a statement without a claim marker ("the sum of two even integers *is* even").
_COPULA = re.compile(r"\s(?:is|are|divides|equals|holds|has|have|exceeds|satisfies)\s", re.IGNORECASE)
CONDITION_WORDS = re.compile(
    r"\b(?:if|suppose|supposing|assume|assuming|given|let|such\s+that|when|whenever|where|with|provided|unless"
    r"|satisf(?:y|ies|ying)|for\s+which|subject\s+to)\b|\\(?:text|mathrm)\{\s*(?:if|with)\b",
    re.IGNORECASE,
)
_PARITY = re.compile(r"\b(?:even|odd|parity)\b", re.IGNORECASE)
_REMAINDER_WORDS = (
    r"(?:divisible\s+by|multiples?\s+of|divides|\\mid|\\pmod|\\bmod|\\mod|\bmod(?:ulo)?\b|\\equiv|≡|congruent"
    r"|remainder|residue)"
)
_COMPARISON = r"(?:>|<|≥|≤|>=|<=|≠|!=|\\ge(?:q)?|\\le(?:q)?|\\neq|\\ne|\\gt|\\lt)"
#: Words that bound a variable by 0: the hypothesis `x > 0` for "positive", …
_SIGN_WORDS = {
    ("gt", 0): r"positive",
    ("ge", 0): r"non-?negative|natural",
    ("ge", 1): r"positive|natural|counting",
    ("lt", 0): r"negative",
    ("le", 0): r"non-?positive",
    ("ne", 0): r"non-?zero|positive|negative",
}
_FLIPPED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "ne": "ne", "eq": "eq"}


def conditions_part(prose: str) -> str:
    """The prose before its claim: before the first claim marker, else before its last verb, else all of it."""
    marker = _CLAIM_MARKERS.search(prose)
    if marker is not None and marker.start() > 0:
        return prose[: marker.start()]
    verbs = list(_COPULA.finditer(_outside_math(prose)))
    if verbs:
        return prose[: verbs[-1].start()]
    return prose


def definitions_part(prose: str) -> str:
    """The prose a definition may come from: its conditions, and none when it opens with its claim
    ("Show that $f(x) = x^2 + 1$ gives $f(2) = 5$": that formula is claimed, not given)."""
    marker = _CLAIM_MARKERS.search(prose.lstrip())
    if marker is not None and marker.start() == 0:
        return ""
    return conditions_part(prose)


def claim_sentences(prose: str) -> str:
    """The prose from the start of the sentence of its first claim marker ("How many …?", "Show
    that …"); all of it when it has none. A word of the sentences before is said of the givens."""
    marker = _CLAIM_MARKERS.search(prose)
    if marker is None:
        return prose
    ends = list(re.finditer(r"[.?!;](?=\s)", prose[: marker.start()]))
    return prose[ends[-1].end() :] if ends else prose


def _outside_math(prose: str) -> str:
    """The prose with what is between $…$ blanked, keeping positions: a verb inside a formula is not the claim's."""
    return re.sub(r"\$[^$]*\$", lambda match: " " * len(match.group()), prose)


def states_givens(prose: str) -> bool:
    """Whether the prose has conditions: a condition word before its claim, or sentences before a
    question or a "show that" (what precedes one is given)."""
    marker = _CLAIM_MARKERS.search(prose)
    if marker is not None and re.search(r"[.?!;:]\s*$|\$\s*[,.]?\s*$", prose[: marker.start()].rstrip() or "x"):
        return True
    return CONDITION_WORDS.search(conditions_part(prose)) is not None


def unstated_hypothesis(prose: str, statement: Statement) -> str:
    """Why a hypothesis of the formal statement is one the prose does not state; "" when none is."""
    conditions = conditions_part(prose)
    marked = states_givens(prose)
    for hypothesis in statement.hypotheses:
        for part in conjuncts(hypothesis):
            modulus = remainder_modulus(part)
            if modulus is not None:
                if not _names_the_remainder(conditions, modulus):
                    return (
                        f"the hypothesis {expression_text(part)} fixes a remainder mod {modulus}, which the "
                        "statement's conditions do not: a formalization assumes only what the statement assumes"
                    )
                continue
            if _names_a_number(prose, part):
                continue
            if _is_bound(part):
                if not _bound_said(before_the_consequent(prose), part, unnamed_subject(prose, statement)):
                    return (
                        f"the hypothesis {expression_text(part)} bounds a variable as the statement does not: a "
                        "formalization assumes only what the statement assumes"
                    )
                continue
            if not marked or not states_a_relation(conditions):
                return (
                    f"the hypothesis {expression_text(part)} is no condition the statement states (it has none but "
                    "what it says of its variables): write only the conditions the statement makes"
                )
    return ""


def _names_a_number(prose: str, part: Expr) -> bool:
    """`a == 33818` in a statement about numbers alone: the formalizer's name for a number the
    prose writes ("the remainder when 33818² + … + 33822² is divided by 17", miniF2F's
    mathd_numbertheory_30, came with a to e set to its five numbers, 2026-12-02). ∀a (a = c ⇒ P(a))
    is P(c), the prose's claim. Only where the prose names no variable: "for all n ≥ 1, n² ≥ 2n"
    (false at 1) renamed m, with m = 2, would be one instance called the claim."""
    if not (isinstance(part, Op) and part.name == "eq"):
        return False
    names = [side for side in part.args if isinstance(side, Var)]
    values = [integer_literal(side) for side in part.args if not isinstance(side, Var)]
    if len(names) != 1 or len(values) != 1 or values[0] is None or values[0] < 0:
        return False
    return str(values[0]) in re.findall(r"\d+", prose) and not prose_names_a_variable(prose)


#: A formula of the prose: `$…$`, `$$…$$`, `\[…\]`, `\(…\)`.
_MATH = re.compile(r"\$\$(.*?)\$\$|\$(.*?)\$|\\\[(.*?)\\\]|\\\((.*?)\\\)", re.DOTALL)


#: Greek letters, which name quantities (`\\alpha`); other LaTeX commands name operations.
_GREEK = (
    "alpha|beta|gamma|delta|epsilon|varepsilon|zeta|eta|theta|vartheta|iota|kappa|lambda|mu|nu|xi|pi|varpi"
    "|rho|varrho|sigma|varsigma|tau|upsilon|phi|varphi|chi|psi|omega"
)
_NON_GREEK_COMMAND = re.compile(rf"\\(?!(?:{_GREEK})(?![A-Za-z]))[A-Za-z]+", re.IGNORECASE)
#: Words that quantify, which a statement about numbers alone has no use for.
_QUANTIFIER_WORDS = re.compile(
    r"\b(?:every|all|any|each|arbitrary|whenever|some|exists?|there\s+is|there\s+are)\b", re.IGNORECASE
)


def prose_names_a_variable(prose: str) -> bool:
    """Whether the prose may speak of a variable: a letter in a formula (a Greek one too, `\\alpha`
    or α), outside a LaTeX command or `\\text{…}`; in words, a one-letter word other than "a" and
    "I", or a word that quantifies ("every", "all", "some"). "For every real α ≥ 1, α² ≥ 2α" has
    no Latin letter, and with `m == 2` would have been called its own instance (2026-12-03)."""
    for found in _MATH.finditer(prose):
        formula = next(group for group in found.groups() if group is not None)
        formula = re.sub(r"\\(?:text|mathrm|textbf|textrm|operatorname)\s*\{[^{}]*\}", " ", formula)
        if re.search(r"[^\W\d_]", _NON_GREEK_COMMAND.sub(" ", formula)):
            return True
    words = _MATH.sub(" ", prose)
    return bool(re.search(r"(?<![\\\w])(?![aAI]\b)[^\W\d_]\b", words) or _QUANTIFIER_WORDS.search(words))


def unnamed_subject(prose: str, statement: Statement) -> str | None:
    """The statement's one variable when the prose never names it: the formalizer's name for the
    prose's subject ("What positive two-digit integer …" as x)."""
    if len(statement.variables) != 1:
        return None
    name = statement.variables[0].name
    if re.search(rf"(?<![\w\\]){re.escape(name)}(?!\w)", _words_removed(prose)):
        return None
    return name


def _words_removed(prose: str) -> str:
    """The prose without its words of two letters or more: what is left are its one-letter names
    and formulas (a one-letter name such as `x` is not read inside "exactly")."""
    return re.sub(r"(?<![\\\w])[A-Za-z]{2,}\b", " ", prose)


#: What says a variable's kind, not a condition on it: "be a real number", "are positive integers".
_DOMAIN_PHRASE = re.compile(
    r"\b(?:is|are|be)\s+(?:an?\s+|all\s+|two\s+|three\s+|some\s+)?"
    r"(?:(?:positive|negative|non-?negative|non-?positive|non-?zero|odd|even|distinct|arbitrary|given)\s+)*"
    r"(?:real|integer|rational|natural|whole|complex|counting)\w*(?:\s+numbers?)?",
    re.IGNORECASE,
)
#: A relation the conditions state: a sign, or a word for one ("Amy and Betty have 20 apples",
#: "Amy has three times …": miniF2F's word problems state their givens with verbs).
_RELATION_SAID = re.compile(
    r"[=<>≤≥≠≡∣]|\\(?:le|ge|leq|geq|neq|ne|lt|gt|equiv|mid|pmod)\b"
    r"|\b(?:is|are|equals?|exceeds?|divides?|divisible|multiples?|satisf\w*|less|greater|least|most|sum|product"
    r"|difference|quotient|roots?|solutions?|remainder|ha[sd]|have|times|twice|half|together|total)\b",
    re.IGNORECASE,
)


def states_a_relation(conditions: str) -> bool:
    """Whether the conditions say more than the variables' kinds ("Let x be a real number" does not)."""
    return _RELATION_SAID.search(_DOMAIN_PHRASE.sub(" ", conditions)) is not None


#: The prose's names for sets a variable may be said to lie in (`n ∈ ℕ`), with the bound each gives.
_SET_SYMBOLS = {
    ("ge", 0): r"ℕ|\\mathbb\s*\{?\s*N\s*\}?|ℤ_\{?\s*(?:\\geq?|≥)\s*0\s*\}?",
    ("ge", 1): r"ℕ|\\mathbb\s*\{?\s*N\s*\}?|ℤ\^\+|\\mathbb\s*\{?\s*Z\s*\}?\s*\^\s*\{?\+\}?",
    ("gt", 0): r"ℝ\^\+|ℝ_\{?\s*>\s*0\s*\}?|\\mathbb\s*\{?\s*R\s*\}?\s*(?:\^\s*\{?\+\}?|_\s*\{\s*>\s*0\s*\})",
}
_REAL_WORDS = r"reals?|real\s+numbers?"


def narrowed_domain(prose: str, statement: Statement) -> str:
    """Why a variable's declared domain is narrower than the prose's; "" when none is. A domain
    restricts as a hypothesis does: "for every integer n, n³ ≥ n" (false at n = −2) is true of
    natural numbers, and "for all real x, x² ≥ x" (false at 1/2) of integers."""
    text = before_the_consequent(prose)
    defined_where = _defined_where(statement)
    real = _said_to_be(text, _REAL_WORDS) | _in_set(text, r"ℝ|\\mathbb\s*\{?\s*R\s*\}?")
    for variable in statement.variables:
        if variable.kind == "int" and variable.name in real:
            return (
                f"the domain of {variable.name} is the integers, and the statement says {variable.name} is real: "
                "a formalization assumes only what the statement assumes"
            )
        if variable.domain not in DOMAIN_BOUNDS:
            continue
        relation, bound = DOMAIN_BOUNDS[variable.domain]
        if _bound_said(text, Op(relation, (Var(variable.name), Const(bound)))):
            continue
        if _pinned_inside(statement, variable.name, relation, bound, whole=variable.kind == "int"):
            continue
        if variable.name in _in_set(text, _SET_SYMBOLS.get((relation, bound), "(?!)")):
            continue
        if Op(relation, (Var(variable.name), Const(bound))) in defined_where:
            continue  # x ≠ 0 beside 1/x: the statement claims nothing at x = 0 anyway
        return (
            f"the domain of {variable.name} is {variable.domain}, which the statement does not say of "
            f"{variable.name}: declare the domain the statement gives"
        )
    return ""


def _defined_where(statement: Statement) -> set[Expr]:
    """The conditions under which the statement is defined, its domains read as their kinds only:
    `x ≠ 0` for a statement with 1/x, which a nonzero domain then assumes nothing beyond."""
    kinds_only = Statement(
        tuple(Variable(v.name, "integer" if v.kind == "int" else "real") for v in statement.variables),
        statement.hypotheses,
        statement.conclusion,
    )
    hypotheses = conjunction(list(statement.hypotheses)) if statement.hypotheses else None
    where: set[Expr] = set()
    for condition in kinds_only.definedness():
        # `H ⇒ x ≠ 0`, the conclusion's condition where the hypotheses H hold: an input with x = 0
        # fails H (nothing is claimed) or leaves the conclusion undefined (nothing is claimed).
        # Only the hypotheses' own antecedent goes: `¬(x < 0) ⇒ x ≥ 0`, of a branch, is no
        # condition of every input (at x = −1 the other branch is defined and claimed).
        if isinstance(condition, Op) and condition.name == "implies" and condition.args[0] == hypotheses:
            condition = condition.args[1]
        where.update(conjuncts(condition))
    return where


def _pinned_inside(statement: Statement, name: str, relation: str, bound: int, whole: bool) -> bool:
    """Whether a hypothesis sets the variable to a number its domain holds (`x == 5` for a natural
    x): then the domain assumes nothing more than the hypothesis does. "the value of √(x³ − 2^y)
    when x = 5 and y = 2" came with x, y natural (miniF2F's mathd_algebra_547, the embedded model,
    2026-12-03)."""
    holds = {"ge": lambda v: v >= bound, "gt": lambda v: v > bound, "ne": lambda v: v != bound}[relation]
    for hypothesis in statement.hypotheses:
        for part in conjuncts(hypothesis):
            if not (isinstance(part, Op) and part.name == "eq" and Var(name) in part.args):
                continue
            other = part.args[1] if part.args[0] == Var(name) else part.args[0]
            value = _signed_value(other)
            if value is not None and holds(value) and (value.denominator == 1 or not whole):
                return True
    return False


def _in_set(prose: str, symbols: str) -> set[str]:
    """The names the prose puts in one of `symbols`: `n ∈ ℕ`, `a, b \\in \\mathbb{N}`."""
    pattern = rf"(?P<names>{_NAME_LIST})\s*(?:∈|\\in\b)\s*(?:{symbols})"
    return {
        name
        for found in re.finditer(pattern, prose)
        for name in re.findall(r"[^\W\d_]\w*", found.group("names"))
        if name != "and"
    }


def remainder_modulus(expr: Expr) -> int | None:
    """m for a condition fixing a remainder mod m (`e % m == r`, `r != e % m`, m ∣ e, e even); else None."""
    if isinstance(expr, Op) and expr.name in ("even", "odd"):
        return 2
    if isinstance(expr, Op) and expr.name == "divides":
        return integer_literal(expr.args[0])
    if isinstance(expr, Op) and expr.name == "not":
        return remainder_modulus(expr.args[0])
    if isinstance(expr, Op) and expr.name in ("eq", "ne") and len(expr.args) == 2:
        for side in expr.args:
            if isinstance(side, Op) and side.name == "mod":
                modulus = integer_literal(side.args[1])
                if modulus is not None:
                    return abs(modulus)
    return None


def _names_the_remainder(conditions: str, modulus: int) -> bool:
    if modulus == 2 and _PARITY.search(conditions):
        return True
    number = rf"(?<![\d.]){modulus}(?![\d.])"
    said = re.search(rf"{_REMAINDER_WORDS}[^.;]{{0,40}}?{number}|{number}[^.;]{{0,12}}?{_REMAINDER_WORDS}", conditions)
    return said is not None


#: What introduces a consequence: a comparison after it is claimed, not assumed.
_CONSEQUENT = re.compile(r"\bimplies\b|\bthen\b|\bit\s+follows\b|⇒|⟹|\\Rightarrow\b|\\implies\b", re.IGNORECASE)


def before_the_consequent(prose: str) -> str:
    """The prose up to its last consequence ("then", "implies", ⇒): where a hypothesis can be said.
    "Then n^2 = 4 implies n = 2" says n = 2 of no input: it claims it."""
    found = list(_CONSEQUENT.finditer(prose))
    return prose[: found[-1].start()] if found else prose


def _is_bound(part: Expr) -> bool:
    """A comparison of a variable with a number or with another variable (`n >= 2`, `a != b`)."""
    if not (isinstance(part, Op) and part.name in _FLIPPED and len(part.args) == 2):
        return False
    left, right = part.args
    return (isinstance(left, Var) or isinstance(right, Var)) and all(
        isinstance(side, Var) or _signed_value(side) is not None for side in part.args
    )


def _bound_said(prose: str, part: Expr, subject: str | None = None) -> bool:
    """Whether the prose says this comparison of a variable with a number, or of two variables.
    `subject` is the statement's one variable when the prose never names it ("What positive
    two-digit integer is twice the sum of its digits?"): the words said of the subject are its."""
    assert isinstance(part, Op)
    left, right = part.args
    relation = part.name
    if not isinstance(left, Var):
        left, right, relation = right, left, _FLIPPED[relation]
    assert isinstance(left, Var)
    if isinstance(right, Var):
        distinct = relation == "ne" and re.search(r"\bdistinct\b|\bdifferent\b", prose, re.IGNORECASE)
        return bool(distinct) or (left.name, relation, right.name) in _comparisons(prose)
    bound = _signed_value(right)
    if bound is None or bound.denominator != 1:
        return (left.name, relation, bound) in _comparisons(prose)
    for words in _bound_words(prose, relation, int(bound)):
        if left.name in _said_to_be(prose, words) or (left.name == subject and _said_of_a_subject(prose, words)):
            return True
    return (left.name, relation, bound) in _comparisons(prose)


def _bound_words(prose: str, relation: str, bound: int) -> list[str]:
    """The words that give a variable this bound: a sign ("positive": > 0), a count of digits
    ("two-digit": ≥ 10, ≤ 99, < 100) and "digit" (0 to 9)."""
    words = [_SIGN_WORDS[(relation, bound)]] if (relation, bound) in _SIGN_WORDS else []
    for digits in digit_counts(prose):
        low, high = 10 ** (digits - 1), 10**digits
        if (relation, bound) in (("ge", low), ("gt", low - 1), ("le", high - 1), ("lt", high)):
            words.append(rf"(?:{_COUNT_WORDS[digits]}|{digits})[-\s]digit")
    if (relation, bound) in (("ge", 0), ("gt", -1), ("le", 9), ("lt", 10)):
        words.append(r"digits?")
    return words


#: "two-digit", "3-digit": a number of k digits, k from 2 to 9.
_COUNT_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine"}
_DIGIT_COUNT = re.compile(rf"\b({'|'.join(_COUNT_WORDS.values())}|[2-9])[-\s]digit\b", re.IGNORECASE)


def digit_counts(prose: str) -> set[int]:
    """The k of each "k-digit" of the prose."""
    counts = {value: digits for digits, value in _COUNT_WORDS.items()}
    return {int(word) if word.isdigit() else counts[word.lower()] for word in _DIGIT_COUNT.findall(prose)}


def _said_of_a_subject(prose: str, words: str) -> bool:
    """Whether `words` describe a noun of the prose that no name follows ("what positive two-digit
    integer", "the digits of"): said of the subject a statement of one unnamed variable is about."""
    return re.search(rf"\b(?:{words})\s+(?:\w+(?:-\w+)?\s+)?(?:integers?|numbers?)\b", prose, re.IGNORECASE) is not None


#: A name in a list of names ("a, b and c"), not the start of an expression (`n^2`, `2n`).
_NAME_ITEM = r"\$?[^\W\d_]\w*\$?(?![\w^_(])(?!\s*[-−+*/·×^=<>≤≥(])"
_NAME_LIST = rf"{_NAME_ITEM}(?:\s*(?:,|\band\b)\s*{_NAME_ITEM})*"
_NOUNS = r"(?:(?:real|integer|rational|natural|whole|counting)s?\s+)?(?:numbers?\s+)?"


def _said_to_be(prose: str, words: str) -> set[str]:
    """The names the prose calls by one of `words`: "positive integers a and b", "x, y are positive"."""
    after = rf"\b(?:{words})\s+{_NOUNS}(?P<names>{_NAME_LIST})"
    before = rf"(?P<names>{_NAME_LIST})\s+(?:is|are|be)\s+(?:all\s+)?(?:an?\s+)?(?:{words})\b"
    names: set[str] = set()
    for pattern in (after, before):
        for found in re.finditer(pattern, prose, re.IGNORECASE):
            names.update(name for name in re.findall(r"[^\W\d_]\w*", found.group("names")) if name != "and")
    return names


#: A comparison sign of the prose, and the relation it says.
_SIGNS = (
    (r">=|≥|\\geq?\b|\\geqslant\b", "ge"),
    (r"<=|≤|\\leq?\b|\\leqslant\b", "le"),
    (r"!=|≠|\\neq?\b", "ne"),
    (r">|\\gt\b", "gt"),
    (r"<|\\lt\b", "lt"),
    (r"==?", "eq"),
)
_SIGN = re.compile("|".join(f"(?P<{relation}>{pattern})" for pattern, relation in _SIGNS))
#: An operand next to a sign: a name or a number, signed (`-3`, `−3`), with spaces, `$` and braces around.
_LEFT_OPERAND = re.compile(r"(?P<operand>(?:(?<![\w.^_\\])[-−])?[^\W_](?:\w|\.(?=\d))*)[\s${}]*\Z")
_RIGHT_OPERAND = re.compile(r"\A[\s${}]*(?P<operand>[-−]?[^\W_](?:\w|\.(?=\d))*)")
#: What makes an operand part of a longer expression: an operation or a power beside it.
_ARITHMETIC = re.compile(r"[-−+*/·×^_(\\]")


def _comparisons(prose: str) -> set[tuple[str, str, object]]:
    """The comparisons the prose writes between a lone name or number and another: (name, relation,
    name or value), each also read the other way round (`2 ≤ n` is also n ≥ 2)."""
    said: set[tuple[str, str, object]] = set()
    for sign in _SIGN.finditer(prose):
        relation = next(name for name, text in sign.groupdict().items() if text)
        before, after = prose[: sign.start()], prose[sign.end() :]
        left, right = _LEFT_OPERAND.search(before), _RIGHT_OPERAND.search(after)
        if left is None or right is None:
            continue
        ahead = before[: left.start("operand")].rstrip(" $")
        behind = after[right.end("operand") :].lstrip(" ${}")
        if (ahead and (_ARITHMETIC.fullmatch(ahead[-1]) or ahead[-1] in "{}")) or (behind and _continues(behind)):
            continue  # `2n > 3`, `n > 3k + 1`: an expression, not the operand alone
        first, second = _operand(left.group("operand")), _operand(right.group("operand"))
        if first is None or second is None:
            continue
        for one, rel, other in ((first, relation, second), (second, _FLIPPED[relation], first)):
            if isinstance(one, str):
                said.add((one, rel, other))
    return said


def _continues(behind: str) -> bool:
    """Whether what follows an operand makes it part of an expression: an operation, a power, a
    LaTeX command, but another comparison (`1 ≤ n ≤ 9`) or spacing."""
    if _SIGN.match(behind) or re.match(r"\\(?:text|mathrm|quad|qquad|[,;!])", behind):
        return False
    return _ARITHMETIC.match(behind) is not None


def _operand(text: str) -> str | Fraction | None:
    """A name as written, or a number's value; None for what is neither (`2n`)."""
    text = text.replace("−", "-")
    if re.fullmatch(r"-?\d+(?:\.\d+)?", text):
        return Fraction(text)
    if re.fullmatch(r"[^\W\d_]\w*", text):
        return text
    return None


def _signed_value(expr: Expr) -> Fraction | None:
    literal = integer_literal(expr)
    if literal is not None:
        return Fraction(literal)
    if isinstance(expr, Const) and not isinstance(expr.value, bool):
        return Fraction(expr.value)
    return None
