"""Append-only JSONL logs: whole lines or nothing, and readers that skip what is not a line.

Every JSONL log lemmata appends to (`llm_calls.jsonl`, `paper_qa_history.jsonl`, the workflow's
`logs/events.jsonl`) goes through `append_line`. Parallel jobs append under an exclusive `flock`,
so lines never interleave. A failed write (disk full, a file size limit, a write cut short) is
undone: the file is truncated back to its size before the append, so the next record is never
glued to half of this one. Files written by older versions may still end in such a torn line:
`append_line` starts the new record on a line of its own, and readers skip (and log) any line
that is not JSON.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


class AppendError(OSError):
    """An append failed and was undone: the file is as it was before (its errno is the cause's)."""


def append_line(path: Path, line: str) -> None:
    """Append `line` and a newline to `path` (created if missing), atomically with respect to
    other appenders and to failures; AppendError when it could not be written."""
    if "\n" in line:
        raise ValueError("a JSONL record must be one line")  # a newline inside would split it
    path = Path(path)
    data = (line + "\n").encode("utf-8")
    # Read and write: the last byte is read to tell a torn line of an older version.
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # one appender at a time: also makes the size below exact
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data  # a torn line from an older version: the record gets its own line
        try:
            _write_all(fd, data)
        except OSError as error:
            raise _undo(fd, path, size, error) from error
    finally:
        os.close(fd)  # releases the lock


def _write_all(fd: int, data: bytes) -> None:
    """os.write until all of `data` is written: a write may take only part of it (a signal, a
    size limit reached midway), and the next one then says why."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _undo(fd: int, path: Path, size: int, error: OSError) -> AppendError:
    """Truncate back to `size`; the error to raise, saying whether the file is as it was."""
    reason = error.strerror or str(error)
    try:
        os.ftruncate(fd, size)
    except OSError as truncating:
        return AppendError(
            error.errno,
            f"could not append to {path} ({reason}), nor remove the part written "
            f"({truncating.strerror}): readers skip that partial line",
        )
    return AppendError(error.errno, f"could not append to {path} ({reason}); the file is left as it was")


def read_json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) for each complete line of `path` that is a JSON object. A last line
    without its newline (a job still writing) is left for later; any other line that is not a
    JSON object (a torn record of an older version, a hand edit) is skipped and logged."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.endswith("\n"):
                return
            record = parse_line(line, f"{path}:{number}")
            if record is not None:
                yield number, record


def parse_line(line: str, where: str) -> dict[str, Any] | None:
    """The JSON object on one line, or None (logged, naming `where`) when it is not one; blank
    lines are None quietly."""
    if not line.strip():
        return None
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        log.warning("%s: skipped a line that is not JSON (%s)", where, error.msg)
        return None
    if not isinstance(record, dict):
        log.warning("%s: skipped a line that is not a JSON object", where)
        return None
    return record
