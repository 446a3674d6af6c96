"""`llm_calls.jsonl`: one JSON record per model call, appended safely by parallel jobs."""

from __future__ import annotations

import fcntl
import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

CALL_LOG_NAME = "llm_calls.jsonl"


@dataclass
class CallRecord:
    """What one call sent and got. `messages` starts with the system prompt; never a secret."""

    role: str
    backend: str
    model: str
    scope: str
    messages: list[dict[str, str]]
    max_tokens: int
    response: str | None
    tokens_in: int | None
    tokens_out: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    latency_s: float
    attempts: int
    error: str | None = None
    #: Why the answer ended: "stop", "length" (cut off at the token limit), "repetition", or None (not said).
    finish_reason: str | None = None
    #: Backend-specific measurements, e.g. the embedded model's seconds and prompt tokens evaluated.
    timings: dict[str, Any] | None = None
    timestamp: float = field(default_factory=time.time)


class Redactor:
    """Replaces credential values in text: a key echoed by a provider or pasted into a task
    must not reach a log, an artifact or an error message."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets = sorted({s for s in secrets if len(s) >= 8}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "[redacted]")
        return text


class CallLog:
    def __init__(self, path: Path, redact: Redactor | None = None) -> None:
        self.path = Path(path)
        self.redact = redact or Redactor()

    def append(self, record: CallRecord) -> None:
        line = self.redact(json.dumps(asdict(record), ensure_ascii=False))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as handle:
            # One lock per line: records from parallel jobs never interleave.
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                handle.write(line + "\n")
                handle.flush()
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def read_call_records(path: Path) -> Iterator[dict[str, Any]]:
    """Yield the records of a call log, skipping a partial last line (a job still writing)."""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.endswith("\n") and line.strip():
                yield json.loads(line)
