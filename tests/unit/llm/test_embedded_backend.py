"""The embedded backend against a scripted stand-in for llama-cpp's Llama (no model loaded here;
tests/e2e/test_embedded_smoke.py runs the real one)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lemmata.agents.roles import role
from lemmata.errors import ProviderError
from lemmata.llm.base import ChatRequest, Message
from lemmata.llm.embedded_backend import (
    EchoGuard,
    EmbeddedBackend,
    RepetitionGuard,
    available_cores,
    every_field_required,
)

END_OF_TURN = 99
#: The stand-in's tokens for characters (FakeLlama.tokenize): RESUME_BASE + the character's code.
RESUME_BASE = 10_000


class FakeLlama:
    """Answers like Llama.create_chat_completion, streamed or not; runs the logits processors over
    scripted tokens (five of its own when none are scripted), after a prompt of 40 tokens."""

    PROMPT_TOKENS = 40

    def __init__(
        self,
        text: str = "answer",
        tokens: list[int] | None = None,
        delay: float = 0.0,
        error: Exception | None = None,
        prompt_tokens: int = PROMPT_TOKENS,
        words: dict[int, str] | None = None,
    ) -> None:
        self.text, self.tokens, self.delay, self.error = text, tokens, delay, error
        self.prompt_tokens = prompt_tokens
        self.words = words  # when set, the answer's text is made of its tokens' words (see `detokenize`)
        self.calls: list[dict[str, Any]] = []
        self.active = 0
        self.max_active = 0
        self.streams_closed_early = 0

    def token_eos(self) -> int:
        return END_OF_TURN

    def create_chat_completion(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        if kwargs.get("stream"):
            return self._stream(kwargs.get("logits_processor") or [])
        with self._busy():
            produced = self._run_processors(kwargs.get("logits_processor") or [])
            text = self.detokenize(self.answer).decode() if self.words is not None else self.text
            return {
                "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": self.prompt_tokens, "completion_tokens": produced},
            }

    def tokenize(self, text: bytes, add_bos: bool = False, special: bool = False) -> list[int]:
        """The stand-in's tokens for a text: one per character."""
        return [RESUME_BASE + ord(character) for character in text.decode()]

    def detokenize(self, tokens: list[int]) -> bytes:
        def word(token: int) -> str:
            if token >= RESUME_BASE:
                return chr(token - RESUME_BASE)
            return (self.words or {}).get(token, f"w{token} ")

        return "".join(word(int(token)) for token in tokens).encode()

    @contextmanager
    def _busy(self) -> Iterator[None]:
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            time.sleep(self.delay)
            if self.error:
                raise self.error
            yield
        finally:
            self.active -= 1

    def _scored(self, processors: list[Any], ids: list[int]) -> Any:
        scores = np.zeros(RESUME_BASE + 128, dtype=np.float32)
        for processor in processors:
            scores = processor(np.array(ids, dtype=np.intc), scores)
        return scores

    def _run_processors(self, processors: list[Any]) -> int:
        """Feed the scripted tokens through the processors until one forces end of turn."""
        ids = list(range(self.prompt_tokens))
        script = list(self.tokens or [1000 + n for n in range(5)])
        self.answer: list[int] = []
        while script:
            scores = self._scored(processors, ids)
            forced = int(np.argmax(scores)) if np.isneginf(scores).sum() == len(scores) - 1 else None
            if forced == END_OF_TURN:
                return len(self.answer) + 1
            token = forced if forced is not None else script.pop(0)  # a forced token is written instead
            ids.append(token)
            self.answer.append(token)
        return len(self.answer)

    def _stream(self, processors: list[Any]) -> Iterator[dict[str, Any]]:
        """Chunks as llama-cpp streams them: the text with the first token, then one per token,
        then the end of turn (sampled too: the processors see it) and the finish reason."""
        completed = False
        with self._busy():
            try:
                ids = list(range(self.prompt_tokens))
                yield {"choices": [{"delta": {"role": "assistant"}, "finish_reason": None}]}
                for index, token in enumerate(self.tokens or [1000 + n for n in range(5)]):
                    self._scored(processors, ids)
                    ids.append(token)
                    yield {"choices": [{"delta": {"content": self.text if index == 0 else ""}, "finish_reason": None}]}
                self._scored(processors, ids)  # the end of turn
                completed = True
                yield {"choices": [{"delta": {}, "finish_reason": "stop"}]}
            finally:
                self.streams_closed_early += not completed


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


def request(role_name: str = "prover", schema: bool = False, user: str = "USER") -> ChatRequest:
    return ChatRequest(
        role=role_name,
        model="qwen",
        system="SYSTEM",
        messages=(Message("user", user),),
        max_tokens=321,
        json_schema=role(role_name).json_schema() if schema else None,
        own_words=role(role_name).own_words,
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
    guard = sent["logits_processor"][0]  # it only watches: a forced end of turn would break the grammar
    assert isinstance(guard, RepetitionGuard) and not guard.force_end


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


def test_a_looping_json_answer_is_stopped_and_marked_too(tmp_path: Path) -> None:
    """Malformed model output, the README's main command (2026-11-26): an experiment answer, under
    its grammar, looped to the 2,048-token cap (116 s and 152 s, in two runs of three); it could
    never have closed its JSON. The guard only watches under a grammar; the stream is left."""
    loop = [70, 71, 72, 73, 74, 75] * 100
    llama = FakeLlama('{"code": "x = x + 1', tokens=[10, 11, 12] + loop)
    backend, _ = backend_with(llama, tmp_path)
    response = backend.complete(request("experiment", schema=True))
    assert response.finish_reason == "repetition" and response.cut_off and llama.streams_closed_early == 1
    assert response.tokens_out < 3 + 3 * RepetitionGuard.TAIL + 2 * RepetitionGuard.CHECK_EVERY
    assert response.tokens_in == FakeLlama.PROMPT_TOKENS and response.text == '{"code": "x = x + 1'


def test_a_json_answer_without_loops_is_read_whole_with_its_usage(tmp_path: Path) -> None:
    llama = FakeLlama('{"lemmas": []}', tokens=list(range(100, 160)))
    backend, _ = backend_with(llama, tmp_path)
    response = backend.complete(request("decomposer", schema=True))
    assert (response.text, response.finish_reason, response.tokens_in, response.tokens_out) == (
        '{"lemmas": []}',
        "stop",
        40,
        60,
    )
    assert llama.calls[0]["stream"] is True and llama.streams_closed_early == 0


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


#: A request long enough to be echoed: the prompt of the echo tests below (token i is prompt token i).
LONG_REQUEST = " ".join(f"Line {n} of the request states what was proved about the even integers." for n in range(60))
OWN = [1000 + n for n in range(20)]  # tokens of the model's own words


def test_an_answer_in_own_words_that_repeats_its_prompt_is_ended_and_the_echo_left_out(tmp_path: Path) -> None:
    """Malformed model output, the README's main command (2026-11-27): the sketch was the assembled
    proof pasted (338 of 339 tokens), the writer's first answer the request's own block (1,068 of
    1,133 tokens, 75 s). The answer ends RUN tokens into the echo, and the echo is not kept."""
    own_text = "The argument writes both numbers as doubles."
    llama = FakeLlama(f"{own_text} {LONG_REQUEST[200:1500]}", tokens=OWN + list(range(50, 400)), prompt_tokens=400)
    backend, _ = backend_with(llama, tmp_path)
    response = backend.complete(request("sketch", user=LONG_REQUEST))
    assert response.finish_reason == response.extra["finish_reason"] == "echo" and not response.cut_off
    assert response.text == own_text
    assert response.tokens_out <= len(OWN) + EchoGuard.RUN + EchoGuard.CHECK_EVERY + 1


def test_a_quotation_shorter_than_an_echo_and_roles_that_may_copy_are_left_alone(tmp_path: Path) -> None:
    quoted = OWN + list(range(50, 50 + EchoGuard.RUN - 10)) + [2000 + n for n in range(40)]
    backend, _ = backend_with(FakeLlama("a quoted statement", tokens=quoted, prompt_tokens=400), tmp_path)
    response = backend.complete(request("writer", user=LONG_REQUEST))
    assert response.finish_reason == "stop" and response.tokens_out == len(quoted)
    pasted = OWN + list(range(50, 400))
    backend, _ = backend_with(FakeLlama("proof", tokens=pasted, prompt_tokens=400), tmp_path / "prover")
    response = backend.complete(request("prover", user=LONG_REQUEST))  # a proof may restate its lemma's proof
    assert response.finish_reason == "stop" and response.tokens_out == len(pasted)


def test_the_echo_guard_reads_only_the_tokens_sampled_so_far() -> None:
    """A runtime may hold tokens ahead of the one being sampled (drafted for speculative decoding):
    they are not the answer yet, and a copy among them is no echo."""
    guard = EchoGuard(END_OF_TURN)
    prompt = list(range(400))
    guard(np.array(prompt, dtype=np.intc), np.zeros(128))
    for sampled in range(1, 3 * EchoGuard.RUN):
        ahead = list(range(100, 100 + 2 * EchoGuard.RUN))  # drafted, never sampled
        answer = [3000 + n for n in range(sampled)]
        guard(np.array(prompt + answer + ahead, dtype=np.intc), np.zeros(128))
    assert not guard.tripped


def test_an_echo_under_a_grammar_stops_the_stream(tmp_path: Path) -> None:
    llama = FakeLlama('{"summary": "x', tokens=OWN + list(range(50, 400)), prompt_tokens=400)
    backend, _ = backend_with(llama, tmp_path)
    response = backend.complete(replace(request("sketch", user=LONG_REQUEST), json_schema={"type": "object"}))
    assert response.finish_reason == "echo" and llama.streams_closed_early == 1
    assert response.tokens_out <= len(OWN) + EchoGuard.RUN + EchoGuard.CHECK_EVERY + 1


def test_a_writers_echo_is_cut_and_the_answer_goes_on_with_its_next_part(tmp_path: Path) -> None:
    """The README's main command on the embedded model (2026-11-27): the writer's first answer
    pasted the request into its introduction and was ended there, one part of eight written; each
    further turn cost 17-53 s. Now the echo is cut, the next part's marker written in its place,
    and the answer goes on; the echo is left out of the text."""
    own = {token: f"own{token}. " for token in range(1000, 1100)}
    prompt = "".join(f"w{token} " for token in range(400))  # the stand-in's prompt tokens as text
    after = [1050 + n for n in range(10)]
    script = OWN + list(range(50, 200)) + after  # own words, an echo of the prompt, then words after the marker
    llama = FakeLlama(tokens=script, prompt_tokens=400, words=own)
    backend, _ = backend_with(llama, tmp_path)
    response = backend.complete(replace(request("writer", user=prompt), resume_after_echo="\n%%%"))
    before = "".join(own[token] for token in OWN).rstrip(" ")
    assert response.text.startswith(before + "\n%%%") and "w50 " not in response.text
    assert response.finish_reason == "stop" and response.extra["echoes_cut"] == 1


def test_the_third_echo_ends_the_answer() -> None:
    guard = EchoGuard(END_OF_TURN, resume=[7, 8])
    prompt = list(range(400))
    ids = list(prompt)
    guard(np.array(ids, dtype=np.intc), np.zeros(128))
    echoes = [list(range(50, 200)), list(range(200, 350)), list(range(100, 250))]
    script = [token for echo in echoes for token in [*OWN, *echo]]
    forced: list[int] = []
    while script and not guard.tripped:
        scores = guard(np.array(ids, dtype=np.intc), np.zeros(128))
        if np.isneginf(scores).sum() == len(scores) - 1:
            token = int(np.argmax(scores))
            if token == END_OF_TURN:
                break
            forced.append(token)
        else:
            token = script.pop(0)
        ids.append(token)
    assert len(guard.cuts) == EchoGuard.RESUMES and forced == [7, 8] * EchoGuard.RESUMES and guard.tripped
    # Each cut lies an echo's RUN tokens (give or take a check's step) into the echo after own words.
    assert guard.cuts[0] - len(OWN) in range(EchoGuard.RUN, EchoGuard.RUN + EchoGuard.CHECK_EVERY)
