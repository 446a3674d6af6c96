"""Exactly one `[Unverified step]` marker per unverified lemma, placed by us, never by the model.

The model's own markers (the `\\unverified` command or the literal text) are removed: a model
marks too much, too little, or twice. Each unverified lemma then gets one marker, right after
its lemma environment (before its proof), found by the lemma id in the environment's title or
label, or by position when the paper states as many lemmas as the theory has. A lemma not found
in the body gets its marker in our Limitations list instead. The Limitations section names every
unverified lemma: the ones the model's own section leaves out are listed in ours. A lemma the
numerical tests contradict (`numerically_suspect`) gets a bold warning with its figures there,
whatever the model wrote about it.
"""

from __future__ import annotations

import re

from lemmata.artifacts import Experiment, ProvedLemma, Theory
from lemmata.latex.document import escape_latex_text

MARKER = "\\unverified{}"
MODEL_MARKERS = re.compile(r"\\unverified(?![A-Za-z@])(?:\s*\{\s*\})?[ \t]*|\[Unverified step\][ \t]*")
LEMMA_ENVIRONMENT = re.compile(r"\\begin\{lemma\}(?P<title>\[[^\]]*\])?(?P<label>\s*\\label\{[^}]*\})?")
LEMMA_END = "\\end{lemma}"
LIMITATIONS_HEADING = re.compile(r"\\section\*?\{\s*Limitations\s*\}", re.IGNORECASE)
OUR_SECTION = "\\section*{Limitations of the verification}"


def mark_unverified(body: str, theory: Theory) -> str:
    """`body` with the model's markers removed, one marker per unverified lemma, and every
    unverified lemma named under Limitations."""
    body = MODEL_MARKERS.sub("", body)
    unverified = [lemma for lemma in theory.lemmas if not lemma.verified]
    if not unverified:
        return body
    ends = lemma_environment_ends(body, [lemma.id for lemma in theory.lemmas])
    for lemma in sorted((l for l in unverified if l.id in ends), key=lambda l: ends[l.id], reverse=True):
        position = ends[lemma.id]
        body = body[:position] + f"\n{MARKER}\n" + body[position:]
    unplaced = {lemma.id for lemma in unverified if lemma.id not in ends}
    return with_limitations(body, unverified, unplaced)


def lemma_environment_ends(body: str, lemma_ids: list[str]) -> dict[str, int]:
    """Lemma id -> the position just after its `\\end{lemma}`: by the id in the title or label,
    else by position when the body has exactly one lemma environment per lemma."""
    spans = []
    for begin in LEMMA_ENVIRONMENT.finditer(body):
        end = body.find(LEMMA_END, begin.end())
        if end != -1:
            spans.append((begin.group("title") or "", begin.group("label") or "", end + len(LEMMA_END)))
    ends: dict[str, int] = {}
    unnamed: list[int] = []
    for index, (title, label, end) in enumerate(spans):
        named = [i for i in lemma_ids if re.search(rf"(?<![A-Za-z0-9_]){re.escape(i)}(?![A-Za-z0-9_])", title + label)]
        if len(named) == 1 and named[0] not in ends:
            ends[named[0]] = end
        else:
            unnamed.append(index)
    if len(spans) == len(lemma_ids):
        # One environment per lemma, in plan order: an environment without an id is its lemma's.
        for index in unnamed:
            ends.setdefault(lemma_ids[index], spans[index][2])
    return ends


def with_limitations(body: str, unverified: list[ProvedLemma], unplaced: set[str]) -> str:
    """Our Limitations list for the unverified lemmas the model's own section leaves out, and for
    every lemma whose marker could not be placed in the text (the list carries its marker)."""
    own_section = _limitations_text(body)
    listed = [lemma for lemma in unverified
              if lemma.id in unplaced or not re.search(rf"\b{re.escape(lemma.id)}\b", own_section)]
    if not listed:
        return body
    items = "\n".join(
        f"  \\item {MARKER + ' ' if lemma.id in unplaced else ''}Lemma {escape_latex_text(lemma.id)} "
        f"({lemma.status.replace('_', ' ')}, confidence {lemma.confidence:.2f}): "
        f"{escape_latex_text(lemma.verification or 'not verified')}."
        for lemma in listed
    )
    return body.rstrip() + f"\n\n{OUR_SECTION}\n" \
        "The following steps were not verified and should be read with care.\n" \
        f"\\begin{{itemize}}\n{items}\n\\end{{itemize}}\n"


def _limitations_text(body: str) -> str:
    """The model's Limitations section, up to the next section; empty when it wrote none."""
    found = LIMITATIONS_HEADING.search(body)
    if not found:
        return ""
    rest = body[found.end():]
    following = re.search(r"\\section\*?\{", rest)
    return rest[: following.start()] if following else rest


def add_numerical_warnings(body: str, experiment: Experiment) -> str:
    """A bold warning per `numerically_suspect` lemma, with its violations, at the end of the body."""
    suspect = [check for check in experiment.checks if check.numerically_suspect]
    if not suspect:
        return body
    warnings = "\n\n".join(
        f"\\textbf{{Warning: numerical tests contradict Lemma {escape_latex_text(check.lemma_id)}.}} "
        f"{check.violations} of {check.trials} random trials violate it (rate {100 * (check.violation_rate or 0):.1f}\\%), "
        "so the lemma is probably false as stated, and every result that uses it is in doubt."
        for check in suspect
    )
    return body.rstrip() + f"\n\n\\section*{{Numerical warnings}}\n{warnings}\n"
