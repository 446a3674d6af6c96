"""The `embedded` backend: a GGUF model run in-process by llama-cpp-python (which only this module,
role_states.py and prompt_states.py import).

A run's jobs reach one such backend in the run's model server (model_server.py); anything else
(the paper Q&A, a workflow run by hand) loads the model in its own process (memory-mapped: 1-2 s
after the first load). A call re-reads only what its role's last call did not read
(role_states.py, and the runtime's prefix reuse), nor a system prompt another run has read
(prompt_states.py), which is why prompts put their fixed parts
first. Processes of one machine take turns on the model under a file lock: two generating at
once on the same cores would each run at half speed, and neither answer would arrive sooner.

A streamed call (`request.on_text`) gets the whole answer as one piece when it is done:
llama-cpp-python's streamed chunks carry no token usage, and the call log must not lose it.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lemmata.errors import ProviderError
from lemmata.llm.base import ChatRequest, ChatResponse, finish_reason_of, pass_whole
from lemmata.llm.prompt_states import PromptStates
from lemmata.llm.role_states import RoleStates

#: Low temperature: the small model follows formats better; a fixed seed makes runs repeatable.
SAMPLING = {"temperature": 0.2, "top_p": 0.9, "repeat_penalty": 1.05, "seed": 7}


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class EmbeddedBackend:
    name = "embedded"

    def __init__(
        self,
        model_path: Path,
        context_tokens: int,
        threads: int = 0,
        lock_path: Path | None = None,
        llama_factory: Any = None,
        max_answer_tokens: int | None = None,
        prompt_states: Path | None = None,
    ) -> None:
        self.model_path = Path(model_path)
        self.context_tokens = context_tokens
        self.max_answer_tokens = max_answer_tokens
        self.threads = threads or available_cores()
        self.lock_path = lock_path
        self._llama_factory = llama_factory
        self._llama: Any = None
        # One llama context serves one call at a time: threads of a job (the paper reader reads
        # papers concurrently) take turns here, processes through the lock file.
        self._in_process = threading.Lock()
        self._role_states = RoleStates()  # what each role's last call left in the context
        self._prompt_states_dir = prompt_states  # where system prompts' states are kept between runs
        self._prompt_states: PromptStates | None = None

    def complete(self, request: ChatRequest) -> ChatResponse:
        llama = self._model()
        messages = [{"role": "system", "content": request.system}]
        messages += [{"role": m.role, "content": m.content} for m in request.messages]
        kwargs: dict[str, Any] = dict(SAMPLING)
        under_grammar = request.json_schema is not None
        if request.json_schema is not None:
            # Grammar-constrained decoding: the answer is valid JSON of the role's schema.
            kwargs["response_format"] = {"type": "json_object", "schema": every_field_required(request.json_schema)}
        # Under a grammar the guard only watches (the grammar refuses an end of turn in the middle
        # of the JSON), and the answer is streamed so that a loop can be stopped.
        guard = RepetitionGuard(llama.token_eos(), force_end=not under_grammar)
        echo = (
            EchoGuard(llama.token_eos(), force_end=not under_grammar, resume=_tokens(llama, request.resume_after_echo))
            if request.own_words
            else None
        )
        kwargs["logits_processor"] = [guard] if echo is None else [guard, echo]
        asked = time.monotonic()
        with self._turn():
            started = time.monotonic()
            self._role_states.before_call(llama, request.role)
            try:
                if self._prompt_states is not None:
                    self._prompt_states.prepare(llama, messages)
                # llama-cpp shortens max_tokens itself when prompt + answer would overflow the context.
                budget = self._answer_budget(request)
                if under_grammar:
                    stream = llama.create_chat_completion(messages=messages, max_tokens=budget, stream=True, **kwargs)
                    answer = _read_until_looping(stream, guard, echo)
                else:
                    answer = llama.create_chat_completion(messages=messages, max_tokens=budget, **kwargs)
                self._role_states.after_call(llama, request.role)
            except ValueError as exc:  # a prompt longer than the context, or a schema it cannot compile
                raise ProviderError(
                    f"embedded model, role '{request.role}': {exc}; raise LEMMATA_EMBEDDED_CONTEXT "
                    f"(now {self.context_tokens}) or use a provider backend"
                ) from None
            elapsed = time.monotonic() - started
            evaluated = _prompt_tokens_evaluated(llama)
        prompt = "\n".join(message["content"] for message in messages)
        if echo is not None and echo.cuts:
            answer = _without_cut_echoes(answer, echo, prompt, llama.detokenize)
        if echo is not None and echo.tripped:
            answer = _without_echo(answer, prompt)
        response = _response_from(answer, evaluated, elapsed, looped=guard.tripped)
        if echo is not None and echo.cuts:
            response.extra["echoes_cut"] = len(echo.cuts)
        response.extra["waited_s"] = round(started - asked, 3)  # other jobs' turns on the model
        return pass_whole(request, response)

    def load(self) -> None:
        """Load the model now rather than at the first call (the shared model server does)."""
        self._model()

    def _answer_budget(self, request: ChatRequest) -> int:
        """The role's token limit, within the backend's own cap: on 2 cores every 1,000 tokens
        cost about 40 s, and the small model's answers past its cap are loops or padding."""
        if self.max_answer_tokens is None:
            return request.max_tokens
        return min(request.max_tokens, self.max_answer_tokens)

    def _model(self) -> Any:
        with self._in_process:
            if self._llama is None:
                factory = self._llama_factory or _load_llama
                self._llama = factory(self.model_path, self.context_tokens, self.threads)
                if self._prompt_states_dir is not None:
                    self._prompt_states = PromptStates(self._prompt_states_dir, self.model_path)
            return self._llama

    @contextmanager
    def _turn(self) -> Iterator[None]:
        with self._in_process:
            if self.lock_path is None:
                yield
                return
            self.lock_path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.lock_path, "a") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX)
                try:
                    yield
                finally:
                    fcntl.flock(handle, fcntl.LOCK_UN)


class AnswerGuard:
    """A logits processor that watches the answer as it is sampled and, once `trips` says so, masks
    every token but end-of-turn so that the runtime ends it cleanly; under a grammar (`force_end`
    False) it only marks the answer (`tripped`), and the caller stops reading the stream. It counts
    the tokens it sees, for the usage a stream does not report. `trips` is asked every CHECK_EVERY
    tokens."""

    CHECK_EVERY = 8

    def __init__(self, end_token: int, force_end: bool = True) -> None:
        self.end_token = end_token
        self.force_end = force_end
        self.answer_start: int | None = None
        self.sampled = 0  # tokens sampled so far (calls, each before a token is chosen)
        self.tripped = False
        self.last_answer: Any = ()  # the answer's tokens as last seen (all but the last one sampled)

    def started(self, prompt: Any) -> None:
        """Called once, with the tokens the model held before the answer's first token."""

    def trips(self, answer: Any) -> bool:
        raise NotImplementedError

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import numpy as np

        if self.answer_start is None:
            self.answer_start = len(input_ids)  # first call: nothing generated yet
            self.started(np.ascontiguousarray(input_ids, dtype=np.int32))
        self.sampled += 1
        # Only the tokens sampled so far: a runtime may hold tokens ahead of them (drafted ones).
        answer = np.ascontiguousarray(
            input_ids[self.answer_start : self.answer_start + self.sampled - 1], dtype=np.int32
        )
        self.last_answer = answer
        return self.steer(answer, scores)

    def steer(self, answer: Any, scores: Any) -> Any:
        """The scores for the next token: unchanged, or only end-of-turn once tripped."""
        if self.tripped or self.trips(answer):
            self.tripped = True
            if self.force_end:
                return only(self.end_token, scores)
        return scores


def only(token: int, scores: Any) -> Any:
    """Scores that leave the sampler one choice: `token`."""
    import numpy as np

    forced = np.full_like(scores, -np.inf)
    forced[token] = 0.0
    return forced


class RepetitionGuard(AnswerGuard):
    """Ends an answer whose tail keeps repeating. A small model caught in a loop would otherwise
    spend its whole token budget on the same phrase: minutes of a laptop's time for nothing.

    Used as a logits processor: once the last TAIL tokens have occurred REPEATS times in the
    answer, it trips (AnswerGuard). Under a grammar it only marks the loop: a JSON answer caught
    in a loop never closes, and would run to its token cap (the README's main command,
    2026-11-26: an experiment answer, 2,048 tokens, 116-152 s, in two runs of three).
    """

    TAIL = 24
    REPEATS = 3

    def trips(self, answer: Any) -> bool:
        due = len(answer) >= self.TAIL * self.REPEATS and len(answer) % self.CHECK_EVERY == 0
        return due and _tail_repeats(answer, self.TAIL) >= self.REPEATS


class EchoGuard(AnswerGuard):
    """Ends an answer meant to be in the model's own words (ChatRequest.own_words) once it repeats
    RUN tokens of its prompt verbatim. The small model pasted its request into the paper's prose
    and the assembled proof into the sketch (the README's main command, 2026-11-27: 77% and 100%
    of those roles' tokens out, over a minute of a run); a proof or statement restated is no
    summary of it, and the stages print the statements and proofs themselves. Shorter stretches
    (a lemma's statement quoted in a sentence) pass."""

    RUN = 96
    #: Echoes an answer with a `resume` text may go on after; the next one ends it.
    RESUMES = 2

    def __init__(self, end_token: int, force_end: bool = True, resume: Sequence[int] = ()) -> None:
        super().__init__(end_token, force_end)
        self._prompt_runs: set[bytes] = set()
        self.resume = list(resume)  # tokens written in place of an echo, after which the model goes on
        self.cuts: list[int] = []  # where in the answer (tokens) each echo was cut and `resume` written
        self._writing: list[int] = []  # tokens of `resume` still to write
        self._since = 0  # an echo is looked for in the answer after the last resume only

    def started(self, prompt: Any) -> None:
        import numpy as np

        if len(prompt) >= self.RUN:
            windows = np.lib.stride_tricks.sliding_window_view(prompt, self.RUN)
            self._prompt_runs = {window.tobytes() for window in windows}

    def trips(self, answer: Any) -> bool:
        due = len(answer) - self._since >= self.RUN and len(answer) % self.CHECK_EVERY == 0
        return due and answer[-self.RUN :].tobytes() in self._prompt_runs

    def steer(self, answer: Any, scores: Any) -> Any:
        """Past an echo, an answer with a `resume` text (the writer's next part marker) goes on
        after it, up to RESUMES times; the echoed tokens are cut afterwards (_without_cut_echoes)."""
        if self._writing:
            return only(self._writing.pop(0), scores)
        if self.resume and self.force_end and not self.tripped and len(self.cuts) < self.RESUMES and self.trips(answer):
            self.cuts.append(len(answer))
            self._since = len(answer) + len(self.resume)
            self._writing = list(self.resume[1:])
            return only(self.resume[0], scores)
        return super().steer(answer, scores)


def _without_echo(answer: dict[str, Any], prompt: str) -> dict[str, Any]:
    """The completion with the echo its EchoGuard stopped left out: the longest end of the text
    that the prompt holds verbatim (what the model wrote before it began to repeat is kept)."""
    choices = answer.get("choices") or [{}]
    text = (choices[0].get("message") or {}).get("content") or ""
    kept = text[: len(text) - _echoed_tail(text, prompt)].rstrip()
    message = {**(choices[0].get("message") or {}), "content": kept}
    return {**answer, "choices": [{**choices[0], "message": message, "finish_reason": "echo"}, *choices[1:]]}


def _without_cut_echoes(
    answer: dict[str, Any], echo: EchoGuard, prompt: str, detokenize: Callable[[list[int]], bytes]
) -> dict[str, Any]:
    """The completion without the echoes an EchoGuard cut (it wrote its resume text after each):
    before each cut, the longest end of the text that the prompt holds verbatim goes. Where the
    text does not begin as the tokens up to a cut read (a runtime that decodes otherwise), it is
    left whole."""
    choices = answer.get("choices") or [{}]
    text = (choices[0].get("message") or {}).get("content") or ""
    tokens = [int(token) for token in echo.last_answer]
    heads = [detokenize(tokens[:cut]).decode("utf-8", errors="replace") for cut in echo.cuts]
    if not all(text.startswith(head) for head in heads):
        return answer
    pieces, start = [], 0
    for end in (len(head) for head in heads):
        piece = text[start:end]
        pieces.append(piece[: len(piece) - _echoed_tail(piece, prompt)].rstrip(" \t"))
        start = end
    pieces.append(text[start:])
    message = {**(choices[0].get("message") or {}), "content": "".join(pieces)}
    return {**answer, "choices": [{**choices[0], "message": message}, *choices[1:]]}


def _echoed_tail(text: str, prompt: str) -> int:
    """The length of the longest end of `text` that `prompt` holds verbatim."""
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if text[len(text) - middle :] in prompt:
            low = middle
        else:
            high = middle - 1
    return low


def _tokens(llama: Any, text: str) -> list[int]:
    return list(llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)) if text else []


def _read_until_looping(
    stream: Iterator[dict[str, Any]], guard: RepetitionGuard, echo: EchoGuard | None = None
) -> dict[str, Any]:
    """A streamed answer as one completion, read until it ends or `guard` sees it loop (or `echo`
    sees it repeat its prompt); then the stream is closed, which stops the generation. The usage
    comes from the guard's count: the prompt is what the model held before the first token, the
    answer every token sampled (but the end of turn)."""
    pieces: list[str] = []
    finish_reason = None
    try:
        for chunk in stream:
            choice = (chunk.get("choices") or [{}])[0]
            pieces.append((choice.get("delta") or {}).get("content") or "")
            finish_reason = choice.get("finish_reason") or finish_reason
            if guard.tripped:
                finish_reason = "repetition"
                break
            if echo is not None and echo.tripped:
                finish_reason = "echo"
                break
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
    produced = guard.sampled - (1 if finish_reason == "stop" else 0)
    return {
        "choices": [{"message": {"role": "assistant", "content": "".join(pieces)}, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": guard.answer_start, "completion_tokens": max(produced, 0)},
    }


def _tail_repeats(tokens: Any, tail: int) -> int:
    """How often the last `tail` tokens occur in `tokens` (the tail itself included)."""
    import numpy as np

    windows = np.lib.stride_tricks.sliding_window_view(tokens, tail)
    return int(np.all(windows == tokens[-tail:], axis=1).sum())


def every_field_required(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with every property required, recursively: under a grammar, an optional field
    is one the small model may simply leave out (an empty survey is valid JSON)."""
    if isinstance(schema, dict):
        strict: dict[str, Any] = {key: every_field_required(value) for key, value in schema.items()}
        if isinstance(strict.get("properties"), dict):
            strict["required"] = list(strict["properties"])
        return strict
    if isinstance(schema, list):
        return [every_field_required(item) for item in schema]
    return schema


def _prompt_tokens_evaluated(llama: Any) -> int | None:
    """Prompt tokens the runtime actually computed in the last call; the rest came from its prefix cache."""
    if getattr(llama, "ctx", None) is None:  # a stand-in model in tests
        return None
    try:
        import llama_cpp

        data = llama_cpp.llama_perf_context(llama.ctx)
        llama_cpp.llama_perf_context_reset(llama.ctx)
        return int(data.n_p_eval)
    except (ImportError, AttributeError, TypeError, ctypes.ArgumentError):  # a runtime without perf counters
        return None


def _response_from(answer: dict[str, Any], evaluated: int | None, elapsed: float, looped: bool = False) -> ChatResponse:
    """Our response; `looped`: the RepetitionGuard ended the answer (finish reason "repetition")."""
    choices = answer.get("choices") or []
    if not choices:
        raise ProviderError("embedded model returned no choices")
    text = choices[0].get("message", {}).get("content") or ""
    usage = answer.get("usage") or {}
    prompt_tokens = usage.get("prompt_tokens")
    reused = prompt_tokens - evaluated if prompt_tokens is not None and evaluated is not None else None
    finish_reason = "repetition" if looped else choices[0].get("finish_reason")
    return ChatResponse(
        text=text,
        tokens_in=prompt_tokens,
        tokens_out=usage.get("completion_tokens"),
        cache_read_tokens=reused,
        extra={"seconds": round(elapsed, 3), "prompt_tokens_evaluated": evaluated, "finish_reason": finish_reason},
        finish_reason=finish_reason_of(finish_reason),
    )


def _load_llama(model_path: Path, context_tokens: int, threads: int) -> Any:
    try:
        from llama_cpp import Llama
    except ImportError:
        raise ProviderError(
            "the embedded backend needs llama-cpp-python: run bin/setup, or pip install 'lemmata[embedded]'"
        ) from None
    try:
        return Llama(
            model_path=str(model_path),
            n_ctx=context_tokens,
            n_threads=threads,
            n_threads_batch=threads,
            verbose=False,
        )
    except (ValueError, RuntimeError) as exc:
        raise ProviderError(f"cannot load the embedded model {model_path}: {exc}") from None
