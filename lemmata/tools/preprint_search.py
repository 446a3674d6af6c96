"""`preprint_search`: the arXiv API (Atom feed), by keywords or by arXiv identifier."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass

from lemmata.artifacts import PaperRecord
from lemmata.tools.base import ToolResult
from lemmata.tools.http_fetch import Service, ServiceError, fetch
from lemmata.tools.results import SearchEndpoint, collapse_whitespace, papers_result, run_search

NAME = "preprint_search"
#: arXiv asks API clients for one request every three seconds.
ARXIV = Service("arXiv", min_interval=3.0)
NAMESPACES = {"atom": "http://www.w3.org/2005/Atom", "arxiv": "http://arxiv.org/schemas/atom"}

_NEW_STYLE_ID = r"\d{4}\.\d{4,5}(?:v\d+)?"
_OLD_STYLE_ID = r"[a-z][a-z\-]*(?:\.[a-z]{2})?/\d{7}(?:v\d+)?"  # math/0501001, math.AG/0501001
_ID_TOKEN = re.compile(
    rf"(?:arxiv:|https?://(?:export\.)?arxiv\.org/(?:abs|pdf)/)?({_NEW_STYLE_ID}|{_OLD_STYLE_ID})(?:\.pdf)?",
    re.IGNORECASE,
)
_VERSION = re.compile(r"v\d+$")
#: The agent may write arXiv's own query syntax; then it is passed through untouched.
_ARXIV_SYNTAX = re.compile(r"\b(?:ti|au|abs|co|jr|cat|rn|id|all):|\b(?:AND|OR|ANDNOT)\b")
#: arXiv ANDs our terms; a filler word that no abstract indexes would empty every answer.
_STOPWORDS = frozenset(
    "a about an and are as at be by for from how in is it known of on or paper papers that the this to what "
    "which with".split()
)


def arxiv_ids(query: str) -> list[str] | None:
    """The arXiv identifiers the query consists of (prefix dropped, version kept), or None."""
    tokens = [token for token in re.split(r"[\s,;]+", query.strip()) if token]
    matches = [_ID_TOKEN.fullmatch(token) for token in tokens]
    if not tokens or not all(matches):
        return None
    return [match.group(1) for match in matches if match]


def search_query(query: str) -> str:
    """arXiv `search_query` for free text: every meaningful term (or quoted phrase) in any field."""
    if _ARXIV_SYNTAX.search(query):
        return query.strip()
    terms = []
    for token in re.findall(r'"[^"]+"|[^\s"]+', query):
        phrase = token.startswith('"')
        # Parentheses and colons are arXiv query syntax: inside a bare term they break the query.
        cleaned = collapse_whitespace(re.sub(r"[^\w\s'\-]", " ", token))
        if not cleaned or (not phrase and cleaned.lower() in _STOPWORDS):
            continue
        terms.append(f'all:"{cleaned}"' if phrase or " " in cleaned else f"all:{cleaned}")
    return " AND ".join(terms)


def request_params(query: str, cap: int) -> dict[str, str | int]:
    ids = arxiv_ids(query)
    if ids is not None:
        return {"id_list": ",".join(ids), "start": 0, "max_results": min(cap, len(ids))}
    return {"search_query": search_query(query), "start": 0, "max_results": cap}


def parse_feed(body: bytes) -> list[PaperRecord]:
    """The papers of an arXiv Atom feed; ServiceError for anything that is not one."""
    try:
        root = ElementTree.fromstring(body)
    except ElementTree.ParseError as exc:
        raise ServiceError(f"arXiv answered something that is not XML ({exc})") from None
    if root.tag != f"{{{NAMESPACES['atom']}}}feed":
        raise ServiceError(f"arXiv answered XML that is not an Atom feed (root element {root.tag!r})")
    entries = root.findall("atom:entry", NAMESPACES)
    for entry in entries:
        if "/api/errors" in _text(entry, "atom:id"):
            # arXiv reports a bad query as a feed whose only entry is the error.
            raise ServiceError(f"arXiv rejected the query: {_text(entry, 'atom:summary') or 'no reason given'}")
    # An unknown identifier in id_list comes back as an entry without a title.
    return [_record(entry) for entry in entries if _text(entry, "atom:title")]


def _text(element: ElementTree.Element, path: str) -> str:
    found = element.find(path, NAMESPACES)
    return collapse_whitespace(found.text or "") if found is not None else ""


def _record(entry: ElementTree.Element) -> PaperRecord:
    entry_id = _text(entry, "atom:id")
    bare_id = _VERSION.sub("", entry_id.split("/abs/", 1)[-1])
    alternate = next(
        (link.get("href", "") for link in entry.findall("atom:link", NAMESPACES) if link.get("rel") == "alternate"),
        entry_id,
    )
    published = _text(entry, "atom:published")
    return PaperRecord(
        id=f"arXiv:{bare_id}",
        title=_text(entry, "atom:title"),
        authors=[name for author in entry.findall("atom:author", NAMESPACES) if (name := _text(author, "atom:name"))],
        year=int(published[:4]) if published[:4].isdigit() else None,
        url=alternate,
        abstract=_text(entry, "atom:summary"),
        venue=_text(entry, "arxiv:journal_ref"),
        source=NAME,
    )


@dataclass
class PreprintSearch(SearchEndpoint):
    name: str = NAME
    description: str = (
        "Search arXiv preprints by keywords (all terms must match; quote a phrase) "
        "or look up arXiv identifiers such as 2101.00001 or math/0501001."
    )
    parameter: str = "query"

    def run(self, argument: str) -> ToolResult:
        return run_search(self.name, argument, self._search)

    def _search(self, query: str) -> ToolResult:
        params = request_params(query, self.max_results)
        if not params.get("id_list") and not params.get("search_query"):
            return papers_result(self.name, query, [])
        fetched = fetch(ARXIV, self.base_url, self.policy, params=params, limiter=self.limiter)
        return papers_result(self.name, query, parse_feed(fetched.body)[: self.max_results])
