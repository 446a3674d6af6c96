"""The client over real SDKs talking to the fake provider: what each backend puts on the wire."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lemmata import layout
from lemmata.agents.roles import role
from lemmata.llm.base import Message
from lemmata.llm.calllog import read_call_records
from support.fake_llm_server import FakeLLMServer

SYSTEM = "You are a careful mathematician."


def only_request(fake: FakeLLMServer):
    assert len(fake.requests) == 1, [r.path for r in fake.requests]
    return fake.requests[0]


def test_local_backend_sends_role_header_limit_model_and_system_first(fake_llm: FakeLLMServer, llm_client) -> None:
    fake_llm.enqueue("prover", "Proof. Trivial.")
    client = llm_client("local", MAX_TOKENS_PROVER=1234, LOCAL_LLM_MODEL="qwen-local")
    answer = client.complete(
        "prover", SYSTEM, [Message("user", "Prove it."), Message("assistant", "Hmm."), Message("user", "Go on.")]
    )
    assert answer == "Proof. Trivial."
    request = only_request(fake_llm)
    assert request.path == "/v1/chat/completions"
    assert request.headers["x-lemmata-role"] == "prover"
    assert request.body["max_tokens"] == 1234
    assert request.body["model"] == "qwen-local"
    assert request.body["messages"] == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Prove it."},
        {"role": "assistant", "content": "Hmm."},
        {"role": "user", "content": "Go on."},
    ]
    assert "response_format" not in request.body
    assert request.body.get("stream") in (None, False)


def test_each_role_sends_its_own_limit(fake_llm: FakeLLMServer, llm_client) -> None:
    client = llm_client("local")
    names = ("compress", "sketch", "verifier", "survey")
    for name in names:
        fake_llm.enqueue(name, f"answer of {name}")
        assert client.complete(name, SYSTEM, "q") == f"answer of {name}"
    sent = {r.headers["x-lemmata-role"]: r.body["max_tokens"] for r in fake_llm.requests}
    assert sent == {"compress": 512, "sketch": 600, "verifier": 1024, "survey": 8192}


def test_local_json_answer_sends_json_object_with_the_role_schema(fake_llm: FakeLLMServer, llm_client) -> None:
    fake_llm.enqueue("verifier", '{"verdict": "valid", "issues": []}')
    client = llm_client("local")
    assert json.loads(client.complete("verifier", SYSTEM, "Check.", json_answer=True))["verdict"] == "valid"
    request = only_request(fake_llm)
    assert request.body["response_format"] == {"type": "json_object", "schema": role("verifier").json_schema()}
    assert "verdict" in request.body["response_format"]["schema"]["properties"]


def test_json_answer_for_a_free_text_role_sends_no_schema(fake_llm: FakeLLMServer, llm_client) -> None:
    fake_llm.enqueue("prover", "text")
    llm_client("local").complete("prover", SYSTEM, "q", json_answer=True)
    assert "response_format" not in only_request(fake_llm).body


@pytest.mark.parametrize(
    ("backend", "key_variable", "model_settings", "expected_model"),
    [
        ("router", "COMPAT_API_KEY", {}, "anthropic/claude-sonnet-4.5"),
        ("vendorx", "VENDORX_API_KEY", {"VENDORX_MODEL": "vx/model-1"}, "vx/model-1"),
    ],
)
def test_router_and_vendorx_send_their_key_as_bearer_auth(
    fake_llm: FakeLLMServer, llm_client, backend: str, key_variable: str, model_settings: dict, expected_model: str
) -> None:
    fake_llm.enqueue("planner", "a plan")
    key = f"{backend}-secret-key-42"
    client = llm_client(backend, environ={key_variable: key}, **model_settings)
    assert client.complete("planner", SYSTEM, "Plan.") == "a plan"
    request = only_request(fake_llm)
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {key}"
    assert request.headers["x-lemmata-role"] == "planner"
    assert request.body["model"] == expected_model
    assert request.body["max_tokens"] == 4096
    assert request.body["messages"][0] == {"role": "system", "content": SYSTEM}


def test_router_does_not_send_the_local_schema_grammar(fake_llm: FakeLLMServer, llm_client) -> None:
    fake_llm.enqueue("verifier", '{"verdict": "valid"}')
    llm_client("router").complete("verifier", SYSTEM, "Check.", json_answer=True)
    assert only_request(fake_llm).body.get("response_format", {}).get("schema") is None


def test_vendora_uses_messages_api_with_cached_system_prompt(
    fake_llm: FakeLLMServer, llm_client, tmp_path: Path
) -> None:
    fake_llm.enqueue("architect", "an architecture")
    client = llm_client(
        "vendora", environ={"VENDORA_API_KEY": "vendora-key-123456"}, run_dir=tmp_path, MAX_TOKENS_ARCHITECT=2222
    )
    assert client.complete("architect", SYSTEM, "Design.") == "an architecture"
    request = only_request(fake_llm)
    assert request.path == "/v1/messages"
    assert request.headers["x-lemmata-role"] == "architect"
    assert "vendora-key-123456" in (request.headers.get("x-api-key", "") + request.headers.get("authorization", ""))
    assert request.body["model"] == "claude-sonnet-4-5"
    assert request.body["max_tokens"] == 2222
    assert request.body["system"] == [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}]
    assert request.body["messages"] == [{"role": "user", "content": "Design."}]
    # Cache token counts are reported (the fake provider reports zero), not lost as None.
    (record,) = read_call_records(tmp_path / layout.LLM_CALLS)
    assert record["backend"] == "vendora"
    assert record["cache_read_tokens"] == 0
    assert record["cache_write_tokens"] == 0
    assert record["tokens_in"] > 0 and record["tokens_out"] > 0


def test_vendora_accepts_anthropic_api_key(fake_llm: FakeLLMServer, llm_client) -> None:
    fake_llm.enqueue("prover", "ok")
    client = llm_client(
        "anthropic", environ={"ANTHROPIC_API_KEY": "anthropic-key-123456"}, VENDORA_BASE_URL=fake_llm.anthropic_base_url
    )
    assert client.backend.name == "vendora"
    assert client.complete("prover", SYSTEM, "q") == "ok"
    assert only_request(fake_llm).path == "/v1/messages"


def test_fast_tier_roles_get_the_fast_model_on_the_wire(fake_llm: FakeLLMServer, llm_client) -> None:
    fake_llm.enqueue("compress", "short")
    fake_llm.enqueue("prover", "long")
    client = llm_client("vendora")
    client.complete("compress", SYSTEM, "q")
    client.complete("prover", SYSTEM, "q")
    models = {r.role: r.body["model"] for r in fake_llm.requests}
    assert models == {"compress": "claude-haiku-4-5", "prover": "claude-sonnet-4-5"}


def test_openai_backend_reports_token_counts(fake_llm: FakeLLMServer, llm_client, tmp_path: Path) -> None:
    fake_llm.enqueue("writer", "x" * 40)
    llm_client("local", run_dir=tmp_path).complete("writer", "s" * 40, "q")
    (record,) = read_call_records(tmp_path / layout.LLM_CALLS)
    assert record["tokens_out"] == 10
    assert record["tokens_in"] == 11  # (40 + 1) characters / 4, rounded up, as the fake estimates


def test_the_backends_of_one_process_share_one_http_client_and_its_tls_setup(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every job makes a backend; each used to read the system's certificates (24 ms) for a client
    of its own. Now the first backend makes the process's HTTP client, the others reuse it."""
    import ssl

    from lemmata.llm import anthropic_backend, openai_backend

    openai_backend.shared_http_client.cache_clear()
    anthropic_backend.shared_http_client.cache_clear()
    contexts = []
    real = ssl.create_default_context
    monkeypatch.setattr(ssl, "create_default_context", lambda *a, **k: contexts.append(1) or real(*a, **k))
    openai_made = [openai_backend.OpenAICompatibleBackend("local", "http://127.0.0.1:9/v1", "", 30.0) for _ in range(3)]
    anthropic_made = [anthropic_backend.AnthropicBackend("key", 30.0, "http://127.0.0.1:9") for _ in range(3)]
    assert len(contexts) <= 2  # one per SDK, not one per backend
    assert len({id(backend._client._client) for backend in openai_made}) == 1
    assert len({id(backend._client._client) for backend in anthropic_made}) == 1
