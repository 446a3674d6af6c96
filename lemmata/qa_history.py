"""`paper_qa_history.jsonl`: the researcher's conversation about a run's paper.

One JSON record per line, appended under a file lock (a question asked in the terminal and one
asked in the browser may land at once), never rewritten: the history survives restarts,
resumes and rewrites. Each record says who spoke (`role`), what (`content`), when
(`timestamp`), about which paper version (`paper_version`), and for events a `marker`
(`error`, `rewrite_requested`, `rewrite_saved`, `rewrite_failed`); an answer lists the tool
calls it made.
"""

from __future__ import annotations

import fcntl
import time
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from lemmata.artifacts import Artifact, ToolCallRecord

HISTORY_FILE = "paper_qa_history.jsonl"

#: error: a question got no answer; rewrite_requested / rewrite_saved / rewrite_failed: a rewrite's
#: instructions, the version it saved, or why it failed (the earlier version stays current).
Marker = Literal["", "error", "rewrite_requested", "rewrite_saved", "rewrite_failed"]


class ChatRecord(Artifact):
    role: Literal["user", "assistant", "event"]  # event: a marker, not part of the conversation
    content: str
    timestamp: float = Field(default_factory=time.time)
    paper_version: int = Field(ge=1)
    marker: Marker = ""
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)


def append_record(run_dir: Path, record: ChatRecord) -> None:
    path = Path(run_dir) / HISTORY_FILE
    with open(path, "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            handle.write(record.model_dump_json() + "\n")
            handle.flush()
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def read_history(run_dir: Path) -> list[ChatRecord]:
    """Every readable record, oldest first. A line that is not a record (a crash mid-write, a
    hand edit) is skipped rather than hiding the rest of the conversation."""
    path = Path(run_dir) / HISTORY_FILE
    if not path.exists():
        return []
    records = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            records.append(ChatRecord.model_validate_json(line))
        except ValidationError:
            continue
    return records
