"""An in-process backend answering from per-role scripts: for stage tests without HTTP."""

from __future__ import annotations

import threading
from collections import defaultdict, deque
from collections.abc import Callable

from lemmata.agents.client import LLMClient, ModelChoice
from lemmata.errors import ProviderError
from lemmata.llm.base import ChatRequest, ChatResponse
from lemmata.settings import Settings

Scripted = str | ChatResponse | Callable[[ChatRequest], str | ChatResponse] | Exception


class ScriptedBackend:
    """Answers each role's requests in order; an Exception in the script is raised instead. A
    ChatResponse is answered as it is: `ChatResponse(text, finish_reason="length")` scripts an
    answer cut off at the token limit (a plain string is one the model ended: "stop")."""

    name = "scripted"

    def __init__(self, script: dict[str, list[Scripted]] | None = None) -> None:
        self._queues: dict[str, deque[Scripted]] = defaultdict(deque)
        self._lock = threading.Lock()
        self.requests: list[ChatRequest] = []
        for role, answers in (script or {}).items():
            self.enqueue(role, *answers)

    def enqueue(self, role: str, *answers: Scripted) -> None:
        with self._lock:
            self._queues[role].extend(answers)

    def pending(self, role: str | None = None) -> int:
        with self._lock:
            return sum(len(q) for r, q in self._queues.items() if role in (None, r))

    def calls(self, role: str) -> list[ChatRequest]:
        return [request for request in self.requests if request.role == role]

    def complete(self, request: ChatRequest) -> ChatResponse:
        with self._lock:
            self.requests.append(request)
            queue = self._queues.get(request.role)
            if not queue:
                raise ProviderError(f"scripted backend: no answer left for role '{request.role}'")
            answer = queue.popleft()
        if isinstance(answer, Exception):
            raise answer
        reply = answer(request) if callable(answer) else answer
        if isinstance(reply, ChatResponse):
            return reply
        return ChatResponse(
            text=reply, tokens_in=len(request.system) // 4, tokens_out=len(reply) // 4, finish_reason="stop"
        )


def scripted_client(
    script: dict[str, list[Scripted]] | None = None, settings: Settings | None = None, **setting_values: object
) -> tuple[LLMClient, ScriptedBackend]:
    """A real LLMClient (retries, roles, limits) over a ScriptedBackend; no call log."""
    backend = ScriptedBackend(script)
    settings = settings or Settings.from_mapping({"LLM_RETRY_WAIT_MIN": 0, "LLM_RETRY_WAIT_MAX": 0, **setting_values})
    return LLMClient(backend, settings, ModelChoice("scripted-active", "scripted-fast")), backend
