"""The experiment's plots as figures of the paper, placed by us, never by the model.

Each check with a plot becomes a figure with a caption giving its lemma, trials, violations,
rate and verdict. The figures go at the end of the model's experiments section (a section
whose title speaks of experiments, numerical checks or simulations); when it wrote none, into
a section of ours, before its Limitations section or at the end of the body.
"""

from __future__ import annotations

import re

from lemmata.artifacts import Experiment, LemmaCheck
from lemmata.latex.compile import FIGURES_DIRECTORY
from lemmata.latex.document import escape_latex_text

EXPERIMENTS_HEADING = re.compile(r"\\section\*?\{[^}]*(?:experiment|numerical|simulation)[^}]*\}", re.IGNORECASE)
LIMITATIONS_HEADING = re.compile(r"\\section\*?\{\s*Limitations\s*\}", re.IGNORECASE)
ANY_SECTION = re.compile(r"\\section\*?\{")
OUR_SECTION = "\\section{Numerical experiments}"
FIGURE_WIDTH = "0.8\\linewidth"
#: What add_plots writes; anything else in a hand-edited artifact is not put into LaTeX.
PLOT_PATH = re.compile(re.escape(FIGURES_DIRECTORY) + r"/[A-Za-z0-9_-]+\.pdf")


def add_experiment_figures(body: str, experiment: Experiment) -> str:
    figures = [experiment_figure(check) for check in experiment.checks if has_figure(check)]
    if not figures:
        return body
    block = "\n\n".join(figures)
    section = EXPERIMENTS_HEADING.search(body)
    if section:
        following = ANY_SECTION.search(body, section.end())
        end = following.start() if following else len(body)
        return body[:end].rstrip() + f"\n\n{block}\n\n" + body[end:].lstrip()
    ours = (
        f"{OUR_SECTION}\nEach lemma left at low confidence was tested on random instances; "
        f"the figures show the rate at which its conclusion failed.\n\n{block}\n"
    )
    limitations = LIMITATIONS_HEADING.search(body)
    if limitations:
        return body[: limitations.start()].rstrip() + f"\n\n{ours}\n" + body[limitations.start() :]
    return body.rstrip() + f"\n\n{ours}"


def has_figure(check: LemmaCheck) -> bool:
    return check.outcome == "ran" and bool(PLOT_PATH.fullmatch(check.plot))


def figure_label(check: LemmaCheck) -> str:
    return "fig:check-" + re.sub(r"[^A-Za-z0-9_-]", "-", check.lemma_id)


def test_in_words(check: LemmaCheck) -> str:
    """Who wrote the test, and so what its count is worth. A model-written test of a false lemma
    found 0 violations in 10000 trials ("the sum of two integers is even if one of them is even",
    the embedded main command 2026-11-26): a clean count of an unchecked test is weak evidence."""
    if check.author == "lemmata":
        return "The test is the lemma's formal statement, evaluated exactly by lemmata."
    return (
        "The test is code the model wrote from the prose statement, not checked to test what the "
        "lemma says: few violations are weak evidence."
    )


def experiment_figure(check: LemmaCheck) -> str:
    lemma = escape_latex_text(check.lemma_id)
    rate = 100 * (check.violation_rate or 0.0)
    by = f", by {escape_latex_text(check.x_label or 'x')}" if check.series else ""
    verdict = (
        "above the 1\\% threshold (dashed): the lemma is numerically suspect"
        if check.numerically_suspect
        else "within the 1\\% threshold (dashed)"
    )
    caption = (
        f"Numerical check of Lemma {lemma}: violation rate over {check.trials} random trials{by}. "
        f"{check.violations} violations, rate {rate:.2f}\\%, {verdict}. {test_in_words(check)}"
    )
    return (
        "\\begin{figure}[htbp]\n\\centering\n"
        f"\\includegraphics[width={FIGURE_WIDTH}]{{{check.plot}}}\n"
        f"\\caption{{{caption}}}\n\\label{{{figure_label(check)}}}\n\\end{{figure}}"
    )
