"""Small LaTeX scanning helpers: escapes, brace groups, arguments, masked spans."""

from __future__ import annotations

import re

# A control sequence or escaped character: matching it first means `\%`, `\{`, `\\`
# and `\begin` are never mistaken for a comment, a brace or a bare character.
ESCAPE = r"\\(?:[A-Za-z@]+|[\s\S])"
ENV_TAG = re.compile(r"\\(begin|end)[ \t]*\{([^{}\n]*)\}")
_BRACE_TOKEN = re.compile(ESCAPE + r"|[{}]")
_PLACEHOLDER = re.compile("\x00(\\d+)\x00")


def unescaped_positions(text: str, chars: str, start: int = 0, end: int | None = None) -> list[int]:
    """Indices of the characters in `chars` that are not escaped by a backslash."""
    pattern = re.compile(ESCAPE + "|[" + re.escape(chars) + "]")
    stop = len(text) if end is None else end
    return [m.start() for m in pattern.finditer(text, start, stop) if m.group(0)[0] != "\\"]


def matching_brace(text: str, open_index: int) -> int | None:
    """Index just past the `}` that closes the `{` at open_index; None when unclosed."""
    depth = 0
    for match in _BRACE_TOKEN.finditer(text, open_index):
        token = match.group(0)
        if token == "{":
            depth += 1
        elif token == "}":
            depth -= 1
            if depth == 0:
                return match.end()
    return None


def skip_blanks(text: str, index: int) -> int:
    """Skip spaces and at most one line break, as TeX does between arguments."""
    match = re.compile(r"[ \t]*(?:\n[ \t]*)?").match(text, index)
    return match.end() if match else index


def optional_argument_end(text: str, index: int) -> int | None:
    """End of a `[...]` argument starting at index (after blanks), or None if there is none."""
    start = skip_blanks(text, index)
    if start >= len(text) or text[start] != "[":
        return None
    depth = 0
    for match in re.compile(ESCAPE + r"|[\[\]{}]").finditer(text, start):
        token = match.group(0)
        if token in "[{":
            depth += 1
        elif token in "]}":
            depth -= 1
            if depth == 0:
                return match.end() if token == "]" else None
    return None


def mandatory_argument_end(text: str, index: int) -> int | None:
    """End of a `{...}` group or single control sequence at index (after blanks)."""
    start = skip_blanks(text, index)
    if start >= len(text):
        return None
    if text[start] == "{":
        return matching_brace(text, start)
    match = re.compile(ESCAPE).match(text, start)
    return match.end() if match else None


def skip_optional_arguments(text: str, index: int) -> int:
    """Index after any number of `[...]` arguments following index."""
    while (end := optional_argument_end(text, index)) is not None:
        index = end
    return index


def mask(fragment: str, stash: list[str]) -> str:
    """Hide a fragment from later rewriting behind a placeholder that holds no LaTeX syntax."""
    stash.append(fragment)
    return f"\x00{len(stash) - 1}\x00"


def unmask(text: str, stash: list[str]) -> str:
    """Put every masked fragment back, including fragments masked inside other fragments."""
    for _ in range(len(stash) + 1):
        restored = _PLACEHOLDER.sub(lambda match: stash[int(match.group(1))], text)
        if restored == text:
            return restored
        text = restored
    return text
