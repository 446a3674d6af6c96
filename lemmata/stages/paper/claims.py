"""What the prose of a paper may not claim: a sentence is tested here, and dropped by prose.py.

Each test reads one sentence and the run's record: a proof called correct when the main result
is not established (CLAIMS_PROOF), numbers vouching for a proof (numbers_vouch), a proof method
no proof of the record uses (names_an_unused_method), a lemma called proved that the checks did
not verify (claims_an_unverified_lemma), applications or importance nothing of the run looked into
(claims_unfounded_significance). A "not" in the claim's clause keeps the sentence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lemmata.artifacts import Theory, chain_numbers

#: A sentence that calls a result proved, or its proof correct: said of the main result, only a
#: verified theory may say it. "The numerical checks showed that the proof was correct": the
#: embedded model's discussion of a paper whose checks tested one lemma of two (2026-11-26).
CLAIMS_PROOF = re.compile(
    r"\b(?:is|are|was|were|been|being)\s+(?:now\s+|thus\s+|hence\s+|therefore\s+)?"
    r"(?:established|proven|proved|verified)\b|\bwe\s+(?:have\s+)?(?:proved|proven|established|"
    r"verified)\b|\b(?:proof|proofs|argument|result|theorem)\s+(?:is|are|was|were)\s+"
    r"(?:correct|valid|sound|rigorous)\b",
    re.IGNORECASE,
)
#: A sentence that has numbers vouch for a proof or a result: sampled inputs can find a
#: counterexample, never show a proof correct. Dropped whatever the theory's status: "The numerical
#: checks showed that the proof was correct", the embedded model's discussion of a paper whose main
#: result was machine-checked while the one lemma tested numerically had failed its test (the
#: README's main command, 2026-11-27); "The numerical checks performed on the lemmas [L1], [L2],
#: and [L3] showed that they were all verified", the same command's next run.
_NUMBERS = re.compile(
    r"\b(?:numerical(?:ly)?|numeric|experiments?|experimental|simulations?|samples?|sampled|sampling|tests?|tested)\b",
    re.IGNORECASE,
)
_VOUCHES = re.compile(
    r"\b(?:show(?:s|ed|n)?|confirm(?:s|ed)?|demonstrat(?:es|ed)|prov(?:es|ed|en)|verif(?:y|ies|ied)|"
    r"establish(?:es|ed)?)\b(?:\s+that)?\s+(?:the\s+|each\s+|every\s+|all\s+|its\s+|our\s+)?(?:main\s+)?"
    r"(?:proofs?|lemmas?|theorems?|results?|steps?|claims?|statements?|arguments?)\b"
    r"|\b(?:verified|proved|proven|established|correct|valid|confirmed)\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(r"\b(?:not|never|no|cannot|nothing)\b|n't\b", re.IGNORECASE)


def numbers_vouch(sentence: str) -> bool:
    """Whether `sentence` has numerical checks vouch for a proof, a lemma or a result: a numbers
    word, and a claim of proof or correctness that no "not" or "never" earlier in its clause denies."""
    if not _NUMBERS.search(sentence):
        return False
    return any(
        not _NEGATION.search(re.split(r"[,;:]", sentence[: match.start()])[-1]) for match in _VOUCHES.finditer(sentence)
    )


#: Proof methods a sentence of the prose may name, each with the words that name it. A sentence
#: naming a method that no proof of the record uses (the lemmas' proofs and the assembled proof the
#: paper prints, the machine's checks) goes: "The goal of this paper is to provide a proof of this
#: result using mathematical induction", the introduction of the README's task on the embedded
#: model, whose proofs were a direct computation and Coq's lia (2026-12-03); issue 54 found "using
#: mathematical induction" in its Conclusion before.
PROOF_METHODS: dict[str, re.Pattern[str]] = {
    "induction": re.compile(r"\binducti(?:on|ve(?:ly)?)\b", re.IGNORECASE),
    "contradiction": re.compile(r"\bcontradict(?:ion|ing|s)?\b|\breductio\b", re.IGNORECASE),
    "contraposition": re.compile(r"\bcontraposi(?:tion|tive)\b", re.IGNORECASE),
    "pigeonhole": re.compile(r"\bpigeon-?\s?hole\b", re.IGNORECASE),
    "descent": re.compile(r"\b(?:infinite|method\s+of)\s+descent\b", re.IGNORECASE),
}


def methods_named(text: str) -> frozenset[str]:
    """The proof methods of PROOF_METHODS that `text` names."""
    return frozenset(name for name, words in PROOF_METHODS.items() if words.search(text))


def names_an_unused_method(sentence: str, used: frozenset[str]) -> bool:
    """Whether `sentence` says a method was used that no proof of the record uses; a "not" or
    "no" in the method's clause denies it ("no induction is needed", "induction is not needed")."""
    for name, words in PROOF_METHODS.items():
        if name in used:
            continue
        for match in words.finditer(sentence):
            before = re.split(r"[,;:]", sentence[: match.start()])[-1]
            after = re.split(r"[,;:]", sentence[match.end() :])[0]
            if not _NEGATION.search(before + " " + after) and "without" not in before.lower().split():
                return True
    return False


#: A lemma a sentence names: "[L2]", "L2", "Lemma 2", "Lemma~\\ref{lem:L2}", "Lemmas 1 and 3".
_LEMMA_MENTION = re.compile(
    r"\[(L\d+)\]|\b(L\d+)\b|\blem:(L\d+)\b|\bLemmas?\s+(\d+(?:\s*(?:,|and)\s*\d+)*)\b", re.IGNORECASE
)


def lemmas_named(sentence: str, lemma_ids: Sequence[str]) -> set[str]:
    """The ids of the lemmas of the chain `sentence` names, by id or by the number the paper
    gives each (chain_numbers)."""
    by_number = {str(number): lemma_id for number, lemma_id in zip(chain_numbers(lemma_ids), lemma_ids)}
    known = {lemma_id.upper(): lemma_id for lemma_id in lemma_ids}
    named = set()
    for match in _LEMMA_MENTION.finditer(sentence):
        by_id = match.group(1) or match.group(2) or match.group(3)
        if by_id:
            named.add(known.get(by_id.upper(), ""))
        else:
            named.update(by_number.get(number, "") for number in re.findall(r"\d+", match.group(4)))
    return named - {""}


def claims_an_unverified_lemma(sentence: str, unverified: frozenset[str], lemma_ids: Sequence[str]) -> bool:
    """Whether `sentence` calls proved or verified a lemma the checks did not verify: "Lemma 1 has
    been verified", "[L2] is proven", of lemmas whose status says otherwise."""
    return bool(unverified & lemmas_named(sentence, lemma_ids)) and bool(
        CLAIMS_PROOF.search(sentence) or _LEMMA_HOLDS.search(sentence)
    )


#: "we have shown Lemma 2", "Lemma 2 holds", "L1 is true/correct": a claim that needs a status.
_LEMMA_HOLDS = re.compile(
    r"\b(?:holds?|is\s+(?:true|correct|valid|sound|rigorous))\b|\bwe\s+(?:have\s+)?(?:shown|showed|demonstrated)\b",
    re.IGNORECASE,
)


def methods_used_by(theory: Theory) -> frozenset[str]:
    """The proof methods the record's proofs name: each lemma's proof, the assembled proof and
    the machine checks' own words (a Coq proof by `induction` names it)."""
    texts = [lemma.proof_text for lemma in theory.lemmas] + [theory.assembled_proof]
    if theory.goal_check is not None:
        texts.append(theory.goal_check.model_dump_json())
    texts += [lemma.formal.model_dump_json() for lemma in theory.lemmas if lemma.formal is not None]
    return methods_named("\n".join(texts))


#: A sentence that credits the result with an importance or with uses nothing of the run looked
#: into: "This result has important applications in number theory and computer science", the
#: Conclusion of the README's task on the embedded model (2026-12-03, 2026-12-04), whose survey
#: retrieved no paper. The record holds no application; such a sentence is the model's filler.
_SIGNIFICANCE = re.compile(
    r"\b(?:important|many|numerous|wide|wide-ranging|significant|various|practical|broad|far-reaching)\s+"
    r"(?:applications?|implications|uses|consequences|impact)\b"
    r"|\b(?:widely|extensively)\s+(?:used|applied)\b",
    re.IGNORECASE,
)


def claims_unfounded_significance(sentence: str) -> bool:
    """Whether `sentence` credits the result with applications or importance (see _SIGNIFICANCE)
    that no "not" in its clause denies."""
    return any(
        not _NEGATION.search(re.split(r"[,;:]", sentence[: match.start()])[-1])
        for match in _SIGNIFICANCE.finditer(sentence)
    )
