"""Streamed answers through the model layer: LLMClient.complete(on_text=..., on_restart=...).

The real OpenAI and Anthropic SDKs talk to the fake provider on 127.0.0.1; failures in the middle
of a stream, which the fake cannot produce, come from an in-memory transport (no socket at all).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from lemmata import layout
from lemmata.agents.client import LLMClient, ModelChoice
from lemmata.errors import ProviderError
from lemmata.llm.anthropic_backend import AnthropicBackend
from lemmata.llm.base import ChatRequest, ChatResponse, Message
from lemmata.llm.calllog import CallLog, read_call_records
from lemmata.llm.embedded_backend import EmbeddedBackend
from lemmata.llm.openai_backend import OpenAICompatibleBackend
from lemmata.llm.replay import ReplayBackend
from lemmata.settings import Settings
from support.fake_llm_server import FakeLLMServer, Fault
from support.scripted_backend import scripted_client

SYSTEM = "You answer questions about one paper."
ANSWER = "The main theorem bounds the spectral gap by the Cheeger constant, up to a factor of two."
#: Every backend that talks HTTP, and the endpoint it uses on the fake provider.
HTTP_BACKENDS = [("local", "/v1/chat/completions"), ("router", "/v1/chat/completions"), ("vendora", "/v1/messages")]
#: The fields of a call log record that streaming must not change (latency naturally differs).
SAME_FIELDS = (
    "role",
    "backend",
    "model",
    "scope",
    "messages",
    "max_tokens",
    "response",
    "tokens_in",
    "tokens_out",
    "cache_read_tokens",
    "cache_write_tokens",
    "attempts",
    "error",
    "timings",
)


class Consumer:
    """Collects what a streamed call passes on, restarts included, in order."""

    def __init__(self) -> None:
        self.events: list[str | None] = []  # a piece of text, or None for a restart

    def on_text(self, piece: str) -> None:
        self.events.append(piece)

    def on_restart(self) -> None:
        self.events.append(None)

    @property
    def pieces(self) -> list[str]:
        return [event for event in self.events if event is not None]

    @property
    def restarts(self) -> int:
        return self.events.count(None)

    def shown(self) -> str:
        """What a console showing the answer displays at the end: the text since the last restart."""
        text = ""
        for event in self.events:
            text = "" if event is None else text + event
        return text


def records(run_dir: Path) -> list[dict[str, Any]]:
    return list(read_call_records(run_dir / layout.LLM_CALLS))


@pytest.mark.parametrize(("backend", "path"), HTTP_BACKENDS)
def test_pieces_arrive_in_order_and_join_to_the_answer(
    fake_llm: FakeLLMServer, llm_client, backend: str, path: str
) -> None:
    fake_llm.enqueue("qa", ANSWER)
    consumer = Consumer()
    answer = llm_client(backend).complete(
        "qa", SYSTEM, "What does the paper prove?", on_text=consumer.on_text, on_restart=consumer.on_restart
    )
    assert answer == ANSWER
    assert consumer.restarts == 0
    assert len(consumer.pieces) > 1  # the fake splits an answer into several pieces
    assert all(consumer.pieces)
    assert "".join(consumer.pieces) == ANSWER
    (request,) = fake_llm.requests
    assert request.path == path
    assert request.body["stream"] is True


def test_openai_stream_asks_for_usage(fake_llm: FakeLLMServer, llm_client) -> None:
    fake_llm.enqueue("qa", ANSWER)
    llm_client("local").complete("qa", SYSTEM, "q", on_text=lambda piece: None)
    body = fake_llm.requests[0].body
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"][0] == {"role": "system", "content": SYSTEM}


def test_anthropic_stream_keeps_the_cacheable_system_block(fake_llm: FakeLLMServer, llm_client) -> None:
    fake_llm.enqueue("qa", ANSWER)
    llm_client("vendora").complete("qa", SYSTEM, "q", on_text=lambda piece: None)
    body = fake_llm.requests[0].body
    assert body["system"] == [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}]
    assert body["messages"] == [{"role": "user", "content": "q"}]


@pytest.mark.parametrize(("backend", "path"), HTTP_BACKENDS)
def test_without_on_text_nothing_is_streamed(fake_llm: FakeLLMServer, llm_client, backend: str, path: str) -> None:
    fake_llm.enqueue("qa", ANSWER)
    assert llm_client(backend).complete("qa", SYSTEM, "q") == ANSWER
    (request,) = fake_llm.requests
    assert request.path == path
    assert "stream" not in request.body
    assert "stream_options" not in request.body


@pytest.mark.parametrize(("backend", "path"), HTTP_BACKENDS)
def test_a_streamed_call_is_logged_like_a_plain_one(
    fake_llm: FakeLLMServer, llm_client, tmp_path: Path, backend: str, path: str
) -> None:
    fake_llm.enqueue("qa", ANSWER, ANSWER)
    llm_client(backend, run_dir=tmp_path / "plain").complete("qa", SYSTEM, "What does it prove?")
    llm_client(backend, run_dir=tmp_path / "streamed").complete(
        "qa", SYSTEM, "What does it prove?", on_text=lambda piece: None
    )
    (plain,) = records(tmp_path / "plain")
    (streamed,) = records(tmp_path / "streamed")
    assert streamed["response"] == ANSWER
    assert streamed["tokens_in"] > 0 and streamed["tokens_out"] > 0
    assert {name: streamed[name] for name in SAME_FIELDS} == {name: plain[name] for name in SAME_FIELDS}
    if backend == "vendora":  # cache counts are reported (the fake reports zero), not lost as None
        assert streamed["cache_read_tokens"] == 0 and streamed["cache_write_tokens"] == 0


@pytest.mark.parametrize(("backend", "path"), HTTP_BACKENDS)
def test_a_retry_after_a_500_signals_a_restart(
    fake_llm: FakeLLMServer, llm_client, tmp_path: Path, backend: str, path: str
) -> None:
    fake_llm.inject_fault("qa", Fault(status=500))
    fake_llm.enqueue("qa", ANSWER)
    consumer = Consumer()
    answer = llm_client(backend, run_dir=tmp_path).complete(
        "qa", SYSTEM, "q", on_text=consumer.on_text, on_restart=consumer.on_restart
    )
    assert answer == ANSWER
    assert [r.answered_status for r in fake_llm.requests] == [500, 200]
    assert consumer.events[0] is None and consumer.restarts == 1  # the restart, then the full answer once
    assert "".join(consumer.pieces) == ANSWER
    (record,) = records(tmp_path)
    assert record["attempts"] == 2 and record["response"] == ANSWER and record["error"] is None


def test_no_restart_without_a_retry(fake_llm: FakeLLMServer, llm_client) -> None:
    fake_llm.enqueue("qa", ANSWER)
    restarts: list[None] = []
    llm_client("local").complete(
        "qa", SYSTEM, "q", on_text=lambda piece: None, on_restart=lambda: restarts.append(None)
    )
    assert restarts == []


def test_a_consumer_error_ends_the_call_unretried_and_is_logged(
    fake_llm: FakeLLMServer, llm_client, tmp_path: Path
) -> None:
    fake_llm.enqueue("qa", ANSWER, "a second answer that must stay unused")

    def broken_console(piece: str) -> None:
        raise ValueError("the browser went away")  # a ValueError must not pass for a malformed answer

    with pytest.raises(ValueError, match="the browser went away"):
        llm_client("local", run_dir=tmp_path).complete("qa", SYSTEM, "q", on_text=broken_console)
    assert len(fake_llm.requests) == 1
    (record,) = records(tmp_path)
    assert record["response"] is None
    assert "the browser went away" in record["error"]


def test_a_backend_that_ignores_on_text_still_delivers_one_piece() -> None:
    client, backend = scripted_client({"qa": [ANSWER]})
    consumer = Consumer()
    assert client.complete("qa", SYSTEM, "q", on_text=consumer.on_text, on_restart=consumer.on_restart) == ANSWER
    assert consumer.events == [ANSWER]
    assert backend.calls("qa")[0].on_text is not None


def test_on_text_is_left_out_of_request_equality_and_repr() -> None:
    plain = ChatRequest("qa", "m", SYSTEM, (Message("user", "q"),), 10)
    streamed = ChatRequest("qa", "m", SYSTEM, (Message("user", "q"),), 10, on_text=print)
    assert plain == streamed
    assert repr(plain) == repr(streamed)


# --- backends that cannot stream: the whole text as one piece ---


def test_replay_passes_the_recorded_answer_once(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text(
        json.dumps({"role": "qa", "response": ANSWER, "tokens_in": 7, "tokens_out": 9})
        + "\n"
        + json.dumps({"role": "qa", "response": "second"})
        + "\n",
        encoding="utf-8",
    )
    backend = ReplayBackend(script, tmp_path / "state")
    pieces: list[str] = []
    response = backend.complete(ChatRequest("qa", "replay", SYSTEM, (), 10, on_text=pieces.append))
    assert pieces == [ANSWER]
    assert response == ChatResponse(text=ANSWER, tokens_in=7, tokens_out=9)
    # Through the client too: once, not once by the backend and again by the client.
    client = LLMClient(
        backend,
        Settings.from_mapping({"LLM_RETRY_WAIT_MIN": 0, "LLM_RETRY_WAIT_MAX": 0}),
        ModelChoice("replay", "replay"),
        CallLog(tmp_path / "run" / layout.LLM_CALLS),
    )
    consumer = Consumer()
    assert client.complete("qa", SYSTEM, "q", on_text=consumer.on_text, on_restart=consumer.on_restart) == "second"
    assert consumer.events == ["second"]
    assert records(tmp_path / "run")[0]["response"] == "second"


class StandInLlama:
    """Answers like llama-cpp's Llama.create_chat_completion, non-streamed (no model is loaded)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.calls: list[dict[str, Any]] = []

    def token_eos(self) -> int:
        return 0

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        return {
            "choices": [{"message": {"role": "assistant", "content": self.text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 12},
        }


def test_embedded_passes_the_whole_answer_once_and_keeps_its_usage(tmp_path: Path) -> None:
    llama = StandInLlama(ANSWER)
    backend = EmbeddedBackend(tmp_path / "model.gguf", 4096, 1, None, llama_factory=lambda *args: llama)
    pieces: list[str] = []
    response = backend.complete(ChatRequest("qa", "qwen", SYSTEM, (Message("user", "q"),), 50, on_text=pieces.append))
    assert pieces == [ANSWER]
    assert (response.text, response.tokens_in, response.tokens_out) == (ANSWER, 40, 12)
    assert "stream" not in llama.calls[0]


# --- failures in the middle of a stream: restarted, not continued ---

Chunks = list[bytes]


def openai_sse(*pieces: str, finish: bool = True) -> Chunks:
    def chunk(delta: dict[str, Any], finish_reason: str | None = None, usage: dict[str, int] | None = None) -> bytes:
        payload = {
            "id": "c1",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            "usage": usage,
        }
        return f"data: {json.dumps(payload)}\n\n".encode()

    events = [chunk({"role": "assistant", "content": ""})] + [chunk({"content": piece}) for piece in pieces]
    if finish:
        events.append(
            chunk(
                {},
                "stop",
                {
                    "prompt_tokens": 30,
                    "completion_tokens": 20,
                    "total_tokens": 50,
                    "prompt_tokens_details": {"cached_tokens": 24},
                },
            )
        )
        events.append(b"data: [DONE]\n\n")
    return events


def anthropic_sse(*pieces: str, finish: bool = True) -> Chunks:
    def event(name: str, payload: dict[str, Any]) -> bytes:
        return f"event: {name}\ndata: {json.dumps({'type': name, **payload})}\n\n".encode()

    usage = {"input_tokens": 30, "output_tokens": 1, "cache_read_input_tokens": 24, "cache_creation_input_tokens": 3}
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    events = [
        event("message_start", {"message": message}),
        event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
    ]
    events += [
        event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": piece}}) for piece in pieces
    ]
    if finish:
        events.append(event("content_block_stop", {"index": 0}))
        events.append(
            event(
                "message_delta",
                {"delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 20}},
            )
        )
        events.append(event("message_stop", {}))
    return events


class Body(httpx2.SyncByteStream):
    """A response body that sends its events, then fails (when `failure` is set) as a dropped connection does."""

    def __init__(self, events: Chunks, failure: Exception | None = None) -> None:
        self.events, self.failure = events, failure

    def __iter__(self) -> Iterator[bytes]:
        yield from self.events
        if self.failure is not None:
            raise self.failure


def in_memory_provider(bodies: list[Body], seen: list[dict[str, Any]]) -> httpx2.Client:
    """An HTTP client whose every request is answered in memory with the next body (status 200)."""

    def answer(request: httpx2.Request) -> httpx2.Response:
        seen.append(json.loads(request.content))
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=bodies.pop(0))

    return httpx2.Client(transport=httpx2.MockTransport(answer))


def streaming_client(dialect: str, bodies: list[Body], seen: list[dict[str, Any]], run_dir: Path) -> LLMClient:
    http = in_memory_provider(bodies, seen)
    backend: Any
    if dialect == "openai":
        backend = OpenAICompatibleBackend("router", "http://provider.test/v1", "key", 5)
        backend._client = openai.OpenAI(
            api_key="key", base_url="http://provider.test/v1", max_retries=0, http_client=http
        )
    else:
        backend = AnthropicBackend("key", 5)
        backend._client = anthropic.Anthropic(
            api_key="key", base_url="http://provider.test", max_retries=0, http_client=http
        )
    settings = Settings.from_mapping({"LLM_RETRY_WAIT_MIN": 0, "LLM_RETRY_WAIT_MAX": 0, "LLM_RETRY_ATTEMPTS": 2})
    return LLMClient(backend, settings, ModelChoice("m", "m"), CallLog(run_dir / layout.LLM_CALLS))


SSE: dict[str, Callable[..., Chunks]] = {"openai": openai_sse, "anthropic": anthropic_sse}
OVERLOADED = (
    b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n'
)
OPENAI_ERROR = b'data: {"error": {"message": "upstream provider failed", "code": 502}}\n\n'


def broken_first_attempt(dialect: str, kind: str) -> Body:
    half = SSE[dialect]("The main theorem ", "bounds the", finish=False)
    if kind == "dropped":
        return Body(half, httpx2.RemoteProtocolError("peer closed connection without sending complete message body"))
    if kind == "cut short":
        return Body(half)  # the body just ends: no finish reason, no usage
    return Body(half + [OVERLOADED if dialect == "anthropic" else OPENAI_ERROR])  # an error event mid-answer


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
@pytest.mark.parametrize("kind", ["dropped", "cut short", "error event"])
def test_a_failure_after_some_pieces_restarts_the_answer(tmp_path: Path, dialect: str, kind: str) -> None:
    whole = SSE[dialect]("The main theorem ", "bounds the spectral gap", ".")
    seen: list[dict[str, Any]] = []
    client = streaming_client(dialect, [broken_first_attempt(dialect, kind), Body(whole)], seen, tmp_path)
    consumer = Consumer()
    answer = client.complete("qa", SYSTEM, "q", on_text=consumer.on_text, on_restart=consumer.on_restart)
    assert answer == "The main theorem bounds the spectral gap."
    assert consumer.events == [
        "The main theorem ",
        "bounds the",
        None,
        "The main theorem ",
        "bounds the spectral gap",
        ".",
    ]
    assert consumer.shown() == answer
    assert len(seen) == 2 and all(body["stream"] is True for body in seen)
    (record,) = records(tmp_path)
    assert (record["response"], record["attempts"], record["error"]) == (answer, 2, None)
    assert (record["tokens_in"], record["tokens_out"], record["cache_read_tokens"]) == (30, 20, 24)
    assert record["cache_write_tokens"] == (3 if dialect == "anthropic" else None)


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_streams_failing_every_time_end_in_a_provider_error(tmp_path: Path, dialect: str) -> None:
    bodies = [broken_first_attempt(dialect, "dropped") for _ in range(3)]
    client = streaming_client(dialect, bodies, [], tmp_path)
    consumer = Consumer()
    with pytest.raises(ProviderError, match="3 attempts"):
        client.complete("qa", SYSTEM, "q", on_text=consumer.on_text, on_restart=consumer.on_restart)
    assert consumer.restarts == 2
    assert records(tmp_path)[0]["attempts"] == 3


def test_a_refusal_inside_an_anthropic_stream_is_not_retried(tmp_path: Path) -> None:
    refusal = (
        b"event: error\n"
        b'data: {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt too long"}}\n\n'
    )
    seen: list[dict[str, Any]] = []
    client = streaming_client("anthropic", [Body(anthropic_sse("Half", finish=False) + [refusal])], seen, tmp_path)
    with pytest.raises(ProviderError, match="prompt too long") as caught:
        client.complete("qa", SYSTEM, "q", on_text=lambda piece: None, on_restart=pytest.fail)
    assert "1 attempt:" in str(caught.value)
    assert len(seen) == 1
