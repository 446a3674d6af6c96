"""The parts of a rewrite that need no workflow: what the agents are told, which theory a
version starts from, what a request checks and which rewrite is unfinished."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from lemmata.artifacts import RevisionRequest, write_artifact
from lemmata.errors import UserError
from lemmata.layout import previous_theory_of
from lemmata.run.qa_history import ChatRecord, read_history
from lemmata.run.rewrite import check_rewritable, pending_rewrite, request_rewrite
from lemmata.stages.feedback import revision_feedback
from lemmata.stages.rewrite import SUMMARY_CHARS_PER_TEXT, qa_summary


def request(version: int = 2, summary: str = "") -> RevisionRequest:
    return RevisionRequest(
        version=version,
        base_version=version - 1,
        instructions="Name the ideal 2Z.",
        qa_summary=summary,
        requested_at=time.time(),
    )


def test_every_agent_is_told_the_instructions_and_the_conversation():
    assert revision_feedback(request()) == (
        "Revision instructions from the researcher for version 2 of the paper: Name the ideal 2Z."
    )
    assert revision_feedback(request(summary="Q: why? | A: because")).endswith(
        "The conversation about version 1: Q: why? | A: because"
    )


def test_a_version_starts_from_the_theory_of_the_version_before():
    assert [previous_theory_of(n) for n in (2, 3, 10)] == [
        "theory.json",
        "versions/v2/theory.json",
        "versions/v9/theory.json",
    ]


def test_the_summary_is_the_latest_exchanges_about_the_base_version_shortened():
    history = [
        ChatRecord(role="user", content="About v1?", paper_version=1),
        ChatRecord(role="user", content="Why   is\nL4 weak?", paper_version=2),
        ChatRecord(role="assistant", content="x" * 1000, paper_version=2),
        ChatRecord(role="event", marker="error", content="no answer", paper_version=2),
    ]
    summary = qa_summary(history, 2)
    assert summary.startswith("Q: Why is L4 weak? | A: xxx") and summary.endswith("...")
    assert len(summary) == len("Q: Why is L4 weak? | A: ") + SUMMARY_CHARS_PER_TEXT
    assert qa_summary(history, 3) == ""


def test_a_run_without_its_artifacts_cannot_be_rewritten(tmp_path: Path):
    with pytest.raises(UserError, match="no paper to rewrite yet"):
        check_rewritable(tmp_path)
    (tmp_path / "paper_v1.tex").write_text("x")
    with pytest.raises(UserError, match=r"cannot be rewritten: .*input.json is missing"):
        check_rewritable(tmp_path)


def test_empty_instructions_are_refused_before_anything_is_written(tmp_path: Path):
    with pytest.raises(UserError, match="instructions are empty"):
        request_rewrite(tmp_path, "  \n")
    assert not (tmp_path / "revisions").exists() and read_history(tmp_path) == []


def test_instructions_that_are_not_utf8_are_refused_before_anything_is_written(tmp_path: Path):
    with pytest.raises(UserError, match=r"instructions are not UTF-8 text: half a surrogate pair, U\+D83D,"):
        request_rewrite(tmp_path, "Shorter \ud83d please")
    assert not (tmp_path / "revisions").exists() and read_history(tmp_path) == []


def test_a_refused_request_leaves_an_error_marker(tmp_path: Path):
    (tmp_path / "paper_v1.tex").write_text("x")
    with pytest.raises(UserError):
        request_rewrite(tmp_path, "Shorter, please")
    (marker,) = read_history(tmp_path)
    assert (marker.marker, marker.paper_version) == ("error", 1) and "cannot be rewritten" in marker.content


def test_the_unfinished_rewrite_is_the_request_without_its_context(tmp_path: Path):
    assert pending_rewrite(tmp_path) is None
    write_artifact(tmp_path / "revisions/v2.json", request(2))
    (tmp_path / "rewrite_context_v2.json").write_text("{}")
    write_artifact(tmp_path / "revisions/v3.json", request(3))
    (tmp_path / "revisions/v2.failed-1.json").write_text("{}")  # a failed one is set aside, not pending
    assert pending_rewrite(tmp_path).version == 3
