"""Commands a model uses without defining them are made printable before the one compile."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lemmata.latex.compile import compile_paper
from lemmata.latex.document import render_document
from lemmata.latex.undefined import DEFINED_BY_THE_PREAMBLE, provide_undefined_commands

needs_tex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")


def test_each_used_command_is_defined_only_if_tex_does_not_know_it() -> None:
    out = provide_undefined_commands("Trace $\\Tr(A)$ and $\\Poly$; \\Tr again.")
    first_line, body = out.split("%\n", 1)
    assert body == "Trace $\\Tr(A)$ and $\\Poly$; \\Tr again."
    assert first_line == (
        "\\ifdefined\\Poly\\else\\def\\Poly{\\ensuremath{\\operatorname{Poly}}}\\fi"
        "\\ifdefined\\Tr\\else\\def\\Tr{\\ensuremath{\\operatorname{Tr}}}\\fi"
    )


def test_conditionals_are_left_out_of_our_own_conditional() -> None:
    out = provide_undefined_commands("\\ifx a b \\else c \\fi \\iftrue \\or \\Tr")
    assert out.split("%\n", 1)[0] == "\\ifdefined\\Tr\\else\\def\\Tr{\\ensuremath{\\operatorname{Tr}}}\\fi"


def test_a_body_without_commands_is_unchanged() -> None:
    assert provide_undefined_commands("Plain text, 50\\% done.") == "Plain text, 50\\% done."


def test_commands_of_the_preamble_get_no_line() -> None:
    """The README command's paper opened with a line of 25 no-op guards, for \\begin, \\par,
    \\section, \\textbf, \\alpha... (2026-11-29): a reader of the .tex sees only the names TeX may
    not know."""
    body = "\\section{Proof}\\begin{proof}\\textbf{Step} $\\alpha \\Rightarrow \\boxed{x}$\\par\\RR\\end{proof}"
    assert provide_undefined_commands(body) == body


@needs_tex
def test_every_name_taken_as_known_is_defined_under_the_papers_preamble(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A name wrongly taken as known would stop the compile of a paper that uses it.
    monkeypatch.setenv("TEXMFVAR", str(tmp_path / "texmf-var"))
    checks = "".join(
        f"\\ifdefined\\{name}\\else\\errmessage{{not defined: \\string\\{name}}}\\fi"
        for name in sorted(DEFINED_BY_THE_PREAMBLE)
    )
    tex = tmp_path / "known.tex"
    tex.write_text(render_document(title="Known", abstract="", body=checks + "\nok", bibliography_stem=None))
    assert compile_paper(tex, bibliography=False).pdf_path.is_file()
