"""What the search tools share: where and how they ask, and what they hand the agent (a
numbered, compact text of the records they found)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from lemmata.artifacts import PaperRecord
from lemmata.tools.base import ToolResult, tool_error
from lemmata.tools.http_fetch import PROCESS_RATE_LIMITER, RateLimiter, RequestPolicy, ServiceError

#: The agent reads the opening of each abstract; the full one stays in the record.
ABSTRACT_CHARS_SHOWN = 600
AUTHORS_SHOWN = 6


@dataclass
class SearchEndpoint:
    """A search service as a tool uses it: its address, the retry policy, the cap on results, an
    optional key (sent in headers only, never shown) and the process's polite spacing."""

    base_url: str
    policy: RequestPolicy
    max_results: int
    api_key: str = field(default="", repr=False)
    limiter: RateLimiter = field(default=PROCESS_RATE_LIMITER, repr=False)


def collapse_whitespace(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def describe_paper(number: int, paper: PaperRecord) -> str:
    authors = ", ".join(paper.authors[:AUTHORS_SHOWN]) + (" et al." if len(paper.authors) > AUTHORS_SHOWN else "")
    byline = " ".join(part for part in (authors, f"({paper.year})" if paper.year else "") if part)
    lines = [f"[{number}] {paper.id} — {paper.title}"]
    lines += [f"    {text}" for text in (byline, paper.venue, paper.url) if text]
    if paper.abstract:
        lines.append(f"    Abstract: {shorten(paper.abstract, ABSTRACT_CHARS_SHOWN)}")
    return "\n".join(lines)


def papers_result(tool: str, query: str, papers: list[PaperRecord]) -> ToolResult:
    if not papers:
        return ToolResult(text=f"{tool}: no papers found for {query!r}.")
    listing = "\n".join(describe_paper(number, paper) for number, paper in enumerate(papers, 1))
    plural = "s" if len(papers) != 1 else ""
    return ToolResult(text=f"{tool}: {len(papers)} paper{plural} for {query!r}:\n{listing}", papers=papers)


def run_search(tool: str, query: str, search: Callable[[str], ToolResult]) -> ToolResult:
    """`search(query)` with the failures every search tool shares turned into error results."""
    query = query.strip()
    if not query:
        return tool_error(tool, "the query is empty")
    try:
        return search(query)
    except ServiceError as exc:
        return tool_error(tool, str(exc))
