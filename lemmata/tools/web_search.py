"""`web_search`: the Brave Search API. Web pages are text for the agent, never paper records."""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from typing import Any

from lemmata.tools.base import ToolResult, tool_error
from lemmata.tools.http_fetch import Service, ServiceError, fetch, redact
from lemmata.tools.results import SearchEndpoint, collapse_whitespace, run_search, shorten

NAME = "web_search"
KEY_VARIABLE = "BRAVE_SEARCH_API_KEY"
#: Brave accepts at most 20 results per request.
BRAVE_MAX_COUNT = 20
#: Brave's free plan allows one query per second.
BRAVE = Service("web search", min_interval=1.0)
SNIPPET_CHARS = 400
NOT_CONFIGURED = f"web search is unavailable: it is not configured ({KEY_VARIABLE} is not set)"


@dataclass(frozen=True)
class WebPage:
    title: str
    url: str
    snippet: str


def plain_text(fragment: str) -> str:
    """Brave marks matches with <strong> and escapes entities; the agent wants plain text."""
    return collapse_whitespace(html.unescape(re.sub(r"<[^>]+>", "", fragment)))


def parse_results(body: bytes) -> list[WebPage]:
    """The web results of a Brave answer; ServiceError for anything that is not one."""
    try:
        payload = json.loads(body)
    except ValueError:
        raise ServiceError("web search answered something that is not JSON") from None
    if not isinstance(payload, dict):
        raise ServiceError("web search answered JSON that is not an object")
    web = payload.get("web")
    if web is None and payload.get("type") == "search":
        return []  # a search answer without a web section: nothing on the web matched
    results = web.get("results") if isinstance(web, dict) else None
    if not isinstance(results, list):
        raise ServiceError("web search answered JSON without a `web.results` list")
    return [_page(item) for item in results if isinstance(item, dict) and item.get("url")]


def _page(item: dict[str, Any]) -> WebPage:
    title, snippet = str(item.get("title") or ""), str(item.get("description") or "")
    return WebPage(plain_text(title), str(item["url"]), plain_text(snippet))


def describe_pages(query: str, pages: list[WebPage]) -> str:
    if not pages:
        return f"{NAME}: no web pages found for {query!r}."
    lines = [
        f"{NAME}: {len(pages)} web page{'s' if len(pages) != 1 else ''} for {query!r} (web pages, not citable papers):"
    ]
    for number, page in enumerate(pages, 1):
        lines.append(f"[{number}] {page.title}\n    {page.url}")
        if page.snippet:
            lines.append(f"    {shorten(page.snippet, SNIPPET_CHARS)}")
    return "\n".join(lines)


@dataclass
class WebSearch(SearchEndpoint):
    name: str = NAME
    description: str = "Search the web (lecture notes, blogs, Q&A sites); results are pages, not citable papers."
    parameter: str = "query"

    def run(self, argument: str) -> ToolResult:
        if not self.api_key:
            return tool_error(self.name, NOT_CONFIGURED)
        return run_search(self.name, argument, self._search)

    def _search(self, query: str) -> ToolResult:
        count = min(self.max_results, BRAVE_MAX_COUNT)
        fetched = fetch(
            BRAVE,
            self.base_url,
            self.policy,
            params={"q": query, "count": count},
            headers={"X-Subscription-Token": self.api_key, "Accept": "application/json"},
            secrets=[self.api_key],
            limiter=self.limiter,
        )
        # Page text is anyone's writing: scrub the key even from there.
        return ToolResult(text=redact(describe_pages(query, parse_results(fetched.body)[:count]), [self.api_key]))
