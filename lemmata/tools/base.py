"""What every agent tool is: a name, one string parameter, and a result that never raises.

Agents call tools by name with one argument (`query` for the search tools, `section` for
`latex_section_read`). A tool answers with text for the agent to read and, for the search
tools, the paper records it retrieved: those records are the only way a paper enters a survey
or a bibliography. Outages, timeouts and rate limits are retried inside the tool, then reported
as `error` text the agent reads; they never end the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from lemmata.artifacts import PaperRecord


@dataclass(frozen=True)
class ToolResult:
    text: str
    papers: list[PaperRecord] = field(default_factory=list)
    error: str = ""  # non-empty: the tool could not do its work; `text` says so to the agent

    @property
    def ok(self) -> bool:
        return not self.error


class Tool(Protocol):
    name: str
    description: str  # one line for the agent's prompt
    parameter: str  # the one argument's name: "query" or "section"

    def run(self, argument: str) -> ToolResult: ...


def tool_error(tool: str, message: str) -> ToolResult:
    """A failure as the agent reads it: which tool, what happened, that it may try otherwise."""
    return ToolResult(text=f"{tool} failed: {message}. Try another query or another tool.", error=message)
