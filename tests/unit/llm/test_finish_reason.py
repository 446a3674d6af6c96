"""Why an answer ended, from every backend, in our three words: "stop", "length" (cut off at the
token limit), "repetition" (a loop the embedded backend ended); None when a backend does not say.

The writer continues a cut-off paper in a further turn; it can only if the truncation is seen."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lemmata import layout
from lemmata.llm.base import ChatRequest, ChatResponse, Message, finish_reason_of
from lemmata.llm.calllog import read_call_records
from lemmata.llm.embedded_backend import EmbeddedBackend
from lemmata.llm.replay import ReplayBackend
from support.fake_llm_server import Answer, FakeLLMServer
from support.scripted_backend import scripted_client

HTTP_BACKENDS = ["local", "router", "vendora"]  # OpenAI-compatible twice, Anthropic's Messages API once


@pytest.mark.parametrize("backend", HTTP_BACKENDS)
@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("finish", ["stop", "length"])
def test_http_backends_report_how_the_answer_ended(
    fake_llm: FakeLLMServer, llm_client, backend: str, streamed: bool, finish: str
) -> None:
    fake_llm.enqueue("writer", Answer("The proof of Lemma 2 stops he", finish_reason=finish))
    client = llm_client(backend)
    reply = client.complete_reply("writer", "SYS", "write", on_text=(lambda piece: None) if streamed else None)
    assert (reply.text, reply.finish_reason, reply.cut_off) == (
        "The proof of Lemma 2 stops he",
        finish,
        finish == "length",
    )


def test_anthropic_max_tokens_is_sent_as_such_and_read_as_length(fake_llm: FakeLLMServer, llm_client) -> None:
    fake_llm.enqueue("writer", Answer("cut", finish_reason="length"))
    assert llm_client("vendora").complete_reply("writer", "SYS", "write").finish_reason == "length"
    assert fake_llm.calls("writer")[0].path == "/v1/messages"


def test_a_scripted_fake_server_answer_can_be_cut_off(fake_llm: FakeLLMServer, llm_client) -> None:
    fake_llm.apply_script({"answers": {"writer": [{"text": "cut", "finish_reason": "length"}, "whole"]}})
    client = llm_client("local")
    assert [client.complete_reply("writer", "S", "u").finish_reason for _ in range(2)] == ["length", "stop"]
    with pytest.raises(ValueError, match="finish_reason"):
        Answer("x", finish_reason="max_tokens")


def test_a_responder_can_return_a_cut_off_answer(fake_llm: FakeLLMServer, llm_client) -> None:
    fake_llm.set_default("writer", lambda request: Answer("half a par", finish_reason="length"))
    assert llm_client("local").complete_reply("writer", "S", "u").finish_reason == "length"


def test_complete_keeps_returning_the_text_alone(fake_llm: FakeLLMServer, llm_client) -> None:
    fake_llm.enqueue("writer", Answer("text", finish_reason="length"))
    assert llm_client("local").complete("writer", "S", "u") == "text"


def test_replay_returns_the_recorded_finish_reason(fake_llm: FakeLLMServer, llm_client, tmp_path: Path) -> None:
    fake_llm.enqueue("writer", Answer("first, cut", finish_reason="length"), "second, whole")
    recorder = llm_client("local", run_dir=tmp_path / "recorded")
    recorder.complete("writer", "S", "u"), recorder.complete("writer", "S", "u")
    recording = tmp_path / "recorded" / layout.LLM_CALLS
    assert [r["finish_reason"] for r in read_call_records(recording)] == ["length", "stop"]
    replay = ReplayBackend(recording, tmp_path / "replayed")
    request = ChatRequest("writer", "m", "S", (Message("user", "u"),), 100)
    assert [replay.complete(request).finish_reason for _ in range(2)] == ["length", "stop"]


def test_replay_of_a_recording_made_before_finish_reasons_says_none(tmp_path: Path) -> None:
    script = tmp_path / "old.jsonl"
    script.write_text(json.dumps({"role": "writer", "response": "old answer"}) + "\n", encoding="utf-8")
    reply = ReplayBackend(script, tmp_path).complete(ChatRequest("writer", "m", "S", (Message("user", "u"),), 100))
    assert reply.finish_reason is None and not reply.cut_off


def test_the_scripted_backend_scripts_a_cut_off_answer() -> None:
    client, backend = scripted_client({"writer": [ChatResponse("cut mid-sent", finish_reason="length"), "whole"]})
    first, second = client.complete_reply("writer", "S", "u"), client.complete_reply("writer", "S", "u")
    assert (first.text, first.finish_reason) == ("cut mid-sent", "length")
    assert (second.text, second.finish_reason) == ("whole", "stop")
    assert len(backend.calls("writer")) == 2


class StandInLlama:
    """Answers like llama-cpp's create_chat_completion with a given finish reason."""

    def __init__(self, finish: str) -> None:
        self.finish = finish

    def token_eos(self) -> int:
        return 0

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        return {
            "choices": [{"message": {"content": "text"}, "finish_reason": self.finish}],
            "usage": {"prompt_tokens": 4, "completion_tokens": 1},
        }


@pytest.mark.parametrize("finish", ["stop", "length"])
def test_the_embedded_backend_reports_the_runtime_finish_reason(tmp_path: Path, finish: str) -> None:
    backend = EmbeddedBackend(tmp_path / "m.gguf", 4096, 1, None, llama_factory=lambda *args: StandInLlama(finish))
    reply = backend.complete(ChatRequest("writer", "m", "S", (Message("user", "u"),), 10))
    assert reply.finish_reason == finish and reply.extra["finish_reason"] == finish


@pytest.mark.parametrize(
    "raw, ours",
    [
        pytest.param("stop", "stop", id="openai-stop"),
        pytest.param("length", "length", id="openai-length"),
        pytest.param("end_turn", "stop", id="anthropic-end-turn"),
        pytest.param("max_tokens", "length", id="anthropic-max-tokens"),
        pytest.param("stop_sequence", "stop", id="anthropic-stop-sequence"),
        pytest.param("repetition", "repetition", id="embedded-repetition-guard"),
        pytest.param("tool_calls", None, id="tool-calls-say-nothing"),
        pytest.param("content_filter", None, id="filter"),
        pytest.param(None, None, id="absent"),
    ],
)
def test_provider_finish_reasons_are_normalised(raw: str | None, ours: str | None) -> None:
    assert finish_reason_of(raw) == ours
