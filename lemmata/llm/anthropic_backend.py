"""The `vendora` backend: Anthropic's Messages API. The only anthropic import."""

from __future__ import annotations


import anthropic

from lemmata.errors import ProviderError, TransientProviderError
from lemmata.llm.base import ROLE_HEADER, ChatRequest, ChatResponse, provider_message


class AnthropicBackend:
    name = "vendora"

    def __init__(self, api_key: str, timeout: float, base_url: str = "") -> None:
        self._client = anthropic.Anthropic(
            api_key=api_key, base_url=base_url or None, max_retries=0, timeout=timeout
        )

    def complete(self, request: ChatRequest) -> ChatResponse:
        # The fixed system prompt is marked cacheable: later calls of a role read it cheaply.
        system = [{"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}]
        try:
            message = self._client.messages.create(
                model=request.model,
                max_tokens=request.max_tokens,
                system=system,
                messages=[{"role": m.role, "content": m.content} for m in request.messages],
                extra_headers={ROLE_HEADER: request.role},
            )
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
        )


def translate_anthropic_error(exc: Exception) -> ProviderError:
    if isinstance(exc, anthropic.APIStatusError):
        text = f"vendora answered HTTP {exc.status_code}: {provider_message(exc)}"
        if exc.status_code in (429, 529) or exc.status_code >= 500:
            return TransientProviderError(text)
        return ProviderError(text)
    if isinstance(exc, anthropic.APITimeoutError):
        return TransientProviderError("vendora timed out")
    if isinstance(exc, anthropic.APIConnectionError):
        return TransientProviderError(f"cannot reach vendora: {exc}")
    if isinstance(exc, (anthropic.APIResponseValidationError, ValueError)):
        return TransientProviderError(f"vendora sent a malformed answer: {exc}")
    if isinstance(exc, anthropic.AnthropicError):
        return ProviderError(f"vendora: {exc}")
    raise exc

