"""The one small interface every model backend implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

#: Every HTTP request names its agent role in this header (proxies, logs and the fake server read it).
ROLE_HEADER = "X-Lemmata-Role"


@dataclass(frozen=True)
class Message:
    role: Literal["user", "assistant"]
    content: str


@dataclass(frozen=True)
class ChatRequest:
    """One model call. `role` is the agent role; `scope` tells parallel jobs of a role apart."""

    role: str
    model: str
    system: str
    messages: tuple[Message, ...]
    max_tokens: int
    json_schema: dict[str, Any] | None = None
    scope: str = ""


@dataclass(frozen=True)
class ChatResponse:
    text: str
    tokens_in: int | None = None
    tokens_out: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class Backend(Protocol):
    """Answers one request. Raises TransientProviderError (retried) or ProviderError."""

    name: str

    def complete(self, request: ChatRequest) -> ChatResponse: ...


def provider_message(exc: Any) -> str:
    """The provider's own error message from an SDK status error, for one-line reports."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(getattr(exc, "message", exc))
