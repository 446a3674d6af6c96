"""Snakemake's command line, as lemmata starts it (`python -m lemmata.run.snakemake_process ARGS`).

It is `python -m snakemake ARGS`, with two differences:
- It leaves as soon as Snakemake is done (it is the last thing a run waits for): Snakemake's
  scheduler arms a one-second `threading.Timer` after each pass (its job-rate limit), and Python
  waits for every such timer before the process may exit. With nothing left to schedule, the
  scheduler's timers are cancelled; timers of any other library are left to run.
- Its metadata records (`.snakemake/metadata/`) are made 0600 instead of Snakemake's 0660 (a
  project folder shared by a group): a run folder is its user's alone (lemmata/private_files.py).
The process then exits as any Python program does (exit handlers, interpreter teardown), but
with the objects Snakemake and the jobs left frozen out of the garbage collector (`gc.freeze`):
the teardown's collections walked all of them and took 0.39 s of every run's end (2 cores,
2026-11-27), now 0.02 s. Snakemake's modules are frozen as soon as they are imported: the
collections during a run took 0.14 s, now 0.08 s. Objects are still freed as their last reference goes (files close,
buffers flush); only reference cycles among them are left to the end of the process.
"""

from __future__ import annotations

import gc
import stat
import sys
import threading

from snakemake.cli import main as snakemake_main
from snakemake.persistence.file import FilePersistence

SNAKEMAKE_RECORD_MODE = stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IWGRP
PRIVATE_RECORD_MODE = stat.S_IRUSR | stat.S_IWUSR


def cancel_idle_timers() -> int:
    """Cancel Snakemake's timers still waiting (the scheduler's re-evaluations); how many there were."""
    timers = [
        thread
        for thread in threading.enumerate()
        if isinstance(thread, threading.Timer)
        and getattr(thread.function, "__module__", "").startswith("snakemake.")  # not another library's
    ]
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


def private_metadata_records() -> None:
    """Snakemake writes each record and then chmods it to the `mode` its writer defaults to (0660);
    0600 instead. Where a later Snakemake no longer has that default, nothing is changed (the test
    of a run's file modes then says so)."""
    write = FilePersistence._io_write
    if write.__defaults__ == (SNAKEMAKE_RECORD_MODE,):
        write.__defaults__ = (PRIVATE_RECORD_MODE,)


def main() -> None:
    gc.freeze()  # Snakemake's modules, just imported, are never garbage: no collection walks them again
    private_metadata_records()
    try:
        snakemake_main()  # ends with sys.exit(status)
        status = 0
    except SystemExit as exit_:
        status = exit_status(exit_.code)
    cancel_idle_timers()
    gc.freeze()
    sys.exit(status)


if __name__ == "__main__":
    main()
