"""Grow the spans textmath must wrap over the simple math beside them, so one formula is one span.

`x^2 + y^2 = 1` has two spans that must be math (x^2, y^2); wrapped apart they would give
`\\ensuremath{x^2} + \\ensuremath{y^2} = 1`. A span grows across one operator
(= + - < > * / := <= >= !=), or across blanks next to a relation or operator command
(`x \\in \\RR`, `\\forall x`), onto a number (2, 2k, 0.5), one letter (applied or not to a
short argument: f(x)), a lemmata-math macro or the next span. It never crosses a word, a
comma, a brace, a blank line or a math delimiter. `a`, `A` and `I` are more likely English
words than variables: a span takes one only if it goes on past it or a relation touches it.
Growing only adds text that compiles in math as well, and only to spans that were errors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lemmata.latex.mathcommands import JOINERS, TEXT_SAFE, arguments_end


@dataclass(frozen=True)
class Span:
    """Text to wrap; `joins_*`: a relation or operator command sits at that edge."""

    start: int
    end: int
    joins_left: bool = False
    joins_right: bool = False


_NOT_WORD = r"(?<![A-Za-z0-9\\@_^.])"
_NUMBER_OR_LETTER = r"\d+(?:\.\d+)?[A-Za-z]?|[A-Za-z]"
# Blanks (no blank line) and at most one operator.
_GLUE = r"[ \t]*(?:\n[ \t]*)?(?:(?P<op>:=|[<>!]=|[=<>+*/]|(?<!-)-(?!-))[ \t]*(?:\n[ \t]*)?)?"
_GAP = re.compile(_GLUE)
_SHORT_ARGUMENT = r"\((?:[^A-Za-z()$\n\x00\\]|(?<![A-Za-z])[A-Za-z]{1,2}(?![A-Za-z])){1,20}\)"
_OPERAND = re.compile(
    _NOT_WORD + r"(?:\d+(?:\.\d+)?[A-Za-z]?|[A-Za-z](?:" + _SHORT_ARGUMENT + r")?)(?![A-Za-z0-9(\[{'_^])"
)
_CONTROL_WORD = re.compile(r"\\[A-Za-z@]+")
_SHORTCUTS = "|".join(sorted((re.escape(name[1:]) for name, spec in TEXT_SAFE.items() if not spec), key=len))
_LEFT_ITEM = re.compile(
    r"(?P<item>" + _NOT_WORD + "(?:" + _NUMBER_OR_LETTER + r")|(?<!\\)\\(?:" + _SHORTCUTS + "))" + _GLUE + r"\Z"
)
_WEAK = frozenset("aAI")


def merge_spans(spans: list[Span]) -> list[Span]:
    """Sorted spans, overlapping ones united (`(x_1+1)^2` holds the span of x_1)."""
    merged: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if merged and span.start < merged[-1].end:
            last = merged[-1]
            if span.end > last.end:
                merged[-1] = Span(last.start, span.end, last.joins_left, span.joins_right)
            continue
        merged.append(span)
    return merged


def grow_spans(text: str, spans: list[Span]) -> list[Span]:
    """Merged, sorted spans each extended over the simple math around it, joined where they meet."""
    starts = {span.start: span for span in spans}
    grown: list[Span] = []
    for span in spans:
        if grown and span.start < grown[-1].end:
            continue  # already joined to the span before it
        span = _grow_right(text, span, starts)
        grown.append(_grow_left(text, span, grown[-1].end if grown else 0))
    return grown


def _grow_right(text: str, span: Span, starts: dict[int, Span]) -> Span:
    """The span extended rightwards over operands and the spans that follow."""
    end = safe_end = span.end
    joins = safe_joins = span.joins_right
    while True:
        gap = _GAP.match(text, end)
        assert gap is not None  # every part of _GLUE is optional: it matches anywhere
        has_op, position = bool(gap.group("op")), gap.end()
        following = starts.get(position)
        if following is not None and position > span.start:
            item_end, item_left, item_right, weak = following.end, following.joins_left, following.joins_right, False
        elif (operand := _operand(text, position)) is not None:
            item_end, item_left, weak = operand
            item_right = item_left
        else:
            break
        if not (has_op or joins or item_left) or item_end <= end:
            break
        end, joins = item_end, item_right
        if not (weak and has_op):  # a weak letter is kept only if the formula goes on
            safe_end, safe_joins = end, joins
    return Span(span.start, safe_end, span.joins_left, safe_joins)


def _grow_left(text: str, span: Span, floor: int) -> Span:
    """The span extended leftwards over operands, not past `floor`."""
    start = safe_start = span.start
    joins = safe_joins = span.joins_left
    while (match := _LEFT_ITEM.search(text, max(floor, start - 48), start)) is not None:
        item, has_op = match.group("item"), bool(match.group("op"))
        if not (has_op or joins or item in JOINERS):
            break
        start, joins = match.start(), item in JOINERS
        if not (item in _WEAK and has_op):
            safe_start, safe_joins = start, joins
    return Span(safe_start, span.end, safe_joins, span.joins_right)


def _operand(text: str, index: int) -> tuple[int, bool, bool] | None:
    """(end, is a joiner, is a weak letter) of a simple operand at index, or None."""
    if (match := _OPERAND.match(text, index)) is not None:
        return match.end(), False, match.group(0) in _WEAK
    control = _CONTROL_WORD.match(text, index)
    if control is None or control.group(0) not in TEXT_SAFE or text[index - 1 : index] == "\\":
        return None
    end = arguments_end(text, control.end(), TEXT_SAFE[control.group(0)])
    if text[end : end + 1] in ("_", "^"):
        return None  # a span of its own
    inner = text[control.end() : end].strip(" \t{}")  # \ensuremath{\leq} joins like \leq
    return end, control.group(0) in JOINERS or inner in JOINERS, False
