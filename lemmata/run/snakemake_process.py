"""Snakemake's command line, as lemmata starts it (`python -m lemmata.run.snakemake_process ARGS`).

It is `python -m snakemake ARGS`, but it leaves faster once Snakemake is done (it is the last
thing a run waits for):
- Snakemake's scheduler arms a one-second `threading.Timer` after each pass (its job-rate limit),
  and Python waits for every such timer before the process may exit. With nothing left to
  schedule they are cancelled.
- Tearing down the interpreter (its modules, the jobs' too: they run in this process) took
  0.3 s. Once Snakemake has returned, its logging is stopped and flushed, its records written, its
  jobs ended; so after the exit handlers and a flush of the streams, the process ends at once.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading

from snakemake.cli import main as snakemake_main


def cancel_idle_timers() -> int:
    """Cancel the timers still waiting (the scheduler's re-evaluations); how many there were."""
    timers = [thread for thread in threading.enumerate() if isinstance(thread, threading.Timer)]
    for timer in timers:
        timer.cancel()
    return len(timers)


def exit_status(code: object) -> int:
    """The process status `sys.exit(code)` would give (a message is printed, as Python does)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def main() -> None:
    try:
        snakemake_main()  # ends with sys.exit(status)
        status = 0
    except SystemExit as exit_:
        status = exit_status(exit_.code)
    cancel_idle_timers()
    atexit._run_exitfuncs()  # what Python runs at exit: logging's flush and close, among others
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


if __name__ == "__main__":
    main()
