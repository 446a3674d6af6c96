"""Survey and direction planning stages.

The survey has no search tools yet: its papers list is always empty, whatever the model
writes. Directions: one ideation call (divergent), one planner call (convergent); the
chosen index is clamped to the candidates; no direction or no goal is a ModelOutputError.
"""

from __future__ import annotations

import json

import pytest

from lemmata.artifacts import Direction, Survey, TaskInput
from lemmata.errors import ModelOutputError
from lemmata.llm.base import ChatRequest
from lemmata.stages.directions import run_directions, statement_of
from lemmata.stages.survey import run_survey
from lemmata.testing.scripted_backend import scripted_client

TASK = "Prove that the sum of two even integers is even."


def user_text(request: ChatRequest) -> str:
    return request.messages[-1].content


def task(mode: str = "prove", paper_ids: list[str] | None = None) -> TaskInput:
    return TaskInput(session_id="s1", mode=mode, task=TASK, paper_ids=paper_ids or [])  # type: ignore[arg-type]


SURVEY_JSON = {
    "summary": "  Parity is preserved under addition.  ",
    "open_problems": ["Goldbach's conjecture", "  ", "", " twin primes "],
    "key_objects": ["even integers", "the ring Z/2Z"],
}


# =========================================================================== survey


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(json.dumps(SURVEY_JSON), id="bare-json"),
        pytest.param("```json\n" + json.dumps(SURVEY_JSON, indent=2) + "\n```", id="fenced-json"),
        pytest.param("Here is the survey you asked for:\n" + json.dumps(SURVEY_JSON) + "\nBest,", id="prose-wrapped"),
    ],
)
def test_survey_json_is_parsed_and_cleaned(answer: str) -> None:
    client, backend = scripted_client({"survey": [answer]})
    survey = run_survey(client, task())
    assert survey == Survey(
        papers=[],
        open_problems=["Goldbach's conjecture", "twin primes"],
        key_objects=["even integers", "the ring Z/2Z"],
        summary="Parity is preserved under addition.",
        tools_available=[],
    )
    assert len(backend.calls("survey")) == 1
    assert backend.pending() == 0


def test_the_model_cannot_add_papers() -> None:
    answer = {
        **SURVEY_JSON,
        "papers": [{"id": "arXiv:1234.5678", "title": "An Invented Paper", "authors": ["A. Hallucination"]}],
        "tools_available": ["arxiv_search"],
    }
    client, _ = scripted_client({"survey": [json.dumps(answer)]})
    survey = run_survey(client, task())
    assert survey.papers == []
    assert survey.tools_available == []
    assert "Invented" not in survey.model_dump_json()


def test_from_papers_mode_puts_the_paper_ids_in_the_prompt() -> None:
    client, backend = scripted_client({"survey": [json.dumps(SURVEY_JSON)]})
    survey = run_survey(client, task(mode="from-papers", paper_ids=["arXiv:2101.00001", "doi:10.1000/xyz"]))
    prompt = user_text(backend.calls("survey")[0])
    assert "Mode: from-papers" in prompt
    assert "arXiv:2101.00001" in prompt and "doi:10.1000/xyz" in prompt
    assert TASK in prompt
    assert survey.papers == []  # named ids are not paper records


def test_no_paper_hint_without_paper_ids() -> None:
    client, backend = scripted_client({"survey": [json.dumps(SURVEY_JSON)]})
    run_survey(client, task())
    assert "Starting papers" not in user_text(backend.calls("survey")[0])


def test_survey_with_missing_fields_gives_empty_lists() -> None:
    client, _ = scripted_client({"survey": ['{"summary": "short"}']})
    survey = run_survey(client, task())
    assert survey.summary == "short"
    assert survey.open_problems == [] and survey.key_objects == []


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param("I could not find anything relevant.", id="prose"),
        pytest.param('["a", "b"]', id="array"),
        pytest.param('{"open_problems": "one, two"}', id="wrong-type"),
    ],
)
def test_unusable_survey_answer_is_a_model_output_error(answer: str) -> None:
    client, _ = scripted_client({"survey": [answer]})
    with pytest.raises(ModelOutputError, match="survey"):
        run_survey(client, task())


# =========================================================================== directions

SURVEY = Survey(summary="Parity.", open_problems=["Open problem A", "Open problem B"])
IDEATION = {
    "directions": [
        {"title": " Direct parity ", "summary": "write n=2k", "rationale": "elementary"},
        {"title": "Modular arithmetic", "summary": "work in Z/2Z", "rationale": "clean"},
    ]
}


def planner(chosen: int = 1, goal: str = "For all even n, m: n + m is even.", brief: str = "Use Z/2Z.") -> str:
    return json.dumps({"chosen": chosen, "goal": goal, "research_brief": brief})


def test_ideation_then_planner() -> None:
    client, backend = scripted_client({"ideation": [json.dumps(IDEATION)], "planner": [planner()]})
    directions = run_directions(client, task(mode="explore"), SURVEY)
    assert [r.role for r in backend.requests] == ["ideation", "planner"]
    assert directions.candidates == [
        Direction(title="Direct parity", summary="write n=2k", rationale="elementary"),
        Direction(title="Modular arithmetic", summary="work in Z/2Z", rationale="clean"),
    ]
    assert directions.chosen == 1
    assert directions.goal == "For all even n, m: n + m is even."
    assert directions.research_brief == "Use Z/2Z."
    ideation_prompt = user_text(backend.calls("ideation")[0])
    assert "- Open problem A" in ideation_prompt and "Parity." in ideation_prompt
    planner_prompt = user_text(backend.calls("planner")[0])
    assert "0. Direct parity: write n=2k" in planner_prompt
    assert "1. Modular arithmetic: work in Z/2Z" in planner_prompt
    assert backend.pending() == 0


@pytest.mark.parametrize(
    "chosen, expected",
    [
        pytest.param(-1, 0, id="negative"),
        pytest.param(0, 0, id="first"),
        pytest.param(1, 1, id="last"),
        pytest.param(2, 1, id="one-past-the-end"),
        pytest.param(99, 1, id="far-past-the-end"),
    ],
)
def test_chosen_index_is_clamped(chosen: int, expected: int) -> None:
    client, _ = scripted_client({"ideation": [json.dumps(IDEATION)], "planner": [planner(chosen)]})
    assert run_directions(client, task(), SURVEY).chosen == expected


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param('{"directions": []}', id="empty-list"),
        pytest.param('{"directions": [{"title": "   ", "summary": "x"}]}', id="only-blank-titles"),
        pytest.param("{}", id="no-directions-key"),
    ],
)
def test_empty_ideation_is_a_model_output_error(answer: str) -> None:
    client, backend = scripted_client({"ideation": [answer], "planner": [planner()]})
    with pytest.raises(ModelOutputError, match="no research direction"):
        run_directions(client, task(), SURVEY)
    assert backend.calls("planner") == []


@pytest.mark.parametrize(
    "answer, match",
    [
        pytest.param(planner(goal=""), "no goal", id="empty-goal"),
        pytest.param(planner(goal="   \n "), "no goal", id="blank-goal"),
        pytest.param('{"chosen": 0}', "planner", id="missing-goal"),
    ],
)
def test_empty_goal_is_a_model_output_error(answer: str, match: str) -> None:
    client, _ = scripted_client({"ideation": [json.dumps(IDEATION)], "planner": [answer]})
    with pytest.raises(ModelOutputError, match=match):
        run_directions(client, task(mode="explore"), SURVEY)


@pytest.mark.parametrize("planner_goal", ["Even and odd numbers have many applications.", ""])
def test_prove_mode_keeps_the_researchers_statement_as_the_goal(planner_goal: str) -> None:
    """Malformed model output met on the embedded model: a planner widening the theorem into a survey topic."""
    client, _ = scripted_client({"ideation": [json.dumps(IDEATION)], "planner": [planner(goal=planner_goal)]})
    directions = run_directions(client, task(mode="prove"), SURVEY)
    assert directions.goal == "The sum of two even integers is even."
    assert directions.research_brief == "Use Z/2Z."


@pytest.mark.parametrize(("task_text", "statement"), [
    ("Prove that the sum of two even integers is even.", "The sum of two even integers is even."),
    ("show: every prime p > 2 is odd", "Every prime p > 2 is odd"),
    ("the sum of two even integers is even", "The sum of two even integers is even"),
    ("Prove", "Prove"),
])
def test_statement_of_a_prove_task(task_text: str, statement: str) -> None:
    assert statement_of(task_text) == statement


def test_garbage_ideation_is_a_model_output_error_naming_the_role() -> None:
    client, _ = scripted_client({"ideation": ["Let me think about this..."]})
    with pytest.raises(ModelOutputError, match="ideation"):
        run_directions(client, task(), SURVEY)
