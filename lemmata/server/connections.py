"""Connections a client opens and does not finish: what another local user can do without the token.

The token is read once a request's headers are complete, so a client that never completes them is
neither answered nor refused, and uvicorn gives it no deadline (its keep-alive timer runs only
between requests). 1,100 such connections under the common limit of 1,024 open files left no
descriptor to accept a legitimate request with, and asyncio logged each refused accept (issue 53).
What holds now, in the order a connection meets it:

- the open-file limit is raised to what the system allows (`raise_the_open_file_limit`);
- a connection that has sent no complete request heads a queue; past `waiting_cap()` of them the
  oldest is closed, so a legitimate request, whose headers arrive in one packet, always finds a
  descriptor, whatever the limit;
- a connection whose headers are not complete `HEADER_SECONDS` after it opened, or after its
  last answer, is closed;
- errors of the listening socket are logged at most once a minute, with a count.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from collections import OrderedDict
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

#: Seconds a connection has to send a request's headers (a browser sends them at once).
HEADER_SECONDS = 10.0
#: The fewest connections without a request kept, whatever the open-file limit.
MIN_WAITING = 64
#: Seconds between two log lines about the listening socket's errors.
ACCEPT_ERROR_SECONDS = 60.0

log = logging.getLogger("lemmata.server")


def raise_the_open_file_limit() -> int:
    """The soft limit on open files raised to the hard one; the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = 1 << 20 if hard == resource.RLIM_INFINITY else hard
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft


def waiting_cap() -> int:
    """How many connections without a complete request are kept: half the open files, so the
    other half remains for requests, runs and their logs."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return max(MIN_WAITING, soft // 2 if soft != resource.RLIM_INFINITY else 1 << 19)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a deadline for headers and a cap on connections without
    a request. The queue is shared by every connection of the process (one server, one loop)."""

    waiting: OrderedDict[int, GuardedH11Protocol] = OrderedDict()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._wait_for_a_request()
        if len(self.waiting) > waiting_cap():
            _, oldest = self.waiting.popitem(last=False)
            oldest.transport.close()  # the longest without a request gives way

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # a request's headers are in
            self._stop_waiting()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # may go on with a pipelined request at once
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._wait_for_a_request()  # kept alive: the next request has its deadline too

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    def _wait_for_a_request(self) -> None:
        self._stop_waiting()
        self.waiting[id(self)] = self
        self._deadline = self.loop.call_later(HEADER_SECONDS, self._headers_too_late)

    def _stop_waiting(self) -> None:
        self.waiting.pop(id(self), None)
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _headers_too_late(self) -> None:
        self._deadline = None
        if self.conn.their_state is h11.IDLE and (self.cycle is None or self.cycle.response_complete):
            self.waiting.pop(id(self), None)
            self.transport.close()


class AcceptErrorsRateLimited:
    """The loop's exception handler: errors of the listening socket (`socket.accept() out of
    system resource`, one per refused connection) logged once, then once a minute with a count;
    everything else as asyncio would."""

    def __init__(self) -> None:
        self.last = float("-inf")
        self.unlogged = 0

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if "accept" not in str(context.get("message", "")):
            loop.default_exception_handler(context)
            return
        now = time.monotonic()
        if now - self.last < ACCEPT_ERROR_SECONDS:
            self.unlogged += 1
            return
        more = f" ({self.unlogged} more since the last line)" if self.unlogged else ""
        log.warning("connections refused: %s: %s%s", context.get("message"), context.get("exception"), more)
        self.last, self.unlogged = now, 0
