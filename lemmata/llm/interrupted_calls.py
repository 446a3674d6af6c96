"""The answers a killed workflow already got, given again to the jobs that ask for them again.

A job killed part-way (Snakemake SIGKILLed, or the out-of-memory killer) runs again from its start
when the run is resumed, and asks the model what it asked before. Those calls are in
`llm_calls.jsonl` already, and paid for: the driver keeps the records of a killed Snakemake
invocation (run/driver.py; after a crash that killed the driver too, the resuming driver does) in
INTERRUPTED_CALLS, and names the file to the next invocations in VARIABLE. There a client answers a request identical to a kept one (role, scope, model, token
limit, every message) with the kept answer, in the order they were made, instead of calling the
model; the call log keeps one record per call the model answered. Once the workflow completes,
the file goes: later requests (a rewrite, a rework) differ or are meant to be asked anew.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from lemmata.jsonl import append_line, read_json_lines
from lemmata.llm.base import ChatRequest, ChatResponse

VARIABLE = "LEMMATA_INTERRUPTED_CALLS"


def keep_interrupted_calls(path: Path, records: Iterable[Mapping[str, Any]]) -> int:
    """Add the answered calls among `records` (a killed invocation's) to `path`; how many."""
    kept = 0
    for record in records:
        if record.get("response") is not None and not record.get("error"):
            append_line(path, json.dumps(record, ensure_ascii=False))
            kept += 1
    return kept


class InterruptedCalls:
    """The kept answers by request, each given once per process (jobs are this process's threads)."""

    def __init__(self, path: Path) -> None:
        self._answers: dict[str, deque[Mapping[str, Any]]] = {}
        self._lock = threading.Lock()
        for _, record in read_json_lines(path):
            self._answers.setdefault(_key_of_record(record), deque()).append(record)

    def take(self, request: ChatRequest) -> ChatResponse | None:
        """The kept answer to `request`, or None: the model is to be asked."""
        with self._lock:
            kept = self._answers.get(_key_of_request(request))
            record = kept.popleft() if kept else None
        if record is None:
            return None
        return ChatResponse(
            text=str(record["response"]),
            tokens_in=record.get("tokens_in"),
            tokens_out=record.get("tokens_out"),
            finish_reason=record.get("finish_reason"),
        )


_loaded: dict[str, InterruptedCalls] = {}
_loading = threading.Lock()


def interrupted_calls(environ: Mapping[str, str]) -> InterruptedCalls | None:
    """The kept answers VARIABLE names, loaded once per process; None when there are none."""
    name = environ.get(VARIABLE, "")
    if not name or not Path(name).is_file():
        return None
    with _loading:
        if name not in _loaded:
            _loaded[name] = InterruptedCalls(Path(name))
        return _loaded[name]


def _key_of_request(request: ChatRequest) -> str:
    messages = [{"role": "system", "content": request.system}] + [
        {"role": m.role, "content": m.content} for m in request.messages
    ]
    return _key(request.role, request.scope, request.model, request.max_tokens, messages)


def _key_of_record(record: Mapping[str, Any]) -> str:
    return _key(
        record.get("role"), record.get("scope"), record.get("model"), record.get("max_tokens"), record.get("messages")
    )


def _key(role: object, scope: object, model: object, max_tokens: object, messages: object) -> str:
    return json.dumps([role, scope, model, max_tokens, messages], sort_keys=True, ensure_ascii=False)
