"""Real pdflatex/bibtex compiles of rendered documents, the sandbox, and log parsing."""

from __future__ import annotations

import contextlib
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from pypdf import PdfReader

from lemmata.artifacts import Experiment, LemmaCheck, PaperRecord, SeriesPoint
from lemmata.latex.bibliography import assign_citation_keys, render_bibtex
from lemmata.latex.compile import (
    LatexCompileError,
    compile_paper,
    failure_report,
    parse_latex_log,
    success_report,
)
from lemmata.latex.document import (
    MATH_PACKAGE_PATH,
    THEOREM_ENVIRONMENTS,
    escape_latex_text,
    preamble_text,
    render_document,
)
from lemmata.stages.experiment.figures import add_experiment_figures
from lemmata.stages.experiment.plot import add_plots
from lemmata.stages.paper.unverified_marks import add_numerical_warnings

needs_tex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")

EXTRA_ENVIRONMENTS = ("assumption", "maintheorem", "conjecture", "claim", "example", "fact", "observation")
# lemmata-math macros that take an argument; every other one is used bare.
ARGUMENT_MACROS = {
    "\\bm",
    "\\mathbbm",
    "\\mathds",
    "\\mathscr",
    "\\abs",
    "\\norm",
    "\\inner",
    "\\set",
    "\\paren",
    "\\bracket",
    "\\floor",
    "\\ceil",
}


@pytest.fixture
def tex_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory for the paper; compile_paper's private TEXMFVAR is created under it too."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TEXMFVAR", str(tmp_path / "texmf-var"))
    paper_dir = tmp_path / "paper"
    paper_dir.mkdir()
    return paper_dir


def sty_macros() -> list[str]:
    """Every macro lemmata-math.sty defines."""
    sty = MATH_PACKAGE_PATH.read_text(encoding="utf-8")
    return re.findall(r"^\\lemmata@(?:provide|define|delimiter|operator)\*?\{(\\[A-Za-z]+)\}", sty, re.MULTILINE)


def macro_uses() -> list[str]:
    """Every lemmata-math macro, each argument-taking one in all its forms."""
    delimiters = ARGUMENT_MACROS - {"\\bm", "\\mathbbm", "\\mathds", "\\mathscr"}
    return [
        f"{name}{{x}} {name}*{{x}} {name}[\\big]{{x}}"
        if name in delimiters
        else f"{name}{{A}}"
        if name in ARGUMENT_MACROS
        else name
        for name in sty_macros()
    ]


def macro_showcase() -> str:
    """Display math using every lemmata-math macro once."""
    uses = macro_uses()
    lines = [" ".join(uses[i : i + 8]) for i in range(0, len(uses), 8)]
    return "\n".join(f"\\[ {line} \\]" for line in lines)


def macro_text_showcase() -> str:
    """Running text using every lemmata-math macro: each must work outside math too."""
    return "In running text: " + ", ".join(macro_uses()) + "."


def full_body(keys: list[str]) -> str:
    """A body with every theorem environment, every macro (in math and in text), \\unverified and citations."""
    parts = ["\\section{Results}", f"We build on \\citet{{{keys[0]}}} and \\citep{{{keys[1]}}}."]
    for name in THEOREM_ENVIRONMENTS:
        parts.append(f"\\begin{{{name}}}\\label{{env:{name}}}A statement about $\\RR$.\\end{{{name}}}")
    parts.append("\\begin{proof}By \\cref{env:lemma} and \\eqref{eq:one}. \\unverified\\end{proof}")
    parts.append("\\begin{equation}\\label{eq:one} \\norm{\\bx} \\leq \\abs{\\balpha} \\end{equation}")
    parts.append(macro_showcase())
    parts.append(macro_text_showcase())
    return "\n\n".join(parts)


def records() -> list[PaperRecord]:
    return [
        PaperRecord(id="p1", title="Sharp bounds", authors=["Ann Lee"], year=2020, venue="Annals"),
        PaperRecord(id="p2", title="A survey", authors=["Bob Stone"], year=2021, url="https://example.org/s"),
    ]


@needs_tex
def test_full_document_compiles_without_errors_or_warnings(tex_dir: Path) -> None:
    keyed = assign_citation_keys(records())
    (tex_dir / "refs.bib").write_text(render_bibtex(keyed), encoding="utf-8")
    tex_path = tex_dir / "paper_v1.tex"
    body = full_body([key for key, _ in keyed])
    tex_path.write_text(
        render_document(title="On $x$ & Friends", abstract="We prove 100% of it.", body=body, bibliography_stem="refs"),
        encoding="utf-8",
    )
    result = compile_paper(tex_path, bibliography=True)
    assert result.pdf_path == tex_dir / "paper_v1.pdf" and result.pdf_path.is_file()
    assert result.passes == ["pdflatex", "bibtex", "pdflatex", "pdflatex"]
    assert result.warnings == [] and result.seconds > 0
    log = (tex_dir / "paper_v1.log").read_text(encoding="latin-1")
    errors, warnings = parse_latex_log(log)
    assert errors == [] and warnings == []
    assert "Warning:" not in log  # not even one that parse_latex_log leaves out
    text = " ".join(page.extract_text() for page in PdfReader(result.pdf_path).pages)
    assert "[Unverified step]" in text
    assert "Lee" in text and "Stone" in text and "On $x$ & Friends" in text
    assert "??" not in text  # the draft passes wrote the .aux the last pass resolved the references from
    for heading in ("Main Theorem", "Assumption", "Conjecture", "Claim", "Example", "Fact", "Observation"):
        assert heading in text
    assert (tex_dir / "build" / "paper_v1" / MATH_PACKAGE_PATH.name).is_file()  # TeX worked on copies


class RecordingTexBox:
    """What the compile asks TeX to do, each command succeeding; the last pass's PDF to read back."""

    def __init__(self) -> None:
        self.commands: list[list[str]] = []

    def run(self, argv: list[str], timeout: float) -> tuple[int, bool]:
        self.commands.append(list(argv))
        return 0, False

    def read(self, name: str, limit: int, *, tail: bool = False) -> bytes | None:
        return b"%PDF-1.5 the last pass's" if name.endswith(".pdf") else b""


def test_only_the_last_pdflatex_pass_writes_the_pdf(tex_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The specification's four steps; the two passes before the last make the .aux alone."""
    import lemmata.latex.compile as compile_module

    box = RecordingTexBox()
    monkeypatch.setattr(compile_module, "open_tex_box", lambda _inputs: contextlib.nullcontext(box))
    tex_path = tex_dir / "paper_v1.tex"
    tex_path.write_text(render_document(title="T", abstract="", body="Hello.", bibliography_stem="refs"))
    result = compile_paper(tex_path, bibliography=True)
    assert [command[0] for command in box.commands] == ["pdflatex", "bibtex", "pdflatex", "pdflatex"]
    drafts = ["-draftmode" in command for command in box.commands if command[0] == "pdflatex"]
    assert drafts == [True, True, False]
    assert result.pdf_path.read_bytes() == b"%PDF-1.5 the last pass's"


@needs_tex
def test_compile_without_bibliography(tex_dir: Path) -> None:
    tex_path = tex_dir / "paper.tex"
    tex_path.write_text(render_document(title="T", abstract="", body="Hello.", bibliography_stem=None))
    result = compile_paper(tex_path, bibliography=False)
    assert result.pdf_path.is_file() and result.warnings == []
    assert result.passes == ["pdflatex", "bibtex", "pdflatex", "pdflatex"]


@needs_tex
def test_a_bibliography_nothing_cites_still_compiles(tex_dir: Path) -> None:
    """Every citation the model wrote was unknown and removed, yet the survey found papers."""
    (tex_dir / "references.bib").write_text(render_bibtex(assign_citation_keys(records())), encoding="utf-8")
    tex_path = tex_dir / "paper.tex"
    tex_path.write_text(
        render_document(title="T", abstract="", body="No citation survived.", bibliography_stem="references"),
        encoding="utf-8",
    )
    result = compile_paper(tex_path, bibliography=True)
    assert result.pdf_path.is_file()
    assert "No citation survived." in " ".join(page.extract_text() for page in PdfReader(result.pdf_path).pages)


@needs_tex
def test_the_report_names_undefined_citations_and_references(tex_dir: Path) -> None:
    (tex_dir / "references.bib").write_text(render_bibtex(assign_citation_keys(records())), encoding="utf-8")
    tex_path = tex_dir / "paper.tex"
    body = "See \\cite{nokey2020} and Section~\\ref{sec:missing}."
    tex_path.write_text(
        render_document(title="T", abstract="", body=body, bibliography_stem="references"), encoding="utf-8"
    )
    report = success_report(tex_path, compile_paper(tex_path, bibliography=True))
    assert report.ok and report.pdf_file == "paper.pdf" and report.tex_file == "paper.tex"
    assert (report.undefined_citations, report.undefined_references) == (["nokey2020"], ["sec:missing"])
    assert report.errors == []


@needs_tex
def test_a_failed_compile_reports_its_errors_with_lines(tex_dir: Path) -> None:
    tex_path = tex_dir / "paper.tex"
    tex_path.write_text(render_document(title="T", abstract="", body="Fine.\n\n\\Tr(A)", bibliography_stem=None))
    with pytest.raises(LatexCompileError) as failure:
        compile_paper(tex_path, bibliography=False)
    report = failure_report(tex_path, failure.value)
    assert not report.ok and report.pdf_file == "" and report.passes == ["pdflatex"]
    assert re.fullmatch(r"paper\.tex:\d+: Undefined control sequence \\Tr", report.errors[0])


@needs_tex
def test_the_numerical_warning_compiles_cleanly(tex_dir: Path) -> None:
    suspect = LemmaCheck(
        lemma_id="L_2",
        group="low_confidence",
        outcome="ran",
        trials=2000,
        violations=240,
        violation_rate=0.12,
        numerically_suspect=True,
    )
    body = add_numerical_warnings("Body.", Experiment(skipped=False, checks=[suspect]))
    tex_path = tex_dir / "paper.tex"
    tex_path.write_text(render_document(title="T", abstract="", body=body, bibliography_stem=None), encoding="utf-8")
    result = compile_paper(tex_path, bibliography=False)
    assert result.warnings == []
    text = " ".join(" ".join(page.extract_text() for page in PdfReader(result.pdf_path).pages).split())
    assert "Warning: numerical tests contradict Lemma L_2. 240 of 2000 random trials violate it (rate 12.0%)" in text


@needs_tex
def test_a_paper_with_the_experiments_plots_compiles_cleanly(tex_dir: Path) -> None:
    """The plots are drawn beside the paper in figures/, copied into the build directory and
    included as figures with their captions; an underscore in a lemma id is no trouble."""
    checks = [
        LemmaCheck(
            lemma_id="main_result", group="low_confidence", outcome="ran", trials=2000, violations=0, violation_rate=0.0
        ),
        LemmaCheck(
            lemma_id="L4",
            group="low_confidence",
            outcome="ran",
            trials=300,
            violations=30,
            violation_rate=0.1,
            numerically_suspect=True,
            x_label="n",
            series=[SeriesPoint(x=n, trials=100, violations=10 * (n == 100)) for n in (1, 10, 100)],
        ),
    ]
    experiment = add_plots(Experiment(skipped=False, checks=checks), tex_dir)
    assert [check.plot for check in experiment.checks] == ["figures/main_result.pdf", "figures/L4.pdf"]
    body = add_experiment_figures("\\section{Introduction}\nSee \\cref{fig:check-L4}.", experiment)
    tex_path = tex_dir / "paper_v1.tex"
    tex_path.write_text(render_document(title="T", abstract="", body=body, bibliography_stem=None), encoding="utf-8")
    result = compile_paper(tex_path, bibliography=False)
    assert result.warnings == []
    errors, warnings = parse_latex_log((tex_dir / "paper_v1.log").read_text(encoding="latin-1"))
    assert errors == [] and warnings == []
    text = " ".join(" ".join(page.extract_text() for page in PdfReader(result.pdf_path).pages).split())
    assert "Numerical check of Lemma main_result: violation rate over 2000 random trials." in text
    assert "Numerical check of Lemma L4" in text and "numerically suspect" in text and "Figure 2" in text
    assert "Lemma L4: 30 of 300 trials violate it" in text  # the plot's own title, inside the included PDF
    assert (tex_dir / "build" / "paper_v1" / "figures" / "L4.pdf").is_file()


@needs_tex
def test_recoverable_slips_are_warnings_not_errors(tex_dir: Path) -> None:
    tex_path = tex_dir / "paper.tex"
    body = "\\section{A}\\\\ Text \\begin{itemize}\\item a\\end{itemize}\\\\ and 张."
    tex_path.write_text(render_document(title="T", abstract="", body=body, bibliography_stem=None))
    result = compile_paper(tex_path, bibliography=False)
    assert len(result.warnings) == 1 and "(U+5F20) replaced by ?" in result.warnings[0]


@needs_tex
def test_undefined_macro_raises_one_line_with_file_and_line(tex_dir: Path) -> None:
    tex_path = tex_dir / "paper_v1.tex"
    tex_path.write_text(render_document(title="T", abstract="", body="Hello \\undefinedmacro.", bibliography_stem=None))
    with pytest.raises(LatexCompileError) as caught:
        compile_paper(tex_path, bibliography=False)
    message = str(caught.value)
    assert "\n" not in message
    line = tex_path.read_text().splitlines().index("Hello \\undefinedmacro.") + 1
    assert message == f"paper_v1.tex:{line}: Undefined control sequence \\undefinedmacro"
    assert tex_path.with_suffix(".log").is_file()


@needs_tex
def test_missing_bibliography_entry_is_reported_as_warning(tex_dir: Path) -> None:
    (tex_dir / "refs.bib").write_text(render_bibtex(assign_citation_keys(records()[:1])))
    tex_path = tex_dir / "paper.tex"
    tex_path.write_text(
        render_document(
            title="T", abstract="", body="See \\citet{lee2020} and \\cite{nobody1999}.", bibliography_stem="refs"
        )
    )
    result = compile_paper(tex_path, bibliography=True)
    assert len(result.warnings) == 1 and "nobody1999" in result.warnings[0]


@needs_tex
def test_bib_syntax_error_raises(tex_dir: Path) -> None:
    (tex_dir / "refs.bib").write_text("@article{broken,\n  title = {Unclosed,\n")
    tex_path = tex_dir / "paper.tex"
    tex_path.write_text(render_document(title="T", abstract="", body="\\cite{broken}", bibliography_stem="refs"))
    with pytest.raises(LatexCompileError, match="bibtex failed") as caught:
        compile_paper(tex_path, bibliography=True)
    assert "\n" not in str(caught.value)


@needs_tex
@pytest.mark.parametrize("target", ["/etc/hostname", "absolute-secret", "relative-secret"])
def test_reading_files_outside_the_directory_is_refused(tex_dir: Path, target: str) -> None:
    secret = tex_dir.parent / "secret.tex"
    secret.write_text("SECRETMARKER\n")
    path = {"absolute-secret": str(secret), "relative-secret": "../secret.tex"}.get(target, target)
    content = Path(path).read_text().strip() if target == "/etc/hostname" else "SECRETMARKER"
    tex_path = tex_dir / "paper.tex"
    tex_path.write_text(
        render_document(title="T", abstract="", body=f"Leak: [\\input{{{path}}}]", bibliography_stem=None)
    )
    try:
        result = compile_paper(tex_path, bibliography=False)
    except LatexCompileError as error:
        # paranoid mode makes the file invisible to TeX
        assert re.fullmatch(r"paper\.tex:\d+: LaTeX Error: File `.*' not found\.", str(error))
        return
    text = " ".join(page.extract_text() for page in PdfReader(result.pdf_path).pages)
    assert f"[{content}]" not in text.replace(" ", "")


@needs_tex
def test_endless_macro_loop_times_out(tex_dir: Path) -> None:
    tex_path = tex_dir / "paper.tex"
    tex_path.write_text(render_document(title="T", abstract="", body="\\def\\x{\\x}\\x", bibliography_stem=None))
    with pytest.raises(LatexCompileError, match="timed out") as caught:
        compile_paper(tex_path, bibliography=False, timeout_per_pass=3)
    assert caught.value.passes == ["pdflatex"]  # the first pass is killed; no further pass starts


@needs_tex
def test_stale_outputs_of_an_earlier_run_are_removed(tex_dir: Path) -> None:
    tex_path = tex_dir / "paper.tex"
    (tex_dir / "build" / "paper").mkdir(parents=True)
    (tex_dir / "build" / "paper" / "paper.aux").write_text("\\relax \\garbage{")  # left by a killed run
    tex_path.write_text(render_document(title="T", abstract="", body="Fine.", bibliography_stem=None))
    assert compile_paper(tex_path, bibliography=False).pdf_path.is_file()


@needs_tex
@pytest.mark.parametrize("target", ["theory.json", "../../theory.json"])
def test_model_latex_cannot_overwrite_run_artifacts(tex_dir: Path, target: str) -> None:
    artifact = tex_dir / "theory.json"
    artifact.write_text('{"goal": "kept"}\n')
    tex_path = tex_dir / "paper.tex"
    body = f"\\newwrite\\out\\immediate\\openout\\out={target}\\immediate\\write\\out{{PWNED}}\\immediate\\closeout\\out Done."
    tex_path.write_text(render_document(title="T", abstract="", body=body, bibliography_stem=None))
    with contextlib.suppress(LatexCompileError):  # refusing the write is as good as redirecting it
        compile_paper(tex_path, bibliography=False)
    assert artifact.read_text() == '{"goal": "kept"}\n'


@needs_tex
def test_shell_escape_runs_nothing(tex_dir: Path) -> None:
    tex_path = tex_dir / "paper.tex"
    body = "\\immediate\\write18{touch PWNED-BY-WRITE18} Text."
    tex_path.write_text(render_document(title="T", abstract="", body=body, bibliography_stem=None))
    assert compile_paper(tex_path, bibliography=False).pdf_path.is_file()
    assert not list(tex_dir.parent.rglob("PWNED-BY-WRITE18"))


@needs_tex
def test_a_failed_compile_leaves_the_earlier_pdf_as_it_was(tex_dir: Path) -> None:
    tex_path = tex_dir / "paper.tex"
    tex_path.write_text(render_document(title="T", abstract="", body="First version.", bibliography_stem=None))
    earlier = compile_paper(tex_path, bibliography=False).pdf_path.read_bytes()
    tex_path.write_text(render_document(title="T", abstract="", body="\\undefinedmacro", bibliography_stem=None))
    with pytest.raises(LatexCompileError, match="Undefined control sequence"):
        compile_paper(tex_path, bibliography=False)
    assert (tex_dir / "paper.pdf").read_bytes() == earlier
    assert "Undefined control sequence" in tex_path.with_suffix(".log").read_text(encoding="latin-1")


def test_parse_latex_log_errors_and_warnings() -> None:
    log = "\n".join(
        [
            "(./paper.tex",
            "./paper.tex:12: Undefined control sequence.",
            "l.12 Some text \\foo",
            "                  bar",
            "./paper.tex:30: LaTeX Error: Environment lemmax undefined.",
            "Package natbib Warning: Citation `smith2020' on page 1 undefined on input line 7.",
            "LaTeX Warning: Reference `eq:1' on page 2 undefined on input line 9.",
            "LaTeX Font Warning: Font shape `T1/lmr/m/sc' undefined",
            "! LaTeX Error: File `missing.sty' not found.",
            "Enter file name: ",
            "./paper.tex:41: Emergency stop.",
            "./paper.tex:41:  ==> Fatal error occurred, no output PDF file produced!",
        ]
    )
    errors, warnings = parse_latex_log(log)
    assert errors == [
        "paper.tex:12: Undefined control sequence \\foo",
        "paper.tex:30: LaTeX Error: Environment lemmax undefined.",
        "paper.tex:41: LaTeX Error: File `missing.sty' not found.",
    ]
    assert warnings == [
        "Package natbib Warning: Citation `smith2020' on page 1 undefined on input line 7.",
        "LaTeX Warning: Reference `eq:1' on page 2 undefined on input line 9.",
    ]


def test_parse_latex_log_of_a_clean_run_is_empty() -> None:
    assert parse_latex_log("This is pdfTeX\nOutput written on paper.pdf (1 page).\n") == ([], [])


def test_preamble_defines_exactly_the_listed_theorem_environments() -> None:
    declared = re.findall(r"\\newtheorem\*?\{([a-z]+)\}", preamble_text())
    assert set(THEOREM_ENVIRONMENTS) == {name for name in declared if not name.startswith("lemmata")}
    assert set(EXTRA_ENVIRONMENTS) <= set(THEOREM_ENVIRONMENTS)


def test_render_document_structure() -> None:
    tex = render_document(title="A & B_1", abstract="", body="Body.", bibliography_stem=None)
    assert "\\title{A \\& B\\_1}" in tex and "\\author{lemmata}" in tex and "\\date{}" in tex
    assert "\\begin{abstract}" not in tex and "\\bibliography" not in tex
    assert tex.index("\\maketitle") < tex.index("Body.") < tex.index("\\end{document}")
    with_bib = render_document(title="T", abstract="Short.", body="B", bibliography_stem="refs")
    assert "\\begin{abstract}\nShort.\n\\end{abstract}" in with_bib
    assert "\\bibliographystyle{plainnat}\n\\bibliography{refs}\n\\end{document}" in with_bib


@pytest.mark.parametrize("stem", ["refs.bib", "../refs", "my refs", ""])
def test_render_document_rejects_unsafe_bibliography_stems(stem: str) -> None:
    with pytest.raises(ValueError):
        render_document(title="T", abstract="", body="B", bibliography_stem=stem)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("50% & $5 #1 a_b", "50\\% \\& \\$5 \\#1 a\\_b", id="specials"),
        pytest.param("{x} ~ ^ \\", "\\{x\\} \\textasciitilde{} \\textasciicircum{} \\textbackslash{}", id="braces"),
        pytest.param("α ≤ 1", "{\\ensuremath{\\alpha}} \\ensuremath{\\leq} 1", id="unicode-math"),
    ],
)
def test_escape_latex_text(text: str, expected: str) -> None:
    assert escape_latex_text(text) == expected
