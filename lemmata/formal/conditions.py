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
- in a statement whose conditions have no condition word at all ("if", "let", "suppose", "given",
  "with", "such that", "where", "when" …) and come before no question or "show that" (miniF2F's
  "The product of two consecutive positive integers is 506. What is their sum?" states its givens
  as sentences), any hypothesis but a bound the prose says of a variable (`n >= 1` for "n ≥ 1" or
  "positive", `a != b` for "distinct").
The rule is the prose's words, read; it can refuse a faithful statement (the formalizer is then
asked again, with the reason), and it cannot see a hypothesis the prose states in other words.
"""

from __future__ import annotations

import re

from lemmata.kernel.render import expression_text
from lemmata.kernel.statement import Statement
from lemmata.kernel.tree import Const, Expr, Op, Var, conjuncts, integer_literal

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
            if not marked and not _bound_said(prose, part):
                return (
                    f"the hypothesis {expression_text(part)} is no condition the statement states (it has none but "
                    "what it says of its variables): write only the conditions the statement makes"
                )
    return ""


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


def _bound_said(prose: str, part: Expr) -> bool:
    """Whether the prose says this comparison of a variable with a number, or of two variables."""
    if not (isinstance(part, Op) and part.name in _FLIPPED and len(part.args) == 2):
        return False
    left, right = part.args
    relation = part.name
    if isinstance(right, Var) and not isinstance(left, Var):
        left, right, relation = right, left, _FLIPPED[relation]
    if not isinstance(left, Var):
        return False
    name = re.escape(left.name)
    if isinstance(right, Var):
        other = re.escape(right.name)
        distinct = relation == "ne" and re.search(r"\bdistinct\b|\bdifferent\b", prose, re.IGNORECASE)
        return bool(distinct) or _compared(prose, name, other)
    bound = integer_literal(right)
    words = _SIGN_WORDS.get((relation, bound)) if bound is not None else None
    if words and re.search(rf"\b(?:{words})\b", prose, re.IGNORECASE):
        return True
    number = _number_text(right)
    return number is not None and _compared(prose, name, re.escape(number))


def _compared(prose: str, first: str, second: str) -> bool:
    """`first` and `second` joined by a comparison in the prose (either order, `$`, `{}` and spaces between)."""
    gap = r"[\s${}]*"
    return bool(
        re.search(rf"(?<![\w]){first}{gap}{_COMPARISON}{gap}-?{second}(?![\w])", prose)
        or re.search(rf"(?<![\w]){second}{gap}{_COMPARISON}{gap}{first}(?![\w])", prose)
    )


def _number_text(expr: Expr) -> str | None:
    literal = integer_literal(expr)
    if literal is not None:
        return str(abs(literal))
    if isinstance(expr, Const):
        return str(expr.value)
    return None
