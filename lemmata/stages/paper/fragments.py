"""Model-made text in the paper, as fragments the writer can tell apart.

Text that came from a model (a part the writer wrote, a prover's proof, a statement, a reason a
check gave) is a `Fragment`; lemmata's own LaTeX around it is a plain string. A trial compile can
tell which fragment broke it (`annotated` puts a comment line around each), and a fragment can be
printed as plain text instead (`plain`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lemmata.latex.document import escape_latex_text
from lemmata.latex.proof_text import plain_text_latex

FRAGMENT_START = "%@lemmata-fragment "
FRAGMENT_END = "%@lemmata-fragment-end"


@dataclass(frozen=True)
class Fragment:
    """Model-made text in the paper. `by_writer`: the writer model's own part (a compile error in
    it goes back to the model); otherwise lemmata placed it (a proof, a statement, a fallback)."""

    key: str
    latex: str
    source: str
    by_writer: bool = False


Item = str | Fragment


def render(items: Sequence[Item], *, plain: Mapping[str, str] | None = None, annotated: bool = False) -> str:
    """The body's LaTeX. `plain`: fragment key -> why it is printed as plain text."""
    plain = plain or {}
    pieces = []
    for item in items:
        if isinstance(item, str):
            pieces.append(item)
            continue
        latex = _plain(item, plain[item.key]) if item.key in plain else item.latex
        pieces.append(f"{FRAGMENT_START}{item.key}\n{latex}\n{FRAGMENT_END}" if annotated else latex)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(pieces)).strip() + "\n"


def _plain(fragment: Fragment, why: str) -> str:
    note = f"\\textit{{(Printed as plain text: its LaTeX did not compile: {escape_latex_text(why)})}}"
    return f"{note}\n\n{plain_text_latex(fragment.source)}"


def fragment_at(annotated_tex: str, line_number: int) -> str | None:
    """The key of the fragment that holds `line_number` (1-based) of an annotated document, or of
    the last fragment before it: TeX reports an error at or after its cause, never before."""
    current, last = None, None
    for number, line in enumerate(annotated_tex.splitlines(), start=1):
        if number > line_number:
            break
        if line.startswith(FRAGMENT_START):
            current = line[len(FRAGMENT_START) :].strip()
        elif line.startswith(FRAGMENT_END):
            last, current = current, None
    return current or last
