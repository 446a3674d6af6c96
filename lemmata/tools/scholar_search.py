"""`scholar_search`: the Semantic Scholar Graph API paper search (JSON)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lemmata.artifacts import PaperRecord
from lemmata.tools.base import ToolResult
from lemmata.tools.http_fetch import Service, ServiceError, fetch
from lemmata.tools.results import SearchEndpoint, collapse_whitespace, papers_result, run_search

NAME = "scholar_search"
KEY_VARIABLE = "SEMANTIC_SCHOLAR_API_KEY"
FIELDS = "title,authors,year,externalIds,url,abstract,venue"
#: Unkeyed clients share a small pool; keys are granted at one request per second. Either way: 1 s.
SEMANTIC_SCHOLAR = Service("Semantic Scholar", min_interval=1.0)


def request_params(query: str, cap: int) -> dict[str, str | int]:
    # The search takes plain words only: its documentation says hyphenated terms match nothing.
    return {"query": collapse_whitespace(query.replace("-", " ")), "limit": cap, "fields": FIELDS}


def parse_search(body: bytes) -> list[PaperRecord]:
    """The papers of a /paper/search answer; ServiceError for anything that is not one."""
    try:
        payload = json.loads(body)
    except ValueError:
        raise ServiceError("Semantic Scholar answered something that is not JSON") from None
    if not isinstance(payload, dict):
        raise ServiceError("Semantic Scholar answered JSON that is not an object")
    data = payload.get("data")
    if data is None and payload.get("total") == 0:
        return []  # no match: the service may leave `data` out
    if not isinstance(data, list):
        raise ServiceError("Semantic Scholar answered JSON without a `data` list of papers")
    try:
        records = [_record(item) for item in data]
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        shape = f"{type(exc).__name__}: {exc}"
        raise ServiceError(f"Semantic Scholar answered a paper of an unexpected shape ({shape})") from None
    return [record for record in records if record.title]


def paper_id(item: Mapping[str, Any]) -> str:
    """arXiv:<id> when the paper is on arXiv (so both tools agree), else DOI:<doi>, else S2:<paperId>."""
    external = item.get("externalIds") or {}
    if external.get("ArXiv"):
        return f"arXiv:{external['ArXiv']}"
    if external.get("DOI"):
        return f"DOI:{external['DOI']}"
    return f"S2:{item['paperId']}"


def _record(item: Mapping[str, Any]) -> PaperRecord:
    year = item.get("year")
    return PaperRecord(
        id=paper_id(item),
        title=collapse_whitespace(item.get("title") or ""),
        authors=[author["name"] for author in item.get("authors") or [] if author.get("name")],
        year=int(year) if year else None,
        url=item.get("url") or "",
        abstract=collapse_whitespace(item.get("abstract") or ""),
        venue=collapse_whitespace(item.get("venue") or ""),
        source=NAME,
    )


@dataclass
class ScholarSearch(SearchEndpoint):
    name: str = NAME
    description: str = "Search Semantic Scholar (journals, conferences and preprints) by keywords."
    parameter: str = "query"

    def run(self, argument: str) -> ToolResult:
        return run_search(self.name, argument, self._search)

    def _search(self, query: str) -> ToolResult:
        headers = {"x-api-key": self.api_key} if self.api_key else {}
        fetched = fetch(
            SEMANTIC_SCHOLAR,
            f"{self.base_url.rstrip('/')}/paper/search",
            self.policy,
            params=request_params(query, self.max_results),
            headers=headers,
            secrets=[self.api_key],
            limiter=self.limiter,
        )
        return papers_result(self.name, query, parse_search(fetched.body)[: self.max_results])
