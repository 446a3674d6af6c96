"""The paper Q&A agent: the paper in the system prompt, the conversation, tool rounds (at most
five), the streamed answer held back only while it could be a tool request; the history file
and the paper versions it reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from lemmata import layout
from lemmata.errors import ModelOutputError, UserError
from lemmata.run.qa_history import ChatRecord, append_record, read_history
from lemmata.run.versions import current_paper, paper_versions
from lemmata.stages.qa_agent import MAX_TOOL_ROUNDS, AnswerStream, answer_question, conversation, tool_requests
from lemmata.tools.latex_sections import LatexSectionRead
from support.scripted_backend import scripted_client

LATEX = r"""\documentclass{article}
\begin{document}
\section{Introduction}
We show that the sum of two even integers is even.
\section{Main result}
\begin{theorem}For even $a, b$, $a + b$ is even.\end{theorem}
\begin{proof}Write $a = 2m$, $b = 2n$; then $a + b = 2(m + n)$.\end{proof}
\end{document}
"""


def tools():
    return {"latex_section_read": LatexSectionRead(LATEX)}


def exchange(question: str, answer: str, version: int = 1) -> list[ChatRecord]:
    return [
        ChatRecord(role="user", content=question, paper_version=version),
        ChatRecord(role="assistant", content=answer, paper_version=version),
    ]


def test_the_paper_is_in_the_system_prompt_and_the_conversation_follows():
    client, backend = scripted_client({"qa": ["It rests on closure of Z under addition.", "Yes: m + n is an integer."]})
    first = answer_question(client, LATEX, 1, "What does the proof rest on?", [], tools())
    history = exchange("What does the proof rest on?", first.text)
    answer_question(client, LATEX, 1, "Is m + n an integer?", history, tools())
    one, two = backend.calls("qa")
    assert one.system == two.system and LATEX in one.system  # one cacheable prefix for every question
    assert "latex_section_read(section)" in one.system and "The paper (version 1)" in one.system
    assert [m.content for m in two.messages] == [
        "What does the proof rest on?",
        "It rests on closure of Z under addition.",
        "Is m + n an integer?",
    ]


def test_a_tool_round_reads_a_section_and_its_result_reaches_the_next_call():
    client, backend = scripted_client({"qa": ["TOOL latex_section_read: Main result", "The theorem is in Section 2."]})
    answer = answer_question(client, LATEX, 1, "Where is the theorem?", [], tools())
    assert answer.text == "The theorem is in Section 2." and answer.rounds == 1
    assert [(c.tool, c.argument, c.ok) for c in answer.tool_calls] == [("latex_section_read", "Main result", True)]
    second = backend.calls("qa")[1].messages
    assert second[-2].content == "TOOL latex_section_read: Main result"
    assert "a + b = 2(m + n)" in second[-1].content and "4 more tool round(s) allowed" in second[-1].content


def test_at_most_five_tool_rounds_then_the_agent_must_answer():
    asks = ["TOOL latex_section_read: Introduction"] * (MAX_TOOL_ROUNDS + 1)
    client, backend = scripted_client({"qa": asks})
    with pytest.raises(ModelOutputError, match="asked for tools again after 5 round"):
        answer_question(client, LATEX, 1, "Tell me everything", [], tools())
    calls = backend.calls("qa")
    assert len(calls) == MAX_TOOL_ROUNDS + 1
    assert calls[-1].messages[-1].content.endswith("Answer now, without tools.")


def test_asking_for_a_tool_when_there_is_none_is_an_error_not_an_answer():
    client, _ = scripted_client({"qa": ["TOOL preprint_search: parity"]})
    with pytest.raises(ModelOutputError, match="tools it does not have"):
        answer_question(client, LATEX, 1, "Related work?", [], {})


@pytest.mark.parametrize(
    "text, expected",
    [
        pytest.param("The proof is two lines.", None, id="prose"),
        pytest.param(
            "TOOL latex_section_read: Main result\nTOOL preprint_search: even integers",
            [("latex_section_read", "Main result"), ("preprint_search", "even integers")],
            id="two-calls",
        ),
        pytest.param("\n\n  TOOL scholar_search:  parity  \n", [("scholar_search", "parity")], id="surrounding-blanks"),
        pytest.param("TOOLS are not needed: the proof is short.", None, id="answer-starting-with-TOOLS"),
        pytest.param("tool latex_section_read: Main result", None, id="lowercase-is-prose"),
        pytest.param("See Section 2.\nTOOL latex_section_read: Main result", None, id="tool-line-after-prose"),
    ],
)
def test_tool_requests_are_lines_that_begin_the_answer(text, expected):
    assert tool_requests(text) == expected


def streamed(*pieces: str) -> list[str]:
    shown: list[str] = []
    stream = AnswerStream(shown.append)
    for piece in pieces:
        stream.piece(piece)
    stream.finish("".join(pieces))
    return shown


def test_an_answer_streams_once_it_cannot_be_a_tool_request():
    assert streamed("Th", "e sum ", "is even.") == ["Th", "e sum ", "is even."]
    assert streamed("TO", "day the sum", " is even.") == ["TOday the sum", " is even."]  # held, then let go


def test_a_tool_request_is_never_shown():
    assert streamed("TO", "OL latex_section_read: ", "Main result") == []


def test_an_answer_that_starts_like_a_tool_request_is_shown_whole_at_the_end():
    assert streamed("TOOL", "S are not needed.") == ["TOOLS are not needed."]


def test_a_restart_discards_what_was_held_and_reports_what_was_shown():
    shown: list[str] = []
    stream = AnswerStream(shown.append, lambda: shown.append("<restart>"))
    stream.piece("TO")
    stream.restart()  # nothing was shown: nothing to take back
    stream.piece("Yes, ")
    stream.restart()
    stream.piece("Yes.")
    assert shown == ["Yes, ", "<restart>", "Yes."]


def test_the_conversation_leaves_out_markers_and_unanswered_questions():
    history = [
        *exchange("Q1", "A1"),
        ChatRecord(role="user", content="Q2", paper_version=1),
        ChatRecord(role="event", marker="error", content="no answer: provider down", paper_version=1),
        *exchange("Q3", "A3", version=2),
    ]
    assert [(m.role, m.content) for m in conversation(history)] == [
        ("user", "Q1"),
        ("assistant", "A1"),
        ("user", "Q3"),
        ("assistant", "A3"),
    ]


def test_the_history_file_appends_and_skips_an_unreadable_line(tmp_path: Path):
    append_record(tmp_path, ChatRecord(role="user", content="Q1", paper_version=1))
    with open(tmp_path / layout.QA_HISTORY, "a", encoding="utf-8") as handle:
        handle.write('{"role": "user", "content": "cut off\n')  # a crash mid-write
    append_record(tmp_path, ChatRecord(role="assistant", content="A1", paper_version=1))
    assert [r.content for r in read_history(tmp_path)] == ["Q1", "A1"]
    assert read_history(tmp_path / "nowhere") == []


def test_versions_are_the_numbered_papers_and_the_latest_is_current(tmp_path: Path):
    for name in ("paper_v1.tex", "paper_v2.tex", "paper_v10.tex", "paper_v0.tex", "paper_v2a.tex", "paper_v3.pdf"):
        (tmp_path / name).write_text(name)
    assert paper_versions(tmp_path) == [1, 2, 10]
    assert current_paper(tmp_path) == (10, "paper_v10.tex")


def test_a_run_without_a_paper_says_so(tmp_path: Path):
    with pytest.raises(UserError, match="has no paper yet"):
        current_paper(tmp_path)
