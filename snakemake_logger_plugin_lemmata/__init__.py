"""Snakemake logger plugin `lemmata`: job events as JSON lines for lemmata's driver.

Snakemake finds it by module name (`--logger lemmata`). It appends to the file named by
LEMMATA_EVENTS_FILE (whole lines or nothing: `lemmata.jsonl`); the CLI renders progress from it
and the server streams it.
"""

from __future__ import annotations

import json
import os
import time
from logging import LogRecord
from pathlib import Path

from snakemake_interface_logger_plugins.base import LogHandlerBase

from lemmata.jsonl import append_line  # whole lines or nothing, as every lemmata log

#: Record attributes worth keeping, per event; everything else is Snakemake's internal detail.
FIELDS = ("jobid", "job_id", "rule_name", "wildcards", "output", "done", "total", "msg", "name")


class LogHandler(LogHandlerBase):
    def __post_init__(self) -> None:
        self.path = os.environ.get("LEMMATA_EVENTS_FILE", "")

    def emit(self, record: LogRecord) -> None:
        event = getattr(record, "event", None)
        if not self.path or event is None:
            return
        entry = {"t": round(time.time(), 3), "event": str(getattr(event, "value", event))}
        for field in FIELDS:
            value = getattr(record, field, None)
            if value not in (None, "", [], {}):
                entry[field] = _plain(value)
        if entry["event"] == "error" and "msg" not in entry:
            entry["msg"] = record.getMessage()
        append_line(Path(self.path), json.dumps(entry))

    @property
    def writes_to_stream(self) -> bool:
        return False

    @property
    def writes_to_file(self) -> bool:
        # Snakemake would treat us as a logfile handler (baseFilename); we append on our own.
        return False

    @property
    def has_filter(self) -> bool:
        return True

    @property
    def has_formatter(self) -> bool:
        return True

    @property
    def needs_rulegraph(self) -> bool:
        return False


def _plain(value: object) -> object:
    if isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [str(v) for v in value]
    return str(value)
