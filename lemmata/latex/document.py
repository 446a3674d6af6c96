"""Assemble a complete .tex file from the fixed preamble and a cleaned body."""

from __future__ import annotations

import re
from pathlib import Path

from lemmata.latex.formats import Preamble
from lemmata.latex.unicode_symbols import replace_unicode_symbols

_HERE = Path(__file__).resolve().parent
PREAMBLE_PATH = _HERE / "preamble.tex"
MATH_PACKAGE_PATH = _HERE / "lemmata-math.sty"

# Theorem-like environments the preamble defines (kept in sync by a test).
THEOREM_ENVIRONMENTS: tuple[str, ...] = (
    "theorem",
    "lemma",
    "proposition",
    "corollary",
    "conjecture",
    "claim",
    "fact",
    "observation",
    "maintheorem",
    "definition",
    "assumption",
    "example",
    "remark",
)
# Unnumbered theorem-like environments whose heading is their first argument.
NAMED_ENVIRONMENTS: tuple[str, ...] = ("namedtheorem", "nameddefinition")

# The author line is the tool's name: the writer is a model, not a person, and
# the paper must not claim a human author.
AUTHOR = "lemmata"

_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "%": r"\%",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_SPECIALS_PATTERN = re.compile("|".join(re.escape(char) for char in _LATEX_SPECIALS))
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_BIB_STEM = re.compile(r"[A-Za-z0-9_.-]+")


def escape_latex_text(text: str) -> str:
    """Plain text to LaTeX that prints it literally (specials escaped, math symbols mapped)."""
    text = _CONTROL_CHARS.sub("", text)
    text = _SPECIALS_PATTERN.sub(lambda match: _LATEX_SPECIALS[match.group(0)], text)
    return replace_unicode_symbols(text)


def preamble_text() -> str:
    """The fixed preamble, from \\documentclass up to (not including) \\begin{document}."""
    return PREAMBLE_PATH.read_text(encoding="utf-8")


#: Every paper's lines before its \begin{document}: the same in each, so read once per machine
#: (formats.py). The title, author and date come after \begin{document}, where they do the same.
PAPER_PREAMBLE = Preamble("lemmata-paper", preamble_text().rstrip("\n") + "\n\n", (MATH_PACKAGE_PATH,))


def support_files() -> list[Path]:
    """Files that must sit next to the .tex for it to compile."""
    return [MATH_PACKAGE_PATH]


def render_document(*, title: str, abstract: str, body: str, bibliography_stem: str | None) -> str:
    """The full .tex text; the bibliography commands appear only when a stem is given."""
    parts = [
        PAPER_PREAMBLE.text + "\\begin{document}",
        f"\\title{{{escape_latex_text(title.strip())}}}",
        f"\\author{{{AUTHOR}}}",
        "\\date{}",
        "\\maketitle",
    ]
    if abstract.strip():
        parts += ["\\begin{abstract}", escape_latex_text(abstract.strip()), "\\end{abstract}"]
    parts += ["", body.strip(), ""]
    if bibliography_stem is not None:
        parts += ["\\bibliographystyle{plainnat}", f"\\bibliography{{{_checked_stem(bibliography_stem)}}}"]
    parts.append("\\end{document}")
    return "\n".join(parts) + "\n"


def _checked_stem(stem: str) -> str:
    """A .bib stem safe to put inside \\bibliography{} (no path, no spaces, no .bib)."""
    if not _BIB_STEM.fullmatch(stem) or stem.endswith(".bib"):
        raise ValueError(f"bibliography stem must be a bare file stem, got {stem!r}")
    return stem
