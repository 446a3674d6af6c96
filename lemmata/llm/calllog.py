"""`llm_calls.jsonl`: one JSON record per model call, appended safely by parallel jobs."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lemmata.jsonl import append_line, read_json_lines
from lemmata.llm.prices import PriceTable
from lemmata.redaction import Redactor, known_secrets


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
    #: USD: the tokens times the model's prices (llm/prices.py); None when not known (a model
    #: without a price, a failed call), 0 on the embedded model and a replay.
    cost_usd: float | None = None


class CallLog:
    def __init__(self, path: Path, redact: Redactor | None = None, prices: PriceTable | None = None) -> None:
        self.path = Path(path)
        self.redact = redact or Redactor(known_secrets)  # default: every secret this process knows
        self.prices = prices  # None: costs are not computed (left as the record has them)

    def append(self, record: CallRecord) -> None:
        if self.prices is not None and record.cost_usd is None and record.error is None:
            record.cost_usd = self.prices.cost(
                record.backend,
                record.model,
                record.tokens_in,
                record.tokens_out,
                record.cache_read_tokens,
                record.cache_write_tokens,
            )
        line = self.redact(json.dumps(asdict(record), ensure_ascii=False))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        append_line(self.path, line)


def call_tokens(record: Mapping[str, Any]) -> tuple[int, int]:
    """(tokens in, tokens out) of a call record; 0 for a count the record does not have (a failed call)."""
    return int(record.get("tokens_in") or 0), int(record.get("tokens_out") or 0)


def read_call_records(path: Path) -> Iterator[dict[str, Any]]:
    """Yield the records of a call log, skipping a partial last line (a job still writing) and,
    with a warning, any line that is not a record (one torn by an older version's failed append)."""
    for _, record in read_json_lines(path):
        yield record
