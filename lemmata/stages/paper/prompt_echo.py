"""Lines of a model's answer that repeat its prompt instead of writing the paper.

A small model copies what it was shown. The embedded 1.5B model printed the lemmata-math macro
list as its Preliminaries ("The lemmata-math package provides macros ... - Number sets: \\RR,
\\NN, ..."); asked for the parts of a paper, it wrote under each lemma's marker that lemma's
entry of the request ("NOT VERIFIED (...). Statement: ...", "Its proof, shortened: ..."), listed
the lemma statements as its preliminaries and gave the format's own description of a part ("One
short paragraph.") as the part. A line is dropped when it

- talks about the macro package, or is a labelled list of its macros, or is like a line of the
  macro list;
- is a line of the prompt or the text of a labelled one (any length), or restates a lemma
  statement (lemmata prints each statement in its lemma);
- starts with the label of a prompt line ("The prover's proof begins: ..."), however it goes on:
  the model continues a copied line with text of its own;
- names five or more of the package's macros outside math: the macro list retold as prose ("The
  symbols \\RR, \\NN, \\ZZ, ... are used to denote sets", the embedded model, 2026-11-25);
- is one of the lines of a part that show a macro of the package on their own, when four or more
  lines do, or five or more macros are shown
  ("\\(\\FF\\) is the set of finite fields", the embedded model, 2026-11-25): the macro list
  retold as definitions, item by item; a line introducing them ("... as follows:") goes with them;
- talks about the request's own material in at least half its sentences (a paragraph loses
  only such sentences otherwise) ("Citation keys are provided to cite the theorem",
  "The survey summary provides additional context", same run; "The research brief provides a
  brief overview", "The paper concludes with a short paragraph summarizing the main result", or
  names a part by its marker, "organized into three main sections: ABSTRACT, INTRODUCTION, and
  PRELIMINARIES", 2026-11-27): the reader has no such things;
- is (nearly) a line of the prompt, or a long piece of one, once the material the paper may
  repeat (the goal, the brief, the survey summary, the theorem) is taken out of both;
- is, for at least half its length, sentences of the prompt reworded a little, the prompt read
  as sentences across the lines a paragraph or a list item wraps over: the writer's style rules
  retold as the paper's outline ("Lemmas: The main result is stated in its environment before it
  is used, and followed at once by its proof environment. ...", the README's main command on the
  embedded model, 2026-11-25).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from functools import lru_cache

from lemmata.latex.macros import MACRO_SUMMARY

#: Shorter lines (normalised) are never compared loosely: "Proof.", "Let $n$ be even."
MIN_ECHO_CHARS = 24
#: A line equal to a prompt line is an echo from this length on ("One short paragraph.").
MIN_EXACT_CHARS = 8
#: A line of the macro list is distinctive even when short ("Any bold symbol: \\bm{x}").
MIN_MACRO_ECHO_CHARS = 12
#: A line this long that lies (nearly) whole inside a prompt line is a partial copy of it.
MIN_COPIED_CHARS = 32
#: How alike a line and a prompt line (or a lemma statement) must be (difflib ratio) to count as a copy.
ECHO_SIMILARITY = 0.85
#: A label ("The prover's proof begins:") counts when it has this many words: "Goal:" alone is too common.
LABEL_WORDS = (3, 8)
#: How alike a line and a line of the macro list must be: models shorten those lines.
MACRO_LIST_SIMILARITY = 0.6
#: The share of a line (by length) made of reworded prompt sentences from which it is an echo.
MIN_COPIED_SHARE = 0.5
_SENTENCE_END = re.compile(r"(?<=[.;!?])\s+")
#: Where a whole sentence ends (a semicolon does not end one).
_WHOLE_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\\item|\d+[.)])\s+")
#: What may open a line before its sentences: a list mark and a short label ("- Lemmas: ...").
_LINE_OPENING = re.compile(r"^\s*(?:(?:[-*•]|\\item|\d+[.)])\s+)?(?:[A-Za-z][A-Za-z ]{0,30}:\s+)?")
_MACRO_NAMES = frozenset(re.findall(r"\\[A-Za-z]+", MACRO_SUMMARY))
_TALKS_ABOUT_MACROS = re.compile(r"lemmata-math|\bmacros?\b|\bmacro package\b", re.IGNORECASE)
_TALKS_ABOUT_REQUEST = re.compile(
    r"\bcitation keys?\b|\bsurvey summary\b|\blisted keys\b|\bresearch brief\b|\bshort paragraph\b", re.IGNORECASE
)
#: The request's part names as its markers spell them: a paper's prose never shouts its sections
#: ("The paper is organized into three main sections: ABSTRACT, INTRODUCTION, and PRELIMINARIES.").
_NAMES_A_MARKER = re.compile(r"%%%|\b(?:ABSTRACT|INTRODUCTION|PRELIMINARIES|DISCUSSION|CONCLUSION)\b")
#: The macro list's group titles ("Bold vectors", "Bold matrices", ...), normalised: a line naming
#: two of them retells the list ("The bold vectors and bold matrices are used to represent vectors
#: and matrices, respectively.", the README's main command on the embedded model, 2026-11-26).
_MACRO_GROUP_TITLES = tuple(
    title
    for line in MACRO_SUMMARY.splitlines()
    if len((title := " ".join(re.split(r"[:(,]", line[2:])[0].casefold().split())).split()) >= 2
)  # the titles of two words or more: "Operators" and "Other" are words of any prose
#: Group titles a line may name before it is the macro list retold.
MAX_GROUP_TITLES = 1
#: Package macros a line of prose may name outside math before it is the macro list retold.
MAX_BARE_MACROS = 4
#: Lines of one part showing a package macro on its own, from which they are the macro list retold.
MIN_MACRO_LIST_LINES = 4
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$]*\$|\\\(.*?\\\)|\\\[.*?\\\]", re.DOTALL)
_LABELLED_LIST = re.compile(r"^\s*(?:[-*+]|\\item|\d+[.)])?\s*[A-Za-z][^:$]{0,80}:\s*(?P<rest>.*)$")


def normalised(line: str) -> str:
    """Lower case, letters, digits and backslashes only, single spaces: for comparing lines."""
    return " ".join(re.sub(r"[^a-z0-9\\]+", " ", line.casefold()).split())


#: A sentence that leans on the one before it: "This is a well-known property of even numbers,
#: which we will use in our proof", the Preliminaries of the README's task on the embedded model
#: (2026-12-04), after "An integer is even if it can be written as 2k" (L1's statement, which
#: lemmata prints itself) went. Alone it says nothing, or something of whatever precedes it now.
_LEANS_BACK = re.compile(r"^\s*(?:This|These|That|Those|It|Such|Hence|Thus|Therefore|Consequently)\b")


def without_dangling(sentences: list[str], dropped: list[bool]) -> list[str]:
    """The sentences not `dropped`, and without each that leans back on a dropped one (_LEANS_BACK)."""
    kept = []
    for index, sentence in enumerate(sentences):
        if dropped[index]:
            continue
        if index > 0 and dropped[index - 1] and _LEANS_BACK.match(sentence):
            dropped[index] = True  # the next one may lean on this one in turn
            continue
        kept.append(sentence)
    return kept


@dataclass
class PromptEcho:
    """Finds the lines of answers that copy `prompt` (the system and user text sent).
    `allowed`: material the paper may repeat; `statements`: the lemma statements lemmata prints."""

    prompt: str
    allowed: Iterable[str] = ()
    statements: Iterable[str] = ()
    _allowed: list[str] = field(init=False)
    _exact: set[str] = field(init=False)
    _lines: list[str] = field(init=False)
    _statements: list[str] = field(init=False)
    _labels: set[str] = field(init=False)
    _macro_lines: list[str] = field(init=False)
    _sentences: list[str] = field(init=False)
    _whole_sentences: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self._allowed = sorted({normalised(text) for text in self.allowed if normalised(text)}, key=len, reverse=True)
        lines = {normalised(line) for line in self.prompt.splitlines()}
        # A labelled line counts by its text too: "- CONCLUSION: one short paragraph." is copied without its label.
        tails = {normalised(tail) for line in self.prompt.splitlines() for tail in line.split(": ")[1:]}
        self._exact = {line for line in lines | tails if len(line) >= MIN_EXACT_CHARS and line not in self._allowed}
        self._lines = [rest for rest in {self._without_allowed(line) for line in lines} if len(rest) >= MIN_ECHO_CHARS]
        self._statements = [normalised(text) for text in self.statements if normalised(text)]
        self._labels = {label for line in self.prompt.splitlines() if (label := _label(line))}
        self._macro_lines = [normalised(line) for line in MACRO_SUMMARY.splitlines()]
        self._sentences = [
            rest
            for sentence in prompt_sentences(self.prompt)
            if len(rest := self._without_allowed(normalised(sentence))) >= MIN_ECHO_CHARS
        ]
        self._whole_sentences = [
            rest
            for sentence in prompt_sentences(self.prompt, _WHOLE_SENTENCE_END)
            if len(rest := self._without_allowed(normalised(sentence))) >= MIN_COPIED_CHARS
        ]

    def is_echo(self, line: str) -> bool:
        if (
            _TALKS_ABOUT_MACROS.search(line)
            or _mostly_about_request(line)
            or _lists_macros(line)
            or _names_macros_bare(line)
            or _names_macro_groups(line)
            or _only_macros(line)
        ):
            return True
        text = normalised(line)
        if len(text) >= MIN_MACRO_ECHO_CHARS and any(
            alike(text, macro_line, MACRO_LIST_SIMILARITY) for macro_line in self._macro_lines
        ):
            return True
        if len(text) >= MIN_EXACT_CHARS and (
            text in self._exact or any(alike(text, s, ECHO_SIMILARITY) for s in self._statements)
        ):
            return True
        if (label := _label(line)) and label in self._labels:
            return True
        rest = self._without_allowed(text)
        if len(rest) < MIN_ECHO_CHARS:
            return False
        return any(
            alike(rest, line, ECHO_SIMILARITY) or _copied_from(rest, line) for line in self._lines
        ) or self._retells_sentences(line)

    def _retells_sentences(self, line: str) -> bool:
        """Whether at least MIN_COPIED_SHARE of the line is prompt sentences, each nearly as written."""
        sentences = [
            self._without_allowed(normalised(part))
            for part in _SENTENCE_END.split(_LINE_OPENING.sub("", line, count=1))
        ]
        total = sum(len(sentence) for sentence in sentences)
        copied = sum(
            len(sentence)
            for sentence in sentences
            if len(sentence) >= MIN_ECHO_CHARS
            and any(alike(sentence, prompted, ECHO_SIMILARITY) for prompted in self._sentences)
        )
        return total >= MIN_ECHO_CHARS and copied >= MIN_COPIED_SHARE * total

    def remove(self, text: str) -> tuple[str, int]:
        """(`text` without its echoed lines, how many lines went). A line introducing what went
        ("The definitions and notation used in the proof are as follows:") goes with it."""
        lines = text.splitlines()
        echoed = [bool(line.strip()) and self.is_echo(line) for line in lines]
        shortened = [
            self.without_echoed_sentences(line) if not echoed[index] else line for index, line in enumerate(lines)
        ]
        cut = sum(before != after for before, after in zip(lines, shortened, strict=True))
        lines = shortened
        kept = [
            line for index, line in enumerate(lines) if not echoed[index] and not _introduces_echo(index, lines, echoed)
        ]
        shown = [_macros_shown(line) for line in kept]
        showing = [index for index, macros in enumerate(shown) if macros]
        if len(showing) >= MIN_MACRO_LIST_LINES or len(set().union(*shown)) > MAX_BARE_MACROS:
            dropped = set(showing)
            before = max(showing[0] - 1, 0)  # "The notation is as follows:" introduced the list
            if kept[before].rstrip().endswith(":"):
                dropped.add(before)
            kept = [line for index, line in enumerate(kept) if index not in dropped]
        return "\n".join(kept), len(text.splitlines()) - len(kept) + cut

    def without_echoed_sentences(self, line: str) -> str:
        """The line without its sentences that are (nearly) whole sentences of the prompt: a
        paragraph of the model's own that ends with one of the writer's rules ("The low-confidence
        lemmas are tagged with an orange bold marker: lemmata adds it after each lemma marked NOT
        VERIFIED; do not write it yourself.", the README's main command, 2026-11-26)."""
        sentences = _WHOLE_SENTENCE_END.split(line)
        if len(sentences) < 2:
            return line  # a line of one sentence is judged whole (is_echo)
        dropped = [self._is_prompt_sentence(sentence) or _talks_about_request(sentence) for sentence in sentences]
        kept = without_dangling(sentences, dropped)
        return " ".join(kept) if len(kept) < len(sentences) else line

    def _is_prompt_sentence(self, sentence: str) -> bool:
        text = self._without_allowed(normalised(sentence))
        return len(text) >= MIN_COPIED_CHARS and any(
            alike(text, prompted, ECHO_SIMILARITY) for prompted in self._whole_sentences
        )

    def _without_allowed(self, text: str) -> str:
        for allowed in self._allowed:
            text = text.replace(allowed, " ")
        return " ".join(text.split())


def _talks_about_request(text: str) -> bool:
    """Whether `text` talks about the request's own material or names a part by its marker."""
    return bool(_TALKS_ABOUT_REQUEST.search(text) or _NAMES_A_MARKER.search(text))


def _mostly_about_request(line: str) -> bool:
    """Whether at least half of the line's sentences talk about the request: then the line goes
    whole (what surrounds such sentences retells the request too: "Citation keys are provided to
    cite the theorem and its proof. The main result is stated as ..."); otherwise only those
    sentences go: "The survey summary highlights the importance of this result" ended an
    introduction of three sentences whose first two were the model's own (the README's main
    command on the embedded model, 2026-11-27), and the whole introduction had gone with it."""
    sentences = _WHOLE_SENTENCE_END.split(line)
    return 2 * sum(_talks_about_request(sentence) for sentence in sentences) >= len(sentences)


def _introduces_echo(index: int, lines: list[str], echoed: list[bool]) -> bool:
    """Whether lines[index] ends with a colon and the next line with text is an echo."""
    if not lines[index].rstrip().endswith(":"):
        return False
    following = next((position for position in range(index + 1, len(lines)) if lines[position].strip()), None)
    return following is not None and echoed[following]


def prompt_sentences(prompt: str, ends: re.Pattern[str] = _SENTENCE_END) -> list[str]:
    """The prompt's sentences (split where `ends` matches): the lines of a paragraph or a list item joined again first."""
    blocks: list[list[str]] = [[]]
    for line in prompt.splitlines():
        if not line.strip() or _LIST_ITEM.match(line):
            blocks.append([])
        if line.strip():
            blocks[-1].append(_LIST_ITEM.sub("", line).strip())
    return [sentence for block in blocks if block for sentence in ends.split(" ".join(block))]


def _label(line: str) -> str:
    """The label before a line's first colon, normalised, when it has LABEL_WORDS words; else ""."""
    head, colon, _ = line.partition(":")
    words = normalised(re.sub(r"\\[A-Za-z]+", " ", head)).split()
    return " ".join(words) if colon and LABEL_WORDS[0] <= len(words) <= LABEL_WORDS[1] else ""


def _only_macros(line: str) -> bool:
    """A line (a list item, a formula) of nothing but the package's macros: a piece of the macro
    list. Malformed model output, the README's main command on the embedded model (2026-11-26):
    its Preliminaries were the macro list, of which "- \\bm{x}" alone was left, the paper's whole
    Preliminaries."""
    macros = set(re.findall(r"\\[A-Za-z]+", line))
    if not macros or not macros <= _MACRO_NAMES:
        return False
    rest = re.sub(r"\\[A-Za-z]+\*?(?:\{[^{}]*\})*", " ", _LIST_ITEM.sub("", line, count=1))
    return not re.sub(r"[\s$()\[\]\\,.;:]", "", rest)


def _names_macro_groups(line: str) -> bool:
    """Whether a line names more than MAX_GROUP_TITLES of the macro list's group titles."""
    text = f" {' '.join(re.sub(r'[^a-z]+', ' ', line.casefold()).split())} "
    return sum(f" {title} " in text for title in _MACRO_GROUP_TITLES) > MAX_GROUP_TITLES


def _lists_macros(line: str) -> bool:
    """A labelled list of the package's macros: `- Bold vectors: \\ba, \\bb, \\bc` (no formula)."""
    listed = _LABELLED_LIST.match(line)
    if listed is None or "$" in line:
        return False
    return len(set(re.findall(r"\\[A-Za-z]+", listed.group("rest"))) & _MACRO_NAMES) >= 3


def _names_macros_bare(line: str) -> bool:
    """Whether prose names more than MAX_BARE_MACROS of the package's macros outside math."""
    prose = _MATH.sub(" ", line)
    return len(set(re.findall(r"\\[A-Za-z]+", prose)) & _MACRO_NAMES) > MAX_BARE_MACROS


def _macros_shown(line: str) -> set[str]:
    """The package macros a line shows by themselves: bare in prose, or alone in their formula
    (`\\(\\RR\\)`, `$\\bm{x}$`), as a list of notation does; `$x \\in \\RR$` uses one instead."""
    shown = set(re.findall(r"\\[A-Za-z]+", _MATH.sub(" ", line))) & _MACRO_NAMES
    for formula in _MATH.findall(line):
        rest = re.sub(r"\\[A-Za-z]+(?:\{\w\})?|\\[()\[\]]|[\s$,]", "", formula)
        if not rest:
            shown |= set(re.findall(r"\\[A-Za-z]+", formula)) & _MACRO_NAMES
    return shown


def _copied_from(line: str, prompt_line: str) -> bool:
    """Whether nearly all of a long line is one stretch of the prompt line."""
    if len(line) < MIN_COPIED_CHARS or len(prompt_line) < len(line):
        return False
    if line in prompt_line:
        return True
    # The stretch, at least `needed` long, covers the line's middle wherever it starts: without
    # the middle in the prompt line there is none (a substring test, before the quadratic search).
    needed = math.ceil(ECHO_SIMILARITY * len(line))
    if line[len(line) - needed : needed] not in prompt_line:
        return False
    block = SequenceMatcher(None, line, prompt_line, autojunk=False).find_longest_match(
        0, len(line), 0, len(prompt_line)
    )
    return block.size >= ECHO_SIMILARITY * len(line)


def alike(line: str, other: str, threshold: float) -> bool:
    """Whether difflib's ratio of the two strings is at least `threshold`. Its two upper bounds
    (by length, by the characters they share) are tried first, as difflib's own `real_quick_ratio`
    and `quick_ratio` give them, but without building the matcher: its index of `other` took half
    of the writer's echo filter (2026-11-29), though nearly every pair fails a bound."""
    total = len(line) + len(other)
    if not total:
        return True  # difflib's ratio of two empty strings is 1
    if 2.0 * min(len(line), len(other)) / total < threshold:
        return False
    shared = _characters(line) & _characters(other)
    if 2.0 * sum(shared.values()) / total < threshold:
        return False
    return SequenceMatcher(None, line, other, autojunk=False).ratio() >= threshold


@lru_cache(maxsize=4096)
def _characters(text: str) -> Counter[str]:
    """How often each character occurs in `text` (a prompt line is compared with every answer line)."""
    return Counter(text)
