"""Whether a statement is quantitative: what EXPERIMENT_MODE=auto reads in the formal statement.

A numerical test samples numbers and checks a relation between them, so a statement is worth
one when it relates or computes quantities: an inequality, a sum or limit, a growth rate, a
probability, a numerical function, a congruence, or arithmetic on whole numbers. What is *not*
a signal, though it was once: a digit or an `=` alone (`x = 2k` names, `2` counts), "real" or
"even" alone, "at least one" (existence, not size), a lemma's statement (the spec reads the
formal statement; lemmas restate pieces of it, and one stray "bounded" made every run test).
"""

from __future__ import annotations

import re

_NOT_A_LETTER = r"(?![A-Za-z])"
#: Each signal by the name a skip or run reason gives it.
SIGNALS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "an inequality",
        re.compile(
            r"[<>≤≥≪≫]|\\(?:le|ge|leq|geq|lt|gt|ll|gg|leqslant|geqslant)"
            + _NOT_A_LETTER
            + r"|\b(?:greater|less|more|fewer|larger|smaller) than\b|\bexceeds?\b|\bbounded (?:above |below )?by\b"
            r"|\bat (?:most|least)\b(?! (?:one|a|an|once)\b)",
            re.IGNORECASE,
        ),
    ),
    (
        "a sum, product, integral or limit",
        re.compile(
            r"\\(?:sum|prod|int|iint|oint|lim|limsup|liminf|sup|inf|max|min)"
            + _NOT_A_LETTER
            + r"|[∑∏∫]|\b(?:sum|product|integral|limit|supremum|infimum|maximum|minimum) of\b",
            re.IGNORECASE,
        ),
    ),
    (
        "a growth rate or convergence",
        re.compile(
            r"\b[Oo]\(|\\(?:Theta|Omega)" + _NOT_A_LETTER + r"|\\mathcal\{O\}"
            r"|\b(?:converge\w*|diverge\w*|asymptotic\w*|rates?|grows?|decays?)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "a probability or expectation",
        re.compile(
            r"\\(?:Pr|Var)" + _NOT_A_LETTER + r"|\\mathbb\{[EP]\}"
            r"|\b(?:probabilit\w+|expected|expectation|variance|random(?:ly)?|almost surely)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "a numerical function",
        re.compile(
            r"\\(?:log|ln|exp|sqrt|frac|binom|lfloor|lceil|sin|cos|tan)"
            + _NOT_A_LETTER
            + r"|\b(?:log|ln|exp|sqrt)\s*\(",
            re.IGNORECASE,
        ),
    ),
    (
        "a congruence",
        re.compile(r"\\(?:equiv|pmod|bmod|mod)" + _NOT_A_LETTER + r"|\bmod(?:ulo)?\b|\bcongruen\w*", re.IGNORECASE),
    ),
)
#: Arithmetic on whole numbers needs both: numbers of that kind, and something done with them.
WHOLE_NUMBERS = re.compile(
    r"\b(?:integers?|natural numbers?|whole numbers?|primes?)\b|\\mathbb\{[NZ]\}|[ℕℤ]", re.IGNORECASE
)
ARITHMETIC = re.compile(
    r"\b(?:even|odd|divisible|divides|divisors?|remainders?|gcd|lcm|sums?|products?|squares?|cubes?|powers?"
    r"|multiples?|digits?|factorials?)\b|[+*^]|\\(?:mid|cdot|times)" + _NOT_A_LETTER,
    re.IGNORECASE,
)


def quantitative_signals(statement: str) -> list[str]:
    """The names of the quantitative signals `statement` carries, in SIGNALS order; [] for none."""
    found = [name for name, pattern in SIGNALS if pattern.search(statement)]
    if WHOLE_NUMBERS.search(statement) and ARITHMETIC.search(statement):
        found.append("arithmetic on whole numbers")
    return found
