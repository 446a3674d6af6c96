"""A run's live events over HTTP: the workflow's event log (`logs/events.jsonl`, written by our
Snakemake logger plugin) as server-sent events, with the run's status, ending when no process
works on the run any more.

Events: `workflow` (a job event, see `job_event`), `status` (`{"status", "message", "gate"}`,
at the start and on every change), then `end` (`{"status"}`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from lemmata import layout
from lemmata.run.events import TailReader
from lemmata.run.gate_answers import waiting_question
from lemmata.run.gates import GATE_RULES
from lemmata.run.record import live_status, load_record
from lemmata.server.qa_stream import sse

POLL_SECONDS = 0.5


def job_event(entry: dict[str, Any], rules: dict[int, str]) -> dict[str, Any] | None:
    """An event-log line as the browser gets it, or None for Snakemake's chatter (shell commands,
    resource notes, tracebacks: the run's status message says what failed). `rules` remembers
    each job's rule, which Snakemake names only when the job starts. A gate rule's failure is
    the gate closing, not an error: `gate` says so."""
    kind, job = entry.get("event"), entry.get("jobid", entry.get("job_id"))
    at = entry.get("t")
    if kind == "workflow_started":
        return {"event": "workflow_started", "t": at}
    if kind == "progress":
        return {"event": "progress", "t": at, "done": entry.get("done", 0), "total": entry.get("total", 0)}
    if job is None or kind not in ("job_info", "job_finished", "job_error"):
        return None
    if kind == "job_info":
        rules[int(job)] = str(entry.get("rule_name", "?"))
        return {
            "event": "job_started",
            "t": at,
            "job": int(job),
            "rule": rules[int(job)],
            "wildcards": entry.get("wildcards") or {},
        }
    rule = rules.get(int(job), str(entry.get("rule_name", "?")))
    if kind == "job_finished":
        return {"event": "job_finished", "t": at, "job": int(job), "rule": rule}
    return {"event": "job_failed", "t": at, "job": int(job), "rule": rule, "gate": rule in GATE_RULES}


def run_state(run_dir: Path) -> dict[str, object]:
    record = load_record(run_dir)
    status = live_status(run_dir, record)
    return {
        "status": status,
        "message": record.message,
        "gate": waiting_question(run_dir) if status == "waiting" else None,
    }


async def run_events(
    run_dir: Path, working: Callable[[Path], bool], poll_seconds: float = POLL_SECONDS
) -> AsyncIterator[str]:
    """The stream; `working(run_dir)` says whether a process still drives the run."""
    log = TailReader(run_dir / layout.EVENTS)
    rules: dict[int, str] = {}
    last: dict[str, object] | None = None
    while True:
        still_working = working(run_dir)  # asked first: what follows is then all it wrote
        for entry in log.read_new():
            event = job_event(entry, rules)
            if event is not None:
                yield sse("workflow", event)
        state = run_state(run_dir)
        if state != last:
            yield sse("status", state)
            last = state
        if not still_working:
            yield sse("end", {"status": state["status"]})
            return
        await asyncio.sleep(poll_seconds)
