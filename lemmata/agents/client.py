"""The model client the stages use: role-aware, retried in one place, every call logged."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from lemmata import layout
from lemmata.agents.roles import role as lookup_role
from lemmata.artifacts import Briefing, read_artifact
from lemmata.errors import ProviderError, TransientProviderError
from lemmata.llm.base import Backend, ChatRequest, ChatResponse, Message, ModelChoice
from lemmata.llm.calllog import CallLog, CallRecord
from lemmata.llm.interrupted_calls import InterruptedCalls, interrupted_calls
from lemmata.llm.prices import load_prices
from lemmata.llm.resolve import build_backend, choose_backend
from lemmata.llm.whole_text import WholeCharacters, whole_text
from lemmata.redaction import Redactor, known_secrets
from lemmata.settings import Settings, data_home_of


class LLMClient:
    def __init__(
        self,
        backend: Backend,
        settings: Settings,
        models: ModelChoice,
        call_log: CallLog | None = None,
        scope: str = "",
        redact: Redactor | None = None,
        briefing: Mapping[str, str] | None = None,
        interrupted: InterruptedCalls | None = None,
    ) -> None:
        self.backend = backend
        self.settings = settings
        self.models = models
        self.call_log = call_log
        self.scope = scope
        self.redact = redact or Redactor(known_secrets)  # default: every secret this process knows
        #: The run's briefing (stages/survey/briefing.py): text added to a role's system prompt in every call.
        self.briefing = dict(briefing or {})
        #: Answers a killed workflow already got (llm/interrupted_calls.py): not asked for twice.
        self.interrupted = interrupted

    def scoped(self, suffix: str) -> LLMClient:
        """The same client for one of several concurrent calls of a job: its own scope, so the
        call log (and a replay of it) tells them apart."""
        return LLMClient(
            self.backend,
            self.settings,
            self.models,
            self.call_log,
            f"{self.scope}:{suffix}",
            self.redact,
            self.briefing,
            self.interrupted,
        )

    def complete(
        self,
        role: str,
        system: str,
        messages: list[Message] | str,
        *,
        json_answer: bool = False,
        on_text: Callable[[str], None] | None = None,
        on_restart: Callable[[], None] | None = None,
    ) -> str:
        """The answer's text of `complete_reply` (see there)."""
        return self.complete_reply(
            role, system, messages, json_answer=json_answer, on_text=on_text, on_restart=on_restart
        ).text

    def complete_reply(
        self,
        role: str,
        system: str,
        messages: list[Message] | str,
        *,
        json_answer: bool = False,
        on_text: Callable[[str], None] | None = None,
        on_restart: Callable[[], None] | None = None,
    ) -> ChatResponse:
        """Ask `role`'s model; retries transient failures, raises ProviderError otherwise. The reply
        carries the text and its `finish_reason` ("length": cut off at the token limit).

        Streaming: with `on_text`, each non-empty piece of the answer's text is passed to it as it
        arrives, in order, on this thread; the return value is still the whole text and the call
        is logged as without it. A backend that cannot stream passes the whole text as one piece.
        Without `on_text` the request is exactly the non-streaming one.

        Restarts: a transient failure may come after pieces were passed on. Before each retried
        attempt, `on_restart()` is called (whether or not the failed attempt had passed anything):
        the text received so far is void and the answer streams again from its first piece. So a
        consumer sees pieces, then either the end of the call or `on_restart()` and a new answer;
        the pieces after the last `on_restart()` join to the returned text. A consumer that shows
        the answer should pass `on_restart`, or it cannot tell a restarted answer from a continuation.

        An exception raised by `on_text` or `on_restart` ends the call (no retry) and propagates unchanged.

        The run's briefing for `role`, if any, is appended to `system` (and logged with it).
        """
        spec = lookup_role(role)
        if isinstance(messages, str):
            messages = [Message("user", messages)]
        if self.briefing.get(role):
            system = f"{system.rstrip()}\n\n{self.briefing[role]}"
        request = ChatRequest(
            role=role,
            model=self.models.for_tier(spec.tier),
            system=system,
            messages=tuple(messages),
            max_tokens=spec.max_tokens(self.settings),
            json_schema=spec.json_schema() if json_answer else None,
            scope=self.scope,
            own_words=spec.own_words,
            resume_after_echo=spec.resume_after_echo,
        )
        return self._send(request, on_text, on_restart)

    def _send(
        self,
        request: ChatRequest,
        on_text: Callable[[str], None] | None = None,
        on_restart: Callable[[], None] | None = None,
    ) -> ChatResponse:
        kept = self.interrupted.take(request) if self.interrupted is not None else None
        if kept is not None:  # asked and answered before the workflow was killed: logged then
            if on_text is not None and kept.text:
                on_text(kept.text)
            return kept
        started = time.monotonic()
        attempts = 0
        response: ChatResponse | None = None
        error: Exception | None = None
        relay = _Relay(on_text) if on_text is not None else None
        if relay is not None:
            request = replace(request, on_text=relay)
        try:
            for attempt in self._retrying():
                with attempt:
                    attempts += 1
                    if attempts > 1 and on_restart is not None:
                        on_restart()
                    if relay is not None:
                        relay.restart()
                    response = self.backend.complete(request)
                    # Half an emoji (a stream cut inside a surrogate pair) cannot be logged: made whole here.
                    response = replace(response, text=whole_text(response.text))
                    if relay is not None:
                        relay.finish()
                        if not relay.passed:
                            relay(response.text)  # a backend that ignored on_text: the whole text as one piece
        except ProviderError as exc:
            error = exc
            raise self._final_error(request, exc, attempts) from None
        except Exception as exc:  # e.g. the consumer's on_text failed: logged, raised unchanged
            error = exc
            response = None
            raise
        finally:
            self._record(request, response, error, attempts, time.monotonic() - started)
        assert response is not None
        return response

    def _retrying(self) -> Retrying:
        s = self.settings
        return Retrying(
            stop=stop_after_attempt(s.LLM_RETRY_ATTEMPTS + 1),  # the first attempt, then the retries
            wait=wait_exponential(
                multiplier=max(s.LLM_RETRY_WAIT_MIN, 1e-3), min=s.LLM_RETRY_WAIT_MIN, max=s.LLM_RETRY_WAIT_MAX
            ),
            retry=retry_if_exception_type(TransientProviderError),
            reraise=True,
        )

    def _final_error(self, request: ChatRequest, exc: ProviderError, attempts: int) -> ProviderError:
        """Same error class (callers tell replay exhaustion from outages), one line, no secret."""
        plural = "s" if attempts != 1 else ""
        return type(exc)(
            self.redact(
                whole_text(
                    f"model call for role '{request.role}' ({self.backend.name}) failed after {attempts} "
                    f"attempt{plural}: {exc}"
                )
            )
        )

    def _record(
        self,
        request: ChatRequest,
        response: ChatResponse | None,
        error: Exception | None,
        attempts: int,
        latency: float,
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
                error=_error_text(error),
                finish_reason=response.finish_reason if response else None,
                timings=(response.extra or None) if response else None,
            )
        )


def _error_text(error: Exception | None) -> str | None:
    if error is None:
        return None
    if isinstance(error, ProviderError):
        return whole_text(str(error))
    return whole_text(f"{type(error).__name__}: {error}")


class _Relay:
    """Passes an answer's pieces on to the caller's `on_text`, each character whole (a pair cut
    between two pieces is joined), noting whether this attempt passed any."""

    def __init__(self, consumer: Callable[[str], None]) -> None:
        self.whole = WholeCharacters(consumer)
        self.passed = False

    def __call__(self, piece: str) -> None:
        if piece:
            self.passed = True
            self.whole(piece)

    def finish(self) -> None:
        self.whole.finish()

    def restart(self) -> None:
        self.whole.restart()
        self.passed = False


def make_client(settings: Settings, environ: Mapping[str, str], run_dir: Path, scope: str = "") -> LLMClient:
    """The client a stage job uses: backend from settings, calls logged in the run directory."""
    choice = choose_backend(settings, environ)
    backend = build_backend(choice.name, settings, environ, run_dir)
    redact = Redactor(lambda: known_secrets(environ))  # read at each use: a refreshed CLI login is known too
    log = CallLog(Path(run_dir) / layout.LLM_CALLS, redact, load_prices(data_home_of(Path(run_dir))))
    return LLMClient(
        backend,
        settings,
        choice.models,
        log,
        scope=scope,
        redact=redact,
        briefing=run_briefing(run_dir),
        interrupted=interrupted_calls(environ),
    )


def run_briefing(run_dir: Path) -> dict[str, str]:
    """The text the run's briefing adds to each role's system prompt; none before the briefing
    is made (or in a run older than briefings)."""
    path = Path(run_dir) / layout.BRIEFING
    return read_artifact(path, Briefing).by_role if path.is_file() else {}
