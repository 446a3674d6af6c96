"""Waiting in a test for something to happen: one helper, instead of a polling loop in each test."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    condition: Callable[[], T],
    timeout: float,
    interval: float = 0.05,
    *,
    message: str | Callable[[], str] | None = "the awaited condition did not hold in time",
) -> T:
    """Call `condition` every `interval` seconds until it returns something true, and return that.

    After `timeout` seconds without: AssertionError(message), a callable message being called
    then (to describe the state at that moment); with message=None, the condition's last (false)
    value, for a caller that checks the outcome itself or goes on either way. An exception the
    condition raises (an assertion that a process still runs, say) ends the wait at once."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() >= deadline:
            break
        time.sleep(interval)
    if value or message is None:
        return value
    raise AssertionError(message() if callable(message) else message)
