"""One GET to a search service, politely spaced, retried on transient failures, never leaking a key.

Every search tool and the PDF reader go through `fetch`: it waits its turn at the service's
polite interval, retries timeouts, connection errors, 429 and 5xx with exponential backoff
(longer when the service sends `Retry-After`), and ends in a `ServiceError` whose message is
written for the agent. Keys travel in headers only and are scrubbed from every message.
"""

from __future__ import annotations

import email.utils
import json
import logging
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import httpx
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from lemmata import __version__
from lemmata.settings import Settings

USER_AGENT = f"lemmata/{__version__} (research automation; search tools)"
#: A search answer is a few kilobytes; more is a runaway response, not a result page.
SEARCH_MAX_BYTES = 5_000_000

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Service:
    """A remote service as the agent knows it, with the spacing it asks of polite clients."""

    name: str  # shown to the agent: "arXiv", "Semantic Scholar", "web search"
    min_interval: float  # seconds between two requests to it from one process


@dataclass(frozen=True)
class RequestPolicy:
    """How long to wait for one request, how often to retry, how long to back off."""

    timeout: float
    attempts: int
    wait_min: float
    wait_max: float  # also caps a Retry-After: a service may not park an agent for an hour
    interval_scale: float = 1.0  # factor on every service's polite interval (0: none, in tests)

    @classmethod
    def from_settings(cls, settings: Settings) -> RequestPolicy:
        return cls(
            timeout=settings.SEARCH_TIMEOUT,
            attempts=settings.SEARCH_RETRY_ATTEMPTS,
            wait_min=settings.SEARCH_RETRY_WAIT_MIN,
            wait_max=settings.SEARCH_RETRY_WAIT_MAX,
            interval_scale=settings.SEARCH_MIN_INTERVAL_SCALE,
        )


@dataclass(frozen=True)
class Fetched:
    body: bytes
    content_type: str


class ServiceError(Exception):
    """The service gave no usable answer; the message is for the agent and holds no secret."""


class _TransientError(Exception):
    """A failure worth another attempt (timeout, connection, 429, 5xx)."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


class RateLimiter:
    """Spaces the requests to each service at least its interval apart, across threads."""

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        self._clock = clock
        self._sleep = sleep
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._last_start: dict[str, float] = {}

    def wait_turn(self, service: str, interval: float) -> None:
        """Return once `interval` seconds have passed since this service's previous request began."""
        with self._guard:
            lock = self._locks.setdefault(service, threading.Lock())
        # Sleeping under the service's lock queues concurrent callers instead of letting them burst.
        with lock:
            due = self._last_start.get(service, -math.inf) + interval
            now = self._clock()
            if now < due:
                self._sleep(due - now)
            self._last_start[service] = self._clock()


#: One limiter per process: the services' rules are per client, whichever tool calls.
PROCESS_RATE_LIMITER = RateLimiter()


def fetch(
    service: Service,
    url: str,
    policy: RequestPolicy,
    *,
    params: Mapping[str, str | int] | None = None,
    headers: Mapping[str, str] | None = None,
    secrets: Sequence[str] = (),
    limiter: RateLimiter = PROCESS_RATE_LIMITER,
    max_bytes: int = SEARCH_MAX_BYTES,
) -> Fetched:
    """GET `url` and return the 200 answer's body, or raise ServiceError after the retries."""
    retrying = Retrying(
        stop=stop_after_attempt(policy.attempts),
        wait=_backoff(policy),
        retry=retry_if_exception_type(_TransientError),
        before_sleep=lambda state: _log_retry(service, state, secrets),
        reraise=True,
    )
    request_headers = {"User-Agent": USER_AGENT, **(headers or {})}
    # httpx keeps custom headers across redirects, even to another host: a keyed request follows none.
    follow = not any(secrets)
    try:
        with httpx.Client(timeout=policy.timeout, follow_redirects=follow, headers=request_headers) as client:
            for attempt in retrying:
                with attempt:
                    limiter.wait_turn(service.name, service.min_interval * policy.interval_scale)
                    return _get_once(client, service, url, params, max_bytes)
    except _TransientError as exc:
        tries = retrying.statistics.get("attempt_number", policy.attempts)
        plural = "s" if tries != 1 else ""
        raise ServiceError(
            redact(f"{service.name} is unavailable after {tries} attempt{plural}: {exc}", secrets)
        ) from None
    except ServiceError as exc:
        raise ServiceError(redact(str(exc), secrets)) from None
    raise AssertionError("unreachable: tenacity either returned or raised")  # pragma: no cover


def _get_once(
    client: httpx.Client, service: Service, url: str, params: Mapping[str, str | int] | None, max_bytes: int
) -> Fetched:
    try:
        with client.stream("GET", url, params=params) as response:
            status = response.status_code
            if status == 429 or status >= 500:
                kind = "rate limited" if status == 429 else "server error"
                raise _TransientError(
                    f"HTTP {status} ({kind})", _retry_after_seconds(response.headers.get("retry-after"))
                )
            body = _read_capped(response, service, max_bytes)
            if status != 200:
                raise ServiceError(f"{service.name} refused the request: HTTP {status}{_error_detail(body)}")
            return Fetched(body, response.headers.get("content-type", ""))
    except httpx.TimeoutException:
        raise _TransientError(f"no answer within {client.timeout.read:g} s") from None
    except httpx.InvalidURL as exc:
        raise ServiceError(f"{service.name} cannot be asked: its configured URL is not valid ({exc})") from None
    except httpx.TransportError as exc:
        raise _TransientError(f"connection failed ({type(exc).__name__}: {exc})") from None


def _read_capped(response: httpx.Response, service: Service, max_bytes: int) -> bytes:
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise ServiceError(f"{service.name} sent more than {max_bytes} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _error_detail(body: bytes) -> str:
    """A short reason from a JSON error body ({"message": ...} or {"error": ...}), else nothing."""
    try:
        payload = json.loads(body)
    except ValueError:
        return ""
    if not isinstance(payload, dict):
        return ""
    reason = payload.get("message") or payload.get("error") or ""
    if isinstance(reason, dict):
        reason = reason.get("detail") or reason.get("message") or ""
    return f": {str(reason)[:200]}" if reason else ""


def _retry_after_seconds(value: str | None) -> float | None:
    """Retry-After as seconds: a number or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())


def _backoff(policy: RequestPolicy) -> Callable[[RetryCallState], float]:
    exponential = wait_exponential(multiplier=max(policy.wait_min, 1e-3), min=policy.wait_min, max=policy.wait_max)

    def wait(state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        hinted = getattr(error, "retry_after", None) or 0.0
        return max(exponential(state), min(hinted, policy.wait_max))

    return wait


def _log_retry(service: Service, state: RetryCallState, secrets: Sequence[str]) -> None:
    error = state.outcome.exception() if state.outcome else None
    wait = state.next_action.sleep if state.next_action else 0.0
    log.info(redact(f"{service.name}: {error}; retrying in {wait:.1f} s", secrets))


def redact(text: str, secrets: Sequence[str]) -> str:
    """`text` with every secret replaced, so no key reaches an agent, a log or an artifact."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    return text
