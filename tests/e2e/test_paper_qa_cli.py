"""`lemmata ask` on a run with a paper: the real CLI against the fake model server (Anthropic and
OpenAI dialects), answers streamed to stdout, the conversation in paper_qa_history.jsonl, the
paper read from the provider's prompt cache from the second question on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import api_client, cli_environment

from lemmata.artifacts import TaskInput
from lemmata.llm.calllog import read_call_records
from lemmata.run.create import create_run
from lemmata.run.qa_history import read_history
from lemmata.run.record import RunRecord
from lemmata.settings import Settings
from support.fake_llm_server import FakeLLMServer

SESSION = "qa-run"
SECTION = r"""\section{Lemma %d}
\begin{lemma}\label{lem:%d} For all integers $m, n$: $2m + 2n = 2(m + n)$, by distributivity of
multiplication over addition in the commutative ring $\mathbb{Z}$; the case %d is no different.\end{lemma}
\begin{proof} Both sides equal $2m + 2n$ after expanding the right-hand side. \end{proof}
"""
#: A paper long enough (about 2,800 tokens) for a provider to cache the prompt holding it.
PAPER = (
    "\\documentclass{article}\n\\begin{document}\n\\section{Introduction}\nThe sum of two even integers is even.\n"
    + "".join(SECTION % (i, i, i) for i in range(1, 30))
    + "\\end{document}\n"
)


def make_run(home: Path, **settings: str) -> Path:
    """A run whose writer has written paper_v1.tex, started with `settings`."""
    run_dir = home / "runs" / SESSION
    record = RunRecord(
        session_id=SESSION,
        mode="prove",
        task="the sum of two even integers is even",
        output_dir=str(home / "out"),
        gate_mode="auto",
        backend=settings["LLM_BACKEND"],
        status="completed",
    )
    task = TaskInput(session_id=SESSION, mode="prove", task=record.task)
    create_run(run_dir, record, task, Settings.from_mapping({"SEARCH_TOOLS": "false", **settings}))
    (run_dir / "paper_v1.tex").write_text(PAPER, encoding="utf-8")
    return run_dir


def ask(question: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lemmata", "ask", SESSION, question],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_the_second_question_reads_the_paper_from_the_providers_cache(tmp_path: Path):
    with FakeLLMServer(prompt_cache=True) as llm:
        llm.set_default(
            "qa", lambda request: "The proof rests on distributivity in $\\mathbb{Z}$; see Lemma 1 and its proof."
        )
        home = tmp_path / "home"
        run_dir = make_run(home, LLM_BACKEND="vendora", VENDORA_BASE_URL=llm.anthropic_base_url)
        env = cli_environment(home, VENDORA_API_KEY="sk-test-qa-key")
        first = ask("What does the proof rest on?", env, tmp_path)
        second = ask("Which lemma is the key one?", env, tmp_path)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert second.stdout.strip() == "The proof rests on distributivity in $\\mathbb{Z}$; see Lemma 1 and its proof."
    one, two = [r for r in read_call_records(run_dir / "llm_calls.jsonl") if r["role"] == "qa"]
    assert one["messages"][0] == two["messages"][0] and PAPER in one["messages"][0]["content"]
    # The first question writes the paper's prefix into the cache, the second reads all of it.
    assert one["cache_write_tokens"] > 2000 and one["cache_read_tokens"] == 0
    assert two["cache_read_tokens"] == one["cache_write_tokens"] and two["cache_write_tokens"] == 0
    assert two["tokens_in"] < two["cache_read_tokens"] / 10  # only the conversation is read afresh
    print(
        f"\nQ&A prompt cache: question 1 wrote {one['cache_write_tokens']} tokens, question 2 read "
        f"{two['cache_read_tokens']} from the cache and {two['tokens_in']} afresh"
    )
    assert "sk-test-qa-key" not in (run_dir / "llm_calls.jsonl").read_text()


def test_answers_stream_and_the_conversation_is_kept_and_sent_again(tmp_path: Path):
    with FakeLLMServer() as llm:
        llm.enqueue(
            "qa",
            "TOOL latex_section_read: Lemma 3",
            "Lemma 3 states $2m + 2n = 2(m + n)$ for all integers $m, n$.",
            "Yes: the same identity, for other integers.",
        )
        home = tmp_path / "home"
        run_dir = make_run(home, LLM_BACKEND="local", LOCAL_LLM_BASE_URL=llm.openai_base_url)
        env = cli_environment(home)
        first = ask("What does Lemma 3 say?", env, tmp_path)
        second = ask("Is Lemma 4 the same?", env, tmp_path)
        bodies = [r.body for r in llm.calls("qa")]
    assert first.returncode == 0, first.stderr
    assert first.stdout == "Lemma 3 states $2m + 2n = 2(m + n)$ for all integers $m, n$.\n"  # no tool line shown
    assert all(body.get("stream") is True for body in bodies)  # the answer was streamed
    assert "Lemma 3}" in bodies[1]["messages"][-1]["content"]  # the section the tool read
    assert [m["content"] for m in bodies[2]["messages"][1:]] == [
        "What does Lemma 3 say?",
        "Lemma 3 states $2m + 2n = 2(m + n)$ for all integers $m, n$.",
        "Is Lemma 4 the same?",
    ]
    history = read_history(run_dir)
    assert [(r.role, r.paper_version) for r in history] == [
        ("user", 1),
        ("assistant", 1),
        ("user", 1),
        ("assistant", 1),
    ]
    assert [(c.tool, c.argument, c.ok) for c in history[1].tool_calls] == [("latex_section_read", "Lemma 3", True)]
    assert second.stdout.strip() == "Yes: the same identity, for other integers."


def test_a_failed_answer_leaves_an_error_marker_and_the_question(tmp_path: Path):
    with FakeLLMServer() as llm:  # nothing scripted for the Q&A role: the provider answers 400
        home = tmp_path / "home"
        run_dir = make_run(home, LLM_BACKEND="local", LOCAL_LLM_BASE_URL=llm.openai_base_url)
        result = ask("What does the proof rest on?", cli_environment(home), tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("lemmata: error: model call for role 'qa'")
    question, marker = read_history(run_dir)
    assert (question.role, marker.role, marker.marker) == ("user", "event", "error")
    assert marker.content.startswith("no answer: model call for role 'qa'")


@pytest.mark.parametrize(
    "question, paper, message",
    [
        pytest.param("   ", True, "the question is empty", id="empty-question"),
        pytest.param("What is shown?", False, "has no paper yet", id="no-paper-yet"),
        pytest.param("Why \udcff?", True, "the question is not UTF-8 text: byte 0xFF", id="not-utf8"),
    ],
)
def test_a_question_that_cannot_be_asked_is_refused_before_any_call(tmp_path: Path, question, paper, message):
    home = tmp_path / "home"
    run_dir = make_run(home, LLM_BACKEND="local", LOCAL_LLM_BASE_URL="http://127.0.0.1:9/v1")
    if not paper:
        (run_dir / "paper_v1.tex").unlink()
    result = ask(question, cli_environment(home), tmp_path)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert not (run_dir / "llm_calls.jsonl").exists() and read_history(run_dir) == []


def test_an_unknown_session_is_a_clear_error(tmp_path: Path):
    result = ask("What?", cli_environment(tmp_path / "home"), tmp_path)
    assert result.returncode == 2 and "no run 'qa-run'" in result.stderr


def sse_events(text: str) -> list[tuple[str, object]]:
    events = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def test_the_ask_endpoint_streams_the_answer_as_server_sent_events(tmp_path: Path):
    from lemmata.run.record import DataHome

    answer = "Lemma 3 states $2m + 2n = 2(m + n)$ for all integers $m, n$; " * 4
    with FakeLLMServer() as llm:
        llm.enqueue("qa", answer)
        home = tmp_path / "home"
        run_dir = make_run(home, LLM_BACKEND="local", LOCAL_LLM_BASE_URL=llm.openai_base_url)
        client = api_client(DataHome(home), environ=cli_environment(home))
        response = client.post(f"/api/runs/{SESSION}/ask", json={"question": "What does Lemma 3 say?"})
        failed = client.post(f"/api/runs/{SESSION}/ask", json={"question": "And Lemma 4?"})  # nothing scripted
        empty = client.post(f"/api/runs/{SESSION}/ask", json={"question": " "})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.text)
    pieces = [data for event, data in events if event == "piece"]
    assert len(pieces) > 1 and "".join(pieces) == answer  # streamed in several pieces
    assert events[-1][0] == "answer" and events[-1][1]["content"] == answer.strip()
    assert sse_events(failed.text)[-1][0] == "error" and "role 'qa'" in sse_events(failed.text)[-1][1]["error"]
    assert empty.status_code == 400 and '"question"' in empty.json()["error"]
    assert [(r.role, r.marker) for r in read_history(run_dir)] == [
        ("user", ""),
        ("assistant", ""),
        ("user", ""),
        ("event", "error"),
    ]


def test_an_answer_that_fails_by_a_bug_still_leaves_an_error_marker(tmp_path: Path, monkeypatch):
    """Issue 53, item 5: only our own errors left a marker; a bug left the question unanswered in the
    chat with nothing to say so."""
    from lemmata.run.qa import ask_about_paper

    home = tmp_path / "home"
    run_dir = make_run(home, LLM_BACKEND="local", LOCAL_LLM_BASE_URL="http://127.0.0.1:9/v1")

    def a_bug(*_args, **_kwargs):
        raise RuntimeError("the stream broke")

    monkeypatch.setattr("lemmata.run.qa.answer_question", a_bug)
    with pytest.raises(RuntimeError):
        ask_about_paper(run_dir, "What does the proof rest on?", environ=cli_environment(home))
    question, marker = read_history(run_dir)
    assert (question.role, marker.role, marker.marker) == ("user", "event", "error")
    assert marker.content == "no answer: RuntimeError: the stream broke (a bug in lemmata)"
