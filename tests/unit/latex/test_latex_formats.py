"""Preloaded preambles (latex/formats.py): a paper and a plot compiled with their preamble read once
per machine read exactly as without; a document of another preamble, a damaged format and a
format that cannot be made all fall back to the plain passes, losing nothing."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import pytest
from pypdf import PdfReader

from lemmata.artifacts import LemmaCheck
from lemmata.latex import formats
from lemmata.latex.compile import compile_paper
from lemmata.latex.document import PAPER_PREAMBLE, render_document
from lemmata.latex.formats import Preamble
from lemmata.latex.trial import trial_compile
from lemmata.stages.experiment.plot import PLOT_PREAMBLE, draw_plot

pytestmark = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")

BODY = "\\section{Result}\\label{sec:r}\n\\begin{lemma}\\label{lem:a}For all $n$, $2n$ is even.\\end{lemma}\nBy \\cref{lem:a} and \\cref{sec:r}."


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache of its own (the session's is shared by every test), and TeX's scratch files under tmp_path."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TEXMFVAR", str(tmp_path / "texmf-var"))
    return tmp_path / "cache" / "lemmata" / "tex-formats"


def compiled(folder: Path, tex: str) -> tuple[str, str]:
    """(the PDF's text, the first line of the log: it names the format pdflatex loaded)."""
    folder.mkdir(parents=True, exist_ok=True)
    tex_path = folder / "paper.tex"
    tex_path.write_text(tex, encoding="utf-8")
    result = compile_paper(tex_path, bibliography=False)
    text = " ".join(page.extract_text() for page in PdfReader(result.pdf_path).pages)
    return " ".join(text.split()), tex_path.with_suffix(".log").read_text(encoding="latin-1").splitlines()[0]


def made_formats(cache: Path) -> list[str]:
    return sorted(path.name for path in cache.glob("*.fmt")) if cache.exists() else []


def test_a_paper_reads_the_same_with_its_preamble_preloaded(tmp_path: Path, cache: Path) -> None:
    """The title comes after \\begin{document}, so the format (made from the lines before it) holds
    nothing of one paper: a second paper with another title gets its own."""
    first = render_document(title="First title", abstract="", body=BODY, bibliography_stem=None)
    second = render_document(title="Second title", abstract="", body=BODY, bibliography_stem=None)
    assert PAPER_PREAMBLE.applies(first) and PAPER_PREAMBLE.applies(second)
    text_one, log_one = compiled(tmp_path / "one", first)
    text_two, log_two = compiled(tmp_path / "two", second)
    assert "preloaded format=lemmata-paper" in log_one and "preloaded format=lemmata-paper" in log_two
    assert len(made_formats(cache)) == 1  # made once, then loaded
    # The same document compiled without any format (its preamble read as usual) reads the same.
    unformatted = second.replace("\\begin{document}", "% read as usual\n\\begin{document}", 1)
    assert not PAPER_PREAMBLE.applies(unformatted)
    text_plain, log_plain = compiled(tmp_path / "plain", unformatted)
    assert "preloaded format=pdflatex" in log_plain
    assert text_two == text_plain
    assert text_two.startswith("Second title") and "By Lemma 1 and Section 1" in text_two


def test_a_document_whose_preamble_differs_compiles_without_the_format(tmp_path: Path, cache: Path) -> None:
    """mylatexformat skips a document's preamble unread: a paper with one more package must not
    lose it to a format made without."""
    tex = render_document(title="T", abstract="", body="$\\mathbb{Z}$ and \\blindtext", bibliography_stem=None)
    tex = tex.replace("\\begin{document}", "\\usepackage{blindtext}\n\\begin{document}", 1)
    text, log = compiled(tmp_path / "paper", tex)
    assert "preloaded format=pdflatex" in log
    assert "Lorem ipsum" in text  # the package the format does not hold was read


def test_a_damaged_format_is_forgotten_and_the_paper_still_compiles(tmp_path: Path, cache: Path) -> None:
    tex = render_document(title="T", abstract="", body=BODY, bibliography_stem=None)
    compiled(tmp_path / "first", tex)
    (made,) = cache.glob("lemmata-paper-*.fmt")
    made.write_bytes(made.read_bytes()[:1000])  # cut short, as a full disk would leave it
    text, log = compiled(tmp_path / "second", tex)
    assert "preloaded format=pdflatex" in log and "By Lemma 1" in text
    assert not made.exists()  # forgotten: the next compile makes it again
    compiled(tmp_path / "third", tex)
    assert made.exists()


def test_a_format_that_cannot_be_made_is_remembered_and_the_passes_run_without(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts = []
    real = formats._make_format
    monkeypatch.setattr(formats, "_make_format", lambda preamble: attempts.append(preamble.name) or real(preamble))
    broken = Preamble("broken", "\\documentclass{article}\n\\usepackage{no-such-package-anywhere}\n")
    assert formats.preloaded(broken) is None
    assert formats.preloaded(broken) is None
    assert attempts == ["broken"]  # tried once, not at every pass
    (failed,) = cache.glob("broken-*.failed")
    assert "no-such-package-anywhere" in failed.read_text()


def test_a_trial_pass_names_the_same_line_with_the_format_as_without(cache: Path) -> None:
    """The format skips the preamble's lines, but TeX still counts them: the writer's compile check
    blames the right fragment."""
    tex = render_document(title="T", abstract="", body="Fine.\n\n\\Tr(A)\n\nMore.", bibliography_stem=None)
    with_format = trial_compile(tex, timeout=60)
    assert made_formats(cache) == [next(cache.glob("lemmata-paper-*.fmt")).name]
    without = trial_compile(tex.replace("\\begin{document}", "%\n\\begin{document}", 1), timeout=60)
    line_of_error = tex.splitlines().index("\\Tr(A)") + 1
    assert [error.line for error in with_format] == [line_of_error]
    assert [error.line for error in without] == [line_of_error + 1]  # one line more before it
    assert re.search(r"Undefined control sequence \\Tr", with_format[0].message)


def test_a_plot_drawn_with_its_preamble_preloaded_is_reproducible_and_dateless(tmp_path: Path, cache: Path) -> None:
    check = LemmaCheck(lemma_id="L1", group="low_confidence", outcome="ran", trials=2000, violations=0)
    draw_plot(check, tmp_path / "a.pdf")
    draw_plot(check, tmp_path / "b.pdf")
    assert made_formats(cache) == [next(cache.glob("lemmata-plot-*.fmt")).name]
    assert (tmp_path / "a.pdf").read_bytes() == (tmp_path / "b.pdf").read_bytes()
    info = PdfReader(tmp_path / "a.pdf").metadata or {}
    assert "/CreationDate" not in info and "/ModDate" not in info and "/PTEX.Fullbanner" not in info
    assert PLOT_PREAMBLE.applies(PLOT_PREAMBLE.text + "\\begin{document}\n")


def test_a_new_tex_installation_gets_a_new_format(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An update of TeX Live (its LaTeX format rebuilt) must not load a format of the old one."""
    first = formats.preloaded(PLOT_PREAMBLE)
    assert first is not None
    formats.tex_installation.cache_clear()
    monkeypatch.setattr(formats, "tex_installation", lambda: "an updated installation")
    second = formats.preloaded(PLOT_PREAMBLE)
    assert second is not None and second != first
    assert not first.exists()  # the old installation's format is removed, not left to pile up


def test_a_format_planted_in_a_cache_others_can_write_is_not_loaded(tmp_path: Path, cache: Path) -> None:
    """The attack: another local user (XDG_CACHE_HOME in a shared folder) puts a format under the
    name lemmata would load; it holds their text, not our preamble. The defence: a cache folder
    others can write to is not used at all."""
    tex = render_document(title="T", abstract="", body=BODY, bibliography_stem=None)
    compiled(tmp_path / "first", tex)
    (made,) = cache.glob("lemmata-paper-*.fmt")
    planted = Preamble("planted", PAPER_PREAMBLE.text + "\\AtBeginDocument{PLANTED TEXT}\n", PAPER_PREAMBLE.support)
    made.write_bytes(formats._make_format(planted)[0])
    assert "PLANTED TEXT" in compiled(tmp_path / "attacked", tex)[0]  # what the attack does where it works
    cache.chmod(0o777)
    text, log = compiled(tmp_path / "defended", tex)
    assert "PLANTED TEXT" not in text and "preloaded format=pdflatex" in log


def test_a_format_tex_could_not_even_start_on_is_tried_again_next_time(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only TeX's own refusal is remembered: a box that could not start may start next time."""
    from lemmata.isolation.box import BoxUnavailable

    real = formats.run_tex_once

    def box_down(*_: object, **__: object) -> object:
        raise BoxUnavailable("bwrap: no user namespaces")

    monkeypatch.setattr(formats, "run_tex_once", box_down)
    assert formats.preloaded(PLOT_PREAMBLE) is None
    assert not list(cache.glob("*.failed"))
    monkeypatch.setattr(formats, "run_tex_once", real)
    assert formats.preloaded(PLOT_PREAMBLE) is not None
