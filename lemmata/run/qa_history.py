"""`paper_qa_history.jsonl`: the researcher's conversation about a run's paper.

One JSON record per line, appended whole or not at all under a file lock (`lemmata.jsonl`; a
question asked in the terminal and one asked in the browser may land at once), never rewritten:
the history survives restarts,
resumes and rewrites. Each record says who spoke (`role`), what (`content`), when
(`timestamp`), about which paper version (`paper_version`), and for events a `marker`
(`error`, `rewrite_requested`, `rewrite_saved`, `rewrite_failed`); an answer lists the tool
calls it made.
"""

from __future__ import annotations

import logging
from pathlib import Path

from pydantic import ValidationError

from lemmata import layout
from lemmata.artifacts import ChatRecord
from lemmata.jsonl import append_line
from lemmata.redaction import redact_known

log = logging.getLogger(__name__)


def append_record(run_dir: Path, record: ChatRecord) -> None:
    # Answers are model output and errors may quote a provider's reply: no secret is kept.
    append_line(Path(run_dir) / layout.QA_HISTORY, redact_known(record.model_dump_json()))


def read_history(run_dir: Path) -> list[ChatRecord]:
    """Every readable record, oldest first. A line that is not a record (a crash mid-write, a
    hand edit) is skipped rather than hiding the rest of the conversation."""
    path = Path(run_dir) / layout.QA_HISTORY
    if not path.exists():
        return []
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(ChatRecord.model_validate_json(line))
        except ValidationError:
            log.warning("%s:%d: skipped a line that is not a conversation record", path, number)
    return records
