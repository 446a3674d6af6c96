"""Survey stage: what is known around the task, its open problems and key objects, and the
papers the literature tools actually returned.

The survey agent searches in turns (`stages/agent.py`). The papers it keeps are records a tool
returned, chosen by identifier or title: a paper the model names from memory is dropped. Papers
the researcher named (`from-papers` identifiers, or the list typed at the survey fallback) are
looked up first and kept whatever the agent chooses.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from lemmata.agents.answers import SurveyAnswer
from lemmata.agents.client import LLMClient
from lemmata.agents.tool_loop import AgentSpec, call_tools, chosen_papers, paper_line, run_tool_agent
from lemmata.artifacts import GateDecision, PaperRecord, Survey, TaskInput, feedback_of
from lemmata.settings import Settings
from lemmata.stages.survey.paper_reader import Excerpt, pdf_extra_installed
from lemmata.tools.base import Tool
from lemmata.tools.pdf_excerpt import theorem_excerpt

#: When the agent names none of the records its searches returned, the first ones are kept.
KEPT_WHEN_UNCHOSEN = 8
_ARXIV_ID = re.compile(r"^(?:arxiv:)?(?:\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?$", re.IGNORECASE)


@dataclass(frozen=True)
class SurveyLimits:
    max_turns: int
    compress_every: int


def survey_limits(settings: Settings) -> SurveyLimits:
    return SurveyLimits(settings.SURVEY_MAX_TURNS, settings.CONTEXT_COMPRESS_AFTER_TURNS)


def paper_excerpt(settings: Settings) -> Excerpt | None:
    """How the paper reader gets more than an abstract: the PDF's theorem blocks, with the `pdf`
    extra and network tools allowed."""
    if not (settings.SEARCH_TOOLS and pdf_extra_installed()):
        return None
    return lambda paper: theorem_excerpt(paper, settings)


def final_survey(first: Survey, decision: GateDecision, rerun: Callable[[list[str]], Survey]) -> Survey:
    """The spec's survey fallback: a first survey with papers stands; with none, the papers the
    researcher listed at the gate are injected and the survey runs once more; an empty answer
    proceeds without papers."""
    if first.papers:
        return first
    named = split_paper_list(feedback_of(decision))
    if not named:
        return first.model_copy(update={"note": _join(first.note, "no papers: the run proceeds without them")})
    return rerun(named)


def split_paper_list(text: str) -> list[str]:
    """The researcher's comma-separated identifiers or titles (semicolons and lines also split)."""
    return [name.strip() for name in re.split(r"[,;\n]", text) if name.strip()]


def run_survey(
    client: LLMClient,
    task: TaskInput,
    tools: Mapping[str, Tool],
    limits: SurveyLimits,
    user_papers: list[str] | None = None,
) -> Survey:
    named = [*task.paper_ids, *(user_papers or [])]
    seed = look_up_papers(named, tools)
    spec = AgentSpec("survey", "survey", SurveyAnswer, limits.max_turns, limits.compress_every)
    run = run_tool_agent(
        client, spec, {"mode": task.mode, "task": task.task, "paper_hint": _paper_hint(named, seed)}, tools, seed=seed
    )
    answer = run.final or SurveyAnswer()
    papers = chosen_papers(answer.papers, run.retrieved)
    note = "" if run.final else f"no readable answer in {run.turns} turns"
    if not papers and len(run.retrieved) > len(seed):
        papers = list(run.retrieved.values())[:KEPT_WHEN_UNCHOSEN]
        note = _join(note, f"the agent named none of the retrieved records; the first {len(papers)} are kept")
    papers = _with_seed_first(seed, papers)
    return Survey(
        papers=papers,
        open_problems=_clean(answer.open_problems),
        key_objects=_clean(answer.key_objects),
        summary=answer.summary.strip(),
        tools_available=sorted(tools),
        tool_calls=run.calls,
        retrieved=len(run.retrieved),
        turns=run.turns,
        user_papers=list(user_papers or []),
        note=note,
    )


def look_up_papers(names: list[str], tools: Mapping[str, Tool]) -> list[PaperRecord]:
    """One record per name the researcher gave: identifiers through preprint_search, titles
    through scholar_search (else preprint_search); a title match is preferred to the first hit."""
    calls = [(_lookup_tool(name, tools), name.strip()) for name in names if name.strip()]
    calls = [(tool, name) for tool, name in calls if tool]
    found: dict[str, PaperRecord] = {}
    for (_, name), result in call_tools(tools, calls, {}):
        match = next((p for p in result.papers if p.title.casefold() == name.casefold()), None)
        paper = match or (result.papers[0] if result.papers else None)
        if paper is not None:
            found.setdefault(paper.id, paper)
    return list(found.values())


def _lookup_tool(name: str, tools: Mapping[str, Tool]) -> str:
    if _ARXIV_ID.match(name.strip()) and "preprint_search" in tools:
        return "preprint_search"
    return next((tool for tool in ("scholar_search", "preprint_search") if tool in tools), "")


def _paper_hint(named: list[str], seed: list[PaperRecord]) -> str:
    if not named:
        return ""
    lines = ["Papers the researcher named: " + ", ".join(named)]
    if seed:
        lines += ["Found for them (already retrieved; keep them):", *(paper_line(p) for p in seed)]
    missing = len(named) - len(seed)
    if missing > 0:
        lines.append(f"{missing} of the named papers were not found by lookup; search for them.")
    return "\n".join(lines)


def _with_seed_first(seed: list[PaperRecord], papers: list[PaperRecord]) -> list[PaperRecord]:
    merged = {paper.id: paper for paper in seed}
    for paper in papers:
        merged.setdefault(paper.id, paper)
    return list(merged.values())


def _join(*parts: str) -> str:
    return "; ".join(part for part in parts if part)


def _clean(items: list[str]) -> list[str]:
    return [item.strip() for item in items if item and item.strip()]
