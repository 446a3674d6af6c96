"""The fake model server's imitation of Anthropic prompt caching (opt-in: prompt_cache=True)."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import pytest

from support.fake_llm_server import CACHE_LOOKBACK_BLOCKS, FakeLLMServer, cache_prefixes, estimate_tokens, prompt_text

MESSAGES = "/v1/messages"
CHAT = "/v1/chat/completions"
EPHEMERAL = {"type": "ephemeral"}
# A long LaTeX source: 8000 characters, so 2000 estimated tokens (over the 1024-token minimum).
PAPER = ("\\begin{lemma}Every even number is a sum of two odd numbers.\\end{lemma}\n" * 200)[:8000]
OTHER_PAPER = PAPER.replace("even", "EVEN")
assert len(PAPER) == len(OTHER_PAPER) == 8000 and estimate_tokens(PAPER) == 2000


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    """A running fake server with prompt caching on, answering every role."""
    with FakeLLMServer(prompt_cache=True) as fake:
        fake.set_default(None, "an answer")
        yield fake


@pytest.fixture
def http(server: FakeLLMServer) -> Iterator[httpx.Client]:
    """Raw HTTP client aimed at the fake server."""
    with httpx.Client(base_url=server.anthropic_base_url, timeout=5.0, trust_env=False) as client:
        yield client


def cached_system(text: str) -> list[dict[str, Any]]:
    """A system prompt as lemmata's Anthropic backend sends it: one block marked cacheable."""
    return [{"type": "text", "text": text, "cache_control": EPHEMERAL}]


def text_block(text: str, marked: bool = False) -> dict[str, Any]:
    """A text content block, marked cacheable or not."""
    return {"type": "text", "text": text, **({"cache_control": EPHEMERAL} if marked else {})}


def ask(
    http: httpx.Client, question: str, system: Any = None, model: str = "claude-fake", **extra: Any
) -> dict[str, Any]:
    """POST a Messages request, return the answer's usage."""
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": 50,
        "messages": [{"role": "user", "content": question}],
        **extra,
    }
    if system is not None:
        body["system"] = system
    response = http.post(MESSAGES, json=body, headers={"X-Lemmata-Role": "reader"})
    assert response.status_code == 200, response.text
    return response.json()["usage"]


def usage_of(input_tokens: int, read: int, creation: int) -> dict[str, int]:
    """Expected usage of the one-word answer "an answer" (9 characters: 3 tokens)."""
    return {
        "input_tokens": input_tokens,
        "output_tokens": 3,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": creation,
    }


def test_second_request_reads_the_system_prefix_the_first_wrote(server: FakeLLMServer, http: httpx.Client) -> None:
    first = ask(http, "What is lemma 1?", cached_system(PAPER))  # 16 characters after the paper
    second = ask(http, "And its proof, in short?", cached_system(PAPER))  # 24 characters
    assert first == usage_of(4, 0, 2000)
    assert second == usage_of(6, 2000, 0)
    # input_tokens excludes the cache: together they make the whole input estimate.
    for usage, question in ((first, "What is lemma 1?"), (second, "And its proof, in short?")):
        total = usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]
        assert total == estimate_tokens(PAPER + question)
    recorded = [(r.cache_read_tokens, r.cache_creation_tokens) for r in server.requests]
    assert recorded == [(0, 2000), (2000, 0)]


def test_a_different_prefix_or_model_writes_again_and_both_stay_cached(
    server: FakeLLMServer, http: httpx.Client
) -> None:
    assert ask(http, "q", cached_system(PAPER))["cache_creation_input_tokens"] == 2000
    assert ask(http, "q", cached_system(OTHER_PAPER))["cache_creation_input_tokens"] == 2000
    assert ask(http, "q", cached_system(PAPER), model="claude-other")["cache_creation_input_tokens"] == 2000
    assert ask(http, "q", cached_system(PAPER))["cache_read_input_tokens"] == 2000
    assert ask(http, "q", cached_system(OTHER_PAPER))["cache_read_input_tokens"] == 2000
    assert [(r.cache_read_tokens, r.cache_creation_tokens) for r in server.requests] == [
        (0, 2000),
        (0, 2000),
        (0, 2000),
        (2000, 0),
        (2000, 0),
    ]


def test_prefix_below_the_minimum_is_not_cached(http: httpx.Client) -> None:
    short = "x" * 4092  # 1023 tokens, one under Anthropic's minimum
    for _ in range(2):
        assert ask(http, "abcd", cached_system(short)) == usage_of(1024, 0, 0)


def test_minimum_is_a_constructor_option_and_an_attribute() -> None:
    with (
        FakeLLMServer(prompt_cache=True, min_cacheable_tokens=10) as fake,
        httpx.Client(base_url=fake.anthropic_base_url, timeout=5.0, trust_env=False) as client,
    ):
        fake.set_default(None, "an answer")
        system = cached_system("y" * 40)  # 10 tokens
        assert ask(client, "abcd", system) == usage_of(1, 0, 10)
        assert ask(client, "abcd", system) == usage_of(1, 10, 0)
        fake.min_cacheable_tokens = 11
        assert ask(client, "abcd", system) == usage_of(11, 0, 0)


def test_without_cache_control_nothing_is_cached(http: httpx.Client) -> None:
    unmarked = [{"type": "text", "text": PAPER}]
    for system in (PAPER, unmarked, PAPER, unmarked):  # a string system cannot carry cache_control
        assert ask(http, "abcd", system) == usage_of(2001, 0, 0)


def test_default_server_never_caches() -> None:
    with (
        FakeLLMServer() as fake,
        httpx.Client(base_url=fake.anthropic_base_url, timeout=5.0, trust_env=False) as client,
    ):
        fake.set_default(None, "an answer")
        for _ in range(2):
            assert ask(client, "abcd", cached_system(PAPER)) == usage_of(2001, 0, 0)
        assert [(r.cache_read_tokens, r.cache_creation_tokens) for r in fake.requests] == [(0, 0), (0, 0)]


def test_prompt_cache_can_be_switched_on_as_an_attribute() -> None:
    with (
        FakeLLMServer() as fake,
        httpx.Client(base_url=fake.anthropic_base_url, timeout=5.0, trust_env=False) as client,
    ):
        fake.set_default(None, "an answer")
        assert ask(client, "abcd", cached_system(PAPER)) == usage_of(2001, 0, 0)
        fake.prompt_cache = True
        assert ask(client, "abcd", cached_system(PAPER)) == usage_of(1, 0, 2000)
        assert ask(client, "abcd", cached_system(PAPER)) == usage_of(1, 2000, 0)


def test_clear_prompt_cache_forgets_what_was_written(server: FakeLLMServer, http: httpx.Client) -> None:
    assert ask(http, "abcd", cached_system(PAPER)) == usage_of(1, 0, 2000)
    server.clear_prompt_cache()
    assert ask(http, "abcd", cached_system(PAPER)) == usage_of(1, 0, 2000)


def test_streamed_answers_carry_the_cache_figures_at_start_and_end(server: FakeLLMServer, http: httpx.Client) -> None:
    def stream_usages() -> tuple[dict[str, int], dict[str, int]]:
        body = {
            "model": "claude-fake",
            "max_tokens": 50,
            "stream": True,
            "system": cached_system(PAPER),
            "messages": [{"role": "user", "content": "abcd"}],
        }
        response = http.post(MESSAGES, json=body, headers={"X-Lemmata-Role": "reader"})
        assert response.status_code == 200
        payloads = [
            json.loads(line[len("data: ") :]) for line in response.text.splitlines() if line.startswith("data: ")
        ]
        [start] = [p for p in payloads if p["type"] == "message_start"]
        [delta] = [p for p in payloads if p["type"] == "message_delta"]
        return start["message"]["usage"], delta["usage"]

    assert stream_usages() == ({**usage_of(1, 0, 2000), "output_tokens": 0}, usage_of(1, 0, 2000))
    assert stream_usages() == ({**usage_of(1, 2000, 0), "output_tokens": 0}, usage_of(1, 2000, 0))


def test_cache_control_on_a_message_caches_the_conversation_so_far(server: FakeLLMServer, http: httpx.Client) -> None:
    history = [
        {"role": "user", "content": [text_block(PAPER, marked=True)]},
        {"role": "assistant", "content": "Read it."},
    ]
    follow_up = {"role": "user", "content": "abcd"}
    body = {"model": "claude-fake", "max_tokens": 50, "system": "Answer questions.", "messages": [*history, follow_up]}
    first = http.post(MESSAGES, json=body).json()["usage"]
    # 17 system + 8000 paper characters are the prefix (2005 tokens); 8 + 4 more make 2008 in all.
    assert first == usage_of(3, 0, 2005)
    # The same text in another structure (no system, both parts in one message) is another prefix.
    merged = {
        "model": "claude-fake",
        "max_tokens": 50,
        "messages": [{"role": "user", "content": [text_block("Answer questions."), text_block(PAPER, marked=True)]}],
    }
    assert http.post(MESSAGES, json=merged).json()["usage"] == usage_of(0, 0, 2005)
    again = http.post(MESSAGES, json={**body, "messages": [*history, {"role": "user", "content": "efgh ijkl"}]})
    assert again.json()["usage"] == usage_of(4, 2005, 0)  # 17 + 8000 + 8 + 9 characters: 2009 tokens


def test_with_several_breakpoints_the_longest_cached_prefix_is_read_and_the_rest_written(
    server: FakeLLMServer, http: httpx.Client
) -> None:
    base = {"model": "claude-fake", "max_tokens": 50, "system": cached_system(PAPER)}
    assert ask(http, "abcd", cached_system(PAPER)) == usage_of(1, 0, 2000)
    # The system prompt and the question marked: the system prefix is read, the question (100 tokens) written.
    first_turn = {**base, "messages": [{"role": "user", "content": [text_block("q" * 400, marked=True)]}]}
    assert [p.tokens for p in cache_prefixes(first_turn) if p.breakpoint] == [2000, 2100]
    assert http.post(MESSAGES, json=first_turn).json()["usage"] == usage_of(0, 2000, 100)
    # The next turn moves the mark to its newest question; the first turn's prefix is found by looking back.
    second_turn = {
        **base,
        "messages": [
            {"role": "user", "content": [text_block("q" * 400)]},
            {"role": "assistant", "content": [text_block("a" * 40)]},
            {"role": "user", "content": [text_block("r" * 40, marked=True)]},
        ],
    }
    usage = http.post(MESSAGES, json=second_turn).json()["usage"]
    assert usage == usage_of(0, 2100, 20)
    assert usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"] == estimate_tokens(
        prompt_text(second_turn)
    )
    assert [(r.cache_read_tokens, r.cache_creation_tokens) for r in server.requests] == [
        (0, 2000),
        (2000, 100),
        (2100, 20),
    ]


@pytest.mark.parametrize(("blocks_after", "read"), [(CACHE_LOOKBACK_BLOCKS, 2001), (CACHE_LOOKBACK_BLOCKS + 1, 0)])
def test_lookback_reaches_a_limited_number_of_blocks_before_the_breakpoint(
    http: httpx.Client, blocks_after: int, read: int
) -> None:
    def request(count: int) -> dict[str, Any]:
        """The paper's block, then count 4-character blocks; the last block is marked."""
        blocks = [text_block(PAPER + "1234", marked=count == 0)]
        blocks += [text_block(f"{i:04d}", marked=i == count) for i in range(1, count + 1)]
        return {"model": "claude-fake", "max_tokens": 50, "messages": [{"role": "user", "content": blocks}]}

    assert http.post(MESSAGES, json=request(0)).json()["usage"] == usage_of(0, 0, 2001)
    total = 2001 + blocks_after
    assert http.post(MESSAGES, json=request(blocks_after)).json()["usage"] == usage_of(0, read, total - read)


def test_tools_come_first_in_the_cached_prefix(server: FakeLLMServer, http: httpx.Client) -> None:
    tool = {
        "name": "search",
        "description": "Search the literature.",
        "input_schema": {"type": "object", "properties": {}},
    }
    assert ask(http, "abcd", cached_system(PAPER), tools=[tool])["cache_creation_input_tokens"] == 2000
    assert ask(http, "abcd", cached_system(PAPER), tools=[tool])["cache_read_input_tokens"] == 2000
    other_tool = {**tool, "description": "Search the web."}
    assert ask(http, "abcd", cached_system(PAPER), tools=[other_tool])["cache_creation_input_tokens"] == 2000
    # cache_control itself is no part of the prefix: marking the tool too reads the same system prefix.
    marked_tool = {**tool, "cache_control": EPHEMERAL}
    assert ask(http, "abcd", cached_system(PAPER), tools=[marked_tool]) == usage_of(1, 2000, 0)


def test_openai_answers_report_no_cache(server: FakeLLMServer, http: httpx.Client) -> None:
    body = {
        "model": "gpt-fake",
        "messages": [{"role": "system", "content": PAPER}, {"role": "user", "content": "abcd"}],
    }
    for _ in range(2):
        response = http.post(CHAT, json=body)
        assert response.json()["usage"] == {"prompt_tokens": 2001, "completion_tokens": 3, "total_tokens": 2004}
    assert [(r.cache_read_tokens, r.cache_creation_tokens) for r in server.requests] == [(0, 0), (0, 0)]


def test_of_concurrent_equal_requests_exactly_one_writes(server: FakeLLMServer) -> None:
    server.latency = 0.05
    start_together = threading.Barrier(8)
    usages: queue.Queue[dict[str, int]] = queue.Queue()

    def ask_together() -> None:
        with httpx.Client(base_url=server.anthropic_base_url, timeout=5.0, trust_env=False) as client:
            start_together.wait()
            usages.put(ask(client, "abcd", cached_system(PAPER)))

    threads = [threading.Thread(target=ask_together) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=5)
    got = [usages.get_nowait() for _ in range(usages.qsize())]
    assert (
        sorted(got, key=lambda u: u["cache_read_input_tokens"]) == [usage_of(1, 0, 2000)] + [usage_of(1, 2000, 0)] * 7
    )


def test_script_keys_switch_caching_on() -> None:
    fake = FakeLLMServer()
    fake.apply_script({"prompt_cache": True, "min_cacheable_tokens": 2048})
    assert (fake.prompt_cache, fake.min_cacheable_tokens) == (True, 2048)
    with pytest.raises(ValueError):
        fake.apply_script({"prompt_cache": "yes"})


def test_anthropic_sdk_reports_the_cache_read_on_the_second_question(server: FakeLLMServer) -> None:
    with anthropic.Anthropic(api_key="test", base_url=server.anthropic_base_url, max_retries=0) as client:
        request: dict[str, Any] = {
            "model": "claude-fake",
            "max_tokens": 100,
            "system": cached_system(PAPER),
            "extra_headers": {"X-Lemmata-Role": "reader"},
        }
        first = client.messages.create(messages=[{"role": "user", "content": "What is lemma 1?"}], **request)
        assert (first.usage.cache_creation_input_tokens, first.usage.cache_read_input_tokens) == (2000, 0)
        second = client.messages.create(messages=[{"role": "user", "content": "Its proof?"}], **request)
        assert (second.usage.cache_creation_input_tokens, second.usage.cache_read_input_tokens) == (0, 2000)
        assert (second.usage.input_tokens, second.usage.output_tokens) == (3, 3)
        with client.messages.stream(messages=[{"role": "user", "content": "And lemma 2?"}], **request) as stream:
            assert "".join(stream.text_stream) == "an answer"
            final = stream.get_final_message().usage
        assert (final.input_tokens, final.cache_read_input_tokens, final.cache_creation_input_tokens) == (3, 2000, 0)
