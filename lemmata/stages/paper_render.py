"""The paper's skeleton, rendered by lemmata from the artifacts: whole by construction.

Every lemma of the theory appears, in plan order, as `\\begin{lemma}[L3]\\label{lem:L3}` with its
statement, the `[Unverified step]` marker when it is not verified, the model's informal
explanation, the prover's proof as it was checked (or a note that there is none), and a status
line. Then the main result (a theorem when established, else a labelled conjecture with the
reasons), the model's discussion, Limitations and the conclusion.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lemmata.artifacts import ProvedLemma, Theory
from lemmata.latex.document import escape_latex_text
from lemmata.latex.proof_text import fragment_latex, lemma_label, proof_latex
from lemmata.stages.paper_fragments import Fragment, Item
from lemmata.stages.paper_parts import lemma_key
from lemmata.stages.prompt_echo import normalised
from lemmata.stages.unverified_marks import MARKER, issues_fragment, limitations_section, reason_fragment

MAIN_LABEL = "thm:main"

# --- lemmas -----------------------------------------------------------------------------------


def lemma_items(lemma: ProvedLemma, explanation: Fragment | None, lemma_ids: Sequence[str]) -> list[Item]:
    """One lemma: statement, marker, explanation, the checked proof (or why there is none), status."""
    title = escape_latex_text(lemma.id)
    items: list[Item] = [
        f"\\begin{{lemma}}[{{{title}}}]\\label{{{lemma_label(lemma.id)}}}",
        Fragment(f"statement:{lemma.id}", fragment_latex(lemma.statement, lemma_ids), lemma.statement),
        "\\end{lemma}",
    ]
    if not lemma.verified:
        items.append(MARKER + "\\par")
    if explanation is not None:
        items += ["\\noindent\\textit{Idea.}", explanation, "\\par"]
    items += _proof_items(lemma, lemma_ids)
    return items + _status_items(lemma)


def _proof_items(lemma: ProvedLemma, lemma_ids: Sequence[str]) -> list[Item]:
    if not lemma.proof_text.strip():
        return ["\\noindent\\textit{No proof of this lemma was found.}\\par"]
    heading = {"proved": "", "low_confidence": "[Proof (not verified)]", "failed": "[Attempted proof (rejected)]"}
    proof = Fragment(f"proof:{lemma.id}", proof_latex(lemma.proof_text, lemma_ids), lemma.proof_text)
    return [f"\\begin{{proof}}{heading[lemma.status]}", proof, "\\end{proof}"]


def _status_items(lemma: ProvedLemma) -> list[Item]:
    """The one-line status: `Verified: <how>` or `Not verified: <why>` (the checks' own words)."""
    if lemma.verified:
        label = "Verified"
    else:
        label = "Not verified" + (" (the proof failed)" if lemma.status == "failed" else "")
    return [f"\\noindent\\textit{{{label}:}}", reason_fragment(f"status:{lemma.id}", lemma), "\\par\n"]


def lemmas_section(theory: Theory, explanations: Mapping[str, Fragment]) -> list[Item]:
    ids = [lemma.id for lemma in theory.lemmas]
    verified = sum(lemma.verified for lemma in theory.lemmas)
    count = len(theory.lemmas)
    items: list[Item] = [
        "\\section{Lemmas}",
        f"The proof rests on {count} {'lemma' if count == 1 else 'lemmas'}, stated in the order they were proved; "
        f"{verified} of them {'is' if verified == 1 else 'are'} verified. Each is followed by the proof that was "
        "checked and the outcome of its checks.\n",
    ]
    for lemma in theory.lemmas:
        items += lemma_items(lemma, explanations.get(lemma_key(lemma.id)), ids)
    return items


# --- main result ------------------------------------------------------------------------------


def main_result_section(theory: Theory) -> list[Item]:
    """The theorem when established; otherwise the goal as a conjecture, the reasons, a sketch.

    A conjecture states the goal the researcher set, not the crystallizer's statement: that one
    says what the (unestablished) sketch claims, which on a weak model is another statement (an
    embedded run of "a^2 + b^2 >= 2ab", 2026-11-25, stated "a_1^2 + ... + a_n^2 >= 2ab"); it is
    shown as what the sketch claims when it differs."""
    ids = [lemma.id for lemma in theory.lemmas]
    proof = Fragment("main:proof", proof_latex(theory.assembled_proof, ids), theory.assembled_proof)
    items: list[Item] = ["\\section{Main result}"]
    if theory.main_result_established:
        statement_text = theory.theorem_statement.strip() or theory.goal
        statement = Fragment("main:statement", fragment_latex(statement_text, ids), statement_text)
        items += [
            f"\\begin{{theorem}}\\label{{{MAIN_LABEL}}}",
            statement,
            "\\end{theorem}",
            "\\begin{proof}",
            proof,
            "\\end{proof}",
        ]
        return items
    goal = Fragment("main:statement", fragment_latex(theory.goal, ids), theory.goal)
    items += [
        f"\\begin{{conjecture}}[Main result, not established]\\label{{{MAIN_LABEL}}}",
        goal,
        "\\end{conjecture}",
        "\\noindent The main result is not established:",
        issues_fragment("main:issues", theory),
        "\\par",
    ]
    if theory.assembled_proof.strip():
        claimed = theory.theorem_statement.strip()
        if claimed and not theory.crystallization_error and normalised(claimed) != normalised(theory.goal):
            items += [
                "\\noindent The sketch below claims to prove another statement:",
                Fragment("main:claimed", fragment_latex(claimed, ids), claimed),
                "\\par",
            ]
        items += ["\\begin{proof}[Proof sketch]", proof, "\\end{proof}"]
    return items


def abstract_items(abstract: Fragment, theory: Theory) -> list[Item]:
    """The abstract; it ends with lemmata's sentence when the main result is not established."""
    items: list[Item] = ["\\begin{abstract}", abstract]
    if not theory.main_result_established:
        items += ["The main result is not established:", issues_fragment("abstract:issues", theory)]
    return items + ["\\end{abstract}"]


def paper_items(theory: Theory, parts: Mapping[str, Fragment], numerical: str) -> list[Item]:
    """The whole body: the model's parts (those present) in lemmata's skeleton. `numerical`: the
    experiments section (its figures are added to the final body) and the numerical warnings."""
    items: list[Item] = []
    if "abstract" in parts:
        items += abstract_items(parts["abstract"], theory)
    for key, heading in (("introduction", "Introduction"), ("preliminaries", "Preliminaries")):
        if key in parts:
            items += [f"\\section{{{heading}}}", parts[key]]
    items += lemmas_section(theory, parts)
    items += main_result_section(theory)
    if "discussion" in parts:
        items += ["\\section{Discussion}", parts["discussion"]]
    if numerical:
        items.append(numerical)
    items += limitations_section(theory)
    if "conclusion" in parts:
        items += ["\\section{Conclusion}", parts["conclusion"]]
    return items
