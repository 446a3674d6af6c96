"""lemmata-math.sty, the prompt text that describes it (MACRO_SUMMARY) and the environments the writer prompt names."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from lemmata.agents.prompts import PROMPT_DIR, SEPARATOR
from lemmata.latex.compile import compile_paper
from lemmata.latex.document import MATH_PACKAGE_PATH, NAMED_ENVIRONMENTS, THEOREM_ENVIRONMENTS
from lemmata.latex.macros import MACRO_SUMMARY
from lemmata.latex.mathcommands import MATH_ONLY, TEXT_SAFE

needs_tex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
# Every definition line of the .sty starts with one of the \lemmata@ helpers.
STY_DEFINITION = re.compile(r"^\\lemmata@(?:provide|define|delimiter|operator)\*?\{(\\[A-Za-z]+)\}", re.MULTILINE)


def summary_macros() -> list[str]:
    """Every control sequence MACRO_SUMMARY names."""
    return sorted(set(re.findall(r"\\[A-Za-z]+", MACRO_SUMMARY)))


def sty_defined() -> set[str]:
    """Names the .sty defines."""
    return set(STY_DEFINITION.findall(MATH_PACKAGE_PATH.read_text(encoding="utf-8")))


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


def test_the_writer_prompt_names_every_environment_of_the_preamble() -> None:
    system = (PROMPT_DIR / "writer.md").read_text(encoding="utf-8").partition(SEPARATOR)[0]
    for name in THEOREM_ENVIRONMENTS + NAMED_ENVIRONMENTS + ("proof",):
        assert re.search(rf"\b{name}\b", system), name


@needs_tex
def test_summary_macros_exist_after_loading_the_package(tex_dir: Path) -> None:
    checks = "\n".join(
        f"\\ifdefined{name}\\else\\errmessage{{missing \\string{name}}}\\fi" for name in summary_macros()
    )
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


def test_text_math_repair_knows_every_sty_macro() -> None:
    # textmath wraps a lemmata-math macro only when a script follows it; it reads the .sty.
    assert set(TEXT_SAFE) - {"\\ensuremath"} == sty_defined()
    assert set(TEXT_SAFE).isdisjoint(MATH_ONLY)


# What lemmata-math defined before its macros worked in text: mathtools and amsmath
# commands under their own names. In math the package must typeset exactly like them.
REFERENCE_DEFINITIONS = r"""
\DeclarePairedDelimiter{\abs}{\lvert}{\rvert}
\DeclarePairedDelimiter{\norm}{\lVert}{\rVert}
\DeclarePairedDelimiter{\inner}{\langle}{\rangle}
\DeclarePairedDelimiter{\set}{\{}{\}}
\DeclarePairedDelimiter{\paren}{(}{)}
\DeclarePairedDelimiter{\bracket}{[}{]}
\DeclarePairedDelimiter{\floor}{\lfloor}{\rfloor}
\DeclarePairedDelimiter{\ceil}{\lceil}{\rceil}
\DeclareMathOperator*{\argmin}{arg\,min}
\DeclareMathOperator*{\argmax}{arg\,max}
\DeclareMathOperator{\Var}{Var}
\DeclareMathOperator{\Cov}{Cov}
\DeclareMathOperator{\tr}{tr}
\DeclareMathOperator{\rank}{rank}
\DeclareMathOperator{\diag}{diag}
\DeclareMathOperator{\supp}{supp}
\DeclareMathOperator{\sign}{sign}
\DeclareMathOperator{\dist}{dist}
\newcommand{\defeq}{\coloneqq}
"""
DELIMITERS = ("\\abs", "\\norm", "\\inner", "\\set", "\\paren", "\\bracket", "\\floor", "\\ceil")
OPERATORS = ("\\argmin", "\\argmax", "\\Var", "\\Cov", "\\tr", "\\rank", "\\diag", "\\supp", "\\sign", "\\dist")
MATH_USES = (
    [
        use
        for name in DELIMITERS
        for use in (
            f"{name}{{x}}",
            f"{name}*{{\\frac{{a}}{{b}}}}",
            f"{name}[\\big]{{x}}^2",
            f"f{name}{{x}}_{{{name}*{{y}}}}",
        )
    ]
    + [
        use
        for name in OPERATORS
        for use in (f"{name} X", f"{name}_{{x \\in X}} f(x)", f"a{name}\\limits_x b", f"{name}\\nolimits^2 (x)")
    ]
    + [
        "x \\defeq y",
        "\\begin{aligned} \\abs{x} &\\defeq \\Var X \\\\ \\argmin_x &= \\norm*{x} \\end{aligned}",
    ]
)


def box_dumps(tex_dir: Path, name: str, preamble: str) -> list[str]:
    """pdflatex's \\showbox dump of every use in MATH_USES, inline and displayed."""
    boxes = "\n".join(
        f"\\setbox0\\hbox{{${style}{use}$}}\\showbox0" for use in MATH_USES for style in ("", "\\displaystyle")
    )
    tex_path = tex_dir / f"{name}.tex"
    tex_path.write_text(
        "\\documentclass{article}\n\\usepackage{amsmath,amssymb,mathtools}\n" + preamble + "\n\\begin{document}\n"
        "\\showboxdepth=1000 \\showboxbreadth=100000\n" + boxes + "\n\\end{document}\n"
    )
    shutil.copy(MATH_PACKAGE_PATH, tex_dir)
    subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", tex_path.name],
        cwd=tex_dir,
        capture_output=True,
        timeout=120,
        check=False,
    )
    log = tex_path.with_suffix(".log").read_text(encoding="latin-1")
    return re.findall(r"^> \\box0=\n(.*?)\n\n?! OK", log, flags=re.MULTILINE | re.DOTALL)


@needs_tex
def test_macros_typeset_in_math_exactly_as_the_commands_they_wrap(tex_dir: Path) -> None:
    ours = box_dumps(tex_dir, "ours", "\\usepackage{lemmata-math}")
    reference = box_dumps(tex_dir, "reference", REFERENCE_DEFINITIONS)
    assert len(ours) == len(reference) == 2 * len(MATH_USES)
    for use, our_box, reference_box in zip([u for u in MATH_USES for _ in (0, 1)], ours, reference, strict=True):
        assert our_box == reference_box, use
