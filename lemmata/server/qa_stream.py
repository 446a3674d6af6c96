"""A question about the paper over HTTP: the answer as server-sent events while it streams.

Events: `piece` (data: a JSON string, the next piece of the answer), `restart` (the pieces so
far are void: the provider call was retried), then `answer` (the saved history record) or
`error` (`{"error": ...}`; the chat has its error marker). The model call runs in a worker
thread; its pieces cross to the event loop through a queue.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

from lemmata.errors import LemmataError
from lemmata.redaction import redact_known
from lemmata.run.qa import ask_about_paper

_END = object()
log = logging.getLogger("lemmata.server")


def sse(event: str, data: object) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


async def answer_events(run_dir: Path, question: str, environ: Mapping[str, str] | None) -> AsyncIterator[str]:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[object] = asyncio.Queue()

    def put(item: object) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, item)

    def work() -> None:
        try:
            record = ask_about_paper(
                run_dir,
                question,
                on_text=lambda piece: put(("piece", piece)),
                on_restart=lambda: put(("restart", None)),
                environ=environ,
            )
            put(("answer", record.model_dump()))
        except LemmataError as error:
            put(("error", {"error": redact_known(str(error), environ)}))  # the runs' keys
        except Exception as error:  # a bug: the chat still learns that the answer ended unfinished
            log.exception("the answer to a question about %s failed", run_dir.name)
            message = (
                f"the answer failed: {type(error).__name__}: {error}; this is a bug in lemmata (see the server's log)"
            )
            put(("error", {"error": redact_known(message, environ)}))
        finally:
            put(_END)

    worker = loop.run_in_executor(None, work)
    while (item := await queue.get()) is not _END:
        assert isinstance(item, tuple)  # everything put but _END is an (event, data) pair
        event, data = item
        yield sse(event, data)
    await worker
