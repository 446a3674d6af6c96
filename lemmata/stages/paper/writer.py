"""Writer stage: the paper's LaTeX and its bibliography, from the run's artifacts.

The paper is whole by construction: lemmata renders its skeleton from the theory (every lemma
with its statement, checked proof, status and marker; the main result; Limitations), and the
model writes the prose parts in turns (writer_turns.py). Before handing the paper on, the writer
compiles it once itself (a trial pass): a broken proof is printed as plain text, a broken part
of the model's goes back to the model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from lemmata import layout
from lemmata.agents.client import LLMClient
from lemmata.agents.prompts import render_prompt
from lemmata.artifacts import (
    Directions,
    Experiment,
    PaperMeta,
    PaperRecord,
    ProvedLemma,
    Survey,
    TaskInput,
    Theory,
    read_artifact,
)
from lemmata.latex.bibliography import assign_citation_keys, cited_keys, render_bibtex
from lemmata.latex.document import render_document
from lemmata.latex.trial import TrialError, pdflatex_available, trial_compile
from lemmata.latex.undefined import provide_undefined_commands
from lemmata.stages.experiment.figures import add_experiment_figures, figure_label, has_figure
from lemmata.stages.feedback import job_feedback
from lemmata.stages.paper.claims import methods_used_by
from lemmata.stages.paper.compile_check import check_document
from lemmata.stages.paper.fragments import Fragment, render
from lemmata.stages.paper.named_works import known_names
from lemmata.stages.paper.parts import part_keys, part_title
from lemmata.stages.paper.prompt_echo import PromptEcho
from lemmata.stages.paper.prose import clean_parts, fallback_parts, required_parts
from lemmata.stages.paper.prose_claims import DEFAULT_CLAIM_LIMIT, ClaimRefuter, ProseClaimChecks
from lemmata.stages.paper.render import paper_items
from lemmata.stages.paper.unverified_marks import add_numerical_warnings
from lemmata.stages.paper.writer_turns import Draft, Outcome, WriterTurns
from lemmata.verification.ladder import label

PROOF_STYLE_RULES = """Proof style rules (enforced):
- No skip words ('clearly', 'trivially', 'by standard arguments') without an immediate justification.
- Every inequality names the lemma or theorem it uses.
- Each lemma proof opens with 1 to 2 sentences of informal explanation.
- Low-confidence lemmas are tagged with an orange bold [Unverified step] marker: lemmata adds it after each lemma marked NOT VERIFIED; do not write it yourself.
- The Limitations section explains all unverified steps: lemmata writes it from the checks; say in the discussion what they mean."""
BIB_STEM = "references"
TITLE_MAX_CHARS = 120
AUTHORS_LISTED = 3
PROOF_EXCERPT_CHARS = 240  # enough for the idea; small models copy what they are shown
#: The main result's proof, shown whole, was pasted into the paper's parts by the embedded model;
#: its beginning says the route, which is what the prose needs.
MAIN_PROOF_EXCERPT_CHARS = 600
EXPERIMENTS_SECTION = (
    "\\section{Numerical experiments}\nEach lemma left at low confidence was tested on random "
    "instances; the figures show the rate at which its conclusion failed."
)
#: A trial pass over a whole document: its errors (empty: it compiles).
TrialCheck = Callable[[str], list[TrialError]]


@dataclass(frozen=True)
class WrittenPaper:
    tex: str
    bibtex: str
    meta: PaperMeta


@dataclass(frozen=True)
class WriterInputs:
    task: TaskInput
    survey: Survey
    directions: Directions
    theory: Theory
    experiment: Experiment
    feedback: str = ""


def write_paper(
    client: LLMClient,
    inputs: WriterInputs,
    *,
    version: int,
    enforce_style: bool,
    max_turns: int | None = None,
    check: TrialCheck | None = None,
    refute_claim: ClaimRefuter | None = None,
    claim_limit: int = DEFAULT_CLAIM_LIMIT,
) -> WrittenPaper:
    """The paper, after at most `max_turns` (default WRITER_MAX_TURNS) writer calls. `check`: the
    trial pass (default: pdflatex -draftmode when pdflatex is installed, else none).
    `refute_claim`: the machine checks of a general claim of the prose (prose_claims), at most
    `claim_limit` sentences of the paper; none: the prose's claims are not checked."""
    keyed = assign_citation_keys(inputs.survey.papers)
    title = paper_title(inputs.task, inputs.directions)
    prompt = render_prompt("writer", **_prompt_values(inputs, title, keyed, enforce_style))
    echo = PromptEcho(
        prompt.system + "\n" + prompt.user, _restatable(inputs), [lemma.statement for lemma in inputs.theory.lemmas]
    )
    claims = ProseClaimChecks(refute_claim, _checked_statements(inputs.theory), claim_limit) if refute_claim else None
    composer = PaperComposer(inputs, echo, {key for key, _ in keyed}, enforce_style, claims)
    trial = check or _trial_pass(client)
    verify = partial(check_document, document=partial(trial_document, title), check=trial) if trial else None
    outcome = WriterTurns(
        client, prompt, composer.lemma_ids, max_turns or client.settings.WRITER_MAX_TURNS, composer.draft, verify
    ).run()
    bibtex = render_bibtex(keyed) if keyed else ""
    body = composer.final_body(outcome)
    tex = render_document(title=title, abstract="", body=body, bibliography_stem=BIB_STEM if bibtex else None)
    meta = paper_meta(outcome, version, title, len(keyed), body)
    return WrittenPaper(
        tex=tex, bibtex=bibtex, meta=meta.model_copy(update={"prose_claims_checked": claims.sent if claims else 0})
    )


def _checked_statements(theory: Theory) -> list[str]:
    """What the theory stated and checked itself: the prose restating it is not checked again."""
    return [theory.goal, theory.theorem_statement, *(lemma.statement for lemma in theory.lemmas)]


def _trial_pass(client: LLMClient) -> TrialCheck | None:
    if not pdflatex_available():
        return None  # the compile step will say what is missing
    return partial(trial_compile, timeout=client.settings.LATEX_PASS_TIMEOUT)


def trial_document(title: str, body: str) -> str:
    """The document a trial pass compiles: the body as the final paper has it, no bibliography."""
    return render_document(title=title, abstract="", body=provide_undefined_commands(body), bibliography_stem=None)


class PaperComposer:
    """Turns the model's raw parts into the paper: cleaned, completed, in lemmata's skeleton."""

    def __init__(
        self,
        inputs: WriterInputs,
        echo: PromptEcho,
        known_keys: set[str],
        enforce_style: bool,
        claims: ProseClaimChecks | None = None,
    ) -> None:
        self.inputs, self.echo, self.known_keys, self.claims = inputs, echo, known_keys, claims
        self.lemma_ids = [lemma.id for lemma in inputs.theory.lemmas]
        self.required = required_parts(self.lemma_ids, enforce_style)
        experiment = inputs.experiment
        figures = EXPERIMENTS_SECTION if any(has_figure(c) for c in experiment.checks) else ""
        self.numerical = (figures + add_numerical_warnings("", experiment)).strip()

    def draft(self, raw: dict[str, str]) -> Draft:
        cleaned = clean_parts(
            raw,
            self.echo,
            self.lemma_ids,
            self.known_keys,
            established=self.inputs.theory.main_result_established,
            methods_used=methods_used_by(self.inputs.theory),
            names_known=known_names(
                [author for paper in self.inputs.survey.papers for author in paper.authors], self.inputs.task.task
            ),
            unverified_lemmas=frozenset(lemma.id for lemma in self.inputs.theory.lemmas if not lemma.verified),
            claim_checks=self.claims,
        )
        absent = [key for key in part_keys(self.lemma_ids) if key not in cleaned.fragments]
        filled = fallback_parts(
            absent, self.inputs.theory, self.inputs.directions.goal, self.inputs.directions.research_brief
        )
        return Draft(
            paper_items(self.inputs.theory, {**cleaned.fragments, **filled}, self.numerical, cleaned.refuted_claims),
            missing=[key for key in self.required if key not in cleaned.fragments],
            latex={key: fragment.latex for key, fragment in cleaned.fragments.items()},
            kept={key: fragment.source.strip() for key, fragment in cleaned.fragments.items()},
            absent=absent,
            removed_citations=cleaned.removed_citations,
            echoed_lines=cleaned.echoed_lines,
            repairs=cleaned.repairs(),
            refuted_claims=cleaned.refuted_claims,
        )

    def final_body(self, outcome: Outcome) -> str:
        body = render(outcome.draft.items, plain=outcome.check.plain)
        return provide_undefined_commands(add_experiment_figures(body, self.inputs.experiment))


def paper_meta(outcome: Outcome, version: int, title: str, bib_entries: int, body: str) -> PaperMeta:
    draft = outcome.draft
    return PaperMeta(
        version=version,
        title=title,
        tex_file=layout.paper_tex(version),
        bib_entries=bib_entries,
        cited_keys=sorted(cited_keys(body)),
        removed_citations=draft.removed_citations,
        lemmas_stated=sum(isinstance(item, Fragment) and item.key.startswith("statement:") for item in draft.items),
        writer_turns=outcome.turns,
        turn_reasons=outcome.reasons,
        missing_parts=[part_title(k) for k in draft.absent],
        plain_text_fragments=sorted(outcome.check.plain),
        echoed_lines=draft.echoed_lines,
        prose_repairs=dict(draft.repairs),
        refuted_prose_claims=[claim.sentence for claim in draft.refuted_claims],
        compile_errors=outcome.check.remaining_errors(),
    )


def _restatable(inputs: WriterInputs) -> list[str]:
    """Prompt texts the paper may repeat: the material it is about (lemmata states the lemmas itself)."""
    theory, directions = inputs.theory, inputs.directions
    return [directions.goal, directions.research_brief, inputs.survey.summary, theory.theorem_statement, theory.goal]


def _prompt_values(
    inputs: WriterInputs, title: str, keyed: list[tuple[str, PaperRecord]], enforce_style: bool
) -> dict[str, str]:
    theory = inputs.theory
    issues = "; ".join(theory.main_result_issues())
    return {
        "title": title,
        "goal": inputs.directions.goal,
        "brief": inputs.directions.research_brief or "(none)",
        "survey_summary": inputs.survey.summary or "(none)",
        "citation_keys": "\n".join(citation_line(key, paper) for key, paper in keyed) or "(none: cite nothing)",
        "main_status": "established" if theory.main_result_established else f"NOT established: {issues}",
        "theorem": theory.theorem_statement or theory.goal,
        "lemmas": "\n\n".join(_lemma_entry(lemma) for lemma in theory.lemmas),
        "assembled_proof": excerpt(theory.assembled_proof, MAIN_PROOF_EXCERPT_CHARS) or "(no assembled proof)",
        "experiment": experiment_summary(inputs.experiment),
        "style_rules": PROOF_STYLE_RULES if enforce_style else "",
        "feedback": f"Reviewer feedback to follow: {inputs.feedback}" if inputs.feedback else "",
        "parts": "\n".join(part_title(key) for key in [*part_keys([lemma.id for lemma in theory.lemmas]), "END"]),
    }


def citation_line(key: str, paper: PaperRecord) -> str:
    """`key: authors (year), title`, so the model knows which paper each key stands for."""
    authors = ", ".join(paper.authors[:AUTHORS_LISTED]) + (" et al." if len(paper.authors) > AUTHORS_LISTED else "")
    year = f" ({paper.year})" if paper.year else ""
    return f"{key}: {authors or 'unknown authors'}{year}, {paper.title}"


def _lemma_entry(lemma: ProvedLemma) -> str:
    if lemma.verified:
        tag = label(lemma.status)
    else:
        failed = ", PROOF FAILED" if lemma.proof_failed else ""
        tag = f"{label(lemma.status).upper()}{failed} ({lemma.verification or 'no reason'})"
    proof = excerpt(lemma.proof_text, PROOF_EXCERPT_CHARS)
    whose = "Its machine proof" if lemma.proved_by_machine_alone else "The prover's proof begins"
    return f"[{lemma.id}] {tag}. Statement: {lemma.statement}\n{whose}: {proof or '(none)'}"


def excerpt(text: str, limit: int) -> str:
    """`text` on one line, cut at a word before `limit` characters (" ..." says so)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit].rsplit(" ", 1)[0] + " ..."


def experiment_summary(experiment: Experiment) -> str:
    if experiment.skipped:
        return f"(not run: {experiment.skip_reason})"
    lines = [
        f"[{c.lemma_id}] "
        + (
            f"violation rate {c.violation_rate:.4f} over {c.trials} trials"
            + (" -- NUMERICALLY SUSPECT: warn strongly" if c.numerically_suspect else "")
            + (f"; lemmata adds its plot as Figure \\ref{{{figure_label(c)}}}" if has_figure(c) else "")
            if c.outcome == "ran"
            else (c.detail if c.outcome == "not_run" else f"test failed: {c.detail}")
        )
        for c in experiment.checks
    ]
    return "\n".join(lines) or f"(no checks: {experiment.skip_reason})"


def paper_title(task: TaskInput, directions: Directions) -> str:
    """A `prove` paper is titled by its theorem (when short enough): a direction's title can
    promise something else entirely. Other modes take the chosen direction's title."""
    if task.mode == "prove" and len(directions.goal) <= TITLE_MAX_CHARS:
        return directions.goal.rstrip(".")
    return directions.candidates[directions.chosen].title


def read_writer_inputs(paths: Any) -> WriterInputs:
    """The writer's artifacts from Snakemake's named inputs, with what the researcher said: the
    reviews' feedback for the first version, the revision instructions for a rewrite."""
    return WriterInputs(
        task=read_artifact(Path(paths.task), TaskInput),
        survey=read_artifact(Path(paths.survey), Survey),
        directions=read_artifact(Path(paths.directions), Directions),
        theory=read_artifact(Path(paths.theory), Theory),
        experiment=read_artifact(Path(paths.experiment), Experiment),
        feedback=job_feedback(paths),
    )
