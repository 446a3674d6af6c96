"""The harness of a job on Snakemake's worker threads: jobs share one interpreter (rules/common.smk),
so each gets its own record of itself and must leave the process as it found it.

- Its log records and warnings (`warnings.warn`, made log records of `py.warnings`) go
  to its rule's `log:`, chosen by the thread they come from; records of other threads are not its
  own. An exception that ends the job leaves its traceback there too.
- The working directory, the environment and the signal handlers are the process's, not the
  job's: a job that changes one would change it under every other job. The harness compares them
  before and after; a change is put back and ends the job with a message naming it. (On a worker
  thread Python itself refuses to set a signal handler; the harness compares them where a job can.)
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import traceback
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lemmata.errors import LemmataError
from lemmata.redaction import redact_known

_warnings_captured = threading.Lock()


class ProcessStateChanged(LemmataError):
    """A job changed what all jobs share: a bug of the job's code, said with what it changed."""


class ThreadLogHandler(logging.Handler):
    """Appends the records of one thread to one file, each line stamped and redacted."""

    def __init__(self, path: Path, thread: int) -> None:
        super().__init__(logging.DEBUG)
        self.path = path
        self.thread = thread
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%Y-%m-%d %H:%M:%S"))

    def filter(self, record: logging.LogRecord) -> bool:
        return record.thread == self.thread and super().filter(record)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = redact_known(self.format(record))
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(line + "\n")
        except Exception:  # a log that cannot be written must not end the job (logging's own rule)
            self.handleError(record)


@dataclass(frozen=True)
class ProcessState:
    """What every job of the process shares and none may change."""

    cwd: str
    environ: dict[str, str]
    handlers: dict[int, Any]

    @classmethod
    def now(cls) -> ProcessState:
        """The state as this thread can change it. Only the main thread can set a signal handler
        (Python refuses it on any other): on Snakemake's worker threads they are not the job's to
        change, and Snakemake's own thread does change them while jobs run."""
        handlers = {}
        on_main_thread = threading.current_thread() is threading.main_thread()
        for number in signal.valid_signals() if on_main_thread else ():
            try:
                handlers[int(number)] = signal.getsignal(number)
            except (OSError, ValueError):  # signals the platform cannot report
                continue
        return cls(os.getcwd(), dict(os.environ), handlers)

    def changes_since(self, before: ProcessState) -> list[str]:
        """What changed from `before`, in words (names of variables and signals, never values)."""
        changed = []
        if self.cwd != before.cwd:
            changed.append(f"the working directory (to {self.cwd})")
        names = sorted(
            name
            for name in self.environ.keys() | before.environ.keys()
            if self.environ.get(name) != before.environ.get(name)
        )
        if names:
            changed.append(f"the environment ({', '.join(names)})")
        moved = [
            signal.Signals(number).name
            for number in before.handlers
            if self.handlers.get(number) is not before.handlers[number]
        ]
        if moved:
            changed.append(f"the signal handlers ({', '.join(moved)})")
        return changed

    def restore(self) -> None:
        os.chdir(self.cwd)
        for name in [name for name in os.environ if name not in self.environ]:  # one by one: other
            del os.environ[name]  # jobs read the environment meanwhile, and must never see it empty
        for name, value in self.environ.items():
            if os.environ.get(name) != value:
                os.environ[name] = value
        if threading.current_thread() is threading.main_thread():  # only the main thread may set them
            for number, handler in self.handlers.items():
                if handler is not None and signal.getsignal(number) is not handler:
                    signal.signal(number, handler)


def _log_warning(
    message: Warning | str, category: type[Warning], filename: str, lineno: int, file: Any = None, line: Any = None
) -> None:
    """`warnings.showwarning` as a log record of `py.warnings`, made on the warning's own thread."""
    text = warnings.formatwarning(message, category, filename, lineno, line)
    logging.getLogger("py.warnings").warning("%s", text.rstrip())


def capture_warnings() -> None:
    """Warnings become log records, so that they follow their thread's handler. Set at every job's
    start: whatever restored `warnings.showwarning` since (a `catch_warnings` block ending) is undone.
    Not `logging.captureWarnings`, which installs itself once and then believes it still is."""
    with _warnings_captured:
        if warnings.showwarning is not _log_warning:
            warnings.showwarning = _log_warning


@contextmanager
def job_harness(log_file: Path | None, expected: tuple[type[BaseException], ...] = ()) -> Iterator[None]:
    """Run a job's body with its records going to `log_file`, checking the process state after it.
    An `expected` exception (one the job reports in one line itself) leaves no traceback."""
    before = ProcessState.now()
    handler = ThreadLogHandler(log_file, threading.get_ident()) if log_file is not None else None
    root = logging.getLogger()
    if handler is not None:
        capture_warnings()
        root.addHandler(handler)
    failed = False
    try:
        yield
    except BaseException as error:
        failed = True
        if log_file is not None and not isinstance(error, expected):
            _append(log_file, redact_known(traceback.format_exc()))
        raise
    finally:
        if handler is not None:
            root.removeHandler(handler)
        changed = ProcessState.now().changes_since(before)
        if changed:
            before.restore()
            message = (
                f"the job changed {' and '.join(changed)}, which every job of the run shares "
                "(they run on Snakemake's threads in one process); it was put back. This is a bug of lemmata"
            )
            if log_file is not None:
                _append(log_file, message)
            if not failed:
                raise ProcessStateChanged(message)


def _append(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text if text.endswith("\n") else text + "\n")
