"""A run's live events over HTTP: the workflow's event log (`logs/events.jsonl`, written by our
Snakemake logger plugin) as server-sent events, with the run's status, ending when no process
works on the run any more.

Events: `workflow` (data: one line of the event log: job_info, job_finished, job_error,
progress, ...), `status` (`{"status", "message", "gate"}`, at the start and on every change),
then `end` (`{"status"}`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from lemmata.events import EVENTS_FILE, TailReader
from lemmata.gate_answers import waiting_question
from lemmata.runs import live_status, load_record
from lemmata.server.qa_stream import sse

POLL_SECONDS = 0.5


def run_state(run_dir: Path) -> dict[str, object]:
    record = load_record(run_dir)
    status = live_status(run_dir, record)
    return {"status": status, "message": record.message,
            "gate": waiting_question(run_dir) if status == "waiting" else None}


async def run_events(run_dir: Path, working: Callable[[Path], bool],
                     poll_seconds: float = POLL_SECONDS) -> AsyncIterator[str]:
    """The stream; `working(run_dir)` says whether a process still drives the run."""
    log = TailReader(run_dir / EVENTS_FILE)
    last: dict[str, object] | None = None
    while True:
        still_working = working(run_dir)  # asked first: what follows is then all it wrote
        for event in log.read_new():
            yield sse("workflow", event)
        state = run_state(run_dir)
        if state != last:
            yield sse("status", state)
            last = state
        if not still_working:
            yield sse("end", {"status": state["status"]})
            return
        await asyncio.sleep(poll_seconds)
