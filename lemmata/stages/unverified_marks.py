"""What the paper says about its unverified steps, written by lemmata, never by the model.

The model's own markers (the `\\unverified` command or the literal text) are removed from
everything it wrote: a model marks too much, too little, or twice. lemmata renders every lemma
itself, so each lemma that is not verified gets exactly one marker, right after its statement;
the Limitations section names each of them with the reason its checks gave, and the reasons the
main result is not established. A lemma the numerical tests contradict (`numerically_suspect`)
gets a bold warning with its figures, whatever the model wrote about it.
"""

from __future__ import annotations

import re

from lemmata.artifacts import Experiment, ProvedLemma, Theory
from lemmata.latex.document import escape_latex_text
from lemmata.latex.proof_text import fragment_latex, lemma_label
from lemmata.stages.paper_fragments import Fragment, Item

MARKER = "\\unverified{}"
MODEL_MARKERS = re.compile(r"\\unverified(?![A-Za-z@])(?:\s*\{\s*\})?[ \t]*|\[Unverified step\][ \t]*", re.IGNORECASE)
LIMITATIONS_HEADING = "\\section{Limitations}"


def remove_model_markers(text: str) -> str:
    """`text` without the markers a model wrote itself."""
    return MODEL_MARKERS.sub("", text)


def unverified_lemmas(theory: Theory) -> list[ProvedLemma]:
    return [lemma for lemma in theory.lemmas if not lemma.verified]


def needs_limitations(theory: Theory) -> bool:
    return bool(unverified_lemmas(theory)) or not theory.main_result_established


def issues_fragment(key: str, theory: Theory) -> Fragment:
    """`theory.main_result_issues()` as one sentence (a consistency issue may hold the model's math)."""
    source = "; ".join(theory.main_result_issues()) + "."
    return Fragment(key, fragment_latex(source, ()), source)


def reason_fragment(key: str, lemma: ProvedLemma) -> Fragment:
    """How the checks decided, in their words (a gap may quote the prover's math), as one sentence."""
    source = (
        lemma.verification.strip().rstrip(".")
        or ("accepted by its checks" if lemma.verified else "its checks did not accept the proof")
    ) + "."
    return Fragment(key, fragment_latex(source, ()), source)


def limitations_section(theory: Theory) -> list[Item]:
    """The Limitations section: every unverified lemma and why, then the main result's issues."""
    if not needs_limitations(theory):
        return []
    items: list[Item] = [LIMITATIONS_HEADING]
    unverified = unverified_lemmas(theory)
    if unverified:
        items += ["The following steps are not verified and should be read with care.", "\\begin{itemize}"]
        for lemma in unverified:
            items += [f"  \\item {_limitation_head(lemma)}", reason_fragment(f"limitation:{lemma.id}", lemma)]
        items.append("\\end{itemize}")
    if not theory.main_result_established:
        items += ["Consequently, the main result is not established:", issues_fragment("limitations:issues", theory)]
    return items


def _limitation_head(lemma: ProvedLemma) -> str:
    state = (
        "its proof failed"
        if lemma.status == "failed"
        else f"{lemma.status.replace('_', ' ')}, confidence {lemma.confidence:.2f}"
    )
    return f"Lemma~\\ref{{{lemma_label(lemma.id)}}} ({escape_latex_text(lemma.id)}; {escape_latex_text(state)}):"


def add_numerical_warnings(body: str, experiment: Experiment) -> str:
    """A bold warning per `numerically_suspect` lemma, with its violations, at the end of the body."""
    suspect = [check for check in experiment.checks if check.numerically_suspect]
    if not suspect:
        return body
    warnings = "\n\n".join(
        f"\\textbf{{Warning: numerical tests contradict Lemma {escape_latex_text(check.lemma_id)}.}} "
        f"{check.violations} of {check.trials} random trials violate it (rate {100 * (check.violation_rate or 0):.1f}\\%); "
        # The test is code the model wrote, itself unchecked: the embedded model's test of "a and
        # b even => a + b even" counted the trials where the sum WAS even as violations (779 of
        # 3000; the README's main command, 2026-11-25). The paper says which two things may be wrong.
        "and the test itself is code the model wrote, not checked: either the lemma is false as stated, "
        "and every result that uses it is in doubt, or the test is wrong."
        for check in suspect
    )
    return body.rstrip() + f"\n\n\\section*{{Numerical warnings}}\n{warnings}\n"
