"""Compile a paper with pdflatex and bibtex in the TeX box, and report errors in one line."""

from __future__ import annotations

import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from lemmata.artifacts import CompileReport
from lemmata.errors import LemmataError
from lemmata.files import write_bytes_atomically
from lemmata.isolation.box import BoxUnavailable
from lemmata.latex import formats
from lemmata.latex.document import PAPER_PREAMBLE, support_files
from lemmata.latex.texbox import LOG_TAIL_BYTES, PDF_MAX_BYTES, TexBox, TexBoxError, open_tex_box

PDFLATEX_FLAGS = ("-no-shell-escape", "-interaction=nonstopmode", "-halt-on-error", "-file-line-error")
BUILD_DIRECTORY = "build"
#: The specification's sequence. The first two pdflatex passes run with -draftmode: they write the
#: .aux bibtex and the next pass read, and no PDF (0.02-0.03 s less each, 2 cores, 2026-11-29).
COMPILE_STEPS = ("pdflatex", "bibtex", "pdflatex", "pdflatex")
#: Figures beside the .tex (the experiment's plots), copied along into the build directory.
FIGURES_DIRECTORY = "figures"

_FILE_LINE_ERROR = re.compile(r"^(?P<file>[^\s:][^:\n]*\.(?:tex|sty|cls|bbl|aux|def)):(?P<line>\d+): (?P<message>.*)$")
_FATAL_NOISE = ("==> Fatal error occurred", "Emergency stop")
# Each names its label or citation; the "There were undefined ..." summaries add nothing.
_WARNING_PATTERNS = (
    re.compile(r"Warning: (?:Citation|Reference) `[^']*' on page \S+ undefined"),
    re.compile(r"Warning: Label `[^']*' multiply defined"),
    re.compile(r"Warning: Label\(s\) may have changed"),
    re.compile(r"Warning: Empty `thebibliography'"),
    re.compile(r"^Package lemmata Warning:"),
)
_NO_BIBDATA = "I found no \\bibdata command"
_NO_CITATIONS = "I found no \\citation commands"


class LatexCompileError(LemmataError):
    """pdflatex or bibtex failed; the message is one line naming file:line and the error.
    `errors` holds every error the log names, `passes` the passes that ran."""

    def __init__(self, message: str, errors: list[str] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or [message]
        self.passes: list[str] = []


@dataclass(frozen=True)
class CompileResult:
    """What a successful compile produced."""

    pdf_path: Path
    passes: list[str]
    seconds: float
    warnings: list[str] = field(default_factory=list)
    pass_seconds: list[float] = field(default_factory=list)  # one per pass, in order


def parse_latex_log(log_text: str) -> tuple[list[str], list[str]]:
    """(errors, warnings) of a pdflatex log: errors as 'file:line: message', warnings as lines."""
    lines = log_text.splitlines()
    errors = []
    for index, line in enumerate(lines):
        if _is_error(line):
            errors.append(_describe_error(lines, index))
        elif line.startswith("! ") and not _is_noise(line):
            errors.append(_locate_bang_error(lines, index))
    warnings = [line.strip() for line in lines if any(p.search(line) for p in _WARNING_PATTERNS)]
    return errors, warnings


def _locate_bang_error(lines: list[str], index: int) -> str:
    """A `! message` error (e.g. a missing file) located by the `file:line: Emergency stop` after it."""
    message = lines[index][2:].strip()
    for line in lines[index + 1 : index + 12]:
        match = _FILE_LINE_ERROR.match(line)
        if match and _is_noise(line):
            return f"{Path(match.group('file')).name}:{match.group('line')}: {message}"
    return message


def _is_noise(line: str) -> bool:
    """Follow-up lines of a fatal error that say nothing about its cause."""
    return any(noise in line for noise in _FATAL_NOISE)


def _is_error(line: str) -> bool:
    """A `file:line: message` error line (not the fatal-error trailer)."""
    return bool(_FILE_LINE_ERROR.match(line)) and not _is_noise(line)


def _describe_error(lines: list[str], index: int) -> str:
    """One line: file:line: message, naming the culprit of an undefined control sequence."""
    match = _FILE_LINE_ERROR.match(lines[index])
    assert match is not None
    name = Path(match.group("file")).name
    message = match.group("message").strip()
    if message.startswith("Undefined control sequence"):
        culprit = _culprit(lines[index + 1 : index + 4])
        message = "Undefined control sequence" + (f" {culprit}" if culprit else "")
    return f"{name}:{match.group('line')}: {message}"


def _culprit(context: list[str]) -> str:
    """The control sequence TeX was reading: the last one on the first context line."""
    for line in context:
        if line.strip():
            names = re.findall(r"\\[A-Za-z@]+|\\.", line)
            return names[-1] if names else ""
    return ""


def compile_paper(
    tex_path: Path, *, bibliography: bool, timeout_per_pass: float = 60.0, figures: Path | None = None
) -> CompileResult:
    """pdflatex, bibtex, pdflatex, pdflatex; raise LatexCompileError on failure.

    TeX runs in the TeX box (`texbox.py`): it sees the TeX trees and a build directory on a
    size-capped tmpfs, which starts as a copy of `build/<stem>/` beside the .tex (the .tex, the
    .bib files, our support files and the figures). Only a successful compile replaces
    `<stem>.pdf` beside the .tex (atomically): a failed one leaves the earlier PDF as it was and
    removes `build/<stem>/`. The end of the final log is written beside the .tex.
    `figures`: where the paper's plots are (default `figures/` beside the .tex; a rewritten
    version has its own). A paper with lemmata's own preamble is compiled with that preamble
    preloaded (formats.py); a format TeX cannot load is forgotten and the paper compiled without.
    """
    tex_path = Path(tex_path).resolve()
    figures = figures or tex_path.parent / FIGURES_DIRECTORY
    tex = tex_path.read_text(encoding="utf-8", errors="replace")
    return formats.with_format(
        PAPER_PREAMBLE, tex, lambda preloaded: _compile(tex_path, bibliography, timeout_per_pass, figures, preloaded)
    )


def _compile(
    tex_path: Path, bibliography: bool, timeout_per_pass: float, figures: Path, preloaded: Path | None
) -> CompileResult:
    build_tex = _prepare_build_directory(tex_path, figures, preloaded)
    options = formats.pdflatex_options(preloaded)
    started = time.monotonic()
    passes: list[str] = []
    pass_seconds: list[float] = []
    try:
        with open_tex_box(build_tex.parent) as tex:
            try:
                for step, command in enumerate(COMPILE_STEPS):
                    passes.append(command)
                    pass_started = time.monotonic()
                    if command == "pdflatex":
                        last = step == len(COMPILE_STEPS) - 1
                        _run_pdflatex(tex, build_tex.name, timeout_per_pass, options, draft=not last)
                    else:
                        _run_bibtex(tex, build_tex.stem, timeout_per_pass, bibliography)
                    pass_seconds.append(round(time.monotonic() - pass_started, 3))
            finally:
                _keep_log(tex, tex_path)
            pdf = tex.read(f"{build_tex.stem}.pdf", PDF_MAX_BYTES)
    except (TexBoxError, BoxUnavailable) as error:
        shutil.rmtree(build_tex.parent, ignore_errors=True)
        failure = LatexCompileError(f"{tex_path.name}: TeX could not run: {error}")
        failure.passes = passes
        raise failure from None
    except LatexCompileError as error:
        shutil.rmtree(build_tex.parent, ignore_errors=True)
        error.passes = passes
        raise
    except formats.FormatNotLoaded:
        shutil.rmtree(build_tex.parent, ignore_errors=True)
        raise
    if pdf is None:
        raise LatexCompileError(f"{tex_path.name}: pdflatex reported success but wrote no PDF")
    _, warnings = parse_latex_log(tex_path.with_suffix(".log").read_text(encoding="latin-1"))
    pdf_path = tex_path.with_suffix(".pdf")
    write_bytes_atomically(pdf_path, pdf)
    return CompileResult(pdf_path, passes, round(time.monotonic() - started, 3), warnings, pass_seconds)


def _keep_log(tex: TexBox, tex_path: Path) -> None:
    """The end of the build's log, beside the .tex (the whole of any ordinary log)."""
    log = tex.read(tex_path.with_suffix(".log").name, LOG_TAIL_BYTES, tail=True)
    if log is not None:
        write_bytes_atomically(tex_path.with_suffix(".log"), log)


def _prepare_build_directory(tex_path: Path, figures_dir: Path, preloaded: Path | None = None) -> Path:
    """A fresh `build/<stem>/` with the .tex, the .bib files beside it, our support files, the
    preloaded preamble's format if any, and the PDF figures of `figures_dir` (as `figures/`).

    Fresh, because outputs of an earlier (possibly killed) run could break the first pass or
    make a failed compile look like a new PDF."""
    build = tex_path.parent / BUILD_DIRECTORY / tex_path.stem
    shutil.rmtree(build, ignore_errors=True)
    build.mkdir(parents=True)
    for source in [tex_path, *sorted(tex_path.parent.glob("*.bib")), *support_files(), *filter(None, [preloaded])]:
        shutil.copyfile(source, build / source.name)
    figures = sorted(Path(figures_dir).glob("*.pdf"))
    if figures:  # the experiment's plots, which the paper includes as figures/<name>.pdf
        (build / FIGURES_DIRECTORY).mkdir()
        for figure in figures:
            shutil.copyfile(figure, build / FIGURES_DIRECTORY / figure.name)
    return build / tex_path.name


def _run_pdflatex(tex: TexBox, name: str, timeout: float, options: tuple[str, ...] = (), draft: bool = False) -> None:
    """One pdflatex pass (`draft`: no PDF, only the .aux and the log); a non-zero exit raises with
    the first error from the log."""
    returncode, timed_out = tex.run(
        ["pdflatex", *(("-draftmode",) if draft else ()), *PDFLATEX_FLAGS, *options, name], timeout
    )
    if timed_out:
        raise LatexCompileError(f"pdflatex timed out after {timeout:g} s on {name} (an endless macro loop?)")
    if returncode == 0:
        return
    log = tex.read(str(Path(name).with_suffix(".log")), LOG_TAIL_BYTES, tail=True)
    if log is None and options:
        raise formats.FormatNotLoaded(name)
    log = log or b""
    errors, _ = parse_latex_log(log.decode("latin-1"))
    detail = errors[0] if errors else f"{name}: pdflatex exited with status {returncode}"
    raise LatexCompileError(_one_line(detail), [_one_line(error) for error in errors] or None)


def _run_bibtex(tex: TexBox, stem: str, timeout: float, bibliography: bool) -> None:
    """bibtex; without a bibliography its 'no \\bibdata' complaint is expected and ignored."""
    returncode, timed_out = tex.run(["bibtex", stem], timeout)
    if timed_out:
        raise LatexCompileError(f"bibtex timed out after {timeout:g} s on {stem}")
    if returncode <= 1:  # 1: warnings only, e.g. a missing field
        return
    blg_text = (tex.read(f"{stem}.blg", LOG_TAIL_BYTES) or b"").decode("latin-1")
    if not bibliography and _NO_BIBDATA in blg_text:
        return
    if _NO_CITATIONS in blg_text:
        return  # a bibliography nothing cites (every model citation was unknown): no entries to list
    raise LatexCompileError(_one_line(f"{stem}: bibtex failed: {_bibtex_error(blg_text)}"))


def _bibtex_error(blg_text: str) -> str:
    """The first error line of a .blg log, with the line that follows it (the location)."""
    lines = blg_text.splitlines()
    for index, line in enumerate(lines):
        if "---" in line or line.startswith("I couldn't") or "error message" in line:
            return " ".join(lines[index : index + 2])
    return "see the .blg log"


def _one_line(text: str) -> str:
    """Collapse whitespace so the message is a single line."""
    return " ".join(text.split())


_UNDEFINED = re.compile(r"Warning: (?P<kind>Citation|Reference) `(?P<name>[^']*)' on page \S+ undefined")


def undefined_names(warnings: list[str], kind: str) -> list[str]:
    """The citation keys (kind "Citation") or labels ("Reference") the warnings call undefined."""
    names = (match["name"] for warning in warnings for match in _UNDEFINED.finditer(warning) if match["kind"] == kind)
    return list(dict.fromkeys(names))


def success_report(tex_path: Path, result: CompileResult) -> CompileReport:
    return CompileReport(
        tex_file=Path(tex_path).name,
        ok=True,
        pdf_file=result.pdf_path.name,
        passes=list(result.passes),
        seconds=round(result.seconds, 3),
        warnings=list(result.warnings),
        undefined_citations=undefined_names(result.warnings, "Citation"),
        undefined_references=undefined_names(result.warnings, "Reference"),
    )


def failure_report(tex_path: Path, error: LatexCompileError) -> CompileReport:
    return CompileReport(tex_file=Path(tex_path).name, ok=False, passes=list(error.passes), errors=list(error.errors))
