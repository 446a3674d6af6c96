"""Direction planning: divergent ideation, then a convergent choice of one precise goal."""

from __future__ import annotations

import re
from collections.abc import Mapping

from lemmata.agents.answers import IdeationAnswer, PlannerAnswer
from lemmata.agents.client import LLMClient
from lemmata.agents.parsing import parse_json_answer
from lemmata.agents.prompts import render_prompt
from lemmata.agents.tool_loop import AgentSpec, run_tool_agent
from lemmata.artifacts import Direction, DirectionIdeas, Directions, GateDecision, Survey, TaskInput
from lemmata.errors import LemmataError, ModelOutputError
from lemmata.tools.base import Tool

TITLE_CHARS = 120


IDEATION_MAX_TURNS = 3  # the spec's limit for the ideation agent


def run_ideation(
    client: LLMClient,
    task: TaskInput,
    survey: Survey,
    tools: Mapping[str, Tool],
    compress_every: int,
    feedback: str = "",
) -> DirectionIdeas:
    """The divergent step. No direction, or an error, is recorded, not raised: the direction
    gate then asks the researcher (the spec's direction-planning fallback)."""
    problems = "\n".join(f"- {p}" for p in survey.open_problems) or "(none reported)"
    spec = AgentSpec("ideation", "ideation", IdeationAnswer, IDEATION_MAX_TURNS, compress_every)
    values = {
        "task": task.task,
        "survey_summary": survey.summary or "(none)",
        "open_problems": problems,
        "feedback": f"Reviewer feedback on the survey: {feedback}" if feedback else "",
    }
    try:
        run = run_tool_agent(client, spec, values, tools)
    except LemmataError as exc:
        return DirectionIdeas(error=f"the ideation agent failed: {exc}")
    answer = run.final or IdeationAnswer()
    candidates = [
        Direction(title=d.title.strip(), summary=d.summary.strip(), rationale=d.rationale.strip())
        for d in answer.directions
        if d.title.strip()
    ]
    error = (
        ""
        if candidates
        else (
            "the ideation agent proposed no research direction"
            if run.final
            else f"the ideation agent gave no readable answer in {run.turns} turns"
        )
    )
    return DirectionIdeas(candidates=candidates, error=error, turns=run.turns, tool_calls=run.calls)


def run_directions(client: LLMClient, task: TaskInput, ideas: DirectionIdeas, decision: GateDecision) -> Directions:
    """The convergent step, over the ideation's candidates or the direction the researcher typed."""
    candidates = ideas.candidates or [researcher_direction(decision)]
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


def researcher_direction(decision: GateDecision) -> Direction:
    direction = decision.feedback.strip()
    if decision.decided_by == "automatic" or not direction:
        raise LemmataError("ideation proposed no direction and gates/direction.json holds none from the researcher")
    return Direction(title=direction[:TITLE_CHARS], summary=direction, rationale="given by the researcher")


def statement_of(task: str) -> str:
    """The theorem in a `prove` task: "Prove that the sum ..." -> "The sum ..."."""
    statement = re.sub(
        r"^\s*(?:please\s+)?(?:prove|show)(?:\s+that)?\s*[:,]?\s*", "", task, flags=re.IGNORECASE
    ).strip()
    return statement[:1].upper() + statement[1:] if statement else task.strip()


def _numbered(directions: list[Direction]) -> str:
    return "\n".join(f"{i}. {d.title}: {d.summary}" for i, d in enumerate(directions))
