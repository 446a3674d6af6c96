"""The harness of a job on Snakemake's worker threads: jobs share one interpreter (rules/common.smk),
so each gets its own record of itself and must leave the process as it found it.

- Its log records and warnings (`warnings.warn`, made log records of `py.warnings`) go
  to its rule's `log:`, chosen by the thread they come from; records of other threads are not its
  own, but for the helper threads it runs `carried` work on. An exception that ends the job leaves
  its traceback there too.
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lemmata.errors import LemmataError
from lemmata.redaction import redact_known

#: The log file of each job running now, by the thread it runs on.
_job_logs: dict[int, Path] = {}
_installed = threading.Lock()
_previous_showwarning: list[Any] = []  # what showed warnings before install(), for other threads


class ProcessStateChanged(LemmataError):
    """A job changed what all jobs share: a bug of the job's code, said with what it changed."""


class JobLogRouter(logging.Handler):
    """On the root logger, once: a record made on a job's thread is appended to that job's log,
    stamped and redacted. Any other thread's record goes where it went before the harness: to
    Python's last-resort handler (standard error), unless the root logger has handlers of its own."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%Y-%m-%d %H:%M:%S"))

    def emit(self, record: logging.LogRecord) -> None:
        path = _job_logs.get(record.thread or 0)
        if path is None:
            others = [handler for handler in logging.getLogger().handlers if handler is not self]
            last_resort = logging.lastResort
            if not others and last_resort is not None and record.levelno >= last_resort.level:
                last_resort.handle(record)
            return
        try:
            _append(path, redact_known(self.format(record)))
        except Exception:  # a log that cannot be written must not end the job (logging's own rule)
            self.handleError(record)


_router = JobLogRouter()


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
    """`warnings.showwarning` as a log record of `py.warnings` on a job's thread; elsewhere, as before."""
    if threading.get_ident() not in _job_logs and _previous_showwarning:
        _previous_showwarning[0](message, category, filename, lineno, file, line)
        return
    text = warnings.formatwarning(message, category, filename, lineno, line)
    logging.getLogger("py.warnings").warning("%s", text.rstrip())


def install() -> None:
    """The router on the root logger, and warnings made log records. Done at every job's start:
    whatever restored `warnings.showwarning` since (a `catch_warnings` block ending) is undone.
    Not `logging.captureWarnings`, which installs itself once and then believes it still is."""
    with _installed:
        root = logging.getLogger()
        if _router not in root.handlers:
            root.addHandler(_router)
        if warnings.showwarning is not _log_warning:
            _previous_showwarning[:] = [warnings.showwarning]
            warnings.showwarning = _log_warning


def carried(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function`, logging to the calling job's log on whatever thread it runs (a helper thread the
    job starts: the theory's kernel check beside its sketch call); as it is outside a job."""
    log_file = _job_logs.get(threading.get_ident())
    if log_file is None:
        return function

    def on_the_jobs_log(*args: Any, **kwargs: Any) -> Any:
        thread = threading.get_ident()
        _job_logs[thread] = log_file
        try:
            return function(*args, **kwargs)
        finally:
            _job_logs.pop(thread, None)

    return on_the_jobs_log


@contextmanager
def job_harness(log_file: Path | None, expected: tuple[type[BaseException], ...] = ()) -> Iterator[None]:
    """Run a job's body with its records going to `log_file`, checking the process state after it.
    An `expected` exception (one the job reports in one line itself) leaves no traceback."""
    before = ProcessState.now()
    thread = threading.get_ident()
    if log_file is not None:
        install()
        _job_logs[thread] = log_file
    failed = False
    try:
        yield
    except BaseException as error:
        failed = True
        if log_file is not None and not isinstance(error, expected):
            _append(log_file, redact_known(traceback.format_exc()))
        raise
    finally:
        _job_logs.pop(thread, None)
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
