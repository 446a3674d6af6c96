"""Attacks on the TeX that compiles model-written LaTeX (issue 22): file names kpathsea expands
(`^^24VAR`, in text and in display math), absolute paths, secrets in the environment, an
`\\openout` loop and a flooded log. TeX runs in a box that shows it the TeX trees and its build
directory only, with an environment built from nothing: nothing of the host reaches the PDF,
the log or the disk. Each test fails when the box is taken away (README, SECURITY.md).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pypdf import PdfReader

from lemmata.latex.compile import LatexCompileError, compile_paper
from lemmata.latex.texbox import BUILD_BYTES, LOG_TAIL_BYTES
from lemmata.latex.trial import trial_compile

pytestmark = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")

SECRET = "sk-tex-attack-secret-4242"
#: A macro that shows a file's text in the PDF when TeX can read it, and says so when it cannot.
TRY = r"\newcommand\try[2]{\IfFileExists{#2}{#1: \input{#2}}{#1: absent.}\par}"


def document(body: str, preamble: str = "") -> str:
    return "\n".join([r"\documentclass{article}", preamble, TRY, r"\begin{document}", body, r"\end{document}", ""])


@pytest.fixture
def secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Secret files where environment variables point: another run's paper, a dotfile, a key."""
    home = tmp_path / "home"
    lemmata_home = tmp_path / "lemmata-home"
    files = {
        "paper": lemmata_home / "runs" / "other" / "paper.tex",
        "notes": home / "notes.tex",
        "dotfile": home / ".secretrc",
        "absolute": tmp_path / "outside.tex",
    }
    for name, path in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{SECRET}-{name}\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("LEMMATA_HOME", str(lemmata_home))
    monkeypatch.setenv("VENDORA_API_KEY", SECRET)
    return files


def compiled_text(tex_dir: Path, body: str, **options: object) -> tuple[str, str]:
    """(PDF text, log) of compiling `body`; the PDF text is the error when the compile failed."""
    tex_dir.mkdir(exist_ok=True)
    tex = tex_dir / "paper.tex"
    tex.write_text(document(body), encoding="utf-8")
    try:
        result = compile_paper(tex, bibliography=False, **options)  # type: ignore[arg-type]
        text = " ".join(page.extract_text() for page in PdfReader(result.pdf_path).pages)
    except LatexCompileError as error:
        text = f"failed: {error}"
    log = tex.with_suffix(".log").read_text(encoding="latin-1") if tex.with_suffix(".log").exists() else ""
    return text, log


def test_file_names_with_environment_variables_show_nothing_of_the_host(
    tmp_path: Path, secrets: dict[str, Path]
) -> None:
    body = "\n".join(
        [
            r"\try{paper}{^^24LEMMATA_HOME/runs/other/paper.tex}",  # paranoid openin checks before $ expands
            r"\try{notes}{^^24HOME/notes.tex}",
            r"{\catcode`\$=12 \gdef\dollarnotes{$HOME/notes.tex}}\try{catcode}{\dollarnotes}",  # a plain $ in text
            r"\try{dotfile}{^^24HOME/.secretrc}",
            r"\try{absolute}{" + str(secrets["absolute"]) + "}",
            r"\try{passwd}{/etc/passwd}",
            r"\[ x = \IfFileExists{^^24HOME/notes.tex}{\input ^^24HOME/notes.tex }{0} \]",  # in display math
        ]
    )
    text, log = compiled_text(tmp_path / "run", body)
    for name in ("paper", "notes", "catcode", "dotfile", "absolute"):
        assert f"{name}: absent." in text
    assert "passwd: absent." in text and "root:x:0" not in text
    assert SECRET not in text and SECRET not in log


def test_an_environment_variable_named_in_a_file_name_is_not_in_the_log(
    tmp_path: Path, secrets: dict[str, Path]
) -> None:
    """The log goes back to the model as the trial compile's errors: it must not carry a key."""
    errors = trial_compile(document(r"\input{^^24VENDORA_API_KEY}"), timeout=30)
    assert errors and SECRET not in " ".join(error.message for error in errors)
    _, log = compiled_text(tmp_path / "run", r"\input{^^24VENDORA_API_KEY}")
    assert log and SECRET not in log


def test_an_openout_loop_fills_only_the_boxes_tmpfs(tmp_path: Path) -> None:
    body = "\n".join(
        [
            r"\newwrite\junk \newcount\files \def\chunk{" + "x" * 1000 + "}",
            r"\loop \immediate\openout\junk=junk\the\files.txt",  # 1000 files of 20 MB: 20 GB
            r"  {\count255=0 \loop\immediate\write\junk{\chunk}\advance\count255 1 \ifnum\count255<20000\repeat}",
            r"  \immediate\closeout\junk \advance\files 1 \ifnum\files<1000\repeat",
        ]
    )
    text, log = compiled_text(tmp_path / "run", body, timeout_per_pass=8)
    assert text == "failed: pdflatex timed out after 8 s on paper.tex (an endless macro loop?)"
    written = sum(path.stat().st_size for path in tmp_path.rglob("*") if path.is_file())
    assert written < 1 << 20, "TeX's output reached the host's disk"
    assert not list(tmp_path.rglob("junk*")) and not (tmp_path / "run" / "build" / "paper").exists()


def test_a_flooded_log_is_read_only_at_its_end(tmp_path: Path) -> None:
    body = r"\newcount\n \loop\message{" + "y" * 500 + r"}\advance\n 1 \ifnum\n<20000\repeat \undefinedmacro"  # 10 MB
    text, log = compiled_text(tmp_path / "run", body)
    assert text == "failed: paper.tex:5: Undefined control sequence \\undefinedmacro"
    assert 0 < len(log.encode("latin-1")) <= LOG_TAIL_BYTES < BUILD_BYTES
    assert not log.startswith("This is pdfTeX")  # the log's beginning stayed in the box
