"""Structural repairs that make a model-written body compile: environments, braces, lists.

Every function expects verbatim text, comments and definitions already masked
(see texscan.mask), so what it scans is live LaTeX.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from lemmata.latex.environments import ALIGNMENT_ENVIRONMENTS, SECTION_CLOSES, TEXT_BLOCK_ENVIRONMENTS
from lemmata.latex.texscan import ENV_TAG, ESCAPE, skip_optional_arguments

_BRACE_EVENT = re.compile(ENV_TAG.pattern + r"|(?P<break>\n[ \t]*\n)|" + ESCAPE + "|[{}&]")
_SECTIONING = r"\\(?:part|section|subsection|subsubsection|appendix)(?![A-Za-z@])"
_STRUCTURE_TOKEN = re.compile(ENV_TAG.pattern + "|" + _SECTIONING)
_DISPLAY_ENVIRONMENTS = r"equation\*?|align\*?|alignat\*?|flalign\*?|gather\*?|multline\*?|eqnarray\*?|displaymath"
_DISPLAY_MATH = re.compile(
    r"\\\[.*?\\\]|\$\$.*?\$\$|\\begin\{(" + _DISPLAY_ENVIRONMENTS + r")\}.*?\\end\{\1\}", re.DOTALL
)


def _structure_events(text: str) -> Iterator[tuple[str, int, int, str]]:
    """(event, start, end, name) for each tag and heading, simulating LaTeX's environment stack.

    Events: "open", "close" (matches the innermost), "orphan" (nothing to close),
    "implicit" (an environment left open before a crossing \\end or a heading; start
    is where its \\end belongs) and "eof" (still open at the end, innermost first).
    """
    stack: list[str] = []
    for match in _STRUCTURE_TOKEN.finditer(text):
        kind, name = match.group(1), (match.group(2) or "").strip()
        if kind == "begin":
            stack.append(name)
            yield "open", match.start(), match.end(), name
        elif kind == "end" and name not in stack:
            yield "orphan", match.start(), match.end(), name
        elif kind == "end":
            while stack[-1] != name:
                yield "implicit", match.start(), match.start(), stack.pop()
            stack.pop()
            yield "close", match.start(), match.end(), name
        else:
            while stack and stack[-1] in SECTION_CLOSES:
                yield "implicit", match.start(), match.start(), stack.pop()
    while stack:
        yield "eof", len(text), len(text), stack.pop()


def remove_orphaned_end_tags(text: str) -> str:
    """First pass: drop every \\end{x} that closes no open environment."""
    orphans = [(start, end) for event, start, end, _ in _structure_events(text) if event == "orphan"]
    for start, end in reversed(orphans):
        text = text[:start] + text[end:]
    return text


def close_open_environments(text: str) -> str:
    """Second pass: add the missing \\end{x} tags, innermost first."""
    insertions = [(start, name) for event, start, _, name in _structure_events(text) if event in ("implicit", "eof")]
    pieces, position = [], 0
    for start, name in insertions:
        pieces.append(text[position:start])
        # No blank line between added tags: it would end a paragraph inside math.
        if start == len(text) and not "".join(pieces).endswith("\n"):
            pieces.append("\n")
        pieces.append("\\end{" + name + "}\n")
        position = start
    return "".join(pieces) + text[position:]


def balance_braces(text: str) -> str:
    """Drop `}` that close nothing; close `{` left open where no group can continue.

    Most commands cannot take a paragraph break in their argument, and no group spans a
    block environment or an alignment cell (`&`, `\\\\`), so a group still open there
    was almost surely left open by mistake.
    """
    pieces: list[str] = []
    frames = [("", 0)]  # (environment, unclosed `{` inside it)
    position = 0
    for match in _BRACE_EVENT.finditer(text):
        token, kind = match.group(0), match.group(1)
        name, open_count = frames[-1]
        cell_end = token in ("&", "\\\\") and name in ALIGNMENT_ENVIRONMENTS
        block = kind == "begin" and match.group(2).strip() in TEXT_BLOCK_ENVIRONMENTS
        if kind == "end" or block or cell_end or match.group("break"):
            pieces += [text[position : match.start()], "}" * open_count]
            position, frames[-1] = match.start(), (name, 0)
        if kind == "begin":
            frames.append((match.group(2).strip(), 0))
        elif kind == "end" and len(frames) > 1:
            frames.pop()
        elif token == "{":
            frames[-1] = (name, open_count + 1)
        elif token == "}" and open_count == 0:
            pieces.append(text[position : match.start()])
            position = match.end()
        elif token == "}":
            frames[-1] = (name, open_count - 1)
    pieces.append(text[position:])
    return "".join(pieces) + "}" * sum(count for _, count in frames)


def drop_captions_outside_floats(text: str) -> str:
    """\\caption outside figure/table is an error; keep its text as a plain group."""
    pieces, position, stack = [], 0, []
    for match in re.finditer(ENV_TAG.pattern + r"|\\caption(?![A-Za-z@])\*?", text):
        if match.group(1) == "begin":
            stack.append(match.group(2).strip())
        elif match.group(1) == "end" and stack:
            stack.pop()
        elif not match.group(1) and not any(name.rstrip("*") in ("figure", "table") for name in stack):
            pieces.append(text[position : match.start()])
            position = skip_optional_arguments(text, match.end())
    return "".join(pieces) + text[position:]


# Digits followed by a word or by punctuation at the end: `$5 million`, `($20).`
_PRICE = re.compile(r"\d+(?:[.,]\d+)*(?:[ \t]+[a-z]|[.,;:!?)]+(?=\s|$)|$)")


def escape_currency_dollars(text: str) -> str:
    """In a paragraph with an odd number of `$`, escape a price such as `5$` or `$5`."""
    paragraphs = re.split(r"(\n[ \t]*\n)", text)
    return "".join(_escape_currency_dollar(part) for part in paragraphs)


def _escape_currency_dollar(paragraph: str) -> str:
    """Escape the first price-like `$` (`$5 million`) of a paragraph whose `$` count is odd."""
    dollars = [m for m in re.finditer(ESCAPE + r"|\$", paragraph) if m.group(0) == "$"]
    if len(dollars) % 2 == 0:
        return paragraph
    for match in dollars:
        before, after = paragraph[: match.start()], paragraph[match.end() :]
        if re.search(r"(?:^|[\s(])$", before) and _PRICE.match(after):
            return before + "\\$" + after
    return paragraph


def remove_blank_lines_in_display_math(text: str) -> str:
    """Blank lines inside display math are a LaTeX error ('Missing $ inserted')."""
    return _DISPLAY_MATH.sub(lambda m: re.sub(r"\n[ \t]*(?=\n)", "", m.group(0)), text)


def drop_line_breaks_at_paragraph_start(text: str) -> str:
    """A `\\\\` with no line to end ('There's no line here to end') is removed."""
    return re.sub(r"(\A|\n[ \t]*\n)([ \t]*\\\\(?:\*)?(?:\[[^\]\n]*\])?[ \t]*)+", r"\1", text)


_LISTS = r"itemize|enumerate|description"
_LIST_BEGIN = re.compile(r"\\begin\{(" + _LISTS + r")\}")
_LIST_CONTENT = re.compile(r"\\item(?![A-Za-z@])|\\begin\{|\\end\{([^{}]*)\}")
# Commands (with simple arguments), masked spans and blanks may precede the first \item.
_SETUP = re.compile(r"\\[A-Za-z@]+\*?(?:\s*(?:\{[^{}]*\}|\[[^\]]*\]))*|\x00\d+\x00|\s+")
# Environments inside which \item is legal: lists, and theorem-likes (trivlists).
_ITEM_HOSTS = re.compile(_LISTS + r"|list|trivlist|thebibliography|proof|" + "|".join(SECTION_CLOSES))

_ITEM_EVENT = re.compile(
    ENV_TAG.pattern + r"|(?P<item>\\item(?![A-Za-z@]))"
    r"|(?P<stop>\n[ \t]*\n(?![ \t]*\\item)|" + _SECTIONING + ")"
)


def repair_list_starts(text: str) -> str:
    """Drop empty lists and give a list that starts without \\item its first one (both are errors)."""
    pieces, position = [], 0
    for match in _LIST_BEGIN.finditer(text):
        start = skip_optional_arguments(text, match.end())
        first = _LIST_CONTENT.search(text, start)
        lead = text[start : first.start() if first else len(text)]
        if first and first.group(1) == match.group(1) and not _SETUP.sub("", lead):
            pieces.append(text[position : match.start()])  # an empty list
            position = first.end()
        elif first is None or not first.group(0).startswith("\\item") or _SETUP.sub("", lead):
            pieces += [text[position:start], "\\item "]
            position = start
    return "".join(pieces) + text[position:]


def wrap_lonely_items(text: str) -> str:
    """Put \\item lines outside any list into an itemize that ends where the items stop."""
    pieces, position = [], 0
    stack: list[str] = []
    wrap_depth: int | None = None  # stack depth at which our itemize was opened
    for match in _ITEM_EVENT.finditer(text):
        kind = match.group(1)
        at_wrap_level = wrap_depth is not None and len(stack) == wrap_depth
        if at_wrap_level and (kind == "end" or match.group("stop")):
            pieces += [text[position : match.start()].rstrip(), "\n\\end{itemize}\n"]
            position, wrap_depth = match.start(), None
        if kind == "begin":
            stack.append(match.group(2).strip())
        elif kind == "end" and stack:
            stack.pop()
        elif match.group("item") and wrap_depth is None and not any(map(_ITEM_HOSTS.fullmatch, stack)):
            pieces += [text[position : match.start()], "\\begin{itemize}\n"]
            position, wrap_depth = match.start(), len(stack)
    rest = text[position:]
    if wrap_depth is not None:
        rest = rest.rstrip() + "\n\\end{itemize}\n"
    return "".join(pieces) + rest
