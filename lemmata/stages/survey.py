"""Survey stage: what is known around the task, its open problems and key objects."""

from __future__ import annotations

from lemmata.artifacts import Survey, TaskInput
from lemmata.llm.client import LLMClient
from lemmata.stages.answers import SurveyAnswer
from lemmata.stages.parsing import parse_json_answer
from lemmata.stages.prompts import render_prompt


def run_survey(client: LLMClient, task: TaskInput) -> Survey:
    """One survey call. Papers stay empty until search tools exist: the model cannot add any."""
    paper_hint = ""
    if task.paper_ids:
        paper_hint = "Starting papers named by the researcher: " + ", ".join(task.paper_ids)
    prompt = render_prompt("survey", mode=task.mode, task=task.task, paper_hint=paper_hint)
    text = client.complete("survey", prompt.system, prompt.user, json_answer=True)
    answer = parse_json_answer(text, SurveyAnswer, "survey")
    return Survey(
        papers=[],
        open_problems=_clean(answer.open_problems),
        key_objects=_clean(answer.key_objects),
        summary=answer.summary.strip(),
        tools_available=[],
    )


def _clean(items: list[str]) -> list[str]:
    return [item.strip() for item in items if item and item.strip()]
