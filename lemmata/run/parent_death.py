"""A child process told when its parent dies, by the kernel: no handler of the parent need run."""

from __future__ import annotations

import ctypes
import signal
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1


def _find_prctl() -> Callable[..., int] | None:
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux
        return None


#: Looked up now, not in the forked child: a child of a threaded parent (the server drives runs
#: on threads) must not load libraries or allocate before exec.
_PRCTL = _find_prctl()


def terminate_with_parent() -> None:
    """For preexec_fn: the kernel sends this child SIGTERM when the process that started it dies,
    even by SIGKILL (Linux; elsewhere nothing happens)."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, int(signal.SIGTERM))
