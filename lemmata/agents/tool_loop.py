"""The tool-use loop of the survey and ideation agents.

A turn is one model call answering one JSON object: tool calls to make now, and the agent's
current final fields. Tool calls of one turn are independent, so they run concurrently; their
results (and any unreadable answer) go into the agent's history, which the `compress` role
folds every CONTEXT_COMPRESS_AFTER_TURNS turns. The loop ends when an answer calls no tool or
the turns run out; on the last turn tools are not offered. Every paper a tool returned is kept
in `retrieved`, the only source of papers a stage may keep.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from lemmata.agents.answers import ToolTurnAnswer
from lemmata.agents.client import LLMClient
from lemmata.agents.history import AgentHistory
from lemmata.agents.parsing import parse_json_answer
from lemmata.agents.prompts import render_prompt
from lemmata.artifacts import PaperRecord, ToolCallRecord
from lemmata.errors import ModelOutputError
from lemmata.tools.base import Tool, ToolResult

#: More calls in one turn would only flood the history (and the services).
MAX_CALLS_PER_TURN = 4
#: Of each tool result, what the agent's history keeps.
RESULT_CHARS_IN_HISTORY = 2500

AnswerT = TypeVar("AnswerT", bound=ToolTurnAnswer)


@dataclass
class AgentRun(Generic[AnswerT]):
    final: AnswerT | None  # the last readable answer; None if no answer could be read
    turns: int
    calls: list[ToolCallRecord] = field(default_factory=list)
    retrieved: dict[str, PaperRecord] = field(default_factory=dict)  # by id, in order of retrieval


@dataclass(frozen=True)
class AgentSpec(Generic[AnswerT]):
    role: str
    prompt: str  # template name; its user part has {{tools}}, {{history}} and {{turn}} slots
    answer: type[AnswerT]
    max_turns: int
    compress_every: int


def run_tool_agent(
    client: LLMClient,
    spec: AgentSpec[AnswerT],
    values: Mapping[str, str],
    tools: Mapping[str, Tool],
    seed: list[PaperRecord] | None = None,
) -> AgentRun[AnswerT]:
    """Turns until an answer calls no tool (or, without tools, is readable) or `spec.max_turns` is reached."""
    history = AgentHistory(client, every=spec.compress_every)
    run: AgentRun[AnswerT] = AgentRun(final=None, turns=0, retrieved={p.id: p for p in seed or []})
    cache: dict[tuple[str, str], ToolResult] = {}
    for turn in range(1, spec.max_turns + 1):
        # Without tools a readable answer is final; only an unreadable one earns another turn.
        offered = bool(tools) and turn < spec.max_turns
        prompt = render_prompt(
            spec.prompt,
            **values,
            tools=describe_tools(tools, offered=offered),
            history=history.render(),
            turn=turn_note(turn, spec.max_turns),
        )
        text = client.complete(spec.role, prompt.system, prompt.user, json_answer=True)
        run.turns = turn
        try:
            answer = parse_json_answer(text, spec.answer, spec.role)
        except ModelOutputError as error:
            history.add(f"Turn {turn}: your answer could not be read ({error}). Answer with one JSON object.")
            continue
        run.final = answer
        requested = answer.tool_calls[:MAX_CALLS_PER_TURN] if offered else []
        if not requested:
            break
        results = call_tools(tools, [(c.tool.strip(), c.argument.strip()) for c in requested], cache)
        for (name, argument), result in results:
            run.calls.append(
                ToolCallRecord(
                    turn=turn,
                    tool=name,
                    argument=argument,
                    ok=result.ok,
                    error=result.error,
                    paper_ids=[p.id for p in result.papers],
                )
            )
            for paper in result.papers:
                run.retrieved.setdefault(paper.id, paper)
        history.add(
            f"Turn {turn}:\n"
            + "\n\n".join(
                f"{name}({argument!r}) ->\n{result.text[:RESULT_CHARS_IN_HISTORY]}"
                for (name, argument), result in results
            )
        )
    return run


def call_tools(
    tools: Mapping[str, Tool], calls: list[tuple[str, str]], cache: dict[tuple[str, str], ToolResult]
) -> list[tuple[tuple[str, str], ToolResult]]:
    """Each call's result, in order; independent calls run at once, a repeated call is answered
    from the cache (no second request to a rate-limited service)."""
    pending = list(dict.fromkeys(call for call in calls if call not in cache))
    if pending:
        with ThreadPoolExecutor(max_workers=len(pending)) as pool:
            for call, result in zip(pending, pool.map(lambda c: _call(tools, *c), pending)):
                cache[call] = result
    return [(call, cache[call]) for call in calls]


def _call(tools: Mapping[str, Tool], name: str, argument: str) -> ToolResult:
    tool = tools.get(name)
    if tool is None:
        available = ", ".join(tools) or "none"
        return ToolResult(
            text=f"There is no tool named {name!r}. Available tools: {available}.", error=f"unknown tool {name!r}"
        )
    if not argument:
        return ToolResult(text=f"{name} needs a non-empty {tool.parameter}.", error=f"empty {tool.parameter}")
    return tool.run(argument)


def describe_tools(tools: Mapping[str, Tool], offered: bool = True) -> str:
    if not tools:
        return '(no tools in this run: give your final answer, with "tool_calls": [])'
    if not offered:
        return '(no tool calls this turn: give your final answer, with "tool_calls": [])'
    return "\n".join(f"- {tool.name}({tool.parameter}): {tool.description}" for tool in tools.values())


def turn_note(turn: int, max_turns: int) -> str:
    left = max_turns - turn
    return f"Turn {turn} of {max_turns}" + ("; this is the last one." if left == 0 else f"; {left} more after this.")


def paper_line(paper: PaperRecord) -> str:
    """How the agent sees a retrieved record."""
    authors = ", ".join(paper.authors[:3]) + (" et al." if len(paper.authors) > 3 else "")
    year = f" ({paper.year})" if paper.year else ""
    return f"[{paper.id}] {paper.title}, {authors or 'unknown authors'}{year}"


def chosen_papers(named: list[str], retrieved: Mapping[str, PaperRecord]) -> list[PaperRecord]:
    """The retrieved records the agent named, by identifier or exact title (case aside), in its
    order; names of anything no tool returned are dropped."""
    by_title = {paper.title.casefold().strip(): paper for paper in retrieved.values()}
    chosen: dict[str, PaperRecord] = {}
    for name in named:
        key = name.strip()
        paper = retrieved.get(key) or retrieved.get(_bare_id(key)) or by_title.get(key.casefold())
        if paper is not None:
            chosen.setdefault(paper.id, paper)
    return list(chosen.values())


def _bare_id(name: str) -> str:
    """`2101.00001` names the record `arXiv:2101.00001`: models drop the prefix."""
    return name if ":" in name else f"arXiv:{name}"
