"""The agents' tools: search (arXiv, Semantic Scholar, the web) and reading a LaTeX section."""

from __future__ import annotations

import os
from collections.abc import Mapping

from lemmata.settings import Settings
from lemmata.tools.base import Tool, ToolResult, tool_error
from lemmata.tools.http_fetch import PROCESS_RATE_LIMITER, RateLimiter, RequestPolicy
from lemmata.tools.latex_sections import LatexSectionRead
from lemmata.tools.preprint_search import PreprintSearch
from lemmata.tools.scholar_search import KEY_VARIABLE as SCHOLAR_KEY_VARIABLE
from lemmata.tools.scholar_search import ScholarSearch
from lemmata.tools.web_search import KEY_VARIABLE as WEB_KEY_VARIABLE
from lemmata.tools.web_search import WebSearch

__all__ = ["Tool", "ToolResult", "make_tools", "tool_error", "SCHOLAR_KEY_VARIABLE", "WEB_KEY_VARIABLE"]


def make_tools(
    settings: Settings,
    environ: Mapping[str, str] | None = None,
    latex_source: str | None = None,
    limiter: RateLimiter = PROCESS_RATE_LIMITER,
) -> dict[str, Tool]:
    """The tools by name; keys come from `environ` (default: the process environment), never settings.

    With SEARCH_TOOLS false there is no search tool at all. Otherwise `web_search` is always
    there: without its key it answers that it is not configured.
    `latex_section_read` is there only when a LaTeX source is given.
    """
    if not settings.SEARCH_TOOLS:
        return {"latex_section_read": LatexSectionRead(latex_source)} if latex_source is not None else {}
    environ = os.environ if environ is None else environ
    policy = RequestPolicy.from_settings(settings)
    cap = settings.PREPRINT_MAX_RESULTS
    scholar_key, web_key = environ.get(SCHOLAR_KEY_VARIABLE, ""), environ.get(WEB_KEY_VARIABLE, "")
    tools: list[Tool] = [
        PreprintSearch(settings.PREPRINT_BASE_URL, policy, cap, limiter=limiter),
        ScholarSearch(settings.SCHOLAR_BASE_URL, policy, cap, api_key=scholar_key, limiter=limiter),
        WebSearch(settings.WEB_SEARCH_BASE_URL, policy, cap, api_key=web_key, limiter=limiter),
    ]
    if latex_source is not None:
        tools.append(LatexSectionRead(latex_source))
    return {tool.name: tool for tool in tools}
