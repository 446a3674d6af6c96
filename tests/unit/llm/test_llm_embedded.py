"""The embedded backend against a scripted stand-in for llama-cpp's Llama (no model loaded here;
tests/e2e/test_embedded_smoke.py runs the real one)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lemmata.agents.roles import role
from lemmata.errors import ProviderError
from lemmata.llm.base import ChatRequest, Message
from lemmata.llm.embedded_backend import EmbeddedBackend, RepetitionGuard, available_cores, every_field_required

END_OF_TURN = 99


class FakeLlama:
    """Answers like Llama.create_chat_completion; can run logits processors over scripted tokens."""

    def __init__(
        self, text: str = "answer", tokens: list[int] | None = None, delay: float = 0.0, error: Exception | None = None
    ) -> None:
        self.text, self.tokens, self.delay, self.error = text, tokens, delay, error
        self.calls: list[dict[str, Any]] = []
        self.active = 0
        self.max_active = 0

    def token_eos(self) -> int:
        return END_OF_TURN

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            time.sleep(self.delay)
            if self.error:
                raise self.error
            finish, produced = "stop", self._run_processors(kwargs.get("logits_processor") or [])
            return {
                "choices": [{"message": {"role": "assistant", "content": self.text}, "finish_reason": finish}],
                "usage": {"prompt_tokens": 40, "completion_tokens": produced},
            }
        finally:
            self.active -= 1

    def _run_processors(self, processors: list[Any]) -> int:
        """Feed the scripted tokens through the processors until one forces end of turn."""
        if not self.tokens:
            return 5
        ids = [1, 2, 3]  # the prompt
        for produced, token in enumerate(self.tokens, start=1):
            scores = np.zeros(128, dtype=np.float32)
            for processor in processors:
                scores = processor(np.array(ids, dtype=np.intc), scores)
            if int(np.argmax(scores)) == END_OF_TURN and np.isneginf(scores).sum() == len(scores) - 1:
                return produced
            ids.append(token)
        return len(self.tokens)


def backend_with(llama: FakeLlama, tmp_path: Path, lock: bool = True) -> tuple[EmbeddedBackend, list[tuple]]:
    loads: list[tuple] = []

    def factory(path: Path, context: int, threads: int) -> FakeLlama:
        loads.append((path, context, threads))
        return llama

    backend = EmbeddedBackend(
        tmp_path / "model.gguf",
        8192,
        0,
        tmp_path / "models" / ".generate.lock" if lock else None,
        llama_factory=factory,
    )
    return backend, loads


def request(role_name: str = "prover", schema: bool = False) -> ChatRequest:
    return ChatRequest(
        role=role_name,
        model="qwen",
        system="SYSTEM",
        messages=(Message("user", "USER"),),
        max_tokens=321,
        json_schema=role(role_name).json_schema() if schema else None,
    )


def test_json_roles_decode_under_their_schema_with_every_field_required(tmp_path: Path) -> None:
    llama = FakeLlama('{"lemmas": []}')
    backend, _ = backend_with(llama, tmp_path)
    backend.complete(request("decomposer", schema=True))
    sent = llama.calls[0]
    assert sent["response_format"]["type"] == "json_object"
    schema = sent["response_format"]["schema"]
    assert schema["required"] == ["lemmas"]
    assert set(schema["$defs"]["LemmaItem"]["required"]) == {"id", "statement", "depends_on", "source"}
    assert "logits_processor" not in sent  # a forced end of turn would break the grammar


def test_prose_roles_get_the_repetition_guard_and_no_grammar(tmp_path: Path) -> None:
    llama = FakeLlama("a proof")
    backend, _ = backend_with(llama, tmp_path)
    backend.complete(request("prover"))
    sent = llama.calls[0]
    assert "response_format" not in sent
    assert isinstance(sent["logits_processor"][0], RepetitionGuard)
    assert sent["messages"] == [{"role": "system", "content": "SYSTEM"}, {"role": "user", "content": "USER"}]
    assert sent["max_tokens"] == 321


def test_the_model_loads_once_per_process_with_all_cores_by_default(tmp_path: Path) -> None:
    backend, loads = backend_with(FakeLlama(), tmp_path)
    backend.complete(request())
    backend.complete(request())
    assert loads == [(tmp_path / "model.gguf", 8192, available_cores())]


def test_answer_usage_and_timings_are_reported(tmp_path: Path) -> None:
    backend, _ = backend_with(FakeLlama("the proof"), tmp_path)
    response = backend.complete(request())
    assert response.text == "the proof"
    assert (response.tokens_in, response.tokens_out) == (40, 5)
    assert response.extra["finish_reason"] == "stop"
    assert response.extra["waited_s"] >= 0 and response.extra["seconds"] >= 0


def test_a_context_overflow_is_a_provider_error_saying_what_to_raise(tmp_path: Path) -> None:
    llama = FakeLlama(error=ValueError("Requested tokens (9000) exceed context window of 8192"))
    backend, _ = backend_with(llama, tmp_path)
    with pytest.raises(ProviderError) as caught:
        backend.complete(request("writer"))
    message = str(caught.value)
    assert "role 'writer'" in message and "LEMMATA_EMBEDDED_CONTEXT" in message and "9000" in message


def test_an_answer_without_choices_is_a_provider_error(tmp_path: Path) -> None:
    llama = FakeLlama()
    llama.create_chat_completion = lambda **kwargs: {"choices": [], "usage": {}}  # type: ignore[method-assign]
    backend, _ = backend_with(llama, tmp_path)
    with pytest.raises(ProviderError, match="no choices"):
        backend.complete(request())


def test_a_looping_answer_is_ended_and_marked(tmp_path: Path) -> None:
    """Malformed model output met on the real model: a prover repeating one clause until max_tokens."""
    prefix = list(range(10, 40))
    loop = [50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60] * 40
    llama = FakeLlama("and every integer $m$ and every integer $m$", tokens=prefix + loop)
    backend, _ = backend_with(llama, tmp_path)
    response = backend.complete(request("prover"))
    assert response.extra["finish_reason"] == response.finish_reason == "repetition" and response.cut_off
    assert response.tokens_out < len(prefix) + 3 * RepetitionGuard.TAIL + 2 * RepetitionGuard.CHECK_EVERY


def test_a_long_answer_without_loops_is_left_alone(tmp_path: Path) -> None:
    tokens = list(range(100, 1100))
    backend, _ = backend_with(FakeLlama("long proof", tokens=tokens), tmp_path)
    response = backend.complete(request("prover"))
    assert response.extra["finish_reason"] == "stop" and response.tokens_out == len(tokens)


def test_structured_text_repeating_twice_is_not_a_loop() -> None:
    guard = RepetitionGuard(END_OF_TURN)
    block = list(range(200, 240))
    ids = [1, 2]
    guard(np.array(ids), np.zeros(128))
    for token in block + list(range(300, 320)) + block + list(range(400, 420)):
        ids.append(token)
        guard(np.array(ids), np.zeros(128))
    assert not guard.tripped


def test_every_field_required_leaves_the_original_schema_untouched() -> None:
    original = role("survey").json_schema()
    strict = every_field_required(original)
    assert set(strict["required"]) == {"tool_calls", "papers", "summary", "open_problems", "key_objects"}
    assert "required" not in original


def test_jobs_take_turns_on_the_model(tmp_path: Path) -> None:
    """Two jobs generating at once would each run at half speed: the file lock serialises them."""
    llama = FakeLlama(delay=0.2)
    first, _ = backend_with(llama, tmp_path)
    second, _ = backend_with(llama, tmp_path)
    threads = [threading.Thread(target=b.complete, args=(request(),)) for b in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(llama.calls) == 2 and llama.max_active == 1
    assert (tmp_path / "models" / ".generate.lock").exists()


def test_answers_are_capped_by_the_backend_limit_within_the_role_limit(tmp_path: Path) -> None:
    llama = FakeLlama()
    backend = EmbeddedBackend(tmp_path / "m.gguf", 8192, 1, None, llama_factory=lambda *a: llama, max_answer_tokens=200)
    backend.complete(request("prover"))  # role limit 321
    small = ChatRequest(role="verifier", model="q", system="S", messages=(Message("user", "U"),), max_tokens=50)
    backend.complete(small)
    assert [call["max_tokens"] for call in llama.calls] == [200, 50]
