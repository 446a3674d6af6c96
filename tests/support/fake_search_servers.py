"""Fake arXiv, Semantic Scholar, Brave Search and arXiv-PDF endpoints on 127.0.0.1 for tests.

One threaded HTTP server answers all four services under their own path prefixes, from a
corpus of papers and web pages (a query matches a paper when every one of its terms occurs in
the title, abstract or authors). Payloads have the real services' shapes. Per endpoint, a
queue of `Fault`s is served before normal answers (429 twice then 200; 503; a hang longer than
the client's timeout; a malformed body), and every request is recorded with its query,
headers and arrival time, so tests can check caps, key headers and request spacing.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit
from xml.sax.saxutils import escape, quoteattr

from support.loopback import LoopbackServer

ARXIV_QUERY_PATH = "/arxiv/api/query"
ARXIV_PDF_PREFIX = "/arxiv/pdf/"
SCHOLAR_PREFIX = "/s2/graph/v1"
SCHOLAR_SEARCH_PATH = SCHOLAR_PREFIX + "/paper/search"
BRAVE_PATH = "/brave/res/v1/web/search"
ENDPOINTS = ("arxiv", "pdf", "scholar", "web")
#: Settings for tests: no polite spacing, near-zero backoff, a short timeout.
FAST_SEARCH_SETTINGS = {
    "SEARCH_MIN_INTERVAL_SCALE": 0,
    "SEARCH_RETRY_WAIT_MIN": 0,
    "SEARCH_RETRY_WAIT_MAX": 0.01,
    "SEARCH_TIMEOUT": 2,
}


@dataclass(frozen=True)
class FakePaper:
    """A paper the fake services know; `arxiv_id` None: only Semantic Scholar has it."""

    title: str
    abstract: str
    authors: tuple[str, ...]
    year: int
    arxiv_id: str | None = None  # without version, e.g. "2101.00001" or "math/0501001"
    version: int = 1
    journal_ref: str = ""
    doi: str = ""
    venue: str = ""
    category: str = "math.NT"
    pdf: bytes | None = None

    @property
    def s2_paper_id(self) -> str:
        return hashlib.sha1(self.title.encode()).hexdigest()  # S2 ids are 40 hex digits

    def matches(self, terms: list[str]) -> bool:
        haystack = " ".join((self.title, self.abstract, *self.authors)).lower()
        return bool(terms) and all(term in haystack for term in terms)


@dataclass(frozen=True)
class FakeWebPage:
    title: str
    url: str
    description: str  # Brave's snippet, with <strong> around matches as Brave sends it

    def matches(self, terms: list[str]) -> bool:
        haystack = f"{self.title} {self.description}".lower()
        return bool(terms) and all(term in haystack for term in terms)


@dataclass(frozen=True)
class Fault:
    """One scripted misbehaviour: an HTTP status, a custom body, or a hang of some seconds."""

    status: int | None = None  # with no body: the endpoint's usual error body
    body: bytes | None = None  # with no status: sent as 200 (a malformed "success")
    content_type: str = "text/html; charset=utf-8"
    retry_after: str | None = None
    headers: tuple[tuple[str, str], ...] = ()  # more response headers, e.g. (("Location", url),)
    hang: float | None = None  # wait this long, then answer normally (the client has usually left)

    def __post_init__(self) -> None:
        if (self.hang is None) == (self.status is None and self.body is None):
            raise ValueError("a Fault is either hang= or status=/body=")


@dataclass
class RecordedRequest:
    endpoint: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-case names
    at: float = field(default_factory=time.monotonic)
    status: int = 0  # 0 while in flight or when the client left


DEFAULT_PAPERS = (
    FakePaper(
        title="Parity of Sums of Even Integers",
        abstract="We record why the sum of two even integers is even, and the lemma on even integers it rests on.",
        authors=("Ada Example", "Bo Sample"),
        year=2021,
        arxiv_id="2101.00001",
        version=2,
        journal_ref="J. Elem. Number Theory 3 (2021) 1-4",
        doi="10.1234/jent.2021.001",
        venue="Journal of Elementary Number Theory",
    ),
    FakePaper(
        title="Even and Odd Integers in Additive Combinatorics",
        abstract="Sums of even integers and sumsets of odd integers in finite abelian groups.",
        authors=("Cy Placeholder",),
        year=2019,
        arxiv_id="1905.01234",
        category="math.CO",
    ),
    FakePaper(
        title="A Classical Note on Parity",
        abstract="An old-style preprint on the parity of integers and of permutations.",
        authors=("Dee Archive",),
        year=2005,
        arxiv_id="math/0501001",
        category="math.GM",
    ),
    FakePaper(
        title="Parity Arguments in Graph Theory",
        abstract="The handshake lemma and other parity arguments: every graph has an even number of odd vertices.",
        authors=("Eve Journal",),
        year=2015,
        doi="10.5555/graphs.2015.42",
        venue="Graphs and Combinatorics",
    ),
)

DEFAULT_WEB_PAGES = (
    FakeWebPage(
        "Even numbers - Wikipedia",
        "https://en.wikipedia.org/wiki/Parity_(mathematics)",
        "In mathematics, parity is the property of an integer of whether it is <strong>even</strong> or odd.",
    ),
    FakeWebPage(
        "Why is the sum of two even numbers even?",
        "https://math.example.org/questions/123",
        "The <strong>sum</strong> of two <strong>even</strong> numbers 2a and 2b is 2(a&#x2B;b) &amp; so even.",
    ),
)


def unused_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on (bound, then released): a service that is down."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def query_terms(text: str) -> list[str]:
    """Search terms of an arXiv, S2 or Brave query: field prefixes, operators and quotes dropped."""
    text = re.sub(r"\b(?:ti|au|abs|co|jr|cat|rn|id|all):", " ", text)
    phrases = re.findall(r'"([^"]+)"', text)
    rest = re.sub(r'"[^"]*"', " ", text)
    words = [word for word in re.split(r"[\s()]+", rest) if word and word not in ("AND", "OR", "ANDNOT")]
    return [term.lower() for term in phrases + words]


class FakeSearchServers(LoopbackServer):
    """All fake search services on one loopback port; a context manager."""

    name = "fake search servers"

    def __init__(
        self,
        papers: tuple[FakePaper, ...] = DEFAULT_PAPERS,
        web_pages: tuple[FakeWebPage, ...] = DEFAULT_WEB_PAGES,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.papers = list(papers)
        self.web_pages = list(web_pages)
        self.honour_limits = True  # False: answer every match whatever max_results/limit/count asked
        self.host = host
        self._requested_port = port
        self._lock = threading.Lock()
        self._faults: dict[str, deque[Fault]] = {endpoint: deque() for endpoint in ENDPOINTS}
        self._requests: list[RecordedRequest] = []
        self._stopping = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # --- scripting and inspection -------------------------------------------------------

    def inject_fault(self, endpoint: str, *faults: Fault) -> None:
        """Queue faults for one endpoint ("arxiv", "pdf", "scholar", "web"), served one per request."""
        if endpoint not in ENDPOINTS:
            raise ValueError(f"unknown endpoint {endpoint!r}; expected one of {ENDPOINTS}")
        with self._lock:
            self._faults[endpoint].extend(faults)

    def requests(self, endpoint: str | None = None) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self._requests if endpoint is None or r.endpoint == endpoint]

    def _record(self, request: RecordedRequest) -> RecordedRequest:
        with self._lock:
            self._requests.append(request)
        return request

    def _take_fault(self, endpoint: str) -> Fault | None:
        with self._lock:
            queue = self._faults[endpoint]
            return queue.popleft() if queue else None

    def _pause(self, seconds: float) -> bool:
        """Sleep; False when stop() cut the sleep short."""
        return not self._stopping.wait(seconds)

    # --- lifecycle ----------------------------------------------------------------------

    def _make_server(self) -> ThreadingHTTPServer:
        return _Server((self.host, self._requested_port), self)

    # --- addresses ----------------------------------------------------------------------

    @property
    def origin(self) -> str:
        if self._httpd is None:
            raise RuntimeError("fake search servers have not been started")
        return f"http://{self.host}:{self._httpd.server_port}"

    def settings_values(self) -> dict[str, str]:
        """The base-URL settings that point every tool here."""
        return {
            "PREPRINT_BASE_URL": self.origin + ARXIV_QUERY_PATH,
            "SCHOLAR_BASE_URL": self.origin + SCHOLAR_PREFIX,
            "WEB_SEARCH_BASE_URL": self.origin + BRAVE_PATH,
            "PDF_BASE_URL": self.origin + ARXIV_PDF_PREFIX.rstrip("/"),
        }


# --- payloads, shaped like the real services' ------------------------------------------------

ATOM_HEAD = """<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <link href="http://arxiv.org/api/query" rel="self" type="application/atom+xml"/>
  <title type="html">ArXiv Query: {query}</title>
  <id>http://arxiv.org/api/fakefeedid</id>
  <updated>2026-11-21T00:00:00-05:00</updated>
  <opensearch:totalResults xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">{total}</opensearch:totalResults>
  <opensearch:startIndex xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">0</opensearch:startIndex>
  <opensearch:itemsPerPage xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">{shown}</opensearch:itemsPerPage>
"""


def atom_entry(paper: FakePaper) -> str:
    versioned = f"{paper.arxiv_id}v{paper.version}"
    # Real titles and summaries arrive wrapped across lines with indentation.
    title = escape(paper.title).replace(" ", "\n  ", 1)
    authors = "".join(f"    <author>\n      <name>{escape(name)}</name>\n    </author>\n" for name in paper.authors)
    journal = (
        (
            f'    <arxiv:journal_ref xmlns:arxiv="http://arxiv.org/schemas/atom">{escape(paper.journal_ref)}'
            "</arxiv:journal_ref>\n"
        )
        if paper.journal_ref
        else ""
    )
    doi = (
        f'    <arxiv:doi xmlns:arxiv="http://arxiv.org/schemas/atom">{escape(paper.doi)}</arxiv:doi>\n'
        if paper.doi
        else ""
    )
    return (
        "  <entry>\n"
        f"    <id>http://arxiv.org/abs/{versioned}</id>\n"
        f"    <updated>{paper.year}-03-02T10:00:00Z</updated>\n"
        f"    <published>{paper.year}-01-01T18:00:00Z</published>\n"
        f"    <title>{title}</title>\n"
        f"    <summary>  {escape(paper.abstract)}\n</summary>\n"
        f"{authors}{doi}"
        '    <arxiv:comment xmlns:arxiv="http://arxiv.org/schemas/atom">4 pages</arxiv:comment>\n'
        f"{journal}"
        f'    <link href="http://arxiv.org/abs/{versioned}" rel="alternate" type="text/html"/>\n'
        f'    <link title="pdf" href="http://arxiv.org/pdf/{versioned}" rel="related" type="application/pdf"/>\n'
        f'    <arxiv:primary_category xmlns:arxiv="http://arxiv.org/schemas/atom" term={quoteattr(paper.category)}'
        ' scheme="http://arxiv.org/schemas/atom"/>\n'
        f'    <category term={quoteattr(paper.category)} scheme="http://arxiv.org/schemas/atom"/>\n'
        "  </entry>\n"
    )


def atom_error_entry(message: str) -> str:
    """How arXiv reports a bad query: a feed whose one entry is the error."""
    return (
        "  <entry>\n"
        f"    <id>http://arxiv.org/api/errors#{escape(message.replace(' ', '_'))}</id>\n"
        "    <title>Error</title>\n"
        f"    <summary>{escape(message)}</summary>\n"
        "    <updated>2026-11-21T00:00:00-05:00</updated>\n"
        '    <link href="http://arxiv.org/api/errors" rel="alternate" type="text/html"/>\n'
        "    <author>\n      <name>arXiv api core</name>\n    </author>\n"
        "  </entry>\n"
    )


def arxiv_feed(query: dict[str, str], papers: list[FakePaper], honour_limits: bool) -> str:
    on_arxiv = [paper for paper in papers if paper.arxiv_id]
    entries: list[str]
    if query.get("id_list"):
        wanted = [re.sub(r"v\d+$", "", item.strip()) for item in query["id_list"].split(",")]
        bad = [item for item in wanted if not re.fullmatch(r"\d{4}\.\d{4,5}|[a-z\-]+(\.[A-Z]{2})?/\d{7}", item)]
        if bad:
            entries = [atom_error_entry(f"incorrect id format for {bad[0]}")]
        else:
            entries = [atom_entry(paper) for item in wanted for paper in on_arxiv if paper.arxiv_id == item]
    else:
        terms = query_terms(query.get("search_query", ""))
        entries = [atom_entry(paper) for paper in on_arxiv if paper.matches(terms)]
    total = len(entries)
    if honour_limits:
        entries = entries[: int(query.get("max_results", 10))]
    head = ATOM_HEAD.format(query=escape(json.dumps(query)), total=total, shown=len(entries))
    return head + "".join(entries) + "</feed>\n"


def scholar_item(paper: FakePaper, fields: set[str]) -> dict[str, Any]:
    external: dict[str, Any] = {"CorpusId": int(paper.s2_paper_id[:8], 16)}
    if paper.arxiv_id:
        external["ArXiv"] = paper.arxiv_id
    if paper.doi:
        external["DOI"] = paper.doi
    full = {
        "externalIds": external,
        "url": f"https://www.semanticscholar.org/paper/{paper.s2_paper_id}",
        "title": paper.title,
        "abstract": paper.abstract or None,
        "venue": paper.venue,
        "year": paper.year,
        "authors": [{"authorId": str(1000 + index), "name": name} for index, name in enumerate(paper.authors)],
    }
    return {"paperId": paper.s2_paper_id, **{key: value for key, value in full.items() if key in fields}}


def scholar_search(query: dict[str, str], papers: list[FakePaper], honour_limits: bool) -> dict[str, Any]:
    matches = [paper for paper in papers if paper.matches(query_terms(query.get("query", "")))]
    limit = int(query.get("limit", 10)) if honour_limits else len(matches)
    fields = set(query.get("fields", "title").split(","))
    shown = matches[:limit]
    body: dict[str, Any] = {"total": len(matches), "offset": 0, "data": [scholar_item(p, fields) for p in shown]}
    if len(matches) > len(shown):
        body["next"] = len(shown)
    return body


def brave_search(query: dict[str, str], pages: list[FakeWebPage], honour_limits: bool) -> dict[str, Any]:
    matches = [page for page in pages if page.matches(query_terms(query.get("q", "")))]
    if honour_limits:
        matches = matches[: int(query.get("count", 20))]
    body: dict[str, Any] = {
        "type": "search",
        "query": {"original": query.get("q", ""), "more_results_available": False},
    }
    if matches:  # Brave leaves out a section that has nothing
        results = [
            {
                "type": "search_result",
                "title": page.title,
                "url": page.url,
                "description": page.description,
                "is_source_local": False,
                "language": "en",
                "family_friendly": True,
            }
            for page in matches
        ]
        body["web"] = {"type": "search", "results": results, "family_friendly": True}
    return body


# --- HTTP -------------------------------------------------------------------------------------


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], fake: FakeSearchServers) -> None:
        self.fake = fake
        super().__init__(address, _Handler)


ERROR_BODIES = {
    "arxiv": (b"Rate exceeded.", "text/plain"),
    "pdf": (b"<html><body>Service unavailable</body></html>", "text/html"),
    "scholar": (b'{"message": "Too Many Requests. Please wait and try again or apply for a key."}', "application/json"),
    "web": (
        b'{"type": "ErrorResponse", "error": {"status": 429, "code": "RATE_LIMITED", '
        b'"detail": "Request rate limit exceeded"}}',
        "application/json",
    ),
}


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    # One request per connection: no idle keep-alive thread outlives stop().
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Stay quiet in test output."""

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        endpoint = _endpoint(parts.path)
        headers = {name.lower(): value for name, value in self.headers.items()}
        record = RecordedRequest(endpoint or "unknown", parts.path, dict(parse_qsl(parts.query)), headers)
        fake = self.server.fake
        fake._record(record)
        if endpoint is None:
            return self._send(record, 404, b'{"error": "no such route"}', "application/json")
        fault = fake._take_fault(endpoint)
        if fault is not None and fault.hang is not None:
            if not fake._pause(fault.hang):
                return
        elif fault is not None:
            default_body, default_type = ERROR_BODIES[endpoint]
            body = fault.body if fault.body is not None else default_body
            content_type = fault.content_type if fault.body is not None else default_type
            extra = dict(fault.headers)
            if fault.retry_after is not None:
                extra["Retry-After"] = fault.retry_after
            return self._send(record, fault.status or 200, body, content_type, extra)
        self._answer(endpoint, record)

    def _answer(self, endpoint: str, record: RecordedRequest) -> None:
        fake, query = self.server.fake, record.query
        if endpoint == "arxiv":
            feed = arxiv_feed(query, fake.papers, fake.honour_limits)
            return self._send(record, 200, feed.encode(), "application/atom+xml; charset=utf-8")
        if endpoint == "scholar":
            return self._send_json(record, 200, scholar_search(query, fake.papers, fake.honour_limits))
        if endpoint == "web":
            if not record.headers.get("x-subscription-token"):
                error = {"type": "ErrorResponse", "error": {"status": 422, "code": "SUBSCRIPTION_TOKEN_INVALID"}}
                return self._send_json(record, 422, error)
            return self._send_json(record, 200, brave_search(query, fake.web_pages, fake.honour_limits))
        wanted = re.sub(r"v\d+$", "", record.path.removeprefix(ARXIV_PDF_PREFIX))
        pdf = next((paper.pdf for paper in fake.papers if paper.arxiv_id == wanted and paper.pdf), None)
        if pdf is None:
            return self._send(record, 404, b"<html><body>Paper not found</body></html>", "text/html")
        self._send(record, 200, pdf, "application/pdf")

    def _send_json(self, record: RecordedRequest, status: int, payload: dict[str, Any]) -> None:
        self._send(record, status, json.dumps(payload).encode(), "application/json")

    def _send(
        self,
        record: RecordedRequest,
        status: int,
        body: bytes,
        content_type: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        record.status = status
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            record.status = 0  # the client gave up (its timeout) before the answer


def _endpoint(path: str) -> str | None:
    if path == ARXIV_QUERY_PATH:
        return "arxiv"
    if path.startswith(ARXIV_PDF_PREFIX):
        return "pdf"
    if path == SCHOLAR_SEARCH_PATH:
        return "scholar"
    if path == BRAVE_PATH:
        return "web"
    return None
