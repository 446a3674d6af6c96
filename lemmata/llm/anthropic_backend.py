"""The `vendora` backend: Anthropic's Messages API. The only anthropic import."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import anthropic
import httpx2

from lemmata.errors import ProviderError, TransientProviderError
from lemmata.llm.base import ROLE_HEADER, ChatRequest, ChatResponse, finish_reason_of, provider_message, reading

if TYPE_CHECKING:
    from lemmata.llm.credentials_proxy import CredentialsProxy

#: Error types Anthropic reports inside an answer stream that a new attempt may not meet.
TRANSIENT_ERROR_TYPES = {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}


@lru_cache(maxsize=1)
def shared_http_client() -> anthropic.DefaultHttpxClient:
    """One HTTP client for every backend of the process, as openai_backend.shared_http_client."""
    return anthropic.DefaultHttpxClient()


class AnthropicBackend:
    name = "vendora"
    proxy: CredentialsProxy  # only through the CLI login: the proxy, kept as long as the backend (llm/registry.py)

    def __init__(self, api_key: str, timeout: float, base_url: str = "") -> None:
        self._client = anthropic.Anthropic(
            api_key=api_key,
            base_url=base_url or None,
            max_retries=0,
            timeout=timeout,
            http_client=shared_http_client(),
        )

    def complete(self, request: ChatRequest) -> ChatResponse:
        # The fixed system prompt is marked cacheable: later calls of a role read it cheaply.
        system = [{"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}]
        call: dict[str, Any] = dict(
            model=request.model,
            max_tokens=request.max_tokens,
            system=system,
            messages=[{"role": m.role, "content": m.content} for m in request.messages],
            extra_headers={ROLE_HEADER: request.role},
        )
        if request.on_text is not None:
            message = self._streamed(call, request.on_text)
        else:
            try:
                message = self._client.messages.create(**call)
            except Exception as exc:
                raise translate_anthropic_error(exc) from None
        text = "".join(block.text for block in message.content if getattr(block, "type", "") == "text")
        usage = message.usage
        return ChatResponse(
            text=text,
            tokens_in=usage.input_tokens,
            tokens_out=usage.output_tokens,
            cache_read_tokens=getattr(usage, "cache_read_input_tokens", None),
            cache_write_tokens=getattr(usage, "cache_creation_input_tokens", None),
            finish_reason=finish_reason_of(getattr(message, "stop_reason", None)),  # max_tokens: "length"
        )

    def _streamed(self, call: dict[str, Any], on_text: Callable[[str], None]) -> Any:
        """The answer as a message stream: each text delta to `on_text` as it arrives; then the
        message the SDK accumulated from the events (the same shape `create` returns, usage included)."""
        with ExitStack() as stack:
            try:
                stream = stack.enter_context(self._client.messages.stream(**call))  # sends the request
            except Exception as exc:
                raise translate_anthropic_error(exc) from None
            for piece in reading(stream.text_stream, translate_anthropic_error):
                on_text(piece)
            try:
                message = stream.get_final_message()
            except AssertionError:  # no message_start event: nothing was accumulated
                message = None
        if message is None or message.stop_reason is None:
            raise TransientProviderError("vendora's answer stream ended before the answer did")
        return message


def translate_anthropic_error(exc: Exception) -> ProviderError:
    if isinstance(exc, anthropic.APIStatusError) and exc.status_code < 400:
        # An error event inside an answer stream (its HTTP status was a success).
        text = f"vendora failed mid-answer: {provider_message(exc)}"
        return (TransientProviderError if _error_type(exc) in TRANSIENT_ERROR_TYPES else ProviderError)(text)
    if isinstance(exc, anthropic.APIStatusError):
        text = f"vendora answered HTTP {exc.status_code}: {provider_message(exc)}"
        if exc.status_code in (429, 529) or exc.status_code >= 500:
            return TransientProviderError(text)
        return ProviderError(text)
    if isinstance(exc, anthropic.APITimeoutError):
        return TransientProviderError("vendora timed out")
    if isinstance(exc, anthropic.APIConnectionError):
        return TransientProviderError(f"cannot reach vendora: {exc}")
    # The SDK lets its HTTP library's errors through while a stream is read.
    if isinstance(exc, httpx2.TimeoutException):
        return TransientProviderError("vendora timed out mid-answer")
    if isinstance(exc, httpx2.TransportError):
        return TransientProviderError(f"vendora's connection broke mid-answer: {exc!r}")
    if isinstance(exc, (anthropic.APIResponseValidationError, ValueError)):
        return TransientProviderError(f"vendora sent a malformed answer: {exc}")
    if isinstance(exc, anthropic.AnthropicError):
        return ProviderError(f"vendora: {exc}")
    raise exc


def _error_type(exc: Any) -> str:
    """The `error.type` of an Anthropic error body, "" when there is none."""
    body = getattr(exc, "body", None)
    inner = body.get("error") if isinstance(body, dict) else None
    return str(inner.get("type", "")) if isinstance(inner, dict) else ""
