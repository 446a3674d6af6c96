"""The processes that drive runs for the server: each a supervised `lemmata resume
--wait-at-gates`, so the workflow never runs inside the server and the server stays responsive.

Every start is decided under one lock: a run has at most one driving process, whoever started
it (this server, or a `lemmata` command in a terminal: the run's lock says so). A new run, a
gate decision, a resume and a rewrite are each written down first (run directory, gate answer,
revision request), then the process continues from what is written, exactly as `lemmata resume`
in a terminal would.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from lemmata import layout
from lemmata.errors import RunBusyError
from lemmata.run.pausing import LAUNCHED_AT
from lemmata.run.record import RunLock, is_run_active, load_record
from lemmata.server.http import ApiError

#: The most runs this server drives at once: each is a process with up to 10 jobs of its own, and
#: a run's briefing alone takes a CPU core for seconds; more at once would slow them all, and let
#: anyone with the token start work without end. A run waiting at a gate holds no process.
MAX_DRIVEN_RUNS = 4
#: How long a decision waits for our process that has just stopped the run to exit.
EXIT_GRACE_SECONDS = 5.0
Prepared = TypeVar("Prepared")


class TooManyRuns(ApiError):
    """This server drives MAX_DRIVEN_RUNS runs already: a 429 until one ends."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            429,
            f"this server drives {limit} runs at once already (its limit, MAX_DRIVEN_RUNS): wait until "
            "one finishes or stops at a gate, or pause one, then try again",
        )


class RunConflict(Exception):
    """A process (a rewrite, the run itself) works on this run now, or the run cannot take the
    step now (not waiting at that gate, nothing to resume): a 409."""


@dataclass
class RunSupervisor:
    """The driving processes this server started, by session id; they get `environ` (default:
    the server's environment)."""

    environ: Mapping[str, str] | None = None
    max_runs: int = MAX_DRIVEN_RUNS
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _started_at: dict[str, float] = field(default_factory=dict)  # when each process was started
    _reserved: int = 0  # places held for new runs whose folders are being made

    def reserve(self) -> None:
        """Hold a place for a new run before its folder is made; TooManyRuns when there is none.
        Checked and taken under one lock: of simultaneous starts only as many as there are places
        make a folder (they all passed a check made outside the lock before, issue 53). Each
        reservation ends in `drive(..., reserved=True)` or `release`."""
        with self._lock:
            self.check_capacity()
            self._reserved += 1

    def release(self) -> None:
        """A reservation given back: the new run was refused before its process started."""
        with self._lock:
            self._reserved -= 1

    def drive(self, run_dir: Path, prepare: Callable[[], Prepared], reserved: bool = False) -> Prepared:
        """Run `prepare` (it writes down what the process is to do, or raises RunConflict/UserError)
        under the run's lock, then start the process; RunConflict when a process works on the run.
        `reserved`: a new run drives on the place `reserve` held for it, given back either way."""
        session_id = run_dir.name
        with self._lock:  # one decision at a time: of simultaneous requests exactly one starts
            if reserved:
                self._reserved -= 1  # the place is this run's now, as its process or as nothing
            self._let_a_stopping_process_exit(run_dir)
            if self.working(run_dir):
                raise RunConflict(f"run {session_id} is in progress (a rewrite or the run itself)")
            self.check_capacity()
            try:
                with RunLock(run_dir):
                    prepared = prepare()
            except RunBusyError as error:
                raise RunConflict(str(error)) from None
            (run_dir / layout.SERVER_DRIVES_LOG).parent.mkdir(exist_ok=True)
            with open(run_dir / layout.SERVER_DRIVES_LOG, "ab") as log:
                launched = self._started_at[session_id] = time.time()
                # A pause sent from now on is for this process, even before it has started.
                environ = {**(os.environ if self.environ is None else self.environ), LAUNCHED_AT: repr(launched)}
                self.processes[session_id] = subprocess.Popen(
                    [sys.executable, "-m", "lemmata", "resume", session_id, "--wait-at-gates"],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    env=environ,
                )
            return prepared

    def check_capacity(self) -> None:
        """TooManyRuns when this server's processes and the places held for new runs make
        `max_runs` already. The caller holds the lock."""
        if sum(process.poll() is None for process in self.processes.values()) + self._reserved >= self.max_runs:
            raise TooManyRuns(self.max_runs)

    def _let_a_stopping_process_exit(self, run_dir: Path) -> None:
        """Our process has recorded how it stopped (waiting at a gate, paused, ...) and is exiting:
        a decision sent the moment the page shows that is not refused for the process's last breath."""
        process = self.processes.get(run_dir.name)
        if process is None or process.poll() is not None:
            return
        record = load_record(run_dir)  # written by that process since it started, and not "running"?
        if record.status == "running" or record.updated < self._started_at.get(run_dir.name, float("inf")):
            return
        try:
            process.wait(timeout=EXIT_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            pass

    def started_here(self, session_id: str) -> bool:
        """A process this server started still works on the run."""
        process = self.processes.get(session_id)
        return process is not None and process.poll() is None

    def working(self, run_dir: Path) -> bool:
        """Any process works on the run: one of ours, or a `lemmata` command elsewhere."""
        return self.started_here(run_dir.name) or is_run_active(run_dir)

    def stop_all(self, wait_seconds: float = 10.0) -> None:
        """At server shutdown: each driving process is asked to pause (its running jobs finish);
        they get `wait_seconds` in all, then are left to finish pausing on their own."""
        running = [process for process in self.processes.values() if process.poll() is None]
        for process in running:
            process.terminate()
        deadline = time.monotonic() + wait_seconds
        for process in running:
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                continue
