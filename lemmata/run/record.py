"""Where runs live, what `run.json` records about each, and the one-process-per-run lock."""

from __future__ import annotations

import fcntl
import os
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TextIO

import yaml
from pydantic import Field

from lemmata import layout
from lemmata.artifacts import Artifact, Mode, read_artifact, write_artifact
from lemmata.errors import ArtifactError, RunBusyError, UserError
from lemmata.home_layout import RUNS
from lemmata.profiles import DEFAULT_PROFILE
from lemmata.settings import Settings, lemmata_home

SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
#: How long a driver waits for the run's lock: long enough for a status probe (is_run_active,
#: which holds it for an instant) to let go, short enough to refuse a busy run at once.
LOCK_PATIENCE_SECONDS = 0.5

RunStatus = Literal["running", "waiting", "paused", "stopped", "failed", "completed"]


class RunRecord(Artifact):
    session_id: str
    mode: Mode
    task: str
    output_dir: str
    gate_mode: Literal["none", "auto", "human"]
    backend: str
    profile: str = DEFAULT_PROFILE  # the Snakemake profile its jobs run under: a shipped name or a folder's path
    created: float = Field(default_factory=time.time)
    updated: float = Field(default_factory=time.time)
    status: RunStatus = "running"
    message: str = ""
    #: The run's limits (issue 26, run/spending/budget.py): it pauses before a stage that would pass one.
    budget_usd: float | None = Field(None, gt=0)
    budget_tokens: int | None = Field(None, gt=0)
    #: The paper version whose delivery to output_dir failed (full disk, read-only): the run is
    #: completed, its paper in the run directory; `lemmata resume` delivers the current version.
    undelivered: int | None = None


@dataclass(frozen=True)
class DataHome:
    """The data directory: `runs/<id>/` (the Snakemake working directory), `sessions/<id>/`."""

    home: Path

    @classmethod
    def from_environment(cls) -> DataHome:
        return cls(lemmata_home())

    def run_dir(self, session_id: str) -> Path:
        return self.home / RUNS / validate_session_id(session_id)

    def existing_run_dir(self, session_id: str) -> Path:
        run_dir = self.run_dir(session_id)
        if not (run_dir / layout.RUN_RECORD).is_file():
            raise UserError(f"no run {session_id!r} in {self.home / RUNS}; `lemmata status` lists the runs")
        return run_dir

    def run_records(self) -> list[RunRecord]:
        """The runs whose record reads; `damaged_runs` says which do not."""
        return self._scan()[0]

    def damaged_runs(self) -> list[DamagedRun]:
        """The runs whose `run.json` cannot be read: listed as damaged, never silently left out."""
        return self._scan()[1]

    def _scan(self) -> tuple[list[RunRecord], list[DamagedRun]]:
        records, damaged = [], []
        for path in sorted((self.home / RUNS).glob(f"*/{layout.RUN_RECORD}")):
            try:
                records.append(read_artifact(path, RunRecord))
            except (ArtifactError, OSError, UnicodeDecodeError, ValueError) as exc:  # not the other runs
                reason = f"{path} cannot be read: {exc.strerror}" if isinstance(exc, OSError) else str(exc)
                if isinstance(exc, UnicodeDecodeError):
                    reason = f"{path} is not UTF-8 text"
                damaged.append(DamagedRun(path.parent.name, reason))
        return sorted(records, key=lambda record: record.created), damaged


@dataclass(frozen=True)
class DamagedRun:
    """A run directory whose record does not read: `why` names the file and what is wrong."""

    session_id: str
    why: str

    @property
    def advice(self) -> str:
        return (
            f"its record {layout.RUN_RECORD} is damaged ({self.why}); the run's other files are kept in its "
            "directory; restore the record from a backup, or move the directory away"
        )


def validate_session_id(session_id: str) -> str:
    if not SESSION_ID.fullmatch(session_id or ""):  # `$` of match() also matches before a final "\n"
        shown = (
            repr(session_id)
            if len(session_id or "") <= 70
            else f"{session_id[:64]!r}... ({len(session_id):,} characters)"
        )
        raise UserError(
            f"{shown} is not a valid session id: use 1-64 letters, digits, '_' or '-', starting with a letter or digit"
        )
    return session_id


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def load_record(run_dir: Path) -> RunRecord:
    return read_artifact(run_dir / layout.RUN_RECORD, RunRecord)


def run_settings(run_dir: Path) -> Settings:
    """The settings the run was started with (its complete workflow config)."""
    config = yaml.safe_load((Path(run_dir) / layout.CONFIG).read_text(encoding="utf-8")) or {}
    return Settings.from_mapping(config)


def save_record(run_dir: Path, record: RunRecord, **changes: object) -> RunRecord:
    updated = record.model_copy(update={**changes, "updated": time.time()})
    write_artifact(run_dir / layout.RUN_RECORD, updated)
    return updated


class RunLock:
    """An exclusive lock on a run directory, held by the one lemmata process driving it."""

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / layout.LOCK
        self._handle: TextIO | None = None

    def __enter__(self) -> RunLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a+")
        if not _lock_within(handle, LOCK_PATIENCE_SECONDS):
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            session = self.path.parent.name
            raise RunBusyError(
                f"run {session} is in progress (pid {holder}); wait for it to finish, "
                f"or watch it with `lemmata status {session}`"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        self._handle = handle
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._handle is not None:
            fcntl.flock(self._handle, fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None


def live_status(run_dir: Path, record: RunRecord) -> str:
    """The recorded status, except that a "running" run whose lock nobody holds was left by a
    process that died: it is "interrupted"."""
    if record.status == "running" and not is_run_active(run_dir):
        return "interrupted"
    return record.status


def is_run_active(run_dir: Path) -> bool:
    """Whether a process holds the run's lock. A probe: it holds the lock for an instant and
    writes nothing (a driver taking the lock meanwhile waits that instant, see RunLock)."""
    path = Path(run_dir) / layout.LOCK
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        return False
    with handle:
        if not _lock_within(handle, 0):
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False


def _lock_within(handle, seconds: float) -> bool:
    """Take the exclusive lock on `handle`, trying for up to `seconds`; False if it stays held."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
