"""lemmata-math.sty and the prompt text that describes it (MACRO_SUMMARY, PREAMBLE_SUMMARY)."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import pytest

from lemmata.latex.compile import compile_paper
from lemmata.latex.document import MATH_PACKAGE_PATH, NAMED_ENVIRONMENTS, THEOREM_ENVIRONMENTS, preamble_text
from lemmata.latex.macros import MACRO_SUMMARY, PREAMBLE_SUMMARY

needs_tex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")


def summary_macros() -> list[str]:
    """Every control sequence MACRO_SUMMARY names."""
    return sorted(set(re.findall(r"\\[A-Za-z]+", MACRO_SUMMARY)))


def sty_defined() -> set[str]:
    """Names the .sty defines (each definition line starts with \\lemmata@provide or @define)."""
    sty = MATH_PACKAGE_PATH.read_text(encoding="utf-8")
    return set(re.findall(r"^\\lemmata@(?:provide|define)\{(\\[A-Za-z]+)\}", sty, flags=re.MULTILINE))


@pytest.fixture
def tex_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the private TEXMFVAR lands here
    return tmp_path


def test_summary_is_not_empty() -> None:
    assert len(summary_macros()) > 80


def test_every_summary_macro_is_defined_in_the_sty() -> None:
    assert set(summary_macros()) - sty_defined() == set()


def test_every_sty_macro_is_in_the_summary() -> None:
    # Spellings from other packages (bbm, dsfont, mathrsfs) are caught, not advertised.
    compatibility_only = {"\\mathbbm", "\\mathds", "\\mathscr"}
    assert sty_defined() - set(summary_macros()) == compatibility_only


def test_preamble_summary_names_every_environment() -> None:
    for name in THEOREM_ENVIRONMENTS + NAMED_ENVIRONMENTS + ("proof",):
        assert re.search(rf"\b{name}\b", PREAMBLE_SUMMARY), name
    assert "\\unverified" in PREAMBLE_SUMMARY and "{\\unverified}" in preamble_text()


@needs_tex
def test_summary_macros_exist_after_loading_the_package(tex_dir: Path) -> None:
    checks = "\n".join(f"\\ifdefined{name}\\else\\errmessage{{missing \\string{name}}}\\fi" for name in summary_macros())
    tex_path = tex_dir / "check.tex"
    tex_path.write_text(
        "\\documentclass{article}\n\\usepackage{lemmata-math}\n\\begin{document}\n" + checks + "\nok\n\\end{document}\n"
    )
    assert compile_paper(tex_path, bibliography=False).pdf_path.is_file()


@needs_tex
def test_package_loads_after_packages_that_define_the_same_names(tex_dir: Path) -> None:
    tex_path = tex_dir / "clash.tex"
    tex_path.write_text(
        "\\documentclass{article}\n\\usepackage{amsmath,amssymb,mathtools,bm}\n"
        "\\newcommand{\\R}{\\mathbf{R}}\n\\DeclarePairedDelimiter{\\abs}{|}{|}\n"
        "\\DeclareMathOperator{\\tr}{Tr}\n\\newcommand{\\set}[1]{\\{#1\\}}\n"
        "\\usepackage{lemmata-math}\n\\begin{document}\n"
        "$\\R \\abs{x} \\tr A \\set{1} \\bm{x} \\norm{x} \\RR$\n\\end{document}\n"
    )
    result = compile_paper(tex_path, bibliography=False)
    log = tex_path.with_suffix(".log").read_text(encoding="latin-1")
    assert result.pdf_path.is_file()
    assert "\\R is already defined; keeping it" in log
