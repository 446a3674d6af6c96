"""Survey and direction planning stages, and the tool-use loop they share.

The survey agent searches in turns with tools (in-memory fakes here; the HTTP tools have their
own tests); the papers it keeps are records a tool returned. The survey fallback (`final_survey`)
re-runs the survey with the researcher's papers. Directions: the ideation agent (divergent, at
most 3 turns) records failures instead of raising, for the direction gate; the planner
(convergent) takes its candidates or the researcher's direction.
"""

from __future__ import annotations

import json
import threading

import pytest

from lemmata.agents.answers import ToolCallItem
from lemmata.agents.tool_loop import MAX_CALLS_PER_TURN
from lemmata.artifacts import Direction, DirectionIdeas, GateDecision, PaperNote, PaperRecord, Survey, TaskInput
from lemmata.errors import LemmataError, ModelOutputError, ProviderError
from lemmata.llm.base import ChatRequest
from lemmata.run.cards import survey_card
from lemmata.stages.directions import run_directions, run_ideation, statement_of
from lemmata.stages.survey.literature import SurveyLimits, final_survey, run_survey, split_paper_list
from lemmata.stages.survey.paper_reader import literature_digest, read_papers, with_paper_notes
from lemmata.tools.base import ToolResult, tool_error
from support.scripted_backend import scripted_client

TASK = "Prove that the sum of two even integers is even."
LIMITS = SurveyLimits(max_turns=4, compress_every=6)


def user_text(request: ChatRequest) -> str:
    return request.messages[-1].content


def task(mode: str = "prove", paper_ids: list[str] | None = None) -> TaskInput:
    return TaskInput(session_id="s1", mode=mode, task=TASK, paper_ids=paper_ids or [])  # type: ignore[arg-type]


def record(number: int, title: str = "") -> PaperRecord:
    return PaperRecord(
        id=f"arXiv:2101.0000{number}",
        title=title or f"Parity paper {number}",
        authors=[f"Author {number}"],
        year=2020 + number,
        source="preprint_search",
    )


class ShelfTool:
    """A search tool over a fixed shelf of records: what a search service would return."""

    def __init__(self, name: str, shelf: list[PaperRecord], barrier: threading.Barrier | None = None) -> None:
        self.name, self.description, self.parameter = name, f"{name} over a shelf", "query"
        self.shelf, self.barrier, self.queries = shelf, barrier, []

    def run(self, argument: str) -> ToolResult:
        self.queries.append(argument)
        if self.barrier is not None:
            self.barrier.wait(timeout=5)  # both calls of a turn must be running at once
        found = [p for p in self.shelf if argument.lower() in (p.title + " " + p.id).lower()]
        return ToolResult(text="\n".join(f"[{p.id}] {p.title}" for p in found) or "no results", papers=found)


class DownTool:
    name, description, parameter = "scholar_search", "always down", "query"

    def run(self, argument: str) -> ToolResult:
        return tool_error(self.name, "the service did not answer (connection refused)")


SHELF = [record(1, "Parity of sums"), record(2, "Even integers in rings"), record(3, "Goldbach notes")]


def tools(*extra: object) -> dict:
    found = {"preprint_search": ShelfTool("preprint_search", SHELF)}
    found.update({tool.name: tool for tool in extra})  # type: ignore[attr-defined]
    return found


def turn(calls: list[tuple[str, str]] = (), papers: list[str] = (), **fields: object) -> str:
    return json.dumps(
        {
            "tool_calls": [{"tool": t, "argument": a} for t, a in calls],
            "papers": list(papers),
            "summary": "Parity is preserved.",
            "open_problems": ["Goldbach"],
            "key_objects": ["Z/2Z"],
            **fields,
        }
    )


SURVEY_JSON = {
    "summary": "  Parity is preserved under addition.  ",
    "open_problems": ["Goldbach's conjecture", "  ", "", " twin primes "],
    "key_objects": ["even integers", "the ring Z/2Z"],
}


# =========================================================================== survey


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(json.dumps(SURVEY_JSON), id="bare-json-without-tool-calls"),
        pytest.param("```json\n" + json.dumps(SURVEY_JSON, indent=2) + "\n```", id="fenced-json"),
        pytest.param("Here is the survey you asked for:\n" + json.dumps(SURVEY_JSON) + "\nBest,", id="prose-wrapped"),
    ],
)
def test_a_final_answer_in_the_first_turn_is_parsed_and_cleaned(answer: str) -> None:
    client, backend = scripted_client({"survey": [answer]})
    survey = run_survey(client, task(), {}, LIMITS)
    assert survey.papers == [] and survey.turns == 1 and survey.tool_calls == []
    assert survey.open_problems == ["Goldbach's conjecture", "twin primes"]
    assert survey.key_objects == ["even integers", "the ring Z/2Z"]
    assert survey.summary == "Parity is preserved under addition."
    assert "(no tools in this run" in user_text(backend.calls("survey")[0])
    assert backend.pending() == 0


def test_papers_are_only_records_a_tool_returned() -> None:
    invented = {"id": "arXiv:1234.5678", "title": "An Invented Paper", "authors": ["A. Hallucination"]}
    client, backend = scripted_client(
        {
            "survey": [
                turn([("preprint_search", "parity")]),
                turn(
                    papers=["arXiv:2101.00001", "arXiv:1234.5678", "An Invented Paper", invented], tools_available=["x"]
                ),
            ]
        }
    )
    survey = run_survey(client, task(), tools(), LIMITS)
    assert [p.id for p in survey.papers] == ["arXiv:2101.00001"]
    assert survey.papers[0] == SHELF[0]  # exactly as the tool returned it
    assert "Invented" not in survey.model_dump_json() and survey.tools_available == ["preprint_search"]
    assert survey.retrieved == 1 and survey.turns == 2
    assert "[arXiv:2101.00001] Parity of sums" in user_text(backend.calls("survey")[1])


def test_papers_given_as_records_are_read_by_their_identifier() -> None:
    """Malformed model output: papers written as records (dicts) instead of identifiers."""
    client, _ = scripted_client(
        {
            "survey": [
                turn([("preprint_search", "parity")]),
                json.dumps(
                    {"tool_calls": [], "papers": [{"id": "arXiv:2101.00001", "title": "x"}, {"title": "Invented"}, 7]}
                ),
            ]
        }
    )
    survey = run_survey(client, task(), tools(), LIMITS)
    assert survey.papers == [SHELF[0]] and survey.note == ""


def test_papers_are_chosen_by_bare_identifier_or_title() -> None:
    client, _ = scripted_client(
        {
            "survey": [
                turn([("preprint_search", "parity"), ("preprint_search", "even")]),
                turn(papers=["2101.00002", "parity OF SUMS"]),
            ]
        }
    )
    survey = run_survey(client, task(), tools(), LIMITS)
    assert [p.id for p in survey.papers] == ["arXiv:2101.00002", "arXiv:2101.00001"]


def test_retrieved_records_are_kept_when_the_agent_names_none() -> None:
    client, _ = scripted_client({"survey": [turn([("preprint_search", "arxiv")]), turn(papers=[])]})
    survey = run_survey(client, task(), tools(), LIMITS)
    assert survey.papers == SHELF and "named none of the retrieved records" in survey.note


def test_the_calls_of_one_turn_run_concurrently() -> None:
    barrier = threading.Barrier(2)
    shelf_a, shelf_b = ShelfTool("preprint_search", SHELF, barrier), ShelfTool("scholar_search", SHELF, barrier)
    client, _ = scripted_client(
        {
            "survey": [
                turn([("preprint_search", "parity"), ("scholar_search", "goldbach")]),
                turn(papers=["arXiv:2101.00003"]),
            ]
        }
    )
    survey = run_survey(client, task(), {"preprint_search": shelf_a, "scholar_search": shelf_b}, LIMITS)
    assert shelf_a.queries == ["parity"] and shelf_b.queries == ["goldbach"]  # the barrier did not time out
    assert [c.tool for c in survey.tool_calls] == ["preprint_search", "scholar_search"]
    assert all(c.ok for c in survey.tool_calls)


def test_a_repeated_call_is_answered_from_the_cache() -> None:
    shelf = ShelfTool("preprint_search", SHELF)
    client, _ = scripted_client(
        {
            "survey": [
                turn([("preprint_search", "parity")]),
                turn([("preprint_search", "parity")]),
                turn(papers=["arXiv:2101.00001"]),
            ]
        }
    )
    survey = run_survey(client, task(), {"preprint_search": shelf}, LIMITS)
    assert shelf.queries == ["parity"] and len(survey.tool_calls) == 2


def test_at_most_a_few_calls_per_turn() -> None:
    shelf = ShelfTool("preprint_search", SHELF)
    calls = [("preprint_search", f"query {n}") for n in range(MAX_CALLS_PER_TURN + 3)]
    client, _ = scripted_client({"survey": [turn(calls), turn()]})
    run_survey(client, task(), {"preprint_search": shelf}, LIMITS)
    assert len(shelf.queries) == MAX_CALLS_PER_TURN


def test_tool_errors_and_unknown_tools_reach_the_agent_not_the_run() -> None:
    client, backend = scripted_client(
        {
            "survey": [
                turn([("scholar_search", "parity"), ("google", "parity"), ("preprint_search", "")]),
                turn(),
            ]
        }
    )
    survey = run_survey(client, task(), tools(DownTool()), LIMITS)
    second = user_text(backend.calls("survey")[1])
    assert "scholar_search failed: the service did not answer (connection refused)" in second
    assert "There is no tool named 'google'. Available tools: preprint_search, scholar_search." in second
    assert "preprint_search needs a non-empty query." in second
    assert [c.ok for c in survey.tool_calls] == [False, False, False] and survey.papers == []


def test_the_last_turn_offers_no_tools_and_its_calls_are_ignored() -> None:
    shelf = ShelfTool("preprint_search", SHELF)
    client, backend = scripted_client(
        {
            "survey": [
                turn([("preprint_search", "parity")]),
                turn([("preprint_search", "even")], papers=["arXiv:2101.00001"]),
            ]
        }
    )
    survey = run_survey(client, task(), {"preprint_search": shelf}, SurveyLimits(max_turns=2, compress_every=6))
    assert shelf.queries == ["parity"] and survey.turns == 2 and survey.papers == [SHELF[0]]
    last = user_text(backend.calls("survey")[1])
    assert "Turn 2 of 2; this is the last one." in last and "(no tool calls this turn" in last


def test_without_tools_a_readable_answer_is_final_even_if_it_calls_tools() -> None:
    """Malformed model output met under a grammar: tool calls although the run offers no tool."""
    client, backend = scripted_client({"survey": [turn([("preprint_search", "parity")])]})
    survey = run_survey(client, task(), {}, LIMITS)
    assert survey.turns == 1 and survey.tool_calls == [] and backend.pending() == 0


def test_unreadable_answers_cost_a_turn_and_are_explained_to_the_agent() -> None:
    client, backend = scripted_client({"survey": ["I will search now.", turn()]})
    survey = run_survey(client, task(), tools(), LIMITS)
    assert survey.turns == 2 and survey.summary == "Parity is preserved."
    assert "Turn 1: your answer could not be read" in user_text(backend.calls("survey")[1])


def test_no_readable_answer_at_all_gives_an_empty_survey_with_a_note() -> None:
    client, _ = scripted_client({"survey": ["prose"] * 2})
    survey = run_survey(client, task(), tools(), SurveyLimits(max_turns=2, compress_every=6))
    assert survey.summary == "" and survey.papers == [] and survey.note == "no readable answer in 2 turns"


def test_the_history_is_compressed_every_few_turns() -> None:
    client, backend = scripted_client(
        {
            "survey": [turn([("preprint_search", "parity")]), turn([("preprint_search", "even")]), turn()],
            "compress": ["Searched parity and even; found two papers."],
        }
    )
    run_survey(client, task(), tools(), SurveyLimits(max_turns=3, compress_every=2))
    assert len(backend.calls("compress")) == 1
    assert "Summary of earlier turns: Searched parity and even" in user_text(backend.calls("survey")[2])


def test_from_papers_looks_up_the_named_papers_and_keeps_them() -> None:
    shelf = ShelfTool("preprint_search", SHELF)
    client, backend = scripted_client({"survey": [turn(papers=[])]})
    survey = run_survey(
        client,
        task(mode="from-papers", paper_ids=["arXiv:2101.00002", "2101.00003"]),
        {"preprint_search": shelf},
        LIMITS,
    )
    assert shelf.queries == ["arXiv:2101.00002", "2101.00003"]
    assert [p.id for p in survey.papers] == ["arXiv:2101.00002", "arXiv:2101.00003"]
    prompt = user_text(backend.calls("survey")[0])
    assert "Mode: from-papers" in prompt and "Papers the researcher named: arXiv:2101.00002, 2101.00003" in prompt
    assert "[arXiv:2101.00002] Even integers in rings" in prompt


def test_titles_are_looked_up_by_scholar_search_and_a_title_match_wins() -> None:
    scholar = ShelfTool("scholar_search", SHELF)
    client, _ = scripted_client({"survey": [turn()]})
    survey = run_survey(client, task(), {"scholar_search": scholar}, LIMITS, user_papers=["goldbach notes", "no such"])
    assert scholar.queries == ["goldbach notes", "no such"]
    assert survey.papers == [SHELF[2]] and survey.user_papers == ["goldbach notes", "no such"]


@pytest.mark.parametrize(
    "item, expected",
    [
        pytest.param({"tool": "preprint_search", "argument": "x"}, ("preprint_search", "x"), id="ours"),
        pytest.param(
            {"name": "preprint_search", "arguments": {"query": "x"}}, ("preprint_search", "x"), id="native-api-shape"
        ),
        pytest.param(
            {"tool": "latex_section_read", "section": "Intro"}, ("latex_section_read", "Intro"), id="named-parameter"
        ),
        pytest.param({"tool": "scholar_search", "q": "x"}, ("scholar_search", "x"), id="short-q"),
    ],
)
def test_tool_calls_in_other_shapes_are_read(item: dict, expected: tuple[str, str]) -> None:
    call = ToolCallItem.model_validate(item)
    assert (call.tool, call.argument) == expected


# =========================================================================== survey fallback

FIRST_EMPTY = Survey(summary="Nothing found.", note="")
FIRST_WITH_PAPERS = Survey(papers=[record(1)])


def decision(feedback: str, decided_by: str = "user") -> GateDecision:
    return GateDecision(gate="survey_papers", approved=True, feedback=feedback, decided_by=decided_by)  # type: ignore[arg-type]


def test_a_survey_with_papers_stands() -> None:
    assert (
        final_survey(FIRST_WITH_PAPERS, decision("", "automatic"), lambda names: pytest.fail("re-ran"))
        == FIRST_WITH_PAPERS
    )


def test_the_researchers_list_is_injected_and_the_survey_runs_once_more() -> None:
    reruns: list[list[str]] = []
    again = Survey(papers=[record(2)], user_papers=["2101.00002", "Goldbach notes"])
    result = final_survey(
        FIRST_EMPTY, decision(" 2101.00002, Goldbach notes ,"), lambda names: reruns.append(names) or again
    )
    assert reruns == [["2101.00002", "Goldbach notes"]] and result == again


@pytest.mark.parametrize("feedback, decided_by", [("", "user"), ("   ", "user"), ("", "default")])
def test_enter_proceeds_without_papers(feedback: str, decided_by: str) -> None:
    result = final_survey(FIRST_EMPTY, decision(feedback, decided_by), lambda names: pytest.fail("re-ran"))
    assert result.papers == [] and result.note == "no papers: the run proceeds without them"


@pytest.mark.parametrize(
    "text, names",
    [
        ("a, b", ["a", "b"]),
        ("arXiv:2101.00001;Title two\nthree", ["arXiv:2101.00001", "Title two", "three"]),
        (" , ,", []),
    ],
)
def test_split_paper_list(text: str, names: list[str]) -> None:
    assert split_paper_list(text) == names


# =========================================================================== directions

SURVEY = Survey(summary="Parity.", open_problems=["Open problem A", "Open problem B"])
IDEATION = {
    "directions": [
        {"title": " Direct parity ", "summary": "write n=2k", "rationale": "elementary"},
        {"title": "Modular arithmetic", "summary": "work in Z/2Z", "rationale": "clean"},
    ]
}
CANDIDATES = [
    Direction(title="Direct parity", summary="write n=2k", rationale="elementary"),
    Direction(title="Modular arithmetic", summary="work in Z/2Z", rationale="clean"),
]
IDEAS = DirectionIdeas(candidates=CANDIDATES, turns=1)
AUTOMATIC = GateDecision(
    gate="direction", approved=True, feedback="ideation proposed 2 directions", decided_by="automatic"
)


def planner(chosen: int = 1, goal: str = "For all even n, m: n + m is even.", brief: str = "Use Z/2Z.") -> str:
    return json.dumps({"chosen": chosen, "goal": goal, "research_brief": brief})


def test_ideation_proposes_candidates_with_the_survey_in_its_prompt() -> None:
    client, backend = scripted_client({"ideation": [json.dumps(IDEATION)]})
    ideas = run_ideation(client, task(mode="explore"), SURVEY, {}, compress_every=6)
    assert ideas == IDEAS
    prompt = user_text(backend.calls("ideation")[0])
    assert "- Open problem A" in prompt and "Parity." in prompt and "Turn 1 of 3" in prompt


def test_ideation_may_search_for_at_most_three_turns() -> None:
    shelf = ShelfTool("preprint_search", SHELF)
    search = json.dumps({"tool_calls": [{"tool": "preprint_search", "argument": "parity"}]})
    search_more = json.dumps({"tool_calls": [{"tool": "preprint_search", "argument": "even"}]})
    client, backend = scripted_client(
        {
            "ideation": [
                search,
                search_more,
                json.dumps(
                    {**IDEATION, "tool_calls": [{"tool": "preprint_search", "argument": "ignored on the last turn"}]}
                ),
            ]
        }
    )
    ideas = run_ideation(client, task(), SURVEY, {"preprint_search": shelf}, compress_every=6)
    assert ideas.candidates == CANDIDATES and ideas.turns == 3 and shelf.queries == ["parity", "even"]
    assert "[arXiv:2101.00001] Parity of sums" in user_text(backend.calls("ideation")[1])


@pytest.mark.parametrize(
    "answers, error",
    [
        pytest.param(['{"directions": []}'], "the ideation agent proposed no research direction", id="empty-list"),
        pytest.param(
            ['{"directions": [{"title": "   ", "summary": "x"}]}'],
            "proposed no research direction",
            id="only-blank-titles",
        ),
        pytest.param(["{}"], "proposed no research direction", id="no-directions-key"),
        pytest.param(["Let me think about this..."] * 3, "gave no readable answer in 3 turns", id="prose-three-times"),
        pytest.param(
            [ProviderError("the provider is down (HTTP 503 after 5 attempts)")],
            "the ideation agent failed: model call for role 'ideation'",
            id="provider-error",
        ),
    ],
)
def test_no_direction_or_an_error_is_recorded_for_the_direction_gate(answers: list, error: str) -> None:
    client, _ = scripted_client({"ideation": answers})
    ideas = run_ideation(client, task(), SURVEY, {}, compress_every=6)
    assert ideas.candidates == [] and error in ideas.error


def test_the_planner_converges_on_the_ideation_candidates() -> None:
    client, backend = scripted_client({"planner": [planner()]})
    directions = run_directions(client, task(mode="explore"), IDEAS, AUTOMATIC)
    assert directions.candidates == CANDIDATES and directions.chosen == 1
    assert directions.goal == "For all even n, m: n + m is even." and directions.research_brief == "Use Z/2Z."
    planner_prompt = user_text(backend.calls("planner")[0])
    assert "0. Direct parity: write n=2k" in planner_prompt and "1. Modular arithmetic: work in Z/2Z" in planner_prompt


def test_the_researchers_direction_replaces_an_empty_ideation() -> None:
    typed = GateDecision(gate="direction", approved=True, feedback="Work modulo 4 instead.", decided_by="user")
    client, backend = scripted_client({"planner": [planner(chosen=3, goal="Sums modulo 4.")]})
    directions = run_directions(client, task(mode="explore"), DirectionIdeas(error="none"), typed)
    assert directions.candidates == [
        Direction(title="Work modulo 4 instead.", summary="Work modulo 4 instead.", rationale="given by the researcher")
    ]
    assert directions.chosen == 0 and directions.goal == "Sums modulo 4."
    assert "0. Work modulo 4 instead." in user_text(backend.calls("planner")[0])


def test_an_empty_ideation_without_a_typed_direction_is_refused() -> None:
    client, backend = scripted_client({})
    with pytest.raises(LemmataError, match="holds none from the researcher"):
        run_directions(client, task(), DirectionIdeas(error="none"), AUTOMATIC)
    assert backend.requests == []


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
    client, _ = scripted_client({"planner": [planner(chosen)]})
    assert run_directions(client, task(), IDEAS, AUTOMATIC).chosen == expected


@pytest.mark.parametrize(
    "answer, match",
    [
        pytest.param(planner(goal=""), "no goal", id="empty-goal"),
        pytest.param(planner(goal="   \n "), "no goal", id="blank-goal"),
        pytest.param('{"chosen": 0}', "planner", id="missing-goal"),
    ],
)
def test_empty_goal_is_a_model_output_error(answer: str, match: str) -> None:
    client, _ = scripted_client({"planner": [answer]})
    with pytest.raises(ModelOutputError, match=match):
        run_directions(client, task(mode="explore"), IDEAS, AUTOMATIC)


@pytest.mark.parametrize("planner_goal", ["Even and odd numbers have many applications.", ""])
def test_prove_mode_keeps_the_researchers_statement_as_the_goal(planner_goal: str) -> None:
    """Malformed model output met on the embedded model: a planner widening the theorem into a survey topic."""
    client, _ = scripted_client({"planner": [planner(goal=planner_goal)]})
    directions = run_directions(client, task(mode="prove"), IDEAS, AUTOMATIC)
    assert directions.goal == "The sum of two even integers is even."
    assert directions.research_brief == "Use Z/2Z."


@pytest.mark.parametrize(
    ("task_text", "statement"),
    [
        ("Prove that the sum of two even integers is even.", "The sum of two even integers is even."),
        ("show: every prime p > 2 is odd", "Every prime p > 2 is odd"),
        ("the sum of two even integers is even", "The sum of two even integers is even"),
        ("Prove", "Prove"),
    ],
)
def test_statement_of_a_prove_task(task_text: str, statement: str) -> None:
    assert statement_of(task_text) == statement


def test_the_survey_card_shows_searches_failures_and_the_papers_kept() -> None:
    client, _ = scripted_client(
        {
            "survey": [
                turn([("preprint_search", "parity"), ("scholar_search", "parity")]),
                turn(papers=["arXiv:2101.00001"]),
            ]
        }
    )
    card = " ".join(survey_card(run_survey(client, task(), tools(DownTool()), LIMITS)).split())  # unwrapped
    assert "Searches: 2 tool calls in 2 turns, 1 failed; 1 records retrieved" in card
    assert "! scholar_search('parity'): the service did not answer (connection refused)" in card
    assert "Papers kept: 1" in card and "[arXiv:2101.00001] Parity of sums (2021)" in card
    assert "Open problems: 1" in card and "Key mathematical objects: Z/2Z" in card


# =========================================================================== paper reader

EXTRACTED = json.dumps({"results": [" If a, b are even then a + b is even. ", ""], "techniques": ["unfolding"]})


def test_papers_are_read_from_their_pdf_excerpt_when_there_is_one() -> None:
    papers = [record(1).model_copy(update={"abstract": "An abstract."}), record(2)]
    client, backend = scripted_client({"extractor": [EXTRACTED, EXTRACTED]})
    excerpts = {"arXiv:2101.00001": "Theorem 1. The sum of two even integers is even."}
    notes = read_papers(client, papers, lambda paper: excerpts.get(paper.id))
    assert [(n.paper_id, n.source, n.results) for n in notes] == [
        ("arXiv:2101.00001", "pdf", ["If a, b are even then a + b is even."])
    ]  # record 2 has no abstract
    prompt = user_text(backend.calls("extractor")[0])
    assert "Theorem 1. The sum" in prompt and "theorem and lemma statements from its PDF" in prompt
    assert backend.calls("extractor")[0].scope.endswith(":arXiv:2101.00001")  # concurrent reads replay apart


def test_an_abstract_is_read_without_the_pdf_extra_and_a_failed_read_is_left_out() -> None:
    papers = [record(n).model_copy(update={"abstract": f"Abstract {n}."}) for n in (1, 2, 3)]
    client, _ = scripted_client(
        {"extractor": [lambda r: EXTRACTED if "Abstract 1." in user_text(r) else "no JSON"] * 3}
    )
    survey = with_paper_notes(Survey(papers=papers, note="kept"), client, None)
    assert [(n.paper_id, n.source) for n in survey.paper_notes] == [("arXiv:2101.00001", "abstract")]
    assert survey.note == "kept; paper reader: 1 of 3 papers read"


def test_the_literature_digest_names_each_paper_and_its_results() -> None:
    papers = [record(1), record(2)]
    notes = [
        PaperNote(paper_id="arXiv:2101.00001", source="pdf", results=["R1", "R2"]),
        PaperNote(paper_id="arXiv:2101.00002", source="abstract", techniques=["only a technique"]),
    ]
    assert literature_digest(papers, notes) == "[arXiv:2101.00001] Parity paper 1: R1; R2"
