"""What a run learned, distilled into memories of its domain for later runs.

Distilled from the run's records, not by a model: which lemmas were proved and verified and by
what technique (a strategy memory for the route as a whole, and one for each refinement that
unblocked a stalled proof), and which failed or stayed unverified, with the reasons the verifier,
the reviewer and the numerical tests gave (a failure memory each). Records cannot invent a lesson;
a small model summarising them can, and a wrong memory would mislead every later run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from lemmata import layout
from lemmata.artifacts import (
    Briefing,
    Experiment,
    Learned,
    LearnedMemory,
    ProvedLemma,
    TaskInput,
    Theory,
    TheoryRework,
    read_artifact,
)
from lemmata.errors import UserError
from lemmata.memory.domain_memories import MemoryKind, forget_session, write_memory
from lemmata.memory.embeddings import Embedder, default_embedder
from lemmata.plugins import plugin_for
from lemmata.stages.survey.briefing import memory_domain

#: More would crowd the domain's memory with one run's details.
MAX_MEMORIES_PER_RUN = 6
TITLE_CHARS = 100
TEXT_CHARS = 600
STATEMENT_CHARS = 160
#: What models write in a field when they have nothing to say.
NOTHING_SAID = frozenset({"", "none", "n/a", "na", "nothing", "-"})


@dataclass(frozen=True)
class MemoryDraft:
    kind: MemoryKind
    title: str
    text: str


def learning_domain(run_dir: Path, task: TaskInput) -> str:
    """The domain whose memories the run adds to: where its briefing read them (the same
    directory, whatever plugins were installed since); for a run older than briefings, the
    domain its task names."""
    briefing = Path(run_dir) / layout.BRIEFING
    if briefing.is_file():
        return read_artifact(briefing, Briefing).memory_domain
    return memory_domain(task.domain, plugin_for(task.domain))


def distil(
    theory: Theory, experiment: Experiment | None = None, rework: TheoryRework | None = None
) -> list[MemoryDraft]:
    """The run's lessons: its proof route first, then the reviewer's objection, then what failed."""
    drafts = [*_route(theory), *_unblocked(theory)]
    if rework is not None:
        drafts.append(
            MemoryDraft(
                "failure",
                _short(f"Reviewer rejected a proof of: {_clause(theory.goal, TITLE_CHARS)}", TITLE_CHARS),
                _short(
                    f"The reviewer rejected the first lemma chain at step {rework.step}: {rework.issue}", TEXT_CHARS
                ),
            )
        )
    suspects = _suspects(experiment)
    for lemma in theory.lemmas:
        if not lemma.verified:
            drafts.append(_failure(lemma, suspects.get(lemma.id, "")))
    return drafts[:MAX_MEMORIES_PER_RUN]


def _route(theory: Theory) -> list[MemoryDraft]:
    verified = [lemma for lemma in theory.lemmas if lemma.verified]
    if not verified:
        return []
    steps = "; ".join(f"{lemma.id} ({_clause(lemma.statement, 90)}) by {_technique(lemma)}" for lemma in verified)
    outcome = f"{len(verified)} of {len(theory.lemmas)} lemmas verified, proof {theory.proof_status}"
    return [
        MemoryDraft(
            "strategy",
            _short(f"Proof route for: {_clause(theory.goal, TITLE_CHARS)}", TITLE_CHARS),
            _short(f"{outcome}. Steps that held: {steps}.", TEXT_CHARS),
        )
    ]


def _unblocked(theory: Theory) -> list[MemoryDraft]:
    """A refinement after which a stalled lemma was proved: the idea that broke the stall."""
    return [
        MemoryDraft(
            "strategy",
            _short(f"Unblocked a stalled proof of: {_clause(lemma.statement, TITLE_CHARS)}", TITLE_CHARS),
            _short(
                f"After {lemma.attempts} attempts stalled, this refinement led to a verified proof: "
                f"{lemma.refinements[-1]}",
                TEXT_CHARS,
            ),
        )
        for lemma in theory.lemmas
        if lemma.verified and lemma.refinements
    ]


def _failure(lemma: ProvedLemma, numerical: str) -> MemoryDraft:
    verdict = "failed" if lemma.proof_failed else "stayed unverified"
    reasons = [lemma.verification]
    if lemma.gaps:
        reasons.append("gaps: " + "; ".join(lemma.gaps))
    weakest = lemma.assessment.weakest_step.strip() if lemma.assessment is not None else ""
    if weakest.casefold().rstrip(".") not in NOTHING_SAID:
        reasons.append(f"weakest step: {weakest}")
    if lemma.refinements:
        reasons.append(f"the refiner's last idea did not resolve it: {lemma.refinements[-1]}")
    if numerical:
        reasons.append(numerical)
    why = " ".join(_sentence(reason) for reason in reasons if reason.strip())
    text = (
        f"Tried: {_technique(lemma)} ({lemma.attempts} attempts, confidence {lemma.confidence:.2f}). "
        f"It {verdict}." + (f" Why: {why}" if why else "")
    )
    title = f"Did not hold up: {_clause(lemma.statement, STATEMENT_CHARS)}"
    return MemoryDraft("failure", _short(title, STATEMENT_CHARS), _short(text, TEXT_CHARS))


def _suspects(experiment: Experiment | None) -> dict[str, str]:
    """Per lemma, what its numerical test found, when it found violations."""
    if experiment is None:
        return {}
    return {
        check.lemma_id: f"a numerical test found {check.violations} violations in {check.trials} trials"
        + (" (numerically suspect)" if check.numerically_suspect else "")
        for check in experiment.checks
        if check.outcome == "ran" and check.violations
    }


def _technique(lemma: ProvedLemma) -> str:
    if lemma.assessment is not None and lemma.assessment.techniques_used:
        return ", ".join(lemma.assessment.techniques_used[:3])
    sentences = [s for s in re.split(r"(?<=\.)\s+", lemma.proof_text.strip()) if s.casefold() != "proof."]
    first = sentences[0].rstrip(".") if sentences else ""  # the text adds its own period
    return _short(first, 140) if first else "no proof written"


def _clause(text: str, limit: int) -> str:
    """A statement to be quoted inside a sentence: shortened, without its final period."""
    return _short(text, limit).rstrip(".")


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text.endswith((".", "!", "?")) else text + "."


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def record_memories(
    home: Path, domain: str, session_id: str, drafts: list[MemoryDraft], embedder: Embedder | None = None
) -> Learned:
    """Replace what this run wrote to the domain before with `drafts`. Without the embedding
    model (a platform with no wheel), nothing is kept, what the run wrote before stays, and the
    note says why."""
    kept = []
    try:
        if drafts:  # the model is there (or not) before anything is forgotten
            (embedder or default_embedder()).embed([drafts[0].title])
        forget_session(home, domain, session_id)
        for draft in drafts:
            path = write_memory(
                home,
                domain,
                title=draft.title,
                text=draft.text,
                kind=draft.kind,
                session_id=session_id,
                embedder=embedder,
            )
            kept.append(LearnedMemory(file=path.name, title=draft.title, kind=draft.kind))
    except UserError as error:
        return Learned(memory_domain=domain, memories=kept, note=f"memories not kept: {error}")
    return Learned(memory_domain=domain, memories=kept, note="" if drafts else "nothing to learn from this run")
