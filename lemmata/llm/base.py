"""The one small interface every model backend implements."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from lemmata.errors import ProviderError

#: Every HTTP request names its agent role in this header (proxies, logs and the fake server read it).
ROLE_HEADER = "X-Lemmata-Role"


@dataclass(frozen=True)
class Message:
    role: Literal["user", "assistant"]
    content: str


@dataclass(frozen=True)
class ChatRequest:
    """One model call. `role` is the agent role; `scope` tells parallel jobs of a role apart.

    `on_text`, when set, asks for the answer streamed: the backend passes each non-empty piece of
    the answer's text to it as the piece arrives, in order, on the calling thread, and still
    returns the whole text in its ChatResponse. A backend that cannot stream passes the whole
    text as one piece once it has it (`pass_whole`). Without `on_text` a backend makes exactly
    the request it would make anyway (no streaming request). Retries and restarts are not the
    backend's business: one `complete` is one attempt (LLMClient signals restarts).
    """

    role: str
    model: str
    system: str
    messages: tuple[Message, ...]
    max_tokens: int
    json_schema: dict[str, Any] | None = None
    scope: str = ""
    #: The answer is to be the model's own words (a sketch, a paper's prose): a long stretch of the
    #: prompt repeated verbatim is an echo, which the embedded backend ends (finish reason "echo").
    own_words: bool = False
    #: With own_words: text the embedded backend writes in place of an echo, after which the answer
    #: goes on (the writer's "\n%%%": the next part's marker) instead of ending.
    resume_after_echo: str = ""
    on_text: Callable[[str], None] | None = field(default=None, compare=False, repr=False)


#: Why an answer ended, in our words: "stop" (the model ended it), "length" (the token limit cut it
#: off), "repetition" (the embedded backend ended a loop), "echo" (the embedded backend ended an
#: answer in the model's own words where it began to repeat its prompt, and left the repeated text
#: out: what comes before is whole); None when the backend does not say.
FinishReason = Literal["stop", "length", "repetition", "echo"]
#: Finish reasons of an answer that did not end where the model meant it to.
CUT_OFF: tuple[FinishReason, ...] = ("length", "repetition")
_FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "eos": "stop",
    "length": "length",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "repetition": "repetition",
    "echo": "echo",
}


def finish_reason_of(raw: object) -> FinishReason | None:
    """A provider's finish or stop reason in our words; None for any other (tool calls, a filter)."""
    return _FINISH_REASONS.get(raw) if isinstance(raw, str) else None


@dataclass(frozen=True)
class ChatResponse:
    text: str
    tokens_in: int | None = None
    tokens_out: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    finish_reason: FinishReason | None = None

    @property
    def cut_off(self) -> bool:
        """The answer stopped before the model ended it (token limit or a loop ended for it)."""
        return self.finish_reason in CUT_OFF


class Backend(Protocol):
    """Answers one request. Raises TransientProviderError (retried) or ProviderError.

    Streams the answer through `request.on_text` when that is set (see ChatRequest).
    """

    name: str

    def complete(self, request: ChatRequest) -> ChatResponse: ...


def answering_backend(backend: Backend) -> str:
    """The backend whose answers `backend` gives: its own name, or for a replay the recorded one's,
    so that the replay's checks are named, trusted and measured as that backend's."""
    answers_of = getattr(backend, "answers_of", None)
    return answers_of if isinstance(answers_of, str) and answers_of else backend.name


def provider_message(exc: Any) -> str:
    """The provider's own error message from an SDK status error, for one-line reports."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(getattr(exc, "message", exc))


def pass_whole(request: ChatRequest, response: ChatResponse) -> ChatResponse:
    """For a backend that cannot stream: the whole answer as the one piece for `request.on_text`."""
    if request.on_text is not None and response.text:
        request.on_text(response.text)
    return response


T = TypeVar("T")


def reading(stream: Iterable[T], translate: Callable[[Exception], ProviderError]) -> Iterator[T]:
    """The items of an SDK answer stream, its failures translated to ours (`translate`). An error
    raised in the caller's loop body, such as by its `on_text` consumer, passes unchanged: it is
    the consumer's, not the provider's, and is neither translated nor retried."""
    try:
        yield from stream
    except Exception as exc:
        raise translate(exc) from None


@dataclass(frozen=True)
class ModelChoice:
    active: str
    fast: str

    def for_tier(self, tier: str) -> str:
        return self.fast if tier == "fast" else self.active
