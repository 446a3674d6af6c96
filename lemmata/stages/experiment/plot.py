"""A plot of each numerical check: its violation rate against the 1% threshold, as a PDF.

Drawn with pgfplots (TeX Live, which lemmata needs anyway: no new dependency) in a standalone
document compiled here, once per tested lemma (one pdflatex pass, about 0.15 s with its preamble
preloaded, formats.py; 0.35 s without), as soon as its
check has run (`PlotDrawer`). The paper then includes a finished PDF: its own four-pass compile
stays as fast as before, and the delivered .tex compiles without pgfplots. The PDF is
byte-for-byte reproducible: no date, no document ID, no pdfTeX banner.
"""

from __future__ import annotations

import os
import re
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from lemmata.artifacts import Experiment, LemmaCheck
from lemmata.isolation.box import BoxUnavailable
from lemmata.latex import formats
from lemmata.latex.compile import FIGURES_DIRECTORY, PDFLATEX_FLAGS, parse_latex_log
from lemmata.latex.document import escape_latex_text
from lemmata.latex.formats import Preamble
from lemmata.latex.texbox import LOG_TAIL_BYTES, PDF_MAX_BYTES, TexBoxError, run_tex_once

THRESHOLD_PERCENT = 1.0
PLOT_TIMEOUT = 60.0
#: x spanning more than this factor (all positive) is drawn on a logarithmic axis.
LOG_AXIS_SPAN = 1000.0

#: The lines before \begin{document}, read once per machine (formats.py). The PDF settings that
#: make the file reproducible come after it (a format keeps no trailer ID), set \global: the
#: document environment is a group, and a local setting there left the dates in.
PLOT_PREAMBLE = Preamble(
    "lemmata-plot",
    r"""\documentclass[border=4pt]{standalone}
\usepackage[T1]{fontenc}
\usepackage{lmodern}
\usepackage{pgfplots}
\pgfplotsset{compat=1.18}
""",
)
PLOT_TEMPLATE = (
    PLOT_PREAMBLE.text.replace("%", "%%")
    + r"""\begin{document}
\global\pdfinfoomitdate=1
\pdftrailerid{}
\global\pdfsuppressptexinfo=-1
\begin{tikzpicture}
\begin{axis}[width=11cm, height=6cm, title={%(title)s}, xlabel={%(xlabel)s}, ylabel={violation rate (\%%)},
  xmin=%(xmin)s, xmax=%(xmax)s, ymin=%(ymin)s, ymax=%(ymax)s,%(xmode)s
  scaled ticks=false, yticklabel style={/pgf/number format/fixed},
  legend style={font=\footnotesize, at={(0.5,1.03)}, anchor=south, legend columns=2, draw=none},
  title style={yshift=14pt}]
\addplot[color=blue!70!black, mark=*, mark size=%(mark_size)s, thick] coordinates {%(points)s};
\addlegendentry{%(series_name)s}
\addplot[color=red!80!black, dashed, thick] coordinates {(%(xmin)s,%(threshold)s) (%(xmax)s,%(threshold)s)};
\addlegendentry{1\%% threshold}
\end{axis}
\end{tikzpicture}
\end{document}
"""
)


class PlotError(Exception):
    """pdflatex could not draw the plot; the check keeps its numbers without one."""


def plot_points(check: LemmaCheck) -> tuple[list[tuple[float, float]], str]:
    """(x, violation rate in percent) points and the x axis label: per series point, or the
    overall rate at x = the number of trials when the test printed no series."""
    if check.series:
        points = [(p.x, 100.0 * p.violations / p.trials) for p in check.series]
        return points, check.x_label or "x"
    return [(float(check.trials), 100.0 * check.violations / max(check.trials, 1))], "trials"


def plot_document(check: LemmaCheck) -> str:
    """The standalone LaTeX source of `check`'s plot."""
    points, x_label = plot_points(check)
    xs = [x for x, _ in points]
    logarithmic = min(xs) > 0 and max(xs) / min(xs) > LOG_AXIS_SPAN
    xmin, xmax = _x_range(xs, logarithmic, bool(check.series))
    ymax = min(105.0, max(2 * THRESHOLD_PERCENT, 1.15 * max(y for _, y in points)))
    rate = 100.0 * check.violations / max(check.trials, 1)
    values = {
        "title": f"Lemma {escape_latex_text(check.lemma_id)}: {check.violations} of {check.trials} trials "
        f"violate it ({_number(rate)}\\%)",
        "xlabel": escape_latex_text(x_label),
        # A little below zero, so that a rate of 0 is not drawn half under the axis.
        "xmin": _number(xmin),
        "xmax": _number(xmax),
        "ymin": _number(-0.03 * ymax),
        "ymax": _number(ymax),
        "mark_size": "1.5pt" if len(points) > 1 else "2.5pt",
        "xmode": " xmode=log," if logarithmic else "",
        "points": " ".join(f"({_number(x)},{_number(y)})" for x, y in points),
        "series_name": f"violation rate by {escape_latex_text(x_label)}" if check.series else "overall violation rate",
        "threshold": _number(THRESHOLD_PERCENT),
    }
    return PLOT_TEMPLATE % values


def _x_range(xs: list[float], logarithmic: bool, series: bool) -> tuple[float, float]:
    low, high = min(xs), max(xs)
    if not series:  # one point at x = trials: start the axis at zero
        return 0.0, 1.25 * high
    if logarithmic:
        return low / 1.5, high * 1.5
    margin = (high - low) * 0.05 or max(abs(low) * 0.5, 1.0)
    return low - margin, high + margin


def _number(value: float) -> str:
    """A number pgfplots reads: plain decimals, or e-notation for very large or small ones."""
    text = f"{value:.10g}"
    return text if "e" not in text else f"{value:.6e}"


def draw_plot(check: LemmaCheck, pdf_path: Path, timeout: float = PLOT_TIMEOUT) -> None:
    """Compile the plot of `check` to `pdf_path` in a TeX box, its preamble preloaded (formats.py);
    PlotError with pdflatex's first error."""
    document = plot_document(check)
    formats.with_format(PLOT_PREAMBLE, document, lambda preloaded: _draw_plot(document, pdf_path, timeout, preloaded))


def _draw_plot(document: str, pdf_path: Path, timeout: float, preloaded: Path | None) -> None:
    files: dict[str, Path | str] = {"plot.tex": document}
    if preloaded is not None:
        files[preloaded.name] = preloaded
    try:
        returncode, timed_out, found = run_tex_once(
            files,
            ["pdflatex", *PDFLATEX_FLAGS, *formats.pdflatex_options(preloaded), "plot.tex"],
            timeout,
            {"plot.pdf": (PDF_MAX_BYTES, False), "plot.log": (LOG_TAIL_BYTES, True)},
        )
    except (TexBoxError, BoxUnavailable) as error:
        raise PlotError(f"TeX could not run: {error}") from None
    if returncode != 0 and preloaded is not None and found["plot.log"] is None:
        raise formats.FormatNotLoaded("plot")
    if timed_out:
        raise PlotError(f"pdflatex timed out after {timeout:g} s on plot.tex")
    if returncode != 0 or found["plot.pdf"] is None:
        errors, _ = parse_latex_log((found["plot.log"] or b"").decode("latin-1"))
        raise PlotError(errors[0] if errors else f"pdflatex exited with status {returncode}")
    pdf_path.parent.mkdir(parents=True, exist_ok=True)
    pdf_path.write_bytes(found["plot.pdf"])


def plot_file_name(lemma_id: str, taken: set[str], suffix: str = "") -> str:
    """A file name for the lemma's plot that is safe in \\includegraphics and not yet taken."""
    stem = (re.sub(r"[^A-Za-z0-9_-]", "-", lemma_id) or "lemma") + suffix
    name, number = f"{stem}.pdf", 2
    while name in taken:
        name, number = f"{stem}-{number}.pdf", number + 1
    return name


def add_plots(experiment: Experiment, run_dir: Path, version: int = 1) -> Experiment:
    """The experiment with a plot for each check that ran, drawn into `run_dir`/figures; a plot
    that cannot be drawn is noted on its check and left out. A rewritten version's plots are
    named `<lemma>-v<n>.pdf`, so that every version's figures sit together in the output folder."""
    with PlotDrawer(run_dir, version) as drawer:
        for check in experiment.checks:
            drawer.submit(check)
        return drawer.finish(experiment)


class PlotDrawer:
    """Draws each check's plot as soon as the check has run, one TeX box per core, while the
    experiment agent goes on with the next lemma: a plot costs the run no time of its own but the
    last one's (a plot is a pdflatex of about 0.35 s). `submit` every check in order, then `finish`."""

    def __init__(self, run_dir: Path, version: int = 1) -> None:
        self.figures = Path(run_dir) / FIGURES_DIRECTORY
        self.version = version
        self._pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 1)
        self._taken: set[str] = set()
        self._drawings: list[tuple[str, Future[PlotError | None]] | None] = []

    def __enter__(self) -> PlotDrawer:
        return self

    def __exit__(self, *_: object) -> None:
        self._pool.shutdown(wait=True)

    def submit(self, check: LemmaCheck) -> None:
        if check.outcome != "ran":
            self._drawings.append(None)
            return
        self.figures.mkdir(parents=True, exist_ok=True)
        name = plot_file_name(check.lemma_id, self._taken, f"-v{self.version}" if self.version > 1 else "")
        self._taken.add(name)
        self._drawings.append((name, self._pool.submit(_draw, check, self.figures / name)))

    def discard(self) -> None:
        """Remove the plots drawn so far: the experiment that asked for them is not kept."""
        for drawing in self._drawings:
            if drawing is not None:
                drawing[1].result()
                (self.figures / drawing[0]).unlink(missing_ok=True)
        self._taken, self._drawings = set(), []

    def finish(self, experiment: Experiment) -> Experiment:
        """`experiment` with the plots of its checks (the ones submitted, in the same order)."""
        self.figures.mkdir(parents=True, exist_ok=True)
        if len(self._drawings) != len(experiment.checks):  # the checks are not the ones drawn: draw them now
            self.discard()
            for check in experiment.checks:
                self.submit(check)
        checks = []
        for check, drawing in zip(experiment.checks, self._drawings):
            if drawing is None:
                checks.append(check)
                continue
            name, future = drawing
            problem = future.result()
            if problem is not None:
                checks.append(check.model_copy(update={"notes": [*check.notes, f"no plot: {problem}"]}))
            else:
                checks.append(check.model_copy(update={"plot": f"{FIGURES_DIRECTORY}/{name}"}))
        return experiment.model_copy(update={"checks": checks})


def _draw(check: LemmaCheck, pdf_path: Path) -> PlotError | None:
    try:
        draw_plot(check, pdf_path)
    except PlotError as error:
        return error
    return None
