"""A rewrite: the researcher's revision instructions run the theory again, then the experiment,
then the writer, each with the instructions as feedback; the result is the next paper version.

Version n's files live in `versions/v<n>/` (theory, experiment, plots) beside `paper_v<n>.tex`;
the survey, the chosen direction and the formal statement are those of the run and are not
redone. The theory runs as one job: plan, the lemmas (independent ones at once), assembly.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lemmata.agents.client import LLMClient
from lemmata.artifacts import (
    ChatRecord,
    Checker,
    FormalStatement,
    ProvedLemma,
    RevisionRequest,
    Survey,
    Theory,
    TheoryPlan,
)
from lemmata.settings import Settings
from lemmata.stages.feedback import revision_feedback
from lemmata.stages.survey.paper_reader import literature_digest
from lemmata.stages.theory.assemble import assemble_theory
from lemmata.stages.theory.falsify import checked_plan
from lemmata.stages.theory.prove import prove_lemma

#: The conversation a rewrite takes along: the latest exchanges, each cut short.
SUMMARY_EXCHANGES = 6
SUMMARY_CHARS_PER_TEXT = 400
#: Lemma proofs of a rewrite run at once, as the lemma jobs of a first run do (they wait on the provider).
PARALLEL_PROOFS = 4


def qa_summary(history: list[ChatRecord], base_version: int) -> str:
    """The latest questions and answers about the base version, shortened: what the researcher
    was looking at when they asked for the rewrite. Deterministic, no model call."""
    about = [r for r in history if r.paper_version == base_version and r.role in ("user", "assistant")]
    lines = [f"{'Q' if r.role == 'user' else 'A'}: {_shorten(r.content)}" for r in about[-2 * SUMMARY_EXCHANGES :]]
    return " | ".join(lines)


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SUMMARY_CHARS_PER_TEXT else text[: SUMMARY_CHARS_PER_TEXT - 3] + "..."


def rewrite_theory(
    client_for: Callable[[str], LLMClient],
    settings: Settings,
    request: RevisionRequest,
    previous: Theory,
    survey: Survey,
    formal: FormalStatement,
    *,
    checker: Checker,
    formalizer_cache: Path,
    before_assembly: Callable[[TheoryPlan, list[ProvedLemma]], object] | None = None,
    beside_the_sketch: Callable[[Theory], None] | None = None,
) -> Theory:
    """Plan again with the instructions, falsify the new plan's lemmas (refuted ones repaired or
    removed), prove the rest, assemble. `client_for(scope)` gives each concurrent proof its own
    call-log scope; `checker` is who checks the proofs; the formalizer's answers are kept in
    `formalizer_cache` (a statement seen before is not formalized again). `before_assembly` gets
    the plan and its proved lemmas before the assembly starts (the knowledge graph, as in a first
    run: the lemmas are kept even if the assembly fails); `beside_the_sketch` is assemble_theory's."""
    feedback = revision_feedback(request)
    if previous.theorem_statement:
        feedback += f" The theorem of version {request.base_version}: {previous.theorem_statement}"
    plan = checked_plan(
        client_for("plan"),
        formal.model_copy(update={"goal": previous.goal}),
        formalizer_cache,
        settings,
        feedback=feedback,
        literature=literature_digest(survey.papers, survey.paper_notes),
    )
    proved: dict[str, ProvedLemma] = {}
    waiting = list(plan.lemmas)
    with ThreadPoolExecutor(max_workers=PARALLEL_PROOFS) as pool:
        while waiting:
            # A normalised plan's dependencies point to earlier lemmas only: each wave proves the
            # lemmas whose dependencies are proved, at least the first one waiting.
            ready = [lemma for lemma in waiting if all(d in proved for d in lemma.depends_on)]
            futures = {
                lemma.id: pool.submit(
                    prove_lemma,
                    client_for(f"prove_lemma:{lemma.id}"),
                    plan,
                    lemma.id,
                    settings,
                    [proved[d] for d in lemma.depends_on],
                    checker=checker,
                )
                for lemma in ready
            }
            for lemma_id, future in futures.items():
                proved[lemma_id] = future.result()
            waiting = [lemma for lemma in waiting if lemma.id not in proved]
    lemmas = [proved[lemma.id] for lemma in plan.lemmas]
    if before_assembly is not None:
        before_assembly(plan, lemmas)
    return assemble_theory(client_for("assemble"), plan, lemmas, beside_the_sketch=beside_the_sketch)
