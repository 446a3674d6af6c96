"""What the paper says about its unverified steps, written by lemmata, never by the model.

The model's own markers (the `\\unverified` command or the literal text) are removed from
everything it wrote: a model marks too much, too little, or twice. lemmata renders every lemma
itself, so each lemma that is not verified gets exactly one marker, right after its statement;
the Limitations section lists, once each, every lemma that is not machine-checked with its status
and what it rests on, the statements refuted and removed, the reasons the main result is not
established, and the general claims of the prose the machines refuted (prose_claims). A lemma
the numerical tests contradict (`numerically_suspect`) gets a bold warning with its figures,
whatever the model wrote about it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lemmata.artifacts import Experiment, LemmaCheck, ProvedLemma, Theory
from lemmata.latex.document import escape_latex_text
from lemmata.latex.proof_text import lemma_label, sentence_latex
from lemmata.stages.paper.fragments import Fragment, Item
from lemmata.stages.paper.prose_claims import RefutedClaim
from lemmata.verification.ladder import evidence_in_words, label, status_line

MARKER = "\\unverified{}"
MODEL_MARKERS = re.compile(r"\\unverified(?![A-Za-z@])(?:\s*\{\s*\})?[ \t]*|\[Unverified step\][ \t]*", re.IGNORECASE)
LIMITATIONS_HEADING = "\\section{Limitations}"


def remove_model_markers(text: str) -> str:
    """`text` without the markers a model wrote itself."""
    return MODEL_MARKERS.sub("", text)


def unverified_lemmas(theory: Theory) -> list[ProvedLemma]:
    return [lemma for lemma in theory.lemmas if not lemma.verified]


def not_machine_checked(theory: Theory) -> list[ProvedLemma]:
    return [lemma for lemma in theory.lemmas if not lemma.machine_checked]


def needs_limitations(theory: Theory, refuted_prose: Sequence[RefutedClaim] = ()) -> bool:
    return bool(not_machine_checked(theory)) or not theory.main_result_established or bool(refuted_prose)


def issues_fragment(key: str, theory: Theory) -> Fragment:
    """`theory.main_result_issues()` as one sentence (a consistency issue may hold the model's math)."""
    source = "; ".join(theory.main_result_issues()) + "."
    return Fragment(key, sentence_latex(source), source)


def reason_fragment(key: str, lemma: ProvedLemma) -> Fragment:
    """The lemma's status line in words (a gap may quote the prover's math), as one sentence."""
    source = status_line(lemma).rstrip(".") + "."
    return Fragment(key, sentence_latex(source), source)


def limitations_section(theory: Theory, refuted_prose: Sequence[RefutedClaim] = ()) -> list[Item]:
    """The Limitations section: once each, every lemma no machine checked and what it rests on,
    then the main result's issues (a statement refuted and removed among them; the Lemmas section
    reports each refuted statement), then the claims of the draft's prose the machines refuted."""
    if not needs_limitations(theory, refuted_prose):
        return []
    items: list[Item] = [LIMITATIONS_HEADING]
    unchecked = not_machine_checked(theory)
    if unchecked:
        items += ["No machine checked the following steps; read them with care.", "\\begin{itemize}"]
        for lemma in unchecked:
            source = _limitation(lemma)
            items += [
                f"  \\item {_limitation_head(lemma)}",
                Fragment(f"limitation:{lemma.id}", sentence_latex(source), source),
            ]
        items.append("\\end{itemize}")
    if not theory.main_result_established:
        items += ["Consequently, the main result is not established:", issues_fragment("limitations:issues", theory)]
    if refuted_prose:
        items += [
            "The draft's prose made general claims that the machine checks refute; they were removed:",
            "\\begin{itemize}",
        ]
        for number, claim in enumerate(refuted_prose, start=1):
            key, why = f"limitation:prose-claim-{number}", f"refuted: {claim.why}."
            items += [
                "  \\item",
                Fragment(key, sentence_latex(claim.sentence), claim.sentence),
                "Read formally:",
                Fragment(f"{key}:formal", f"\\({claim.latex}\\);", claim.formal),
                Fragment(f"{key}:why", sentence_latex(why), why),
            ]
        items.append("\\end{itemize}")
    return items


def _limitation(lemma: ProvedLemma) -> str:
    """One short line: what the machines found (or that nothing was formalized) and whether the
    model checks verified the proof; the details are on the lemma's own status line."""
    formal = lemma.formal
    if formal is None:
        machine = "no formal statement"
    elif formal.not_formalized:
        machine = "no formal statement a machine could check"
    else:
        machine = evidence_in_words(formal)
    proof = (
        "the proof was reviewed by a calibrated checker"
        if lemma.status == "reviewed"
        else ("the model checks rejected its proof" if lemma.proof_failed else "its proof is not verified")
    )
    return f"{machine}; {proof}."


def _limitation_head(lemma: ProvedLemma) -> str:
    return f"Lemma~\\ref{{{lemma_label(lemma.id)}}} ({escape_latex_text(lemma.id)}; {escape_latex_text(label(lemma.status))}):"


def add_numerical_warnings(body: str, experiment: Experiment) -> str:
    """A bold warning per `numerically_suspect` lemma, with its violations, at the end of the body."""
    suspect = [check for check in experiment.checks if check.numerically_suspect]
    if not suspect:
        return body
    warnings = "\n\n".join(_warning(check) for check in suspect)
    return body.rstrip() + f"\n\n\\section*{{Numerical warnings}}\n{warnings}\n"


def _warning(check: LemmaCheck) -> str:
    ours = check.author == "lemmata"
    head = (
        f"\\textbf{{Warning: numerical tests contradict Lemma {escape_latex_text(check.lemma_id)}.}} "
        f"{check.violations} of {check.trials} {'sampled inputs' if ours else 'random trials'} violate it "
        f"(rate {100 * (check.violation_rate or 0):.1f}\\%); "
    )
    if ours:
        # lemmata's own predicate of the formal statement, evaluated exactly: each violation is a counterexample.
        return (
            head + "the test is the lemma's formal statement itself, evaluated exactly, so it is false as formalized."
        )
    # The test is code the model wrote, itself unchecked: the embedded model's test of "a and
    # b even => a + b even" counted the trials where the sum WAS even as violations (779 of
    # 3000; the README's main command, 2026-11-25). The paper says which two things may be wrong.
    return head + (
        "and the test itself is code the model wrote, not checked: either the lemma is false as stated, "
        "and every result that uses it is in doubt, or the test is wrong."
    )
