"""Tests for the fake OpenAI/Anthropic provider used by the test suite and benchmarks."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from support import TESTS
from support.fake_llm_server import Answer, FakeLLMServer, Fault, RecordedRequest, estimate_tokens
from support.waiting import wait_until

CHAT = "/v1/chat/completions"
MESSAGES = "/v1/messages"


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    """A running fake server, stopped after the test."""
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def http(server: FakeLLMServer) -> Iterator[httpx.Client]:
    """Raw HTTP client aimed at the fake server (no proxies from the environment)."""
    with httpx.Client(base_url=server.anthropic_base_url, timeout=5.0, trust_env=False) as client:
        yield client


@pytest.fixture
def openai_prover(server: FakeLLMServer) -> Iterator[openai.OpenAI]:
    """The real OpenAI SDK, speaking as the prover role."""
    with openai.OpenAI(
        api_key="test", base_url=server.openai_base_url, max_retries=0, default_headers={"X-Lemmata-Role": "prover"}
    ) as client:
        yield client


@pytest.fixture
def anthropic_client(server: FakeLLMServer) -> Iterator[anthropic.Anthropic]:
    """The real Anthropic SDK (the role goes in per-request extra headers)."""
    with anthropic.Anthropic(api_key="test", base_url=server.anthropic_base_url, max_retries=0) as client:
        yield client


def chat(http: httpx.Client, role: str | None, text: str = "hi", **extra: Any) -> httpx.Response:
    """POST an OpenAI chat request as the given role (None: no role header)."""
    headers = {"X-Lemmata-Role": role} if role else {}
    body = {"model": "gpt-fake", "messages": [{"role": "user", "content": text}], **extra}
    return http.post(CHAT, json=body, headers=headers)


def message(http: httpx.Client, role: str | None, text: str = "hi", **extra: Any) -> httpx.Response:
    """POST an Anthropic messages request as the given role (None: no role header)."""
    headers = {"X-Lemmata-Role": role} if role else {}
    body = {"model": "claude-fake", "max_tokens": 50, "messages": [{"role": "user", "content": text}], **extra}
    return http.post(MESSAGES, json=body, headers=headers)


def openai_text(response: httpx.Response) -> str:
    """Answer text of an OpenAI chat completion response."""
    assert response.status_code == 200, response.text
    return response.json()["choices"][0]["message"]["content"]


def sse_events(raw: str) -> list[tuple[str | None, str]]:
    """(event name, data) pairs of a server-sent-event body."""
    events = []
    for block in raw.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields.get("event"), fields["data"]))
    return events


def test_estimate_tokens_is_quarter_characters_rounded_up_at_least_one() -> None:
    assert [estimate_tokens(t) for t in ("", "a", "abcd", "abcde", "x" * 40)] == [1, 1, 1, 2, 10]


def test_openai_chat_answers_scripted_text_with_usage(server: FakeLLMServer, http: httpx.Client) -> None:
    server.enqueue("prover", "abcdefgh")
    body = {
        "model": "gpt-fake",
        "messages": [{"role": "system", "content": "You are"}, {"role": "user", "content": "hello world!"}],
    }
    response = http.post(CHAT, json=body, headers={"X-Lemmata-Role": "prover"})
    assert response.status_code == 200
    data = response.json()
    assert data["object"] == "chat.completion" and data["model"] == "gpt-fake" and data["id"]
    assert isinstance(data["created"], int)
    assert data["choices"] == [
        {"index": 0, "message": {"role": "assistant", "content": "abcdefgh"}, "finish_reason": "stop"}
    ]
    # 7 + 12 prompt characters -> 5 tokens; 8 answer characters -> 2 tokens.
    assert data["usage"] == {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
    [recorded] = server.requests
    assert (recorded.role, recorded.path, recorded.answered_status, recorded.answer_text) == (
        "prover",
        CHAT,
        200,
        "abcdefgh",
    )
    assert recorded.headers["x-lemmata-role"] == "prover" and recorded.body == body
    assert recorded.finished_at is not None and recorded.finished_at >= recorded.started_at


def test_anthropic_messages_answer_scripted_text_with_usage(server: FakeLLMServer, http: httpx.Client) -> None:
    server.enqueue("writer", "x" * 9)
    body = {
        "model": "claude-fake",
        "max_tokens": 10,
        "system": "sys!",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "abcde"}]}],
    }
    response = http.post(MESSAGES, json=body, headers={"X-Lemmata-Role": "writer"})
    assert response.status_code == 200
    data = response.json()
    assert data["type"] == "message" and data["role"] == "assistant" and data["model"] == "claude-fake"
    assert data["content"] == [{"type": "text", "text": "x" * 9}]
    assert data["stop_reason"] == "end_turn" and data["stop_sequence"] is None
    # 4 + 5 prompt characters -> 3 tokens; 9 answer characters -> 3 tokens.
    assert data["usage"] == {
        "input_tokens": 3,
        "output_tokens": 3,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }
    assert server.calls("writer")[0].answer_text == "x" * 9


def test_role_comes_from_header_and_defaults_to_unknown(server: FakeLLMServer, http: httpx.Client) -> None:
    server.enqueue("unknown", "for nobody")
    server.enqueue("critic", "for the critic")
    assert openai_text(chat(http, None)) == "for nobody"
    assert openai_text(chat(http, "critic")) == "for the critic"
    assert [r.role for r in server.requests] == ["unknown", "critic"]
    assert len(server.calls("critic")) == 1 and server.calls("prover") == []


def test_each_role_has_its_own_fifo_queue(server: FakeLLMServer, http: httpx.Client) -> None:
    server.enqueue("prover", "p1", "p2")
    server.enqueue("writer", "w1")
    server.enqueue("prover", "p3")
    answers = [openai_text(chat(http, role)) for role in ("prover", "writer", "prover", "prover")]
    assert answers == ["p1", "w1", "p2", "p3"]


def test_exhausted_queue_is_400_with_explanation_in_both_shapes(server: FakeLLMServer, http: httpx.Client) -> None:
    expected = "fake server: no scripted answer left for role 'prover'"
    openai_response = chat(http, "prover")
    assert openai_response.status_code == 400
    assert openai_response.json()["error"]["message"] == expected
    anthropic_response = message(http, "prover")
    assert anthropic_response.status_code == 400
    assert anthropic_response.json()["type"] == "error"
    assert anthropic_response.json()["error"]["message"] == expected
    assert [r.answered_status for r in server.requests] == [400, 400]


def test_callable_answers_are_computed_per_request(server: FakeLLMServer, http: httpx.Client) -> None:
    def echo(request: RecordedRequest) -> str:
        return f"echo {request.body['messages'][0]['content']} as {request.role}"

    server.enqueue("prover", echo, "plain")
    assert openai_text(chat(http, "prover", "lemma 1")) == "echo lemma 1 as prover"
    assert openai_text(chat(http, "prover")) == "plain"


def test_before_answer_sees_each_request_while_its_caller_still_waits(
    server: FakeLLMServer, http: httpx.Client
) -> None:
    seen: list[tuple[str, int]] = []
    server.before_answer = lambda request: seen.append((request.role, request.answered_status))
    server.enqueue("writer", "paper")
    server.inject_fault("prover", Fault(status=500))
    assert openai_text(chat(http, "writer")) == "paper"
    assert chat(http, "prover").status_code == 500
    assert seen == [("writer", 0), ("prover", 0)]  # called before any answer, faults included


def test_default_responders_apply_only_when_the_queue_is_empty(server: FakeLLMServer, http: httpx.Client) -> None:
    server.set_default("prover", lambda request: "prover default")
    server.set_default(None, lambda request: f"any default for {request.role}")
    server.enqueue("prover", "queued first")
    assert openai_text(chat(http, "prover")) == "queued first"
    assert openai_text(chat(http, "prover")) == "prover default"
    assert openai_text(chat(http, "prover")) == "prover default"
    assert openai_text(chat(http, "writer")) == "any default for writer"
    server.set_default(None, None)
    assert chat(http, "writer").status_code == 400


def test_pending_counts_remaining_scripted_answers(server: FakeLLMServer, http: httpx.Client) -> None:
    server.enqueue("prover", "a", "b")
    server.enqueue("writer", Answer("c"))
    assert (server.pending(), server.pending("prover"), server.pending("writer"), server.pending("x")) == (3, 2, 1, 0)
    chat(http, "prover")
    assert (server.pending(), server.pending("prover")) == (2, 1)


def test_429_fault_has_openai_error_shape_and_retry_after(server: FakeLLMServer, http: httpx.Client) -> None:
    server.enqueue("prover", "after the fault")
    server.inject_fault("prover", Fault(status=429, message="slow down", retry_after=2))
    response = chat(http, "prover")
    assert response.status_code == 429
    assert response.headers["retry-after"] == "2"
    error = response.json()["error"]
    assert error["message"] == "slow down" and {"type", "code"} <= set(error)
    # The fault took the place of the answer, which is still there for the next request.
    assert openai_text(chat(http, "prover")) == "after the fault"


def test_server_error_faults_have_anthropic_error_shape(server: FakeLLMServer, http: httpx.Client) -> None:
    server.inject_fault("writer", Fault(status=500, message="boom"), Fault(status=429, message="later"))
    first, second = message(http, "writer"), message(http, "writer")
    assert first.status_code == 500 and "retry-after" not in first.headers
    assert first.json() == {"type": "error", "error": {"type": "api_error", "message": "boom"}}
    assert second.status_code == 429
    assert second.json()["error"] == {"type": "rate_limit_error", "message": "later"}


def test_malformed_fault_is_200_with_invalid_json(server: FakeLLMServer, http: httpx.Client) -> None:
    server.inject_fault(None, Fault(malformed=True))
    response = chat(http, "prover")
    assert response.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(response.text)


def test_role_fault_hits_only_that_role_and_any_role_fault_hits_the_next_request(
    server: FakeLLMServer, http: httpx.Client
) -> None:
    server.enqueue("prover", "proof")
    server.enqueue("writer", "paper", "more paper")
    server.inject_fault("prover", Fault(status=500))
    server.inject_fault(None, Fault(status=503))
    assert message(http, "writer").status_code == 503  # the any-role fault, the writer has none of its own
    assert message(http, "writer").status_code == 200
    assert chat(http, "prover").status_code == 500
    assert openai_text(chat(http, "prover")) == "proof"
    assert server.pending() == 1


def test_hang_fault_times_out_the_client_and_stop_is_not_blocked() -> None:
    fake = FakeLLMServer().start()
    try:
        fake.inject_fault("prover", Fault(hang=30))
        fake.enqueue("prover", "too late")
        with httpx.Client(base_url=fake.anthropic_base_url, timeout=0.3, trust_env=False) as client:
            with pytest.raises(httpx.ReadTimeout):
                chat(client, "prover")
    finally:
        fake.stop()
    [hung] = fake.requests
    # Status 0: stop() cut the 30 s hang short (a hang that ran out would have answered "too late").
    assert hung.answered_status == 0 and hung.answer_text is None
    assert fake.pending("prover") == 1  # the hung request never got to take an answer


def test_hang_fault_then_answers_normally(server: FakeLLMServer, http: httpx.Client) -> None:
    server.inject_fault("prover", Fault(hang=0.2))
    server.enqueue("prover", "slow but sure")
    started = time.monotonic()
    assert openai_text(chat(http, "prover")) == "slow but sure"
    assert time.monotonic() - started >= 0.2


def test_hang_does_not_block_other_requests(server: FakeLLMServer) -> None:
    server.inject_fault("prover", Fault(hang=30))
    server.enqueue("writer", "meanwhile")
    with httpx.Client(base_url=server.anthropic_base_url, timeout=5.0, trust_env=False) as client:
        outcome: list[BaseException | httpx.Response] = []

        def ask_and_hang() -> None:
            try:
                outcome.append(chat(client, "prover"))
            except httpx.HTTPError as error:
                outcome.append(error)

        hanging = threading.Thread(target=ask_and_hang)
        hanging.start()
        wait_until(lambda: server.calls("prover"), 10, 0.01, message="the hanging request never arrived")
        started = time.monotonic()
        assert openai_text(chat(client, "writer")) == "meanwhile"
        assert time.monotonic() - started < 1
        server.stop()  # releases the hung request, whose connection closes without an answer
        hanging.join(timeout=2)
        assert not hanging.is_alive()
        assert len(outcome) == 1 and isinstance(outcome[0], httpx.HTTPError)


def test_latency_from_constructor_attribute_and_answer() -> None:
    with FakeLLMServer(latency=0.15) as fake, httpx.Client(base_url=fake.anthropic_base_url, trust_env=False) as client:
        waits: list[float] = []
        pause = fake._pause
        fake._pause = lambda seconds: waits.append(seconds) or pause(seconds)  # type: ignore[method-assign]
        fake.enqueue("prover", "a", Answer("b", latency=0.2), "c")
        durations = []
        for _ in range(2):
            started = time.monotonic()
            chat(client, "prover")
            durations.append(time.monotonic() - started)
        fake.latency = 0.0
        started = time.monotonic()
        assert openai_text(chat(client, "prover")) == "c"
        durations.append(time.monotonic() - started)
    assert durations[0] >= 0.15 and durations[1] >= 0.35
    server_side = [r.finished_at - r.started_at for r in fake.requests if r.finished_at is not None]
    assert server_side[0] >= 0.15 and server_side[1] >= 0.35
    assert waits == [pytest.approx(0.15), pytest.approx(0.35), 0.0]  # the attribute set to 0: no wait


def test_openai_streaming_sends_chunks_usage_and_done(server: FakeLLMServer, http: httpx.Client) -> None:
    answer = "The lemma follows by induction on n."
    server.enqueue("prover", answer)
    response = chat(http, "prover", "prove it", stream=True)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = [data for _, data in sse_events(response.text)]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(data) for data in events[:-1]]
    assert all(chunk["object"] == "chat.completion.chunk" for chunk in chunks)
    pieces = [chunk["choices"][0]["delta"].get("content") or "" for chunk in chunks]
    assert "".join(pieces) == answer and sum(1 for piece in pieces if piece) > 1
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["usage"] == {"prompt_tokens": 2, "completion_tokens": 9, "total_tokens": 11}


def test_anthropic_streaming_sends_the_message_event_sequence(server: FakeLLMServer, http: httpx.Client) -> None:
    answer = "We write the introduction last."
    server.enqueue("writer", answer)
    response = message(http, "writer", "intro", stream=True)
    assert response.status_code == 200
    events = sse_events(response.text)
    names = [name for name, _ in events]
    assert names[:2] == ["message_start", "content_block_start"]
    assert names[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    assert set(names[2:-3]) == {"content_block_delta"} and len(names[2:-3]) > 1
    payloads = [json.loads(data) for _, data in events]
    assert all(payload["type"] == name for payload, (name, _) in zip(payloads, events))
    text = "".join(p["delta"]["text"] for p in payloads if p["type"] == "content_block_delta")
    assert text == answer
    assert payloads[0]["message"]["usage"]["input_tokens"] == 2
    final = payloads[-2]
    assert final["delta"]["stop_reason"] == "end_turn" and final["usage"]["output_tokens"] == 8


def test_concurrent_requests_each_get_a_distinct_answer(server: FakeLLMServer) -> None:
    answers = [f"answer {i}" for i in range(20)]
    server.enqueue("prover", *answers)
    server.latency = 0.05  # keeps requests in flight together
    start_together = threading.Barrier(20)
    received: queue.Queue[str] = queue.Queue()

    def ask() -> None:
        with httpx.Client(base_url=server.anthropic_base_url, timeout=5.0, trust_env=False) as client:
            start_together.wait()
            received.put(openai_text(chat(client, "prover")))

    threads = [threading.Thread(target=ask) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=5)
    got = [received.get_nowait() for _ in range(received.qsize())]
    assert sorted(got) == sorted(answers)
    assert server.pending() == 0 and len(server.calls("prover")) == 20


def test_models_endpoint_lists_configured_models() -> None:
    with FakeLLMServer(models=["model-a", "model-b"]) as fake:
        response = httpx.get(f"{fake.openai_base_url}/models", trust_env=False)
    assert response.status_code == 200
    assert response.json()["object"] == "list"
    assert [model["id"] for model in response.json()["data"]] == ["model-a", "model-b"]


def test_unknown_paths_are_404_json(server: FakeLLMServer, http: httpx.Client) -> None:
    for response in (http.get("/v1/nothing"), http.post("/v1/completions", json={})):
        assert response.status_code == 404
        assert "no route" in response.json()["error"]["message"]


def test_fault_requires_exactly_one_kind() -> None:
    with pytest.raises(ValueError):
        Fault()
    with pytest.raises(ValueError):
        Fault(status=429, hang=1.0)


def test_load_script_sets_latency_answers_and_faults(tmp_path: Path) -> None:
    script = {
        "latency": 0.01,
        "answers": {"prover": ["first", {"text": "second", "latency": 0.1}], "writer": ["w"]},
        "faults": {"*": [{"status": 503, "message": "busy"}], "writer": [{"malformed": True}]},
    }
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    fake = FakeLLMServer.load_script(path)
    assert fake.latency == 0.01 and fake.pending() == 3
    with fake, httpx.Client(base_url=fake.anthropic_base_url, timeout=5.0, trust_env=False) as client:
        malformed = chat(client, "writer")  # the writer's own fault comes before the any-role one
        assert malformed.status_code == 200
        with pytest.raises(json.JSONDecodeError):
            json.loads(malformed.text)
        assert chat(client, "prover").json()["error"]["message"] == "busy"
        assert openai_text(chat(client, "prover")) == "first"
        started = time.monotonic()
        assert openai_text(chat(client, "prover")) == "second"
        assert time.monotonic() - started >= 0.1
        assert openai_text(chat(client, "writer")) == "w"


def test_apply_script_rejects_unknown_entries(server: FakeLLMServer) -> None:
    with pytest.raises(ValueError):
        server.apply_script({"answer": {}})
    with pytest.raises(ValueError):
        server.apply_script({"faults": {"*": [{"status": 500, "colour": "red"}]}})
    with pytest.raises(ValueError):
        server.apply_script({"answers": {"prover": [{"txt": "typo"}]}})


def test_openai_sdk_round_trip_and_rate_limit(server: FakeLLMServer, openai_prover: openai.OpenAI) -> None:
    client = openai_prover
    server.enqueue("prover", "QED by the SDK.")
    completion = client.chat.completions.create(model="gpt-fake", messages=[{"role": "user", "content": "prove"}])
    assert completion.choices[0].message.content == "QED by the SDK."
    assert completion.model == "gpt-fake"
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (2, 4)
    server.inject_fault("prover", Fault(status=429, message="too many", retry_after=1))
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(model="gpt-fake", messages=[{"role": "user", "content": "prove"}])
    assert [r.role for r in server.requests] == ["prover", "prover"]


def test_openai_sdk_streaming(server: FakeLLMServer, openai_prover: openai.OpenAI) -> None:
    client = openai_prover
    server.enqueue("prover", "streamed through the SDK")
    stream = client.chat.completions.create(model="gpt-fake", messages=[{"role": "user", "content": "go"}], stream=True)
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "streamed through the SDK"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 6


def test_anthropic_sdk_round_trip_streaming_and_rate_limit(
    server: FakeLLMServer, anthropic_client: anthropic.Anthropic
) -> None:
    client = anthropic_client
    server.enqueue("writer", "Section 1.", "Streamed section.")
    request: dict[str, Any] = {
        "model": "claude-fake",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "write"}],
        "extra_headers": {"X-Lemmata-Role": "writer"},
    }
    reply = client.messages.create(**request)
    assert [block.text for block in reply.content if block.type == "text"] == ["Section 1."]
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (2, 3)
    with client.messages.stream(**request) as stream:
        assert "".join(stream.text_stream) == "Streamed section."
        assert stream.get_final_message().usage.output_tokens == 5
    server.inject_fault("writer", Fault(status=429, message="too many"))
    with pytest.raises(anthropic.RateLimitError):
        client.messages.create(**request)
    assert [r.role for r in server.requests] == ["writer"] * 3


def test_command_line_serves_until_sigterm(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"answers": {"prover": ["from the command line"]}}))
    python_path = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": python_path}
    process = subprocess.Popen(
        [sys.executable, "-m", "support.fake_llm_server", "--script", str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        lines: queue.Queue[str] = queue.Queue()
        assert process.stdout is not None
        threading.Thread(target=lambda: lines.put(process.stdout.readline()), daemon=True).start()
        line = lines.get(timeout=5)
        match = re.fullmatch(r"fake LLM server listening on (http://127\.0\.0\.1:(\d+)/v1)\n", line)
        assert match, line
        response = httpx.post(
            f"{match.group(1)}/chat/completions",
            trust_env=False,
            timeout=5.0,
            json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
            headers={"X-Lemmata-Role": "prover"},
        )
        assert openai_text(response) == "from the command line"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=5) == 0
        remaining_out, errors = process.communicate(timeout=5)
        assert remaining_out == "" and errors == ""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
