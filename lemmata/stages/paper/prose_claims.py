"""Mathematical claims the prose makes on its own, checked like lemmas where they can be stated.

The writer model's prose asserts mathematics no lemma states: "the square of every odd integer is
even" in a Discussion is as much a claim as a lemma, and checked by nothing. A sentence that
states a general claim about numbers (`general_claims`) goes to the formalizer and the machine
checks, as a lemma's statement does; one the checks refute (a counterexample confirmed by exact
evaluation) leaves the prose, and the Limitations section says what it claimed, its formal
reading and the counterexample. The rest stays prose, unchecked, as every sentence of the
model's is.

Only universal claims are sent: the formal language has no unbounded "there is", so "every integer
can be written as 2k + r" would come back as a different, stronger statement, refuted while the
sentence is true. A sentence about the paper's own lemmas or theorem has a status already, and
one that restates a statement the theory checked is not checked twice. At most `limit` sentences
of a paper are checked: each costs a formalizer call or two.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from lemmata.stages.paper.prompt_echo import alike, normalised


@dataclass(frozen=True)
class RefutedClaim:
    """A sentence of the prose whose formal reading the machine checks refute."""

    sentence: str
    formal: str  # the formal statement as checked, one line of plain text
    latex: str  # the same in LaTeX (kernel rendering), for the paper
    why: str  # the counterexample in words (artifacts.refutation_in_words)


#: Refutes a sentence or not: the formalizer and the machine checks in the product, a script in tests.
ClaimRefuter = Callable[[str], "RefutedClaim | None"]

#: At most this many sentences of a paper are sent to the machines (a formalizer call or two each).
DEFAULT_CLAIM_LIMIT = 2
#: A sentence longer than this is an argument, not a claim the formalizer can state.
MAX_CLAIM_CHARS = 300

_NUMBER_NOUN = r"(?:integers?|numbers?|naturals?|reals?|primes?|rationals?)"
_ADJECTIVES = (
    r"(?:(?:two|three|positive|negative|nonnegative|non-negative|nonzero|even|odd|real|natural|prime|"
    r"consecutive|rational|whole|distinct)\s+){0,3}"
)
#: "every odd integer", "any two reals", "all primes", "for all n", and a sentence that opens
#: "The sum of two odd integers is": where it stands later ("This allows us to express the sum
#: of two even integers as ...", "The proof of the sum of two even integers being even is
#: complete", the README's task on the embedded model, 2026-12-04) it names a subject, no claim.
_UNIVERSAL = re.compile(
    rf"\b(?:every|any|all|each|no)\s+{_ADJECTIVES}{_NUMBER_NOUN}\b"
    r"|\bfor\s+(?:all|every|any|each)\b"
    r"|^\s*(?:(?:note|recall|observe)\s+that\s+)?the\s+(?:sum|product|difference|square|cube)\s+of\s+"
    rf"(?:two|three|an?)\s+{_ADJECTIVES}{_NUMBER_NOUN}\b.*\b(?:is|are)\b",
    re.IGNORECASE,
)
#: An existence the language cannot state, and "can be written as", which is one.
_EXISTENTIAL = re.compile(
    r"\bthere\s+(?:is|are|exists?)\b|\bexists?\b|\bfor\s+some\b|\bsome\b|\bcan\s+be\s+(?:written|expressed|"
    r"represented|decomposed)\b",
    re.IGNORECASE,
)
#: The paper's own results, which their statuses speak for, and sentences about the paper or its
#: proofs rather than about numbers ("we", "our proof").
_OWN_RESULT = re.compile(
    r"\\ref\{|\\cite|\[L\d+\]|\bL\d+\b|\b(?:lemmas?|theorems?|conjectures?|corollary|proposition|proofs?|"
    r"paper|we|our|us)\b",
    re.IGNORECASE,
)
_MATH_DELIMITERS = re.compile(r"\\[()\[\]]|\$")
#: Where a sentence ends: not after an initial ("H. Silverman" is one name). prose.py splits so too.
SENTENCE_END = re.compile(r"(?<=[.!?])(?<!\b[A-Z]\.)[ \t]+(?=[A-Z\\$])")
#: How alike a sentence must be to a statement the theory checked to count as its restatement.
RESTATEMENT_SIMILARITY = 0.8


def states_a_general_claim(sentence: str) -> bool:
    """Whether `sentence` claims something of all numbers of a kind, in a form the formal language
    states: universal, about no lemma or theorem of the paper, short."""
    plain = _MATH_DELIMITERS.sub(" ", sentence)
    return (
        len(plain) <= MAX_CLAIM_CHARS
        and bool(_UNIVERSAL.search(plain))
        and not _EXISTENTIAL.search(plain)
        and not _OWN_RESULT.search(plain)
    )


def general_claims(text: str, checked_statements: Sequence[str] = ()) -> list[str]:
    """The sentences of `text` that state a general claim (states_a_general_claim), in order,
    without those that restate one of `checked_statements` (the goal, the lemmas)."""
    known = [normalised(statement) for statement in checked_statements if statement.strip()]
    claims = []
    for line in text.splitlines():
        for sentence in SENTENCE_END.split(line):
            sentence = sentence.strip()
            if not states_a_general_claim(sentence):
                continue
            key = normalised(sentence)
            if any(old and (old in key or alike(key, old, RESTATEMENT_SIMILARITY)) for old in known):
                continue
            claims.append(sentence)
    return claims


@dataclass
class ProseClaimChecks:
    """The claims of one paper checked so far, each once: the writer drafts the paper again at
    every turn, and a sentence checked at the first keeps its answer. At most `limit` sentences
    are ever sent to `refute`."""

    refute: ClaimRefuter
    checked_statements: Sequence[str] = ()
    limit: int = DEFAULT_CLAIM_LIMIT
    answers: dict[str, RefutedClaim | None] = field(default_factory=dict)

    def refuted_in(self, text: str) -> list[RefutedClaim]:
        """The claims of `text` the machines refute, checking those not checked yet, within the limit."""
        refuted = []
        for sentence in general_claims(text, self.checked_statements):
            key = normalised(sentence)
            if key not in self.answers:
                if len(self.answers) >= self.limit:
                    continue
                self.answers[key] = self.refute(sentence)
            answer = self.answers[key]
            if answer is not None:
                refuted.append(answer)
        return refuted

    @property
    def sent(self) -> int:
        """How many sentences went to the machines."""
        return len(self.answers)
