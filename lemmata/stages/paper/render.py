"""The paper's skeleton, rendered by lemmata from the artifacts: whole by construction.

Every lemma of the theory appears, in plan order, as `\\begin{lemma}[L3]\\label{lem:L3}` with its
statement, its formal statement beside it (what the machines checked), the `[Unverified step]`
marker when it is not verified, the model's informal explanation, the prover's proof (or a note
that there is none), and one status line. Statements a counterexample refuted before any proof
are reported, never printed as steps. Then the main result (a theorem when established, saying by
what, else a labelled conjecture with the reasons), the model's discussion, Limitations and the
conclusion. How the model checks are trusted is said once, before the lemmas.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lemmata.artifacts import FormalCheck, ProvedLemma, Theory, chain_numbers, refutation_in_words
from lemmata.latex.document import escape_latex_text
from lemmata.latex.proof_text import fragment_latex, latex_paragraphs, lemma_label, proof_latex, sentence_latex
from lemmata.stages.paper.fragments import Fragment, Item
from lemmata.stages.paper.parts import lemma_key
from lemmata.stages.paper.prompt_echo import normalised
from lemmata.stages.paper.prose_claims import RefutedClaim
from lemmata.stages.paper.unverified_marks import MARKER, issues_fragment, limitations_section, reason_fragment
from lemmata.verification.calibration import trust_in_words
from lemmata.verification.ladder import checkers_in_short, label, not_formalized_in_words

MAIN_LABEL = "thm:main"

# --- lemmas -----------------------------------------------------------------------------------


def lemma_items(lemma: ProvedLemma, explanation: Fragment | None, lemma_ids: Sequence[str], number: int) -> list[Item]:
    """One lemma, as Lemma `number` (artifacts.chain_numbers): statement, marker, explanation, the
    checked proof (or why there is none), status."""
    title = escape_latex_text(lemma.id)
    items: list[Item] = [
        f"\\setcounter{{lemma}}{{{number - 1}}}\\begin{{lemma}}[{{{title}}}]\\label{{{lemma_label(lemma.id)}}}",
        Fragment(f"statement:{lemma.id}", fragment_latex(lemma.statement, lemma_ids), lemma.statement),
        "\\end{lemma}",
        *formal_items(f"formal:{lemma.id}", lemma.formal),
    ]
    if not lemma.verified:
        items.append(MARKER + "\\par")
    if explanation is not None:
        items += ["\\noindent\\textit{Idea.}", explanation, "\\par"]
    items += _proof_items(lemma, lemma_ids)
    return items + _status_items(lemma)


def formal_items(key: str, formal: FormalCheck | None) -> list[Item]:
    """`Formally: <the statement the machines checked>`, beside the prose, so a reader can judge
    whether it says the same; or why there is none."""
    if formal is None:
        return []
    if formal.spec is None or formal.not_formalized:
        source = f"No formal statement: {not_formalized_in_words(formal).rstrip('.')}."
        return ["\\noindent\\textit{Formally:}", Fragment(key, sentence_latex(source), source), "\\par"]
    return ["\\noindent\\textit{Formally:}", Fragment(key, f"\\({formal.latex}\\)", formal.text), "\\par"]


def witness_items(key: str, formal: FormalCheck | None) -> list[Item]:
    """The input at which a machine-checked statement's hypotheses hold, which shows its proof is
    not vacuous (kernel/verdict.py); nothing for a statement without hypotheses."""
    if formal is None or not formal.judged.witness:
        return []
    values = ", ".join(f"{name} = {value}" for name, value in formal.judged.witness)
    source = f"Its hypotheses hold at {values}, so the machine's proof is not vacuous."
    return ["\\noindent", Fragment(key, sentence_latex(source), source), "\\par"]


def _proof_items(lemma: ProvedLemma, lemma_ids: Sequence[str]) -> list[Item]:
    if not lemma.proof_text.strip():
        return ["\\noindent\\textit{No proof of this lemma was found.}\\par"]
    if lemma.proved_by_machine_alone:
        heading = "[Proof (by machine)]"
    elif lemma.status == "machine_checked":
        heading = "[Proof (the model's prose, not checked: the machine checked the statement)]"
    elif lemma.status == "reviewed":
        heading = ""
    else:
        heading = "[Attempted proof (rejected)]" if lemma.proof_failed else "[Proof (not verified)]"
    proof = proof_fragments(f"proof:{lemma.id}", lemma.proof_text, lemma_ids)
    return [f"\\begin{{proof}}{heading}", *proof, "\\end{proof}"]


def proof_fragments(key: str, text: str, lemma_ids: Sequence[str]) -> list[Item]:
    """A model's proof as one fragment per paragraph (`key/1`, `key/2`, ...), so that a paragraph
    that breaks the compile is printed as plain text alone: one echoed Coq line had turned a whole
    proof into escaped LaTeX (the embedded main command, 2026-11-26)."""
    paragraphs = latex_paragraphs(proof_latex(text, lemma_ids))
    if len(paragraphs) <= 1:
        return [Fragment(key, "".join(paragraphs), text)]
    items: list[Item] = []
    for number, paragraph in enumerate(paragraphs, start=1):
        if items:
            items.append("")  # render joins items with one newline: this keeps the paragraph break
        items.append(Fragment(f"{key}/{number}", paragraph, paragraph))
    return items


def _status_items(lemma: ProvedLemma) -> list[Item]:
    """The one status line: the status, and what it rests on (verification/ladder.py)."""
    return [
        f"\\noindent\\textit{{Status: {label(lemma.status)}.}}",
        reason_fragment(f"status:{lemma.id}", lemma),
        "\\par\n",
    ]


def lemmas_section(theory: Theory, explanations: Mapping[str, Fragment]) -> list[Item]:
    ids = [lemma.id for lemma in theory.lemmas]
    verified = sum(lemma.verified for lemma in theory.lemmas)
    count = len(theory.lemmas)
    machine = sum(lemma.machine_checked for lemma in theory.lemmas)
    if count == 1:
        checked = ("verified by a machine" if machine else "verified") if verified else "not verified"
        chain = f"The proof rests on 1 lemma; it is {checked}. It is followed by"
    else:
        chain = (
            f"The proof rests on {count} lemmas, stated in the order they were proved; {verified} of them "
            f"{'is' if verified == 1 else 'are'} verified" + (f" ({machine} by a machine)" if machine else "") + ". "
            "Each is followed by"
        )
    items: list[Item] = [
        "\\section{Lemmas}",
        f"{chain} its formal statement, its proof (the model's, or the machine's) and one status line.",
        *how_checked_items(theory),
    ]
    for lemma, number in zip(theory.lemmas, chain_numbers(ids)):
        items += lemma_items(lemma, explanations.get(lemma_key(lemma.id)), ids, number)
    items += refuted_items(theory, ids)
    return items


def how_checked_items(theory: Theory) -> list[Item]:
    """How the statuses are decided, said once for the whole paper (the checker's calibration
    included): each lemma's line then says only what concerns it. That the prose is not checked is
    said here too: the embedded writer's Discussion once claimed "the sum of any two integers is
    even iff at least one of them is even" (false) beside machine-checked statements (2026-11-27),
    and its Preliminaries the same, as a bullet (2026-11-29)."""
    source = (
        "How the lemmas were checked. A formal statement is machine-checked when a proof kernel (Coq) or a "
        "decision procedure (the SMT solver Z3) proved it; tested when no counterexample was found among sampled "
        "inputs, which is evidence, not proof; refuted when a counterexample was found. A proof is reviewed when "
        "the model checks passed it and the checking model was measured to tell wrong proofs from right ones. "
        "Only statements and proofs are checked: the claims of the prose around them (the introduction, the "
        "preliminaries, the lemmas' ideas, the discussion, the conclusion) are not."
    )
    checkers = {lemma.checked_by.model: lemma.checked_by for lemma in theory.lemmas if lemma.checked_by is not None}
    source += "".join(f" {trust_in_words(checker)}" for checker in checkers.values())
    return ["\\par", Fragment("how-checked", sentence_latex(source), source), "\\par\n"]


def refuted_items(theory: Theory, lemma_ids: Sequence[str]) -> list[Item]:
    """The statements a counterexample refuted before any proof: what replaced them, or that the
    argument that used them is incomplete."""
    items: list[Item] = []
    for number, attempt in enumerate(theory.refuted):
        fate = (
            f"It was replaced by the statement of Lemma {attempt.id} above."
            if attempt.replaced_by
            else "It was removed from the plan"
            + ("." if theory.main_result_established else "; the argument that used it is incomplete.")
        )
        source = (
            f"A statement first planned as {attempt.id} was refuted as formalized before any proof: "
            f"{attempt.statement.strip().rstrip('.')}; {refutation_in_words(attempt.formal)}. {fate}"
        )
        items += [
            "\\noindent\\textit{Refuted statement.}",
            Fragment(f"refuted:{number}", fragment_latex(source, lemma_ids), source),
            *formal_items(f"refuted-formal:{number}", attempt.formal),
        ]
    return items


# --- main result ------------------------------------------------------------------------------


def main_result_section(theory: Theory) -> list[Item]:
    """The theorem when established; otherwise the goal as a conjecture, the reasons, a sketch.

    A conjecture states the goal the researcher set, not the crystallizer's statement: that one
    says what the (unestablished) sketch claims, which on a weak model is another statement (an
    embedded run of "a^2 + b^2 >= 2ab", 2026-11-25, stated "a_1^2 + ... + a_n^2 >= 2ab"); it is
    shown as what the sketch claims when it differs."""
    ids = [lemma.id for lemma in theory.lemmas]
    proof = proof_fragments("main:proof", theory.assembled_proof, ids)
    items: list[Item] = ["\\section{Main result}"]
    if theory.main_result_established:
        statement_text = theory.theorem_statement.strip() or theory.goal
        statement = Fragment("main:statement", fragment_latex(statement_text, ids), statement_text)
        machine = theory.main_result_status == "machine_checked"
        note = f"[{escape_latex_text(main_result_note(theory))}]" if machine else ""
        items += [
            f"\\begin{{theorem}}{note}\\label{{{MAIN_LABEL}}}",
            statement,
            "\\end{theorem}",
            *formal_items("main:formal", theory.goal_check),
            *witness_items("main:witness", theory.goal_check if machine else None),
            "\\begin{proof}[Proof sketch (the model's prose, not checked)]" if machine else "\\begin{proof}",
            *proof,
            "\\end{proof}",
        ]
        return items
    goal = Fragment("main:statement", fragment_latex(theory.goal, ids), theory.goal)
    heading = "refuted as formalized" if theory.main_result_status == "refuted" else "not established"
    items += [
        f"\\begin{{conjecture}}[Main result, {heading}]\\label{{{MAIN_LABEL}}}",
        goal,
        "\\end{conjecture}",
        *formal_items("main:formal", theory.goal_check),
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
        items += ["\\begin{proof}[Proof sketch]", *proof, "\\end{proof}"]
    return items


def abstract_items(abstract: Fragment, theory: Theory) -> list[Item]:
    """The abstract; it ends with lemmata's sentence on the main result: by what it is established,
    or why it is not."""
    items: list[Item] = ["\\begin{abstract}", abstract]
    if not theory.main_result_established:
        items += ["The main result is not established:", issues_fragment("abstract:issues", theory)]
    elif theory.main_result_status == "machine_checked" and theory.goal_check is not None:
        checked = f"machine-checked {checkers_in_short(theory.goal_check)}"
        items.append(
            f"The main result is {escape_latex_text(checked)}; its prose proof is a model's and is not checked."
        )
    return items + ["\\end{abstract}"]


def main_result_note(theory: Theory) -> str:
    """`machine-checked in Coq; the prose proof below is a model's and is not checked`."""
    assert theory.goal_check is not None
    return (
        f"machine-checked {checkers_in_short(theory.goal_check)}; the prose proof below is a model's and is not checked"
    )


def paper_items(
    theory: Theory, parts: Mapping[str, Fragment], numerical: str, refuted_prose: Sequence[RefutedClaim] = ()
) -> list[Item]:
    """The whole body: the model's parts (those present) in lemmata's skeleton. `numerical`: the
    experiments section (its figures are added to the final body) and the numerical warnings;
    `refuted_prose`: the claims removed from the parts, which Limitations reports."""
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
    items += limitations_section(theory, refuted_prose)
    if "conclusion" in parts:
        items += ["\\section{Conclusion}", parts["conclusion"]]
    return items
