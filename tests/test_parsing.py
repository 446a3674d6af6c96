"""Lenient readers for model answers (lemmata.stages.parsing).

Spec, theory stage: lemma-list parsing tries four passes in order — (1) JSON in a code
fence, json-labelled or plain; (2) the first JSON object, checked for the keys lemmas,
steps, subgoals, proof_steps, lemma_list, components, parts; (3) the first JSON array;
(4) a plain-text numbered or bulleted list. A null `source` is an empty string; ids and
statements have alternative field names.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from lemmata.errors import ModelOutputError
from lemmata.stages.answers import ConsistencyAnswer, IdeationAnswer, PlannerAnswer, VerifierAnswer
from lemmata.stages.parsing import (
    LIST_KEYS,
    close_truncated_json,
    first_json_value,
    normalise_lemma_items,
    parse_json_answer,
    parse_lemma_list,
)

TWO = [
    {"id": "L1", "statement": "Every even number is a sum of two odd numbers.", "depends_on": [], "source": ""},
    {"id": "L2", "statement": "The sum of two even numbers is even.", "depends_on": ["L1"], "source": "folklore"},
]


def item(id_: str, statement: str, depends_on: list[str] | None = None, source: str = "") -> dict[str, Any]:
    return {"id": id_, "statement": statement, "depends_on": depends_on or [], "source": source}


EXPECTED_TWO = [
    item("L1", "Every even number is a sum of two odd numbers."),
    item("L2", "The sum of two even numbers is even.", ["L1"], "folklore"),
]


# --------------------------------------------------------------------------- pass 1: fences


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("```json\n" + json.dumps({"lemmas": TWO}) + "\n```", id="fence-json-labelled"),
        pytest.param("```JSON\n" + json.dumps({"lemmas": TWO}) + "\n```", id="fence-JSON-uppercase-label"),
        pytest.param("```\n" + json.dumps({"lemmas": TWO}) + "\n```", id="fence-unlabelled"),
        pytest.param("```json\n" + json.dumps(TWO) + "\n```", id="fence-holding-bare-array"),
        pytest.param(
            "Here is my plan.\n\n```json\n" + json.dumps({"lemmas": TWO}, indent=2) + "\n```\n\nI hope it helps!",
            id="fence-with-prose-around",
        ),
    ],
)
def test_pass1_fenced_json(text: str) -> None:
    assert parse_lemma_list(text) == EXPECTED_TWO


@pytest.mark.parametrize("label", ["json", "JSON", "Json", ""])
def test_pass1_wins_over_an_earlier_bare_object_with_a_known_key(label: str) -> None:
    """Fences are tried first, even when an unfenced object comes earlier in the text."""
    decoy = json.dumps({"steps": [{"id": "X1", "statement": "a decoy statement"}]})
    text = f"Draft: {decoy}\nFinal:\n```{label}\n{json.dumps({'lemmas': TWO})}\n```"
    assert parse_lemma_list(text) == EXPECTED_TWO


def test_pass1_ignores_fences_of_other_languages() -> None:
    """A ```python fence is not a JSON fence; the object in it is still found by pass 2."""
    text = "```python\n" + json.dumps({"lemmas": TWO}) + "\n```"
    # pass 2 reads the first JSON object anywhere in the text
    assert parse_lemma_list(text) == EXPECTED_TWO


def test_pass1_skips_a_broken_fence_for_a_later_good_fence() -> None:
    text = "```json\n{\"lemmas\": [oops\n```\nretry:\n```json\n" + json.dumps({"lemmas": TWO}) + "\n```"
    assert parse_lemma_list(text) == EXPECTED_TWO


# --------------------------------------------------------------------------- pass 2: first object


def test_list_keys_are_the_seven_of_the_spec() -> None:
    assert set(LIST_KEYS) == {"lemmas", "steps", "subgoals", "proof_steps", "lemma_list", "components", "parts"}


@pytest.mark.parametrize("key", ["lemmas", "steps", "subgoals", "proof_steps", "lemma_list", "components", "parts"])
def test_pass2_first_object_with_each_known_key(key: str) -> None:
    text = f"Sure, the decomposition is {json.dumps({key: TWO})} — let me know if you need more."
    assert parse_lemma_list(text) == EXPECTED_TWO


@pytest.mark.parametrize("key", ["lemmas", "steps", "subgoals", "proof_steps", "lemma_list", "components", "parts"])
def test_pass1_fenced_object_with_each_known_key(key: str) -> None:
    assert parse_lemma_list(f"```json\n{json.dumps({key: TWO})}\n```") == EXPECTED_TWO


def test_pass2_object_with_an_unknown_key_is_not_a_lemma_list() -> None:
    text = json.dumps({"theorems": TWO})
    # pass 2 finds no known key; pass 3 then takes the first array (the value of "theorems")
    assert parse_lemma_list(text) == EXPECTED_TWO
    # ... and with no array at all, nothing
    assert parse_lemma_list(json.dumps({"theorems": "L1 then L2"})) == []


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(
            # the fence's JSON is missing its final brace: pass 1 fails; pass 2's first object
            # is the outer one (invalid), then an item without a list key; pass 3 reads the array
            '```json\n{"lemmas": ' + json.dumps(TWO) + "\n```",
            id="broken-fence-falls-through-to-pass3-array",
        ),
        pytest.param(
            "```json\n{lemmas: [L1, L2]}\n```\nCorrected: " + json.dumps({"lemmas": TWO}),
            id="broken-fence-falls-through-to-pass2-object",
        ),
        pytest.param(
            "```\nnot json at all\n```\n" + json.dumps(TWO),
            id="non-json-fence-falls-through-to-pass3",
        ),
    ],
)
def test_broken_fence_falls_through_to_a_later_pass(text: str) -> None:
    assert parse_lemma_list(text) == EXPECTED_TWO


# --------------------------------------------------------------------------- pass 3: first array


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(json.dumps(TWO), id="bare-array"),
        pytest.param("The lemmas are:\n" + json.dumps(TWO, indent=1) + "\nDone.", id="array-with-prose"),
        pytest.param(
            json.dumps(["Every even number is a sum of two odd numbers.", "The sum of two even numbers is even."]),
            id="array-of-strings",
        ),
    ],
)
def test_pass3_first_array(text: str) -> None:
    items = parse_lemma_list(text)
    assert [i["statement"] for i in items] == [
        "Every even number is a sum of two odd numbers.",
        "The sum of two even numbers is even.",
    ]


def test_pass3_array_of_strings_gets_empty_ids() -> None:
    assert parse_lemma_list('["A statement.", "Another statement."]') == [
        item("", "A statement."),
        item("", "Another statement."),
    ]


# --------------------------------------------------------------------------- pass 4: text list


@pytest.mark.parametrize(
    "text, expected",
    [
        pytest.param(
            "The plan:\n- First lemma statement.\n* Second lemma statement.\n• Third lemma statement.\nThat's all.",
            ["First lemma statement.", "Second lemma statement.", "Third lemma statement."],
            id="bulleted-list",
        ),
        pytest.param(
            "Plan:\n1. First lemma statement.\n2) Second lemma statement.\n  10. Tenth, indented.\n",
            ["First lemma statement.", "Second lemma statement.", "Tenth, indented."],
            id="numbered-list",
        ),
    ],
)
def test_pass4_text_list(text: str, expected: list[str]) -> None:
    assert parse_lemma_list(text) == [item("", s) for s in expected]


def test_pass4_not_used_when_an_earlier_pass_succeeds() -> None:
    text = "- a bullet that is not a lemma\n```json\n" + json.dumps({"lemmas": TWO}) + "\n```"
    assert parse_lemma_list(text) == EXPECTED_TWO


# --------------------------------------------------------------------------- garbage


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("I am sorry, I cannot decompose this theorem.", id="refusal-prose"),
        pytest.param("{not json} and [also not json", id="broken-json-no-list"),
        pytest.param('{"lemmas": []}', id="empty-lemma-list"),
        pytest.param('{"lemmas": [{"id": "L1"}, {"id": "L2", "statement": ""}]}', id="items-without-statements"),
        pytest.param("[1, 2, 3]", id="array-of-numbers"),
        pytest.param("```json\n{\"lemmas\": \"L1 and L2\"}\n```", id="lemmas-is-a-string"),
    ],
)
def test_garbage_gives_an_empty_list(text: str) -> None:
    assert parse_lemma_list(text) == []


# --------------------------------------------------------------------------- item fields


@pytest.mark.parametrize("id_key", ["id", "lemma_id", "name", "title"])
@pytest.mark.parametrize("statement_key", ["statement", "formal_statement", "hypothesis", "content"])
def test_alternative_field_names(id_key: str, statement_key: str) -> None:
    text = json.dumps({"lemmas": [{id_key: "A1", statement_key: "  Some statement.  "}]})
    assert parse_lemma_list(text) == [item("A1", "Some statement.")]


def test_field_name_priority_follows_the_spec_order() -> None:
    raw = [{"title": "T", "name": "N", "lemma_id": "LI", "id": "I", "content": "c", "statement": "s"}]
    assert normalise_lemma_items(raw) == [item("I", "s")]
    raw = [{"title": "T", "name": "N", "content": "c", "hypothesis": "h"}]
    assert normalise_lemma_items(raw) == [item("N", "h")]
    # an empty preferred field falls through to the next one
    raw = [{"id": "", "lemma_id": "LI", "statement": "", "formal_statement": "f"}]
    assert normalise_lemma_items(raw) == [item("LI", "f")]


@pytest.mark.parametrize(
    "entry, expected_source",
    [
        pytest.param({"source": None}, "", id="null-source"),
        pytest.param({}, "", id="missing-source"),
        pytest.param({"source": "Bezout"}, "Bezout", id="named-source"),
    ],
)
def test_source(entry: dict[str, Any], expected_source: str) -> None:
    items = parse_lemma_list(json.dumps({"lemmas": [{"id": "L1", "statement": "s", **entry}]}))
    assert items[0]["source"] == expected_source


@pytest.mark.parametrize(
    "entry, expected",
    [
        pytest.param({"depends_on": ["L1", "L2"]}, ["L1", "L2"], id="depends_on"),
        pytest.param({"dependencies": ["L1"]}, ["L1"], id="dependencies"),
        pytest.param({"uses": ["L2"]}, ["L2"], id="uses"),
        pytest.param({"requires": ["L1"]}, ["L1"], id="requires"),
        pytest.param({"depends_on": "L1"}, ["L1"], id="single-string"),
        pytest.param({"depends_on": [1, 2]}, ["1", "2"], id="numbers-become-strings"),
        pytest.param({"depends_on": None}, [], id="null"),
        pytest.param({}, [], id="missing"),
    ],
)
def test_depends_on_alternatives(entry: dict[str, Any], expected: list[str]) -> None:
    items = parse_lemma_list(json.dumps({"lemmas": [{"id": "L3", "statement": "s", **entry}]}))
    assert items[0]["depends_on"] == expected


def test_numeric_id_becomes_a_string_and_non_dict_items_are_dropped() -> None:
    raw = [{"id": 7, "statement": "seven"}, 42, None, ["nested"], {"id": "L2", "statement": "two"}]
    assert normalise_lemma_items(raw) == [item("7", "seven"), item("L2", "two")]


def test_normalise_rejects_a_non_list() -> None:
    assert normalise_lemma_items({"lemmas": TWO}) == []
    assert normalise_lemma_items(None) == []


# --------------------------------------------------------------------------- parse_json_answer


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('{"verdict": "valid", "issues": ["minor"]}', id="bare-json"),
        pytest.param('```json\n{"verdict": "valid", "issues": ["minor"]}\n```', id="fenced-json"),
        pytest.param('```\n{"verdict": "valid", "issues": ["minor"]}\n```', id="fenced-unlabelled"),
        pytest.param('My verdict follows.\n{"verdict": "valid", "issues": ["minor"]}', id="prose-before"),
        pytest.param(
            '{"verdict": "valid", "issues": ["minor"]}\n\nNote: the proof of step {2} is terse.', id="trailing-commentary"
        ),
        pytest.param(
            'Here:\n```json\n{"verdict": "valid", "issues": ["minor"]}\n```\nThanks {for} reading.',
            id="fence-inside-prose",
        ),
        pytest.param('{"verdict": "valid", "issues": ["minor"], "score": 3}', id="extra-keys-ignored"),
    ],
)
def test_parse_json_answer_accepts(text: str) -> None:
    answer = parse_json_answer(text, VerifierAnswer, "verifier")
    assert answer == VerifierAnswer(verdict="valid", issues=["minor"])


def test_parse_json_answer_skips_a_first_object_of_the_wrong_shape_for_a_fenced_one() -> None:
    text = 'Consider {"x": 1}.\n```json\n{"consistent": false, "issues": ["circular"]}\n```'
    answer = parse_json_answer(text, ConsistencyAnswer, "consistency")
    assert answer.consistent is False and answer.issues == ["circular"]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("The proof looks fine to me.", id="prose-only"),
        pytest.param('{"verdict": "valid"', id="truncated-json"),
        pytest.param('{"issues": []}', id="missing-required-field"),
        pytest.param('["valid"]', id="array-not-object"),
        pytest.param("```json\n{verdict: valid}\n```", id="fenced-invalid-json"),
    ],
)
def test_parse_json_answer_rejects_with_the_role_in_the_message(text: str) -> None:
    with pytest.raises(ModelOutputError, match="the verifier answer"):
        parse_json_answer(text, VerifierAnswer, "verifier")


def test_parse_json_answer_error_excerpt_is_short() -> None:
    with pytest.raises(ModelOutputError) as info:
        parse_json_answer("blah " * 500, VerifierAnswer, "verifier")
    assert len(str(info.value)) < 260
    assert "…" in str(info.value)


# --------------------------------------------------------------------------- first_json_value


@pytest.mark.parametrize(
    "text, opener, expected",
    [
        pytest.param('note {"a": "x}{y", "b": "{"} tail }', "{", {"a": "x}{y", "b": "{"}, id="braces-inside-strings"),
        pytest.param('set {1, 2} then {"k": [1, {"n": "]"}]}', "{", {"k": [1, {"n": "]"}]}, id="skips-invalid-first"),
        pytest.param('see [L1] and ["a]", "b"] end', "[", ["a]", "b"], id="array-brackets-inside-strings"),
        pytest.param('{"outer": {"inner": 1}} {"second": 2}', "{", {"outer": {"inner": 1}}, id="nested-takes-outer"),
        pytest.param('escaped {"q": "say \\"}\\" ok"}', "{", {"q": 'say "}" ok'}, id="escaped-quote-and-brace"),
        pytest.param("nothing here", "{", None, id="none"),
        pytest.param("{ never closed", "{", None, id="unclosed"),
    ],
)
def test_first_json_value(text: str, opener: str, expected: Any) -> None:
    assert first_json_value(text, opener) == expected


# --- answers cut off by their token limit (met on the embedded model with capped tokens) ---

TRUNCATED_IDEATION = (
    '{"directions": [{"title": "Direct parity", "summary": "write n = 2k and m = 2l", "rationale": "elementary"}, '
    '{"title": "Modular arithmetic", "summary": "work in Z/2Z, where the sum of two zeros is'
)


def test_a_truncated_ideation_answer_keeps_its_complete_directions() -> None:
    """Malformed model output met on the embedded model: ideation JSON cut at MAX_TOKENS_PLANNER."""
    answer = parse_json_answer(TRUNCATED_IDEATION, IdeationAnswer, "ideation")
    assert [d.title for d in answer.directions] == ["Direct parity"]


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param('{"a": 1, "b": "x\\"y", "c": [1, 2', {"a": 1, "b": 'x"y', "c": [1]}, id="escaped-quote-then-cut"),
    pytest.param('{"lemmas": [{"id": "L1", "statement": "s1"}, {"id": "L2", "statem',
                 {"lemmas": [{"id": "L1", "statement": "s1"}]}, id="half-item-dropped"),
    pytest.param('{"summary": "a, b and c", "open_problems": ["p1", "p2', {"summary": "a, b and c", "open_problems": ["p1"]},
                 id="comma-inside-a-string-is-not-a-cut"),
    pytest.param('{"a": 1}', None, id="complete-object-is-not-repaired"),
    pytest.param('{"a": "never closed', None, id="nothing-complete-survives"),
    pytest.param("no json here", None, id="no-object"),
])
def test_close_truncated_json(text: str, expected: object) -> None:
    assert close_truncated_json(text) == expected


def test_a_truncated_answer_that_lost_a_required_field_is_still_an_error() -> None:
    with pytest.raises(ModelOutputError, match="planner"):
        parse_json_answer('{"chosen": 1, "research_brief": "Use Z/2Z", "goal": "For all even', PlannerAnswer, "planner")
