"""People the prose names as authors that no tool of the survey returned.

A model asked for an introduction names authors from memory: "H. Silverman and J. T." in the
Introduction of a run whose survey retrieved no paper (issue 54: n³ − n divisible by 6 on the
embedded model). A paper of lemmata cites only what a tool returned, so a sentence that names
someone the way a citation does — initials before a surname ("H. Silverman", "J. T."),
"Surname et al.", "Surname (2019)", "(Surname, 2019)" — goes unless each surname it names is an
author of a retrieved paper or a word of the researcher's task. The name of a result ("Fermat's
little theorem", "the Cauchy–Schwarz inequality") is mathematics, not a citation, and stays.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_NAME = r"[A-Z][a-z]+(?:[-'][A-Z][a-z]+)*"
_INITIALS = r"(?:[A-Z]\.[ \t]?(?:-?[A-Z]\.[ \t]?)*)"
#: Each pattern's groups are the surnames it names; a pattern without a group names someone
#: unknown by construction (initials alone: "J. T.").
_AS_AUTHORS = (
    re.compile(rf"\b{_INITIALS}({_NAME})\b"),
    re.compile(r"(?<![A-Za-z.])(?:[A-Z]\.[ \t]?){2,}(?![A-Za-z])"),
    re.compile(rf"\b({_NAME})(?:,?[ \t]+(?:and|&)[ \t]+({_NAME}))?[ \t]+et[ \t]+al\b"),
    re.compile(rf"\b({_NAME})(?:[ \t]+(?:and|&)[ \t]+({_NAME}))?[ \t]*[(\[](?:19|20)\d\d[a-z]?[)\]]"),
    re.compile(rf"\(({_NAME})(?:[ \t]+et[ \t]+al\.?)?(?:[ \t]+(?:and|&)[ \t]+({_NAME}))?,[ \t]*(?:19|20)\d\d[a-z]?\)"),
)


#: Runs of capitals and dots that are not initials.
NOT_NAMES = frozenset({"Q.E.D.", "Q.E.D", "W.L.O.G.", "W.L.O.G", "U.S.", "U.K."})


def known_names(authors: Iterable[str], task: str) -> frozenset[str]:
    """The surnames a sentence may name: every word of the retrieved papers' authors (whichever
    order a tool gives a name in) and of the task, lower-cased."""
    words = re.findall(r"[^\W\d_]+", " ".join(authors) + " " + task)
    return frozenset(word.lower() for word in words if len(word) > 1)


def names_unretrieved_author(sentence: str, known: frozenset[str]) -> bool:
    """Whether `sentence` names someone as an author whom `known` (see known_names) does not hold."""
    for pattern in _AS_AUTHORS:
        for match in pattern.finditer(sentence):
            if re.sub(r"\s", "", match.group()) in NOT_NAMES:
                continue
            surnames = [name for name in match.groups() if name]
            if not surnames or any(name.lower() not in known for name in surnames):
                return True
    return False
