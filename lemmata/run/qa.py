"""One question about a run's paper, the same from the terminal and (later) the browser: the
latest paper version, the run's own settings and backend, the conversation so far; the question,
then the answer or an error marker, appended to `paper_qa_history.jsonl`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import suppress
from pathlib import Path

from lemmata.agents.client import make_client
from lemmata.errors import LemmataError, UserError, check_utf8_text
from lemmata.run.qa_history import ChatRecord, append_record, read_history
from lemmata.run.record import run_settings
from lemmata.run.versions import current_paper
from lemmata.settings import load_environment
from lemmata.stages.qa_agent import answer_question
from lemmata.tools import make_tools

#: A question longer than this is a pasted document, not a question: refused before any call.
MAX_QUESTION_CHARS = 20_000


def ask_about_paper(
    run_dir: Path,
    question: str,
    on_text: Callable[[str], None] | None = None,
    on_restart: Callable[[], None] | None = None,
    environ: Mapping[str, str] | None = None,
) -> ChatRecord:
    """Ask, answer, record. A failed answer leaves an error marker in the history and raises."""
    question = question.strip()
    if not question:
        raise UserError("the question is empty: type what you want to know about the paper")
    check_utf8_text("the question", question)
    if len(question) > MAX_QUESTION_CHARS:
        raise UserError(f"the question has {len(question)} characters; at most {MAX_QUESTION_CHARS} are accepted")
    version, latex = current_paper(run_dir)
    environ = load_environment() if environ is None else dict(environ)
    settings = run_settings(run_dir)
    client = make_client(settings, environ, run_dir, scope="qa")
    tools = make_tools(settings, environ, latex_source=latex)
    history = read_history(run_dir)
    append_record(run_dir, ChatRecord(role="user", content=question, paper_version=version))
    try:
        answer = answer_question(client, latex, version, question, history, tools, on_text, on_restart)
    except LemmataError as error:
        append_record(
            run_dir, ChatRecord(role="event", marker="error", paper_version=version, content=f"no answer: {error}")
        )
        raise
    except Exception as error:  # a bug: the chat still shows that the question got no answer
        content = f"no answer: {type(error).__name__}: {error} (a bug in lemmata)"
        with suppress(OSError, ValueError):  # the marker must not hide the error it reports
            append_record(run_dir, ChatRecord(role="event", marker="error", paper_version=version, content=content))
        raise
    record = ChatRecord(role="assistant", content=answer.text, paper_version=version, tool_calls=answer.tool_calls)
    append_record(run_dir, record)
    return record
