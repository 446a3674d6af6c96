"""The parts of the paper the writer model writes, and reading them out of its answers.

The model writes prose only, each part after a marker line (`%%% INTRODUCTION`, `%%% LEMMA L2`,
..., `%%% END`); lemmata typesets everything else. Small models follow such a format loosely, so
a part also starts at a heading that names it (`# Introduction`, `\\section{Introduction}`,
`**Conclusion**`, `### Lemma L2`), markers are read in any case and number of `%`, a lemma may
be named by its position (`%%% LEMMA 2`), and code fences and chat around the parts are ignored.
A heading that names no part ends the part before it when it is a marker, or a heading of the
kind that opened parts in this answer (the `\\section{Lemmas}` of a model writing a whole paper);
a deeper one (`## Setting` under `# Introduction`) is the part's own text.
A part that is cut off (the answer's last one, when the answer ended at its token limit, or
stops mid-sentence without the end marker) is not kept: it is asked for again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from lemmata.latex.extract import unwrap_latex_fences

END = "END"
#: The sections the model writes, in paper order, with their marker names.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("abstract", "ABSTRACT"),
    ("introduction", "INTRODUCTION"),
    ("preliminaries", "PRELIMINARIES"),
    ("discussion", "DISCUSSION"),
    ("conclusion", "CONCLUSION"),
)
#: A heading names a part by its first word ("Discussion and outlook" is the discussion).
_NAMES = {marker: key for key, marker in SECTIONS} | {
    "CONCLUSIONS": "conclusion",
    "CONCLUDING": "conclusion",
    "SUMMARY": "conclusion",
    "BACKGROUND": "preliminaries",
    "NOTATION": "preliminaries",
    "DEFINITIONS": "preliminaries",
}
LEMMA_PREFIX = "lemma:"
_HEADING = re.compile(
    r"^[ \t]*(?P<prefix>(?P<percent>%{2,})|#{1,6}|\\(?:sub)*section\*?\{|\*\*)?[ \t]*"
    r"(?:(?P<lemma>(?:LEMMA|EXPLANATION(?:[ \t]+OF)?(?:[ \t]+LEMMA)?|IDEA(?:[ \t]+OF)?(?:[ \t]+LEMMA)?)"
    r"[ \t]*[\[(]?[ \t]*(?P<id>[A-Za-z0-9_.:-]+)[ \t]*[\])]?)|(?P<name>[A-Z][A-Z \t-]{0,60}?))"
    r"[ \t]*[:.]?[ \t]*(?:\}|\*\*)?[ \t]*:?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_FINISHED = re.compile(r"(?:[.!?)\]}$]|\\\]|\\end\{[^{}]*\})[\s\"'*_]*\Z")


def lemma_key(lemma_id: str) -> str:
    return LEMMA_PREFIX + lemma_id


def marker(key: str) -> str:
    """The marker line that opens a part: `%%% INTRODUCTION`, `%%% LEMMA L2`, `%%% END`."""
    if key.startswith(LEMMA_PREFIX):
        return f"%%% LEMMA {key[len(LEMMA_PREFIX) :]}"
    return "%%% " + dict(SECTIONS).get(key, key.upper())


def part_title(key: str) -> str:
    """How a part is named to the model in a further turn: its marker line."""
    return marker(key)


def part_keys(lemma_ids: Sequence[str]) -> list[str]:
    """Every part, in the order the model is asked to write them: the sections first, the lemmas'
    explanations last. A small model, once it writes under lemma markers, keeps copying each lemma's
    entry of the request until its answer ends; what it wrote before that is kept."""
    return [key for key, _ in SECTIONS] + [lemma_key(i) for i in lemma_ids]


@dataclass
class ParsedAnswer:
    """The parts one answer holds (key -> raw text), and what it lacked."""

    parts: dict[str, str] = field(default_factory=dict)
    ended: bool = False  # the end marker was written
    cut_part: str = ""  # the part that was cut off and not kept
    unknown: list[str] = field(default_factory=list)  # headings that named no part


def parse_answer(text: str, lemma_ids: Sequence[str], *, cut_off: bool) -> ParsedAnswer:
    """The parts of an answer. `cut_off`: the answer ended at its token limit (or in a loop)."""
    text = unwrap_latex_fences(text.replace("\r\n", "\n"))
    parsed = ParsedAnswer()
    current, start = "", 0
    pieces: list[tuple[str, str]] = []
    part_headings = {"%"}  # the kinds of heading that open parts in this answer
    for heading in _HEADING.finditer(text):
        key = _heading_key(heading, lemma_ids)
        kind = _kind(heading)
        if key is None and kind not in part_headings:
            continue  # prose that looks like a heading, or a subheading of the part
        if key is None:  # a part we did not ask for: its text is dropped
            parsed.unknown.append(heading.group(0).strip())
            key = ""
        elif kind:
            part_headings.add(kind)
        pieces.append((current, text[start : heading.start()]))
        current, start = key, heading.end()
        if key == END:
            parsed.ended = True
            break
    else:
        pieces.append((current, text[start:]))
    for key, piece in pieces:
        if key and key != END and piece.strip():
            parsed.parts[key] = (parsed.parts.get(key, "") + "\n" + piece).strip()
    _drop_cut_part(parsed, pieces, cut_off)
    return parsed


def _kind(heading: re.Match[str]) -> str:
    """The kind of a heading: "%" for a marker, "#", "##", "\\section{", "**", or "" for a bare line."""
    prefix = heading.group("prefix") or ""
    return "%" if heading.group("percent") else prefix.replace("*{", "{")


def _heading_key(heading: re.Match[str], lemma_ids: Sequence[str]) -> str | None:
    """The part a heading opens, END, or None when it names none (then it is the part's text)."""
    if heading.group("lemma"):
        lemma_id = _lemma_id(heading.group("id"), lemma_ids)
        return lemma_key(lemma_id) if lemma_id else None
    words = heading.group("name").upper().split()
    if len(words) > 1 and not heading.group("prefix"):
        return None  # a short line of prose ("Conclusion of the argument")
    name = words[0]
    if name == END:
        return END if heading.group("percent") else None  # "End" alone on a line is prose
    return _NAMES.get(name)


def _lemma_id(written: str, lemma_ids: Sequence[str]) -> str | None:
    """The plan's id for `written`: the same id in any case, or the lemma at that position (1-based)."""
    by_case = {lemma_id.casefold(): lemma_id for lemma_id in lemma_ids}
    written = written.strip().rstrip(".:")
    if written.casefold() in by_case:
        return by_case[written.casefold()]
    if written.isdigit() and 1 <= int(written) <= len(lemma_ids):
        return lemma_ids[int(written) - 1]
    return None


def _drop_cut_part(parsed: ParsedAnswer, pieces: list[tuple[str, str]], cut_off: bool) -> None:
    """Forget the last part when the answer stopped inside it."""
    if parsed.ended or not pieces:
        return
    last_key, last_text = pieces[-1]
    if not last_key or last_key == END:
        return
    if cut_off or not _FINISHED.search(last_text.rstrip()):
        parsed.cut_part = last_key
        parsed.parts.pop(last_key, None)
