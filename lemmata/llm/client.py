"""The model client the stages use: role-aware, retried in one place, every call logged."""

from __future__ import annotations

import time
from dataclasses import dataclass

from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from lemmata.errors import ProviderError, TransientProviderError
from lemmata.llm.base import Backend, ChatRequest, ChatResponse, Message
from lemmata.llm.calllog import CallLog, CallRecord, Redactor
from lemmata.llm.roles import role as lookup_role
from lemmata.settings import Settings


@dataclass(frozen=True)
class ModelChoice:
    active: str
    fast: str

    def for_tier(self, tier: str) -> str:
        return self.fast if tier == "fast" else self.active


class LLMClient:
    def __init__(
        self,
        backend: Backend,
        settings: Settings,
        models: ModelChoice,
        call_log: CallLog | None = None,
        scope: str = "",
        redact: Redactor | None = None,
    ) -> None:
        self.backend = backend
        self.settings = settings
        self.models = models
        self.call_log = call_log
        self.scope = scope
        self.redact = redact or Redactor()

    def scoped(self, suffix: str) -> LLMClient:
        """The same client for one of several concurrent calls of a job: its own scope, so the
        call log (and a replay of it) tells them apart."""
        return LLMClient(self.backend, self.settings, self.models, self.call_log, f"{self.scope}:{suffix}", self.redact)

    def complete(self, role: str, system: str, messages: list[Message] | str, *, json_answer: bool = False) -> str:
        """Ask `role`'s model; retries transient failures, raises ProviderError otherwise."""
        spec = lookup_role(role)
        if isinstance(messages, str):
            messages = [Message("user", messages)]
        request = ChatRequest(
            role=role,
            model=self.models.for_tier(spec.tier),
            system=system,
            messages=tuple(messages),
            max_tokens=spec.max_tokens(self.settings),
            json_schema=spec.json_schema() if json_answer else None,
            scope=self.scope,
        )
        return self._send(request).text

    def _send(self, request: ChatRequest) -> ChatResponse:
        started = time.monotonic()
        attempts = 0
        response: ChatResponse | None = None
        error: ProviderError | None = None
        try:
            for attempt in self._retrying():
                with attempt:
                    attempts += 1
                    response = self.backend.complete(request)
        except ProviderError as exc:
            error = exc
            raise self._final_error(request, exc, attempts) from None
        finally:
            self._record(request, response, error, attempts, time.monotonic() - started)
        assert response is not None
        return response

    def _retrying(self) -> Retrying:
        s = self.settings
        return Retrying(
            stop=stop_after_attempt(s.LLM_RETRY_ATTEMPTS),
            wait=wait_exponential(multiplier=max(s.LLM_RETRY_WAIT_MIN, 1e-3), min=s.LLM_RETRY_WAIT_MIN, max=s.LLM_RETRY_WAIT_MAX),
            retry=retry_if_exception_type(TransientProviderError),
            reraise=True,
        )

    def _final_error(self, request: ChatRequest, exc: ProviderError, attempts: int) -> ProviderError:
        """Same error class (callers tell replay exhaustion from outages), one line, no secret."""
        plural = "s" if attempts != 1 else ""
        return type(exc)(self.redact(
            f"model call for role '{request.role}' ({self.backend.name}) failed after {attempts} attempt{plural}: {exc}"
        ))

    def _record(
        self, request: ChatRequest, response: ChatResponse | None, error: Exception | None, attempts: int, latency: float
    ) -> None:
        if self.call_log is None:
            return
        self.call_log.append(
            CallRecord(
                role=request.role,
                backend=self.backend.name,
                model=request.model,
                scope=request.scope,
                messages=[{"role": "system", "content": request.system}]
                + [{"role": m.role, "content": m.content} for m in request.messages],
                max_tokens=request.max_tokens,
                response=response.text if response else None,
                tokens_in=response.tokens_in if response else None,
                tokens_out=response.tokens_out if response else None,
                cache_read_tokens=response.cache_read_tokens if response else None,
                cache_write_tokens=response.cache_write_tokens if response else None,
                latency_s=round(latency, 4),
                attempts=attempts,
                error=str(error) if error else None,
                timings=(response.extra or None) if response else None,
            )
        )
