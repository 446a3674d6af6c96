"""Rewrites started from the HTTP API: accepted at once, made by a supervised `lemmata resume`.

The request is checked and written (`revisions/v<n>.json`, the chat's `rewrite_requested`
marker) under the run's lock, in the server; a `lemmata resume` subprocess then continues that
pending rewrite, exactly as the CLI would, so the workflow never runs inside the server. One
rewrite per run: a second one while the first works is refused, whoever started the first.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from lemmata.artifacts import RevisionRequest
from lemmata.errors import RunBusyError
from lemmata.rewrite import request_rewrite
from lemmata.runs import RunLock, is_run_active

LOG_NAME = "logs/rewrite_requests.log"


class RewriteInProgress(Exception):
    """A rewrite (or the run itself) works on this run now."""


@dataclass
class RewriteSupervisor:
    """The rewrite processes this server started, by session id; they get `environ` (default:
    the server's environment)."""

    environ: Mapping[str, str] | None = None
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self, run_dir: Path, instructions: str) -> RevisionRequest:
        """Check and record the request, start its process; RewriteInProgress, or UserError for
        a request that cannot be made (its marker is in the chat)."""
        session_id = run_dir.name
        with self._lock:  # one decision at a time: of simultaneous requests exactly one starts
            running = self.processes.get(session_id)
            if (running is not None and running.poll() is None) or is_run_active(run_dir):
                raise RewriteInProgress(f"a rewrite or run of {session_id} is in progress")
            try:
                with RunLock(run_dir):
                    request = request_rewrite(run_dir, instructions)
            except RunBusyError as error:
                raise RewriteInProgress(str(error)) from None
            with open(run_dir / LOG_NAME, "ab") as log:
                self.processes[session_id] = subprocess.Popen(
                    [sys.executable, "-m", "lemmata", "resume", session_id], stdin=subprocess.DEVNULL,
                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                    env=dict(self.environ) if self.environ is not None else None)
            return request

    def in_progress(self, session_id: str) -> bool:
        process = self.processes.get(session_id)
        return process is not None and process.poll() is None

    def stop_all(self) -> None:
        """At server shutdown: wait for nothing, leave the runs to `lemmata resume` (they pause)."""
        for process in self.processes.values():
            if process.poll() is None:
                process.terminate()
