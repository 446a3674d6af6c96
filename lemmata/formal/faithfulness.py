"""Does the formal statement say what the prose says? The checks that need no model.

A machine check of the wrong statement is the main way such systems fool their users: a model
that knows the answer is 898 formalizes "Show that it is 899" as `... == 898`, or states a
hypothesis no input satisfies, or copies the conclusion into the hypotheses, or states one
direction of an answer that is a set. Refused here:
- a number of the prose that the formal statement does not contain (with its sign: "it is -2"
  needs -2, "it is 2" needs 2);
- a conclusion that is one of the hypotheses (or a conjunction of them), or `true`;
- a claim whose shape the formal statement cannot have: the prose asks for the smallest or
  largest value, a count, a sum or product of all, or the set of all solutions, and the formal
  statement has no min, max, sum, all, any or iff to say it. One instance of such a claim is a
  weaker statement: "|9 + 2a| < 1/5 implies -7 < a < -2" was machine-checked for "Solve
  (1/5)|9 + 2a| < 1: show that it is (-7, -2)" (miniF2F's mathd_algebra_327, the embedded model,
  2026-11-26), and the same for (-8, -2), a false twin, would have been too.
(Hypotheses that no input satisfies are the solver's to find: checking.py.) What passes is
printed beside the prose everywhere, so a researcher can judge the rest.
"""

from __future__ import annotations

import re
from fractions import Fraction

from lemmata.formal.conditions import (
    claim_sentences,
    conditions_part,
    digit_counts,
    narrowed_domain,
    unstated_hypothesis,
)
from lemmata.formal.idle_parts import about_no_variable, idle_case, idle_hypotheses
from lemmata.kernel.render import expression_text
from lemmata.kernel.statement import Statement
from lemmata.kernel.tree import Const, Expr, Op, Reduce, Var, conjuncts, disjuncts, free_variables

#: Answer choices of a multiple-choice problem: `$\textbf{(A)}\ 8041 \qquad …$` up to "Show that"
#: (only a list followed by the claim: "Show that it is \textbf{(A) }7/2." keeps its answer).
_CHOICES = re.compile(r"\$?\s*\\(?:textbf|mathrm|text)\s*\{\s*\(A\)\s*\}.*?(?=Show that)", re.DOTALL)
_CHOICE_MARK = re.compile(r"\\(?:textbf|mathrm|text)\s*\{\s*\([A-E]\)\s*\}")
#: References, not quantities: [L2], [12], Lemma 3, L4, Step 2, equation (1).
_REFERENCES = re.compile(
    r"\[[^\]]*\]|\b(?:Lemma|Theorem|Step|Claim|Corollary|Proposition|Definition|Equation|Section|Part)\s+\d+\b"
    r"|\bL\d+\b|\(\d+\)(?=\s*(?:$|[.,;:]))",
    re.IGNORECASE,
)
#: A subscript is part of a name (x_1, a_{12}), not a quantity.
_SUBSCRIPT = re.compile(r"_\{[^}]*\}|_\d+")
#: An exponent is structure, not a quantity of the claim: x^2 - y^2 may be formalized as
#: (x - y)*(x + y), x^{-1} as 1/x. A power of a number (10^6, 2^{100}, (30)^4) is a quantity:
#: it keeps its base and its exponent.
_EXPONENT = re.compile(r"\^\s*(?:\{[^{}]*\}|[-−]?\d+)")
#: What ends a number written as the base of a power: 10^6, (30)^4, {2}^{100}.
_NUMERIC_BASE = re.compile(r"(?:\d|\(\s*\d+\s*\)|\{\s*\d+\s*\})\s*$")
#: A quantity: a fraction (\frac{1}{9}, 1/9), a number with thousands separators, or a decimal.
_NUMBER = re.compile(
    r"\\[dt]?frac\s*\{\s*(\d+)\s*\}\s*\{\s*(\d+)\s*\}"
    r"|(?<![\w.])(\d+)\s*/\s*(\d+)(?!\w|\.\d)"
    r"|(?<![\w.])(\d{1,3}(?:,\d{3})+(?!\d)|\d+(?:\.\d+)?)"
)
#: `\frac19` is 1/9 (TeX reads one digit per argument).
_SHORT_FRACTION = re.compile(r"\\[dt]?frac\s*(\d)\s*(\d)")
#: What may stand before a minus sign that makes the number negative (not a subtraction).
_NEGATING_CONTEXT = re.compile(r"(?:^|[(\[{=,:;$<>]|\bis|\bbe|\bequals|\bto|\bof|\band|\bor)\s*$")


def prose_numbers(prose: str) -> list[Fraction]:
    """The quantities the prose names, signed where a minus sign makes them negative."""
    text = _CHOICES.sub(" ", prose)
    text = _CHOICE_MARK.sub(" ", text)
    text = _REFERENCES.sub(" ", text)
    text = _SUBSCRIPT.sub(" ", text)
    text = _EXPONENT.sub(_exponent_of_a_variable_dropped, text)
    text = _SHORT_FRACTION.sub(r"\\frac{\1}{\2}", text.replace("−", "-"))
    numbers: list[Fraction] = []
    for match in _NUMBER.finditer(text):
        if match.group(5) is not None:
            value = Fraction(match.group(5).replace(",", ""))
        else:
            numerator, denominator = match.group(1) or match.group(3), match.group(2) or match.group(4)
            if int(denominator) == 0:
                continue
            value = Fraction(int(numerator), int(denominator))
        before = text[: match.start()].rstrip()
        if before.endswith("-") and _NEGATING_CONTEXT.search(before[:-1]):
            value = -value
        if value not in numbers:
            numbers.append(value)
    return numbers


def _exponent_of_a_variable_dropped(match: re.Match[str]) -> str:
    """x^2 goes; the exponent of a number's power stays a number of the prose. "(30)^4" had been
    read as 30 alone, and "n != 30" put a 30 in a statement about every n (miniF2F's
    mathd_numbertheory_543 on the embedded model, 2026-11-27: a true statement refuted)."""
    if _NUMERIC_BASE.search(match.string, 0, match.start()):
        return " " + match.group(0)[1:]
    return " "


def formal_numbers(statement: Statement) -> set[Fraction]:
    """The numbers the formal statement contains where they say something: its literals (a negated
    literal as a negative number), and each quotient of two literals (`1/2` holds 1, 2 and 1/2),
    in its domains, its conclusion and each hypothesis that restricts anything (idle_parts.py:
    `3 > 0` holds everywhere, and a 3 parked there is none of the statement's)."""
    found: set[Fraction] = set()
    idle = idle_hypotheses(statement)
    said = [hypothesis for hypothesis in statement.hypotheses if hypothesis not in idle]
    for part in (*statement.domain_conditions(), *said, statement.conclusion):
        _collect(part, found)
    return found


def _collect(expr: Expr, found: set[Fraction]) -> None:
    if isinstance(expr, Const):
        value = Fraction(expr.value)
        found.add(value)
        if value.denominator != 1:
            found.update({Fraction(value.numerator), Fraction(value.denominator)})
        return
    if isinstance(expr, Reduce):
        for part in (expr.low, expr.high, expr.body, *([expr.condition] if expr.condition else [])):
            _collect(part, found)
        return
    if not isinstance(expr, Op):
        return
    if expr.name == "neg" and isinstance(expr.args[0], Const):
        found.add(-Fraction(expr.args[0].value))  # -2 is -2, not also 2
        return
    if expr.name == "truediv" and any(_signed_literal(arg) is not None for arg in expr.args):
        for arg in expr.args:  # the parts of a quotient count unsigned (-1/9 holds 1 and 9 too)
            literal = _signed_literal(arg)
            if literal is not None:
                found.add(abs(literal))
    quotient = _constant_quotient(expr)
    if quotient is not None:
        found.add(quotient)
    if expr.name == "sub" and isinstance(expr.args[1], Const):
        found.add(Fraction(expr.args[1].value))
    for arg in expr.args:
        _collect(arg, found)


def _constant_quotient(expr: Op) -> Fraction | None:
    """The value of a quotient of literals as written (`1/9`, `-1/9`, `-(1/9)`); None for any other."""
    if expr.name == "neg" and isinstance(expr.args[0], Op):
        inner = _constant_quotient(expr.args[0])
        return None if inner is None else -inner
    if expr.name != "truediv":
        return None
    parts = [_signed_literal(arg) for arg in expr.args]
    if parts[0] is None or parts[1] is None or parts[1] == 0:
        return None
    return parts[0] / parts[1]


def _signed_literal(expr: Expr) -> Fraction | None:
    if isinstance(expr, Const):
        return Fraction(expr.value)
    if isinstance(expr, Op) and expr.name == "neg" and isinstance(expr.args[0], Const):
        return -Fraction(expr.args[0].value)
    return None


#: "Show that it is 218.": the answer, which the conclusion must state (not a hypothesis).
_STATED_ANSWER = re.compile(r"show\s+that\s+it\s+is\b", re.IGNORECASE)


def missing_numbers(prose: str, statement: Statement) -> list[Fraction]:
    formal = formal_numbers(statement)
    return [number for number in prose_numbers(prose) if number not in formal]


def answer_outside_the_conclusion(prose: str, statement: Statement) -> list[Fraction]:
    """The numbers of a stated answer ("Show that it is 218") the conclusion leaves out: a 218
    parked in a hypothesis (`x < 218`) passes "every number appears" and claims nothing of it."""
    stated = list(_STATED_ANSWER.finditer(prose))
    if not stated:
        return []
    found: set[Fraction] = set()
    _collect(statement.conclusion, found)
    return [number for number in prose_numbers(prose[stated[-1].end() :]) if number not in found]


def shape_refusal(asks: str, write: str) -> str:
    """Why a formal statement cannot state the prose's kind of claim, and what to write instead."""
    return f"the statement {asks}, which one instance does not state: write {write}"


IFF_WORDS = re.compile(
    r"\bif and only if\b|\biff\b|\\iff\b|\\Leftrightarrow\b|⟺|⇔|\b(?:exactly|precisely) when\b", re.IGNORECASE
)
# "a^2 + b^2 = 2ab if and only if a = b" came as its forward direction alone, and was
# machine-checked as the lemma (the AM-GM recording on the embedded model, 2026-11-26).
IFF_SHAPE = (IFF_WORDS, {"iff"}, "says 'if and only if'", "both directions: iff(P, Q)")
#: A count asked for. Not "how many more apples than Betty does Amy have", a difference
#: (miniF2F's mathd_algebra_123, refused so on the embedded model, 2026-12-03); read in the
#: claim's sentences only (`claim_sentences`): "Amy has three times the number of apples
#: Betty has" is a quantity the conditions name, not a count claimed.
COUNT_WORDS = re.compile(r"\bhow many\b(?!\s+(?:more|fewer|less)\b[^.?!;]*\bthan\b)|\bnumber of\b", re.IGNORECASE)
EXTREMUM_WORDS = re.compile(
    r"\b(?:smallest|(?<!at )least|minimum|minimal|largest|greatest|maximum|maximal)\b", re.IGNORECASE
)
#: A digit other than the units digit, which `% 10` does not give: "the tens digit in the sum
#: 11^1 + … + 11^9" came as `… % 10 == 5` (miniF2F's mathd_numbertheory_24, the embedded model).
PLACE_DIGIT_WORDS = re.compile(
    r"\b(?:tens|hundreds|thousands)(?:'|\s+place)?\s+digits?\b|\bdigit\s+in\s+the\s+(?:tens|hundreds|thousands)\b",
    re.IGNORECASE,
)
#: (words of the prose, what the formal statement must use to say it, the claim in words).
CLAIM_SHAPES = (
    (
        EXTREMUM_WORDS,
        {"min", "max", "all", "any"},
        "asks for the smallest or largest value",
        "that no other value does better: min(...), max(...) or all(... for k in range(...))",
    ),
    (
        COUNT_WORDS,
        {"sum"},
        "asks how many",
        "the count: sum(1 for k in range(...) if ...)",
    ),
    (
        re.compile(r"\b(?:sum|product) of all\b", re.IGNORECASE),
        {"sum", "prod"},
        "asks for a sum or product of all values",
        "the sum or product itself: sum(... for k in range(...) if ...)",
    ),
    (
        re.compile(r"\b(?:solve|interval|all values|all possible values|all solutions|set of all)\b", re.IGNORECASE),
        {"iff", "all", "any"},
        "asks for all solutions",
        "both directions: iff(CONDITION, ANSWER)",
    ),
    IFF_SHAPE,
)
#: Why a statement said with "if and only if" and formalized without iff(...) is refused.
ONE_DIRECTION = shape_refusal(*IFF_SHAPE[2:])
#: Words that make a condition of a statement: with none of them beside its one "if and only if",
#: the equivalence is the statement's claim, not one of its hypotheses.
_CONDITION_WORDS = re.compile(
    r"\b(?:if|suppose|supposing|assume|assuming|given|let|such that|when|whenever|where|with|provided|unless)\b",
    re.IGNORECASE,
)


def equivalence_is_the_claim(prose: str) -> bool:
    """Whether `prose` claims one equivalence and nothing conditional beside it ("The sum of two
    integers is even if and only if at least one of them is even"): then a formal statement that
    gives one side as its hypotheses and the other as its conclusion has both sides, and iff(...)
    of them is the claim. Not so for an equivalence among the conditions ("Let n be even iff m is
    odd; then n + m is odd"), whose iff(...) of hypothesis and conclusion would be another claim."""
    if len(IFF_WORDS.findall(prose)) != 1:
        return False
    return not _CONDITION_WORDS.search(IFF_WORDS.sub(" ", prose))


def missing_claim_shape(prose: str, statement: Statement) -> str:
    """Why the formal statement cannot state the prose's kind of claim; "" when nothing is amiss."""
    used = _operations_used(statement)
    for words, needed, asks, write in CLAIM_SHAPES:
        said = words.search(claim_sentences(prose) if words is COUNT_WORDS else prose)
        if said and not used & needed:
            return shape_refusal(asks, write)
    return ""


def place_digit_misread(prose: str, statement: Statement) -> str:
    """Why a tens (hundreds, thousands) digit the prose asks for cannot be the formal statement's:
    with no division in it, `N % 10` is the units digit."""
    if PLACE_DIGIT_WORDS.search(prose) and not _operations_used(statement) & {"floordiv", "floor", "truediv"}:
        return (
            "the statement asks for a digit other than the units digit, and N % 10 is the units digit: "
            "(N // 10) % 10 is the tens digit of N, (N // 100) % 10 its hundreds digit"
        )
    return ""


def _operations_used(statement: Statement) -> set[str]:
    return set().union(*(_operations(part) for part in (*statement.hypotheses, statement.conclusion)))


def _operations(expr: Expr) -> set[str]:
    if isinstance(expr, Reduce):
        parts = (expr.low, expr.high, expr.body, *([expr.condition] if expr.condition else []))
        return {expr.kind}.union(*(_operations(part) for part in parts))
    if isinstance(expr, Op):
        return {expr.name}.union(*(_operations(arg) for arg in expr.args)) if expr.args else {expr.name}
    return set()


#: A conclusion among the hypotheses. The formalizer is not asked again for such a statement
#: (stages/formal/formalize.py): it changes only by saying something else.
CIRCULAR = "the conclusion is one of the hypotheses: the statement would prove nothing"


#: An equivalence one of whose sides is a hypothesis: `n % 2 == 0` and then iff(n % 2 == 0, ...)
#: states one direction only (the embedded formalizer kept its hypothesis when told to join it to
#: its conclusion by iff, `lemmata check` of "n is even iff n^2 is even", 2026-11-29, and the
#: weaker statement was machine-checked).
SIDE_ASSUMED = (
    "a hypothesis is one side of the equivalence in the conclusion, so the statement says one direction only: "
    "write the equivalence without that hypothesis"
)


def _assumes_a_side(part: Expr, assumed: set[Expr]) -> bool:
    if not (isinstance(part, Op) and part.name == "iff"):
        return False
    return any(set(conjuncts(side)) <= assumed for side in part.args)


#: Words that offer cases: a conclusion `A ∨ B` states a claim with cases only where the prose does.
_OR_WORDS = re.compile(r"\bor\b|\beither\b|\bat\s+least\s+one\b|\bone\s+of\b|\\lor\b|\\vee\b|∨", re.IGNORECASE)


def cases_not_named(prose: str, statement: Statement) -> str:
    """Why the conclusion's `or` is not the prose's: a claim the prose states whole, offered as cases."""
    claim = prose[len(conditions_part(prose)) :] or prose
    offered = [part for part in conjuncts(statement.conclusion) if len(disjuncts(part)) > 1]
    if offered and not _OR_WORDS.search(claim):
        return (
            f"the conclusion {expression_text(offered[0])} offers cases (∨) the statement does not name: "
            "write its claim as it states it"
        )
    return ""


def unfaithful(prose: str, statement: Statement) -> str:
    """Why the formal statement cannot be the prose's ("" when nothing is found): the reason is
    sent back to the formalizer, and shown when the statement is refused."""
    closed = about_no_variable(statement)
    if closed:
        return closed
    missing = missing_numbers(prose, statement)
    if missing:
        listed = ", ".join(_number_text(number) for number in missing)
        return f"the formal statement leaves out {listed} of the statement: every number of the statement must appear in it"
    outside = answer_outside_the_conclusion(prose, statement)
    if outside:
        listed = ", ".join(_number_text(number) for number in outside)
        return f"the conclusion leaves out {listed}, the statement's answer: the conclusion must state the answer"
    conclusion = conjuncts(statement.conclusion)
    if conclusion == [Op("true", ())]:
        return "the conclusion is `True`: it says nothing"
    assumed = {part for assumption in statement.assumptions() for part in conjuncts(assumption)}
    if all(part in assumed for part in conclusion):
        return CIRCULAR
    if any(_assumes_a_side(part, assumed) for part in conclusion):
        return SIDE_ASSUMED
    free = free_answer(statement)
    if free:
        return (
            f"the conclusion sets {free} to a value while no hypothesis says anything of {free}: for all "
            f"{free} that is false; state the conditions that determine {free} as hypotheses"
        )
    ruled_out = ruled_out_case(statement)
    if ruled_out:
        return ruled_out
    shape = missing_claim_shape(prose, statement) or place_digit_misread(prose, statement)
    if shape:
        return shape
    return (
        unstated_hypothesis(prose, statement)
        or narrowed_domain(prose, statement)
        or invented_number(prose, statement)
        or cases_not_named(prose, statement)
        or idle_case(statement)
    )


def invented_number(prose: str, statement: Statement) -> str:
    """A number of a hypothesis the prose does not write: a hypothesis takes its numbers from the
    statement it formalizes. "Let x > 0. Then x^2 > x" (false at x = 1/2) came true with
    `x**3 > x**2` beside `x > 0` (found 2026-12-02 attacking the conditions rule). 0, 1 and -1 are
    free (domains, "nonzero"); a prose number counts with its exponents and subscripts too."""
    written = set(prose_numbers(prose)) | {Fraction(digits) for digits in re.findall(r"\d+", prose)}
    written |= {Fraction(0), Fraction(1), Fraction(-1)}
    if re.search(r"\b(?:even|odd|parity)\b", prose, re.IGNORECASE):
        written.add(Fraction(2))  # "even" is `% 2 == 0`
    written |= words_numbers(prose)
    for hypothesis in statement.hypotheses:
        found: set[Fraction] = set()
        _collect(hypothesis, found)
        for number in sorted(found):
            if number in written or abs(number) in written:
                continue
            if number.denominator != 1 and {abs(number.numerator), number.denominator} <= written:
                continue
            return (
                f"the hypothesis {expression_text(hypothesis)} holds {_number_text(number)}, which the statement "
                "does not write: a formalization assumes only what the statement assumes"
            )
    return ""


#: Numbers written as words: "Amy has three times the number of apples Betty has" is `a == 3*b`
#: (miniF2F's mathd_algebra_123, the embedded model, 2026-12-03).
NUMBER_WORDS = {
    "two": 2, "twice": 2, "double": 2, "three": 3, "thrice": 3, "triple": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "hundred": 100, "thousand": 1000,
}  # fmt: skip
_NUMBER_WORD = re.compile(rf"\b(?:{'|'.join(NUMBER_WORDS)})\b", re.IGNORECASE)


def words_numbers(prose: str) -> set[Fraction]:
    """The numbers the prose writes as words, and the bounds of a "k-digit" number (10 and 99,
    and 100 for `< 100`, for two digits): a hypothesis may hold them."""
    found = {Fraction(NUMBER_WORDS[word.lower()]) for word in _NUMBER_WORD.findall(prose)}
    if re.search(r"\bhalf\b", prose, re.IGNORECASE):
        found |= {Fraction(1, 2), Fraction(2)}
    for digits in digit_counts(prose):
        found |= {Fraction(10 ** (digits - 1)), Fraction(10**digits - 1), Fraction(10**digits)}
    return found


def ruled_out_case(statement: Statement) -> str:
    """A hypothesis `P or Q` one of whose cases another hypothesis contradicts, as `x == c` against
    `x == d`: the prose's cases, mangled. "The sum of two integers is even if one of them is even"
    came as `a % 2 == 0` and `or(a % 2 == 1, b % 2 == 0)` (the embedded formalizer, the main
    command 2026-11-26): true, as it assumes both even, and so machine-checkable, but not the prose's
    (false) claim. "" when there is none."""
    parts = [part for hypothesis in statement.hypotheses for part in conjuncts(hypothesis)]
    settled = dict(fixed for part in parts if (fixed := _fixed_value(part)) is not None)
    for part in parts:
        if not (isinstance(part, Op) and part.name == "or"):
            continue
        for case in part.args:
            fixed = _fixed_value(case)
            if fixed is not None and fixed[0] in settled and settled[fixed[0]] != fixed[1]:
                other = expression_text(Op("eq", (fixed[0], Const(settled[fixed[0]]))))
                return (
                    f"the case {expression_text(case)} of the hypothesis {expression_text(part)} contradicts "
                    f"the hypothesis {other}: write the hypotheses the statement makes, each once, "
                    "without cases another rules out"
                )
    return ""


def _fixed_value(expr: Expr) -> tuple[Expr, int | Fraction] | None:
    """(e, c) for `e == c` with c a number and e not one."""
    if not (isinstance(expr, Op) and expr.name == "eq" and len(expr.args) == 2):
        return None
    left, right = expr.args
    if isinstance(right, Const) and not isinstance(left, Const):
        return left, right.value
    if isinstance(left, Const) and not isinstance(right, Const):
        return right, left.value
    return None


def free_answer(statement: Statement) -> str:
    """A variable the conclusion equates with a value of its own while no hypothesis constrains it:
    `forall a, b, c: b = 2 and c = 6 => a = -2*sqrt(3)/3` (miniF2F's amc12b_2003_p6, the embedded
    model, 2026-11-26), false for every a but one, whatever the prose meant; "" when there is none."""
    constrained = set().union(*(free_variables(h) for h in statement.hypotheses)) if statement.hypotheses else set()
    for part in conjuncts(statement.conclusion):
        if not (isinstance(part, Op) and part.name == "eq"):
            continue
        for side, other in (part.args, part.args[::-1]):
            if isinstance(side, Var) and side.name not in constrained and side.name not in free_variables(other):
                return side.name
    return ""


def _number_text(number: Fraction) -> str:
    return str(number.numerator) if number.denominator == 1 else f"{number.numerator}/{number.denominator}"
