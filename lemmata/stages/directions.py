"""Direction planning: divergent ideation, then a convergent choice of one precise goal."""

from __future__ import annotations

import re

from lemmata.artifacts import Direction, Directions, Survey, TaskInput
from lemmata.errors import ModelOutputError
from lemmata.llm.client import LLMClient
from lemmata.stages.answers import IdeationAnswer, PlannerAnswer
from lemmata.stages.parsing import parse_json_answer
from lemmata.stages.prompts import render_prompt


def run_directions(client: LLMClient, task: TaskInput, survey: Survey) -> Directions:
    candidates = propose_directions(client, task, survey)
    prompt = render_prompt("planner", task=task.task, directions=_numbered(candidates))
    text = client.complete("planner", prompt.system, prompt.user, json_answer=True)
    answer = parse_json_answer(text, PlannerAnswer, "planner")
    goal = answer.goal.strip()
    if task.mode == "prove":
        # The researcher stated the theorem: a planner may choose the approach, never swap the
        # statement for a broader (or vaguer) one. Small models do exactly that.
        goal = statement_of(task.task)
    if not goal:
        raise ModelOutputError("the planner chose no goal to prove")
    return Directions(
        candidates=candidates,
        chosen=min(max(answer.chosen, 0), len(candidates) - 1),
        goal=goal,
        research_brief=answer.research_brief.strip(),
    )


def statement_of(task: str) -> str:
    """The theorem in a `prove` task: "Prove that the sum ..." -> "The sum ..."."""
    statement = re.sub(r"^\s*(?:please\s+)?(?:prove|show)(?:\s+that)?\s*[:,]?\s*", "", task, flags=re.IGNORECASE).strip()
    return statement[:1].upper() + statement[1:] if statement else task.strip()


def propose_directions(client: LLMClient, task: TaskInput, survey: Survey) -> list[Direction]:
    problems = "\n".join(f"- {p}" for p in survey.open_problems) or "(none reported)"
    prompt = render_prompt(
        "ideation", task=task.task, survey_summary=survey.summary or "(none)", open_problems=problems
    )
    text = client.complete("ideation", prompt.system, prompt.user, json_answer=True)
    answer = parse_json_answer(text, IdeationAnswer, "ideation")
    directions = [
        Direction(title=d.title.strip(), summary=d.summary.strip(), rationale=d.rationale.strip())
        for d in answer.directions
        if d.title.strip()
    ]
    if not directions:
        raise ModelOutputError("the ideation agent proposed no research direction")
    return directions


def _numbered(directions: list[Direction]) -> str:
    return "\n".join(f"{i}. {d.title}: {d.summary}" for i, d in enumerate(directions))
