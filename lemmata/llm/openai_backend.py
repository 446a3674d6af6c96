"""OpenAI-compatible HTTP backends: `router`, `local` and `vendorx`. The only openai import."""

from __future__ import annotations

from typing import Any

import openai

from lemmata.errors import ProviderError, TransientProviderError
from lemmata.llm.base import ROLE_HEADER, ChatRequest, ChatResponse, provider_message



class OpenAICompatibleBackend:
    def __init__(
        self, name: str, base_url: str, api_key: str, timeout: float, send_json_schema: bool = False
    ) -> None:
        self.name = name
        self.base_url = base_url
        # Only the local server (llama.cpp-style) understands a schema inside json_object.
        self.send_json_schema = send_json_schema
        # Retries live in LLMClient alone: the SDK's own are switched off.
        self._client = openai.OpenAI(api_key=api_key or "not-needed", base_url=base_url, max_retries=0, timeout=timeout)

    def complete(self, request: ChatRequest) -> ChatResponse:
        messages = [{"role": "system", "content": request.system}]
        messages += [{"role": m.role, "content": m.content} for m in request.messages]
        kwargs: dict[str, Any] = {}
        if request.json_schema is not None and self.send_json_schema:
            kwargs["response_format"] = {"type": "json_object", "schema": request.json_schema}
        try:
            completion = self._client.chat.completions.create(
                model=request.model,
                messages=messages,
                max_tokens=request.max_tokens,
                extra_headers={ROLE_HEADER: request.role},
                **kwargs,
            )
        except Exception as exc:
            raise translate_openai_error(self.name, exc) from None
        return _response_from(self.name, completion)


def _response_from(name: str, completion: Any) -> ChatResponse:
    if not getattr(completion, "choices", None):
        raise TransientProviderError(f"{name} returned an answer without choices")
    text = completion.choices[0].message.content or ""
    usage = getattr(completion, "usage", None)
    cached = getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None)
    return ChatResponse(
        text=text,
        tokens_in=getattr(usage, "prompt_tokens", None),
        tokens_out=getattr(usage, "completion_tokens", None),
        cache_read_tokens=cached,
    )


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
    if isinstance(exc, openai.OpenAIError):
        return ProviderError(f"{name}: {exc}")
    raise exc

