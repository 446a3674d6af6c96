"""`#` and `&` meant as plain characters (`_` and `^` are textmath's, which tells scripts apart).

Expects verbatim text, comments, URLs, labels, citations and definitions to be masked
(texscan.mask), so every character scanned here is live LaTeX.
"""

from __future__ import annotations

import re

from lemmata.latex.environments import ALIGNMENT_ENVIRONMENTS
from lemmata.latex.texscan import ENV_TAG, ESCAPE, unescaped_positions

_TEXT_REPLACEMENTS = {"#": r"\#", "&": r"\&"}


def escape_stray_hashes(text: str) -> str:
    """Escape every live `#`: with definitions masked, none can be a macro parameter."""
    return _replace_at(text, unescaped_positions(text, "#"))


def escape_stray_ampersands(text: str) -> str:
    """Escape `&` outside tabular/align-like environments, where it can only be text."""
    stack: list[str] = []
    positions: list[int] = []
    for match in re.finditer(ENV_TAG.pattern + "|" + ESCAPE + "|&", text):
        if match.group(1) == "begin":
            stack.append(match.group(2).strip())
        elif match.group(1) == "end" and stack:
            stack.pop()
        elif match.group(0) == "&" and not ALIGNMENT_ENVIRONMENTS.intersection(stack):
            positions.append(match.start())
    return _replace_at(text, positions)


def _replace_at(text: str, positions: list[int]) -> str:
    """Replace the special character at each position by its text-mode form."""
    for position in sorted(positions, reverse=True):
        text = text[:position] + _TEXT_REPLACEMENTS[text[position]] + text[position + 1 :]
    return text
