"""The paper Q&A agent: questions about a run's paper, answered with the paper at hand.

The full LaTeX source sits in the system prompt, after the fixed instructions and the tool
list, so every question of a session sends the same system prompt and a provider's prompt
cache serves it after the first. The earlier questions and answers follow as the
conversation, then the new question.

Answers are prose, streamed as they arrive, so the protocol is not JSON: the agent asks for
tools with lines `TOOL <name>: <argument>` and nothing else. A streamed answer is held back
only while its first characters could still begin such a line. At most MAX_TOOL_ROUNDS rounds
of tool calls run per question; the call after the last round offers no tools.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lemmata.agents.client import LLMClient
from lemmata.agents.prompts import render_prompt
from lemmata.agents.tool_loop import MAX_CALLS_PER_TURN, RESULT_CHARS_IN_HISTORY, call_tools
from lemmata.artifacts import ChatRecord, ToolCallRecord
from lemmata.errors import ModelOutputError
from lemmata.llm.base import Message
from lemmata.tools.base import Tool

MAX_TOOL_ROUNDS = 5  # the spec: 5 tool-use iterations per question
#: Earlier exchanges sent with a question: enough to follow up, bounded in size.
MAX_EXCHANGES_SENT = 10
TOOL_LINE = re.compile(r"^TOOL\s+([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*?)\s*$")
TOOL_MARK = "TOOL"


@dataclass
class QaAnswer:
    text: str
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    rounds: int = 0  # rounds of tool calls made


def qa_system_prompt(latex: str, version: int, tools: Mapping[str, Tool]) -> str:
    """Instructions, tools, then the paper: the same text for every question on this version."""
    instructions = render_prompt("qa", question="").system
    listing = "\n".join(f"- {t.name}({t.parameter}): {t.description}" for t in tools.values()) or "(none in this run)"
    return f"{instructions}\nTools:\n{listing}\n\nThe paper (version {version}), its LaTeX source:\n{latex}\n"


def conversation(history: list[ChatRecord]) -> list[Message]:
    """The earlier questions and their answers, as alternating messages; markers and questions
    left without an answer (a failed call) are not part of it."""
    exchanges: list[tuple[str, str]] = []
    question: str | None = None
    for record in history:
        if record.role == "user":
            question = record.content
        elif record.role == "assistant" and question is not None:
            exchanges.append((question, record.content))
            question = None
    messages = []
    for asked, answered in exchanges[-MAX_EXCHANGES_SENT:]:
        messages += [Message("user", asked), Message("assistant", answered)]
    return messages


def tool_requests(text: str) -> list[tuple[str, str]] | None:
    """The (tool, argument) pairs of an answer that asks for tools, or None for a real answer."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines or not TOOL_LINE.match(lines[0]):
        return None
    return [(m.group(1), m.group(2)) for line in lines if (m := TOOL_LINE.match(line))]


class AnswerStream:
    """Passes an answer's pieces on as they come, except a tool request: the start is held back
    until it cannot be the beginning of a `TOOL` line any more."""

    def __init__(self, on_text: Callable[[str], None] | None, on_restart: Callable[[], None] | None = None) -> None:
        self.on_text = on_text
        self.on_restart = on_restart  # told when text it was given is void (a retried call)
        self._held = ""
        self._decided: bool | None = None  # True: an answer, passed on; False: a tool request

    def piece(self, text: str) -> None:
        if self._decided is False or self.on_text is None:
            return
        if self._decided:
            self.on_text(text)
            return
        self._held += text
        start = self._held.lstrip()
        if len(start) < len(TOOL_MARK) and TOOL_MARK.startswith(start):
            return  # too short to tell
        self._decided = not start.startswith(TOOL_MARK)
        if self._decided:
            self.on_text(self._held)

    def restart(self) -> None:
        """A retried call streams its answer again from the start."""
        if self._decided and self.on_restart is not None:
            self.on_restart()
        self._held, self._decided = "", None

    def finish(self, whole: str) -> None:
        """An answer that was held back all along (short, or starting with "TOOL" yet no tool
        line, or from a backend that did not stream) is passed on whole."""
        if self.on_text is not None and self._decided is not True and tool_requests(whole) is None:
            self.on_text(whole)


def answer_question(
    client: LLMClient,
    latex: str,
    version: int,
    question: str,
    history: list[ChatRecord],
    tools: Mapping[str, Tool],
    on_text: Callable[[str], None] | None = None,
    on_restart: Callable[[], None] | None = None,
) -> QaAnswer:
    """Answer `question` about the paper, after rounds of tool calls if the agent asks for them;
    the answer's text goes to `on_text` as it arrives, and `on_restart` says when the text
    given so far is void (the call was retried and the answer starts again)."""
    system = qa_system_prompt(latex, version, tools)
    messages = [*conversation(history), Message("user", render_prompt("qa", question=question).user.strip())]
    result = QaAnswer(text="")
    cache: dict = {}
    while True:
        stream = AnswerStream(on_text, on_restart)
        streaming: dict[str, Any] = {"on_text": stream.piece, "on_restart": stream.restart} if on_text else {}
        text = client.complete("qa", system, messages, **streaming)
        requests = tool_requests(text)
        if requests is None:
            stream.finish(text)
            result.text = text.strip()
            return result
        if not tools or result.rounds == MAX_TOOL_ROUNDS:
            raise ModelOutputError(
                f"the Q&A agent asked for tools {'it does not have' if not tools else 'again'} "
                f"after {result.rounds} round(s) and gave no answer"
            )
        result.rounds += 1
        results = call_tools(tools, requests[:MAX_CALLS_PER_TURN], cache)
        for (name, argument), tool_result in results:
            result.tool_calls.append(
                ToolCallRecord(
                    turn=result.rounds,
                    tool=name,
                    argument=argument,
                    ok=tool_result.ok,
                    error=tool_result.error,
                    paper_ids=[p.id for p in tool_result.papers],
                )
            )
        left = MAX_TOOL_ROUNDS - result.rounds
        messages += [
            Message("assistant", text.strip()),
            Message(
                "user",
                "Tool results:\n\n"
                + "\n\n".join(
                    f"{name}({argument!r}) ->\n{tool_result.text[:RESULT_CHARS_IN_HISTORY]}"
                    for (name, argument), tool_result in results
                )
                + (f"\n\n{left} more tool round(s) allowed." if left else "\n\nAnswer now, without tools."),
            ),
        ]
