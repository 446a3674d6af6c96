"""Math-mode repair: delimiters that cannot stand where they are, math left open, nesting.

Expects masked text (see texscan.mask) with balanced environments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lemmata.latex.environments import TEXT_BLOCK_ENVIRONMENTS
from lemmata.latex.texscan import ENV_TAG, ESCAPE

# Display environments, and what each becomes when it is opened inside math already
# ("" = drop the tags and keep the content in the surrounding math).
_DISPLAY_INNER = {
    "equation": "",
    "displaymath": "",
    "math": "",
    "align": "aligned",
    "flalign": "aligned",
    "eqnarray": "aligned",
    "alignat": "alignedat",
    "gather": "gathered",
    "multline": "multlined",
}
_MATH_ONLY = frozenset(
    "cases cases* dcases dcases* rcases rcases* matrix matrix* pmatrix pmatrix* bmatrix bmatrix* "
    "Bmatrix Bmatrix* vmatrix vmatrix* Vmatrix Vmatrix* smallmatrix aligned alignedat gathered "
    "split array subarray multlined lgathered rgathered".split()
)
_OPENERS = {"$": "$", "$$": "$$", "\\[": "\\]", "\\(": "\\)"}
_CLOSERS = frozenset(_OPENERS.values())
_TOKEN = re.compile(
    ENV_TAG.pattern
    + r"|(?P<break>\n[ \t]*\n)|(?P<block>\\(?:item|part|section|subsection|subsubsection)(?![A-Za-z@]))"
    + "|"
    + ESCAPE
    + r"|\$\$|\$"
)


@dataclass
class _MathState:
    """Where the scan is: open delimiter math, and the environments around it."""

    closer: str = ""  # the delimiter that closes the open $/$$/\[/\( math, if any
    closer_depth: int = 0  # environment depth at which that math opened
    lefts: int = 0  # \\left delimiters still unmatched in that math
    # (name, end tag to write): None for text environments, which keep their own tag;
    # "" drops the tag of a display environment flattened into the math around it.
    frames: list[tuple[str, str | None]] = field(default_factory=list)

    def in_math(self) -> bool:
        """Whether TeX would be in math mode here."""
        return bool(self.closer) or any(end is not None for _, end in self.frames)


def repair_math(text: str) -> str:
    """Close math left open, drop impossible delimiters, and nest display environments legally."""
    state = _MathState()
    pieces, position = [], 0
    for match in _TOKEN.finditer(text):
        replacement = _rewrite_token(state, match)
        if replacement is not None:
            pieces += [text[position : match.start()], replacement]
            position = match.end()
    pieces.append(text[position:])
    return "".join(pieces) + _close_delimiter(state)


def _close_delimiter(state: _MathState, separator: str = "{}") -> str:
    """The text that closes the open delimiter math, \\right. for each unmatched \\left first.

    The default empty group keeps an added `$` from fusing with a neighbouring one.
    """
    closing = "\\right." * state.lefts + separator + state.closer if state.closer else ""
    state.closer, state.lefts = "", 0
    return closing


def _rewrite_token(state: _MathState, match: re.Match[str]) -> str | None:
    """The replacement text for one token, or None to keep it as it is."""
    token = match.group(0)
    if match.group(1) == "begin":
        return _begin(state, match.group(2).strip(), token)
    if match.group(1) == "end":
        return _end(state, match.group(2).strip(), token)
    if match.group("break") or match.group("block"):
        return (_close_delimiter(state) + token) if state.closer else None
    if token in _OPENERS or token in _CLOSERS:
        return _delimiter(state, token)
    if token in ("\\left", "\\right") and state.closer:
        return _left_right(state, token)
    return None


def _left_right(state: _MathState, token: str) -> str | None:
    """Count \\left/\\right in delimiter math; a \\right with no \\left is dropped."""
    if token == "\\left":
        state.lefts += 1
        return None
    if state.lefts == 0:
        return ""
    state.lefts -= 1
    return None


def _begin(state: _MathState, name: str, tag: str) -> str | None:
    """Open an environment: nest display math legally, wrap math-only environments in \\[ \\]."""
    prefix = _close_delimiter(state) if state.closer and name in TEXT_BLOCK_ENVIRONMENTS else ""
    base = name.rstrip("*")
    if base in _DISPLAY_INNER and state.in_math():
        inner = _DISPLAY_INNER[base]
        state.frames.append((name, f"\\end{{{inner}}}" if inner else ""))
        return prefix + (f"\\begin{{{inner}}}" if inner else "")
    if name in _MATH_ONLY and not state.in_math():
        state.frames.append((name, f"\\end{{{name}}}\\]"))
        return prefix + "\\[" + tag
    is_math = base in _DISPLAY_INNER or name in _MATH_ONLY
    state.frames.append((name, f"\\end{{{name}}}" if is_math else None))
    return prefix + tag if prefix else None


def _end(state: _MathState, name: str, tag: str) -> str | None:
    """Close an environment, closing delimiter math opened inside it first."""
    prefix = ""
    if state.closer and state.closer_depth >= len(state.frames):
        prefix = _close_delimiter(state)
    if not state.frames:
        return prefix + tag if prefix else None
    _, end_tag = state.frames.pop()
    end_tag = tag if end_tag is None else end_tag
    return prefix + end_tag if prefix or end_tag != tag else None


def _delimiter(state: _MathState, token: str) -> str | None:
    """Open or close delimiter math; drop or fix a delimiter that cannot stand here."""
    if not state.closer:
        if token in _OPENERS and not state.in_math():
            state.closer, state.closer_depth = _OPENERS[token], len(state.frames)
            return None
        return None if token == "$" else ""  # `$` may sit in \text{} inside math
    if token == state.closer:
        closing = _close_delimiter(state, separator="")
        return None if closing == token else closing  # differs when a \right is missing
    if token == "$$" and state.closer == "$":
        return None  # TeX reads it as a closing `$` and an opening one
    if token == "$":
        return None  # `$..$` inside \text{} within display math
    if token in _CLOSERS or token == "$$":
        return _close_delimiter(state, separator="")  # the wrong closer: use the right one
    return ""  # an opener inside math
