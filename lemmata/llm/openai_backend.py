"""OpenAI-compatible HTTP backends: `router`, `local` and `vendorx`. The only openai import."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypedDict

import openai

from lemmata.errors import ProviderError, TransientProviderError
from lemmata.llm.base import ROLE_HEADER, ChatRequest, ChatResponse, finish_reason_of, provider_message, reading


@lru_cache(maxsize=1)
def shared_http_client() -> openai.DefaultHttpxClient:
    """One HTTP client for every backend of the process (each job makes one): its TLS setup, 24 ms
    of reading the system's certificates, and its connections are made once, not per job. It is
    thread-safe; each request still carries its backend's URL, key and timeout."""
    return openai.DefaultHttpxClient()


class OpenAICompatibleBackend:
    def __init__(self, name: str, base_url: str, api_key: str, timeout: float, send_json_schema: bool = False) -> None:
        self.name = name
        self.base_url = base_url
        # Only the local server (llama.cpp-style) understands a schema inside json_object.
        self.send_json_schema = send_json_schema
        # Retries live in LLMClient alone: the SDK's own are switched off.
        self._client = openai.OpenAI(
            api_key=api_key or "not-needed",
            base_url=base_url,
            max_retries=0,
            timeout=timeout,
            http_client=shared_http_client(),
        )

    def complete(self, request: ChatRequest) -> ChatResponse:
        messages = [{"role": "system", "content": request.system}]
        messages += [{"role": m.role, "content": m.content} for m in request.messages]
        call: dict[str, Any] = dict(
            model=request.model,
            messages=messages,
            max_tokens=request.max_tokens,
            extra_headers={ROLE_HEADER: request.role},
        )
        if request.json_schema is not None and self.send_json_schema:
            call["response_format"] = {"type": "json_object", "schema": request.json_schema}
        if request.on_text is not None:
            return self._streamed(call, request.on_text)
        try:
            completion = self._client.chat.completions.create(**call)
        except Exception as exc:
            raise translate_openai_error(self.name, exc) from None
        return _response_from(self.name, completion)

    def _streamed(self, call: dict[str, Any], on_text: Callable[[str], None]) -> ChatResponse:
        """The answer as chunks: each text delta to `on_text` as it arrives; usage from the last chunk."""
        try:
            chunks = self._client.chat.completions.create(**call, stream=True, stream_options={"include_usage": True})
        except Exception as exc:
            raise translate_openai_error(self.name, exc) from None
        pieces: list[str] = []
        usage: Any = None
        finished: str | None = None
        with chunks:
            for chunk in reading(chunks, lambda exc: translate_openai_error(self.name, exc)):
                usage = getattr(chunk, "usage", None) or usage
                for choice in getattr(chunk, "choices", None) or ():
                    if choice.index != 0:
                        continue
                    piece = getattr(choice.delta, "content", None)
                    if piece:
                        pieces.append(piece)
                        on_text(piece)
                    finished = finished or choice.finish_reason
        if not (finished or usage is not None):
            raise TransientProviderError(f"{self.name}'s answer stream ended before the answer did")
        return ChatResponse(text="".join(pieces), finish_reason=finish_reason_of(finished), **_usage_fields(usage))


def _response_from(name: str, completion: Any) -> ChatResponse:
    if not getattr(completion, "choices", None):
        raise TransientProviderError(f"{name} returned an answer without choices")
    choice = completion.choices[0]
    return ChatResponse(
        text=choice.message.content or "",
        finish_reason=finish_reason_of(choice.finish_reason),
        **_usage_fields(getattr(completion, "usage", None)),
    )


class _UsageFields(TypedDict):
    tokens_in: int | None
    tokens_out: int | None
    cache_read_tokens: int | None


def _usage_fields(usage: Any) -> _UsageFields:
    """Token counts of an OpenAI usage object (None when absent); cached prompt tokens when reported."""
    cached = getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None)
    return {
        "tokens_in": getattr(usage, "prompt_tokens", None),
        "tokens_out": getattr(usage, "completion_tokens", None),
        "cache_read_tokens": cached,
    }


def translate_openai_error(name: str, exc: Exception) -> ProviderError:
    """Map SDK exceptions to ours by type: only rate limits, 5xx, connection and timeout retry."""
    if isinstance(exc, openai.APIStatusError):
        message = provider_message(exc)
        text = f"{name} answered HTTP {exc.status_code}: {message}"
        if exc.status_code == 429 or exc.status_code >= 500:
            return TransientProviderError(text)
        return ProviderError(text)
    if isinstance(exc, openai.APITimeoutError):
        return TransientProviderError(f"{name} timed out")
    if isinstance(exc, openai.APIConnectionError):
        return TransientProviderError(f"cannot reach {name}: {exc}")
    if isinstance(exc, (openai.APIResponseValidationError, ValueError)):
        return TransientProviderError(f"{name} sent a malformed answer: {exc}")
    if isinstance(exc, openai.APIError):
        # An error event inside an answer stream: the request was accepted, generating it failed.
        return TransientProviderError(f"{name} failed mid-answer: {provider_message(exc)}")
    if isinstance(exc, openai.OpenAIError):
        return ProviderError(f"{name}: {exc}")
    raise exc
