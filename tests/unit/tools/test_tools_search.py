"""The search tools against the fake services on 127.0.0.1: parsing, caps, retries, keys, spacing."""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from lemmata.artifacts import PaperRecord
from lemmata.settings import Settings
from lemmata.tools import Tool, make_tools
from lemmata.tools.http_fetch import USER_AGENT, RateLimiter, ServiceError
from lemmata.tools.preprint_search import arxiv_ids, parse_feed, search_query
from lemmata.tools.scholar_search import paper_id, parse_search
from lemmata.tools.web_search import parse_results
from support.fake_search_servers import (
    FAST_SEARCH_SETTINGS,
    FakePaper,
    FakeSearchServers,
    FakeWebPage,
    Fault,
    atom_error_entry,
    unused_port,
)

BRAVE_KEY = "brave-test-key-5f3a9c"
SCHOLAR_KEY = "s2-test-key-77b1e0"
KEYS = {"BRAVE_SEARCH_API_KEY": BRAVE_KEY, "SEMANTIC_SCHOLAR_API_KEY": SCHOLAR_KEY}


@pytest.fixture
def fake() -> Iterator[FakeSearchServers]:
    with FakeSearchServers() as server:
        yield server


def tools_for(fake: FakeSearchServers, environ: Mapping[str, str] | None = None, **settings: Any) -> dict[str, Tool]:
    """The real tools, pointed at the fake, with fast retries and their own rate limiter."""
    values = {**fake.settings_values(), **FAST_SEARCH_SETTINGS, **settings}
    return make_tools(Settings.from_mapping(values), KEYS if environ is None else environ, limiter=RateLimiter())


def many_papers(count: int) -> tuple[FakePaper, ...]:
    return tuple(
        FakePaper(
            title=f"Random graphs, part {n}",
            abstract="Thresholds in random graphs.",
            authors=("R. Graph",),
            year=2020,
            arxiv_id=f"2001.{n:05d}",
            doi=f"10.1/rg.{n}",
        )
        for n in range(1, count + 1)
    )


# --- preprint_search ---------------------------------------------------------------------------


def test_preprint_search_maps_the_atom_feed_to_paper_records(fake: FakeSearchServers) -> None:
    result = tools_for(fake)["preprint_search"].run("sum of even integers")
    assert result.ok
    first = result.papers[0]
    assert first == PaperRecord(
        id="arXiv:2101.00001",  # version suffix stripped
        title="Parity of Sums of Even Integers",  # the feed wraps it across lines
        authors=["Ada Example", "Bo Sample"],
        year=2021,
        url="http://arxiv.org/abs/2101.00001v2",
        abstract="We record why the sum of two even integers is even, and the lemma on even integers it rests on.",
        venue="J. Elem. Number Theory 3 (2021) 1-4",
        source="preprint_search",
    )
    assert [paper.id for paper in result.papers] == ["arXiv:2101.00001", "arXiv:1905.01234"]
    assert "[1] arXiv:2101.00001 — Parity of Sums of Even Integers" in result.text
    assert "J. Elem. Number Theory" in result.text


def test_preprint_search_asks_for_every_meaningful_term_and_the_cap(fake: FakeSearchServers) -> None:
    tools_for(fake)["preprint_search"].run("what is known about the sum of even integers")
    (request,) = fake.requests("arxiv")
    assert request.query == {"search_query": "all:sum AND all:even AND all:integers", "start": "0", "max_results": "10"}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param("random graphs", "all:random AND all:graphs", id="terms-anded"),
        pytest.param('"random graphs" threshold', 'all:"random graphs" AND all:threshold', id="quoted-phrase"),
        pytest.param("ti:parity AND au:example", "ti:parity AND au:example", id="arxiv-syntax-passed-through"),
        pytest.param("Erdős–Rényi (graphs):", 'all:"Erdős Rényi" AND all:graphs', id="punctuation-dropped"),
        pytest.param("the of and", "", id="only-stopwords"),
    ],
)
def test_search_query_for_free_text(query: str, expected: str) -> None:
    assert search_query(query) == expected


@pytest.mark.parametrize(
    ("query", "ids"),
    [
        pytest.param("2101.00001", ["2101.00001"], id="new-style"),
        pytest.param("arXiv:2101.00001v2", ["2101.00001v2"], id="prefixed-versioned"),
        pytest.param("ARXIV:1905.01234", ["1905.01234"], id="prefix-any-case"),
        pytest.param("math/0501001", ["math/0501001"], id="old-style"),
        pytest.param("math.AG/0501001v1", ["math.AG/0501001v1"], id="old-style-with-subject-class"),
        pytest.param("https://arxiv.org/abs/2101.00001", ["2101.00001"], id="abs-url"),
        pytest.param("2101.00001, math/0501001", ["2101.00001", "math/0501001"], id="several"),
        pytest.param("random graphs", None, id="keywords"),
        pytest.param("2101.00001 thresholds", None, id="id-and-keyword"),
        pytest.param("2021 results", None, id="year-is-not-an-id"),
    ],
)
def test_arxiv_ids_in_a_query(query: str, ids: list[str] | None) -> None:
    assert arxiv_ids(query) == ids


@pytest.mark.parametrize(
    ("query", "expected_ids"),
    [
        pytest.param("2101.00001", ["arXiv:2101.00001"], id="new-style"),
        pytest.param("arXiv:2101.00001v2", ["arXiv:2101.00001"], id="prefixed-versioned"),
        pytest.param("math/0501001", ["arXiv:math/0501001"], id="old-style"),
        pytest.param("1905.01234 2101.00001", ["arXiv:1905.01234", "arXiv:2101.00001"], id="several"),
        pytest.param("2999.99999", [], id="unknown-id"),
    ],
)
def test_preprint_search_looks_up_identifiers_with_id_list(
    fake: FakeSearchServers, query: str, expected_ids: list[str]
) -> None:
    result = tools_for(fake)["preprint_search"].run(query)
    assert result.ok
    assert [paper.id for paper in result.papers] == expected_ids
    (request,) = fake.requests("arxiv")
    assert "id_list" in request.query and "search_query" not in request.query


def test_arxiv_error_feed_is_an_error_result() -> None:
    feed = '<feed xmlns="http://www.w3.org/2005/Atom">' + atom_error_entry("incorrect id format for 1234.1") + "</feed>"
    with pytest.raises(ServiceError, match="arXiv rejected the query: incorrect id format for 1234.1"):
        parse_feed(feed.encode())


def test_an_empty_query_is_an_error_and_asks_nothing(fake: FakeSearchServers) -> None:
    for name in ("preprint_search", "scholar_search", "web_search"):
        result = tools_for(fake)[name].run("   ")
        assert not result.ok and "empty" in result.error
    assert fake.requests() == []


# --- the cap -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "endpoint", "asked"),
    [
        pytest.param("preprint_search", "arxiv", "max_results", id="arxiv"),
        pytest.param("scholar_search", "scholar", "limit", id="semantic-scholar"),
    ],
)
def test_cap_is_asked_for_and_enforced_even_when_the_service_sends_more(tool: str, endpoint: str, asked: str) -> None:
    with FakeSearchServers(papers=many_papers(15)) as fake:
        fake.honour_limits = False  # the service ignores the limit and sends all 15
        result = tools_for(fake, PREPRINT_MAX_RESULTS=3)[tool].run("random graphs")
    assert result.ok
    assert fake.requests(endpoint)[0].query[asked] == "3"
    assert len(result.papers) == 3
    assert result.text.count("\n[") == 3 and "[4]" not in result.text


def test_web_search_count_is_capped_too() -> None:
    pages = tuple(
        FakeWebPage(f"Random graphs {n}", f"https://example.org/{n}", "random graphs notes") for n in range(30)
    )
    with FakeSearchServers(web_pages=pages) as fake:
        fake.honour_limits = False
        result = tools_for(fake, PREPRINT_MAX_RESULTS=4)["web_search"].run("random graphs")
        assert fake.requests("web")[0].query["count"] == "4"
        assert result.text.count("https://example.org/") == 4


def test_web_search_asks_brave_for_at_most_twenty() -> None:
    with FakeSearchServers() as fake:
        tools_for(fake, PREPRINT_MAX_RESULTS=50)["web_search"].run("even")
        assert fake.requests("web")[0].query["count"] == "20"


# --- scholar_search ----------------------------------------------------------------------------


def test_scholar_search_maps_the_json_to_paper_records(fake: FakeSearchServers) -> None:
    result = tools_for(fake)["scholar_search"].run("parity")
    assert result.ok
    by_id = {paper.id: paper for paper in result.papers}
    assert set(by_id) == {"arXiv:2101.00001", "arXiv:math/0501001", "DOI:10.5555/graphs.2015.42"}
    graphs = by_id["DOI:10.5555/graphs.2015.42"]
    assert (graphs.title, graphs.authors, graphs.year, graphs.venue, graphs.source) == (
        "Parity Arguments in Graph Theory",
        ["Eve Journal"],
        2015,
        "Graphs and Combinatorics",
        "scholar_search",
    )
    assert graphs.url.startswith("https://www.semanticscholar.org/paper/")
    (request,) = fake.requests("scholar")
    assert request.path == "/s2/graph/v1/paper/search"
    assert request.query == {
        "query": "parity",
        "limit": "10",
        "fields": "title,authors,year,externalIds,url,abstract,venue",
    }


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        pytest.param(
            {"paperId": "abc", "externalIds": {"ArXiv": "2101.00001", "DOI": "10.1/x"}},
            "arXiv:2101.00001",
            id="arxiv-first",
        ),
        pytest.param({"paperId": "abc", "externalIds": {"DOI": "10.1/x", "MAG": "1"}}, "DOI:10.1/x", id="doi"),
        pytest.param({"paperId": "abc", "externalIds": {"CorpusId": 5}}, "S2:abc", id="s2-id"),
        pytest.param({"paperId": "abc", "externalIds": None}, "S2:abc", id="external-ids-null"),
    ],
)
def test_scholar_paper_ids(item: dict[str, Any], expected: str) -> None:
    assert paper_id(item) == expected


def test_scholar_search_without_matches_may_leave_out_data() -> None:
    assert parse_search(b'{"total": 0, "offset": 0}') == []


def test_scholar_search_sends_plain_words(fake: FakeSearchServers) -> None:
    tools_for(fake)["scholar_search"].run("Erdos-Renyi   graphs")
    assert fake.requests("scholar")[0].query["query"] == "Erdos Renyi graphs"


# --- web_search --------------------------------------------------------------------------------


def test_web_search_returns_pages_as_text_not_papers(fake: FakeSearchServers) -> None:
    result = tools_for(fake)["web_search"].run("sum even")
    assert result.ok and result.papers == []
    assert "Why is the sum of two even numbers even?" in result.text
    assert "https://math.example.org/questions/123" in result.text
    assert "The sum of two even numbers 2a and 2b is 2(a+b) & so even." in result.text  # tags and entities gone


def test_web_search_without_a_key_is_unavailable_and_asks_nothing(fake: FakeSearchServers) -> None:
    result = tools_for(fake, environ={})["web_search"].run("sum even")
    assert not result.ok
    assert "web search is unavailable" in result.text and "not configured" in result.text
    assert "BRAVE_SEARCH_API_KEY" in result.text
    assert fake.requests() == []


def test_web_search_without_results_is_a_plain_answer(fake: FakeSearchServers) -> None:
    result = tools_for(fake)["web_search"].run("nothing matches this")
    assert result.ok and "no web pages found" in result.text


# --- keys and headers --------------------------------------------------------------------------


def test_keys_go_in_headers_and_never_in_the_results(fake: FakeSearchServers) -> None:
    tools = tools_for(fake)
    web = tools["web_search"].run("sum even")
    scholar = tools["scholar_search"].run("parity")
    assert fake.requests("web")[0].headers["x-subscription-token"] == BRAVE_KEY
    assert fake.requests("scholar")[0].headers["x-api-key"] == SCHOLAR_KEY
    for request in fake.requests():
        assert BRAVE_KEY not in str(request.query) and SCHOLAR_KEY not in str(request.query)
    for result in (web, scholar):
        assert BRAVE_KEY not in result.text and SCHOLAR_KEY not in result.text


def test_keys_never_reach_error_texts(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO")
    port = unused_port()
    settings = {
        "WEB_SEARCH_BASE_URL": f"http://127.0.0.1:{port}/{BRAVE_KEY}",  # even a key pasted into a URL
        "SCHOLAR_BASE_URL": f"http://127.0.0.1:{port}/s2",
    }
    with FakeSearchServers() as fake:
        tools = tools_for(fake, **settings)
        for name in ("web_search", "scholar_search"):
            result = tools[name].run("parity")
            assert not result.ok
            assert BRAVE_KEY not in result.text + result.error and SCHOLAR_KEY not in result.text + result.error
    assert BRAVE_KEY not in caplog.text and SCHOLAR_KEY not in caplog.text


def test_a_key_echoed_in_a_web_page_is_scrubbed() -> None:
    pages = (FakeWebPage("Leaky page", "https://example.org/leak", f"token {BRAVE_KEY} appears here"),)
    with FakeSearchServers(web_pages=pages) as fake:
        result = tools_for(fake)["web_search"].run("leaky")
    assert result.ok and BRAVE_KEY not in result.text and "[redacted]" in result.text


def test_scholar_search_without_a_key_sends_no_key_header(fake: FakeSearchServers) -> None:
    result = tools_for(fake, environ={})["scholar_search"].run("parity")
    assert result.ok
    assert "x-api-key" not in fake.requests("scholar")[0].headers


def test_every_request_names_lemmata_as_user_agent(fake: FakeSearchServers) -> None:
    tools = tools_for(fake)
    for name in ("preprint_search", "scholar_search", "web_search"):
        tools[name].run("parity")
    agents = {request.headers["user-agent"] for request in fake.requests()}
    assert agents == {USER_AGENT} and USER_AGENT.startswith("lemmata/")


# --- retries, outages, timeouts ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "endpoint"), [("preprint_search", "arxiv"), ("scholar_search", "scholar"), ("web_search", "web")]
)
def test_429_twice_then_200_is_survived(fake: FakeSearchServers, tool: str, endpoint: str) -> None:
    fake.inject_fault(endpoint, Fault(status=429), Fault(status=429))
    result = tools_for(fake)[tool].run("even")
    assert result.ok, result.text
    assert "even" in result.text.lower() and "[1]" in result.text
    assert [request.status for request in fake.requests(endpoint)] == [429, 429, 200]


def test_5xx_is_retried_then_reported(fake: FakeSearchServers) -> None:
    fake.inject_fault("arxiv", *[Fault(status=503)] * 3)
    result = tools_for(fake)["preprint_search"].run("parity")
    assert not result.ok
    assert result.error == "arXiv is unavailable after 3 attempts: HTTP 503 (server error)"
    assert result.text.startswith("preprint_search failed: arXiv is unavailable")
    assert len(fake.requests("arxiv")) == 3


def test_retry_after_is_respected(fake: FakeSearchServers) -> None:
    fake.inject_fault("scholar", Fault(status=429, retry_after="0.4"))
    result = tools_for(fake, SEARCH_RETRY_WAIT_MAX=5)["scholar_search"].run("parity")
    assert result.ok
    first, second = fake.requests("scholar")
    assert second.at - first.at >= 0.38


def retry_waits(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The waits the retries announced ("retrying in 0.1 s"), in order."""
    return re.findall(r"retrying in ([\d.]+) s", caplog.text)


def test_retry_after_is_capped_by_the_backoff_maximum(fake: FakeSearchServers, caplog) -> None:
    caplog.set_level(logging.INFO, logger="lemmata.tools.http_fetch")
    fake.inject_fault("scholar", Fault(status=429, retry_after="3600"))
    result = tools_for(fake, SEARCH_RETRY_WAIT_MAX=0.1)["scholar_search"].run("parity")
    assert result.ok and retry_waits(caplog) == ["0.1"]  # not the hour the service asked for


def test_a_client_error_is_not_retried(fake: FakeSearchServers) -> None:
    fake.inject_fault(
        "scholar",
        Fault(
            status=400, body=b'{"error": "Unrecognized or unsupported fields: [foo]"}', content_type="application/json"
        ),
    )
    result = tools_for(fake)["scholar_search"].run("parity")
    assert not result.ok
    assert result.error == ("Semantic Scholar refused the request: HTTP 400: Unrecognized or unsupported fields: [foo]")
    assert len(fake.requests("scholar")) == 1


@pytest.mark.parametrize("tool", ["preprint_search", "scholar_search", "web_search"])
def test_a_down_service_is_an_error_result_in_bounded_time(tool: str, caplog) -> None:
    caplog.set_level(logging.INFO, logger="lemmata.tools.http_fetch")
    port = unused_port()
    down = {
        "PREPRINT_BASE_URL": f"http://127.0.0.1:{port}/api/query",
        "SCHOLAR_BASE_URL": f"http://127.0.0.1:{port}",
        "WEB_SEARCH_BASE_URL": f"http://127.0.0.1:{port}/search",
    }
    with FakeSearchServers() as fake:
        result = tools_for(fake, **down)[tool].run("parity")
    # Bounded: three attempts, two waits within the backoff maximum (0.01 s: FAST_SEARCH_SETTINGS).
    assert [float(wait) <= 0.01 for wait in retry_waits(caplog)] == [True, True]
    assert not result.ok
    assert "unavailable after 3 attempts: connection failed (ConnectError" in result.error
    assert "Try another query or another tool" in result.text


def test_a_hanging_service_times_out_into_an_error_result(fake: FakeSearchServers) -> None:
    fake.inject_fault("arxiv", Fault(hang=5), Fault(hang=5))
    started = time.monotonic()
    result = tools_for(fake, SEARCH_TIMEOUT=0.4, SEARCH_RETRY_ATTEMPTS=2)["preprint_search"].run("parity")
    elapsed = time.monotonic() - started
    assert not result.ok
    assert result.error == "arXiv is unavailable after 2 attempts: no answer within 0.4 s"
    assert 0.7 < elapsed < 3


def test_one_hang_then_an_answer_is_survived(fake: FakeSearchServers) -> None:
    fake.inject_fault("arxiv", Fault(hang=5))
    result = tools_for(fake, SEARCH_TIMEOUT=0.4)["preprint_search"].run("parity")
    assert result.ok and len(result.papers) == 2


def test_an_invalid_base_url_is_an_error_result(fake: FakeSearchServers) -> None:
    result = tools_for(fake, PREPRINT_BASE_URL="http://[::1")["preprint_search"].run("parity")
    assert not result.ok and "URL is not valid" in result.error


# --- malformed answers -------------------------------------------------------------------------

HTML_ERROR_PAGE = b"<!DOCTYPE html><html><head><title>Error</title></head><body><h1>Oops</h1></body></html>"


@pytest.mark.parametrize(
    ("tool", "endpoint", "body", "content_type", "message"),
    [
        pytest.param(
            "preprint_search", "arxiv", b"<feed><entry>", "application/atom+xml", "not XML", id="arxiv-truncated-xml"
        ),
        pytest.param(
            "preprint_search",
            "arxiv",
            b"<html><body>Oops</body></html>",
            "text/html",
            "not an Atom feed",
            id="arxiv-html-page-with-200",
        ),
        pytest.param(
            "preprint_search",
            "arxiv",
            b'{"entries": []}',
            "application/json",
            "not XML",
            id="arxiv-json-instead-of-xml",
        ),
        pytest.param("preprint_search", "arxiv", b"", "application/atom+xml", "not XML", id="arxiv-empty-body"),
        pytest.param(
            "scholar_search",
            "scholar",
            b'{"total": 3, "offset": 0}',
            "application/json",
            "without a `data` list",
            id="scholar-json-without-data",
        ),
        pytest.param(
            "scholar_search", "scholar", HTML_ERROR_PAGE, "text/html", "not JSON", id="scholar-html-page-with-200"
        ),
        pytest.param(
            "scholar_search", "scholar", b"[1, 2]", "application/json", "not an object", id="scholar-json-array"
        ),
        pytest.param(
            "scholar_search",
            "scholar",
            b'{"data": [{"title": "x", "authors": "nobody"}]}',
            "application/json",
            "unexpected shape",
            id="scholar-paper-of-wrong-shape",
        ),
        pytest.param("web_search", "web", HTML_ERROR_PAGE, "text/html", "not JSON", id="web-html-page-with-200"),
        pytest.param(
            "web_search",
            "web",
            b'{"web": {"items": []}}',
            "application/json",
            "without a `web.results`",
            id="web-json-without-results",
        ),
    ],
)
def test_malformed_answers_are_error_results(
    fake: FakeSearchServers, tool: str, endpoint: str, body: bytes, content_type: str, message: str
) -> None:
    fake.inject_fault(endpoint, Fault(body=body, content_type=content_type))
    result = tools_for(fake)[tool].run("parity")
    assert not result.ok
    assert message in result.error
    assert result.text.startswith(f"{tool} failed:")
    assert len(fake.requests(endpoint)) == 1  # a malformed answer is not retried


def test_web_results_parse_strips_markup() -> None:
    result = {"title": "A <strong>b</strong>", "url": "https://x", "description": "c &amp; d"}
    body = json.dumps({"type": "search", "web": {"results": [result]}}).encode()
    (page,) = parse_results(body)
    assert (page.title, page.url, page.snippet) == ("A b", "https://x", "c & d")


# --- the polite interval -----------------------------------------------------------------------


def test_requests_to_one_service_are_spaced_by_its_interval(fake: FakeSearchServers) -> None:
    tools = tools_for(fake, SEARCH_MIN_INTERVAL_SCALE=0.2)  # arXiv: 3 s x 0.2
    for query in ("parity", "even", "integers"):
        assert tools["preprint_search"].run(query).ok
    times = [request.at for request in fake.requests("arxiv")]
    gaps = [later - earlier for earlier, later in zip(times, times[1:])]
    # Measured at arrival, so allow for a difference in connection time between two requests.
    assert all(gap >= 0.5 for gap in gaps), gaps


def test_retries_wait_their_turn_too(fake: FakeSearchServers) -> None:
    fake.inject_fault("scholar", Fault(status=503))
    tools = tools_for(fake, SEARCH_MIN_INTERVAL_SCALE=0.6)  # Semantic Scholar: 1 s x 0.6; backoff ~0
    assert tools["scholar_search"].run("parity").ok
    first, second = fake.requests("scholar")
    assert second.at - first.at >= 0.5


def test_rate_limiter_spaces_each_service_on_its_own() -> None:
    now = [100.0]
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(round(seconds, 6))
        now[0] += seconds

    limiter = RateLimiter(clock=lambda: now[0], sleep=sleep)
    limiter.wait_turn("arXiv", 3.0)  # first request: no wait
    limiter.wait_turn("Semantic Scholar", 1.0)  # another service: no wait
    now[0] += 1.0
    limiter.wait_turn("arXiv", 3.0)  # 1 s after the first: waits 2 s
    limiter.wait_turn("Semantic Scholar", 1.0)  # 3 s after its first: no wait
    assert sleeps == [2.0]


# --- the factory -------------------------------------------------------------------------------


def test_make_tools_names_and_latex_tool_only_with_a_source(fake: FakeSearchServers) -> None:
    assert set(tools_for(fake)) == {"preprint_search", "scholar_search", "web_search"}
    settings = Settings.from_mapping({**fake.settings_values(), **FAST_SEARCH_SETTINGS})
    with_latex = make_tools(settings, {}, latex_source="\\section{Intro}\nHello.")
    assert set(with_latex) == {"preprint_search", "scholar_search", "web_search", "latex_section_read"}
    for tool in with_latex.values():
        assert tool.description and tool.parameter in ("query", "section")
    assert with_latex["latex_section_read"].parameter == "section"


def test_make_tools_reads_keys_from_the_process_environment_by_default(
    fake: FakeSearchServers, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BRAVE_SEARCH_API_KEY", BRAVE_KEY)
    settings = Settings.from_mapping({**fake.settings_values(), **FAST_SEARCH_SETTINGS})
    assert make_tools(settings, limiter=RateLimiter())["web_search"].run("sum even").ok
    assert fake.requests("web")[0].headers["x-subscription-token"] == BRAVE_KEY


def test_search_settings_defaults() -> None:
    settings = Settings()
    assert settings.PREPRINT_BASE_URL == "http://export.arxiv.org/api/query"
    assert settings.SCHOLAR_BASE_URL == "https://api.semanticscholar.org/graph/v1"
    assert settings.WEB_SEARCH_BASE_URL == "https://api.search.brave.com/res/v1/web/search"
    assert settings.PDF_BASE_URL == "https://arxiv.org/pdf"
    assert settings.SEARCH_MIN_INTERVAL_SCALE == 1.0


def test_a_keyed_request_does_not_follow_a_redirect(fake: FakeSearchServers) -> None:
    # A redirect elsewhere would carry the key header along.
    elsewhere = fake.origin + "/arxiv/api/query?search_query=all:parity"
    fake.inject_fault("web", Fault(status=302, body=b"", content_type="text/plain", headers=(("Location", elsewhere),)))
    result = tools_for(fake)["web_search"].run("sum even")
    assert not result.ok and "HTTP 302" in result.error
    assert len(fake.requests()) == 1
