"""Which chat messages order a rewrite (the spec's Paper rewrite rule 1) and which are questions."""

from __future__ import annotations

import pytest

from lemmata.run.chat_intent import revision_instructions

INSTRUCTIONS = [
    "Shorten the introduction",
    "shorten the introduction.",
    "Please add a remark after Lemma 2 on why the bound is sharp",
    "please, remove the Discussion",
    "Rewrite the proof of L2 without induction",
    "Use a direct proof for L1",
    "Make the abstract two sentences",
    "Can you shorten the introduction?",
    "Could you please cite the survey's first paper in Section 1?",
    "Would you rename L3 to Lemma 3",
    "Stress the parity argument and name the ideal 2Z explicitly",
    "  Expand the proof of L2: the step from (3) to (4) is too quick  ",
]
QUESTIONS = [
    "Why does Lemma 2 hold?",
    "Explain the proof of L3",
    "Is the bound sharp?",
    "Can you explain the second step?",
    "Could you tell me what Lemma 1 is used for?",
    "What would change if n were negative",
    "Make sense of Lemma 2 for me?",  # an editing verb, asked as a question: an answer, not a rewrite
    "Prove that the sum of two odd integers is even",
    "Clarify the role of L2",
    "",
    "?",
    "Adding a remark would help",
    "Remove?",
]


@pytest.mark.parametrize("message", INSTRUCTIONS)
def test_a_message_that_reads_as_an_edit_is_revision_instructions(message: str) -> None:
    assert revision_instructions(message) == message.strip()


@pytest.mark.parametrize("message", QUESTIONS)
def test_a_question_or_a_request_to_understand_is_a_question(message: str) -> None:
    assert revision_instructions(message) is None


@pytest.mark.parametrize(
    ("message", "instructions"),
    [
        ("rewrite: the introduction is too long", "the introduction is too long"),
        ("Revise: why not a direct proof?", "why not a direct proof?"),
        ("REVISION :  number the equations", "number the equations"),
    ],
)
def test_an_explicit_prefix_makes_the_rest_instructions_whatever_it_reads_like(message: str, instructions: str) -> None:
    assert revision_instructions(message) == instructions


def test_an_explicit_prefix_with_nothing_after_it_is_empty_instructions_not_a_question() -> None:
    assert revision_instructions("rewrite:   ") == ""
