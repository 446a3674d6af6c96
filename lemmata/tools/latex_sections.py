"""`latex_section_read`: one section of a LaTeX source, by its name or number.

A section runs from its heading up to the next heading, as the spec says ("from its section
heading up to the next heading"): reading "Preliminaries" gives the text before its first
subsection, and the tool's answer then names the subsections, which the agent reads by name or
number. `\\paragraph` and `\\subparagraph` are headings too (levels 4 and 5). Any section also
ends at `\\appendix`, the bibliography or `\\end{document}`, whichever comes first, and the last
one at the end of the source when none of these follows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lemmata.tools.base import ToolResult, tool_error

NAME = "latex_section_read"
LEVELS = {
    "part": -1,
    "chapter": 0,
    "section": 1,
    "subsection": 2,
    "subsubsection": 3,
    "paragraph": 4,
    "subparagraph": 5,
}
#: article's secnumdepth: sections to subsubsections are numbered, paragraphs are not.
NUMBERED_DEPTH = 3
#: A section longer than this is cut, so one call cannot flood the agent's context.
MAX_SECTION_CHARS = 20_000

_HEADING = re.compile(r"\\(?P<command>" + "|".join(LEVELS) + r")\b(?P<star>\*?)\s*(?:\[[^\]]*\]\s*)?\{")
_DOCUMENT_END = re.compile(
    r"\\end\{document\}|\\appendix\b|\\bibliography(?:style)?\{|\\printbibliography\b|\\begin\{thebibliography\}"
)
_COMMENT = re.compile(r"(?<!\\)%.*")


@dataclass(frozen=True)
class LatexSection:
    command: str
    title: str  # plain text, markup removed
    number: str  # "2.1"; empty for starred and unnumbered headings
    start: int  # offset of the backslash of the heading
    end: int  # offset where the section's content ends

    @property
    def level(self) -> int:
        return LEVELS[self.command]

    @property
    def label(self) -> str:
        return f"{self.number} {self.title}" if self.number else self.title


def parse_sections(source: str) -> list[LatexSection]:
    """Every heading of `source` with its number and extent; headings in comments are ignored."""
    # Blank comments out in a same-length copy, so offsets found there slice the original.
    masked = _COMMENT.sub(lambda match: " " * len(match.group(0)), source)
    headings: list[tuple[str, bool, str, int]] = []
    for match in _HEADING.finditer(masked):
        title_end = _closing_brace(masked, match.end())
        headings.append((match["command"], bool(match["star"]), source[match.end() : title_end], match.start()))
    numbers = _numbers(headings, masked)
    sections = []
    for index, (command, _, raw_title, start) in enumerate(headings):
        following = [s for _, _, _, s in headings[index + 1 : index + 2]]
        end_marker = _DOCUMENT_END.search(masked, start)
        end = min([len(source), *following, *([end_marker.start()] if end_marker else [])])
        sections.append(LatexSection(command, plain_title(raw_title), numbers[index], start, end))
    return sections


def _closing_brace(text: str, position: int) -> int:
    """Offset of the brace closing the group that starts just before `position`."""
    depth = 1
    for offset in range(position, len(text)):
        if text[offset] == "{" and text[offset - 1] != "\\":
            depth += 1
        elif text[offset] == "}" and text[offset - 1] != "\\":
            depth -= 1
            if depth == 0:
                return offset
    return len(text)


def _numbers(headings: list[tuple[str, bool, str, int]], masked: str) -> list[str]:
    """LaTeX's own numbering: unstarred headings count, deeper counters reset, \\appendix letters."""
    appendix = re.search(r"\\appendix\b", masked)
    present = sorted({LEVELS[command] for command, _, _, _ in headings if LEVELS[command] >= 0})
    top = present[0] if present else LEVELS["section"]
    counters: dict[int, int] = {}
    numbers = []
    counting_appendix = False
    for command, starred, _, start in headings:
        level = LEVELS[command]
        in_appendix = appendix is not None and start > appendix.start()
        if in_appendix and not counting_appendix:
            counters.clear()  # \appendix restarts the top counter, as letters
            counting_appendix = True
        if starred or level < top or level > NUMBERED_DEPTH:
            numbers.append("")
            continue
        counters[level] = counters.get(level, 0) + 1
        for deeper in [key for key in counters if key > level]:
            del counters[deeper]
        parts = [_counter_text(counters.get(depth, 0), in_appendix and depth == top) for depth in range(top, level + 1)]
        numbers.append(".".join(parts))
    return numbers


def _counter_text(value: int, as_letter: bool) -> str:
    return chr(ord("A") + value - 1) if as_letter and 1 <= value <= 26 else str(value)


def plain_title(raw: str) -> str:
    """A heading's title as a reader sees it: labels dropped, commands unwrapped, math kept."""
    text = re.sub(r"\\label\{[^{}]*\}", "", raw)
    text = re.sub(r"\\texorpdfstring\{((?:[^{}]|\{[^{}]*\})*)\}\{(?:[^{}]|\{[^{}]*\})*\}", r"\1", text)
    text = re.sub(r"\\([&%$#_{}])", r"\1", text)
    text = re.sub(
        r"\\(?:ref|eqref|autoref|cref|Cref|cite[tp]?)\*?(?:\[[^\]]*\])?\{[^{}]*\}", "", text
    )  # keys, not words
    text = re.sub(r"\\[`'^\"~=.]", "", text)  # accents: \'e reads as e
    text = re.sub(r"\\[Hcuvdbtkr]\{(\w)\}", r"\1", text)  # lettered accents: \H{o} reads as o
    text = re.sub(r"\\[a-zA-Z]+\*?", " ", text)
    text = re.sub(r"[{}$~]", " ", text)
    return re.sub(r"\s+", " ", text).strip()


def _normal(text: str) -> str:
    """Lower case, punctuation as spaces: "2.1 Notation." and "2 1 notation" compare equal."""
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def _squashed(text: str) -> str:
    """Without spaces either, so "L2 bounds" finds the title "$L^2$ bounds"."""
    return _normal(text).replace(" ", "")


def find_section(sections: list[LatexSection], name: str) -> LatexSection | None:
    """By number, or by title with or without its number, else by a unique partial title."""
    wanted = re.sub(r"^(?:section|subsection|sec)\s+", "", _normal(plain_title(name)))
    if not wanted:
        return None
    for section in sections:
        if section.number and wanted == _normal(section.number):
            return section
    # "3 Main results" still finds "Main results" when our numbering differs from the reader's.
    unnumbered = re.sub(r"^\d+(?: \d+)* ", "", wanted)
    for candidate in (_squashed(wanted), _squashed(unnumbered)):
        for section in sections:
            if candidate in (_squashed(section.title), _squashed(section.label)):
                return section
    partial = [section for section in sections if _squashed(wanted) in _squashed(section.title)]
    return partial[0] if len(partial) == 1 else None


def outline(sections: list[LatexSection]) -> str:
    return "; ".join(section.label for section in sections)


def subsections(sections: list[LatexSection], section: LatexSection) -> list[LatexSection]:
    """The headings below `section`: those after it, deeper, before the next of its level or higher."""
    after = sections[sections.index(section) + 1 :]
    inside = []
    for candidate in after:
        if candidate.level <= section.level:
            break
        inside.append(candidate)
    return inside


@dataclass
class LatexSectionRead:
    source: str
    name: str = NAME
    description: str = (
        "Read one section of the paper's LaTeX source by name or number (e.g. 'Preliminaries' or '2.1'), up to "
        "the next heading; the answer names its subsections, each read the same way."
    )
    parameter: str = "section"

    sections: list[LatexSection] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.sections = parse_sections(self.source)

    def run(self, argument: str) -> ToolResult:
        if not self.sections:
            return tool_error(self.name, "the LaTeX source has no section headings")
        section = find_section(self.sections, argument)
        if section is None:
            known = outline(self.sections)
            return tool_error(self.name, f"no section named {argument.strip()!r}; available sections: {known}")
        text = self.source[section.start : section.end].strip()
        if len(text) > MAX_SECTION_CHARS:
            text = text[:MAX_SECTION_CHARS] + f"\n[… section cut at {MAX_SECTION_CHARS} characters]"
        inside = subsections(self.sections, section)
        if inside:
            text += f"\n[Its subsections, each read by its name or number: {outline(inside)}]"
        return ToolResult(text=text)
