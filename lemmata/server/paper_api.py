"""The paper over HTTP: its versions (.tex and .pdf), the Q&A chat (history, a question
answered as a stream) and rewrites into a new version."""

from __future__ import annotations

import logging
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse

from lemmata import layout
from lemmata.run.chat_intent import revision_instructions
from lemmata.run.qa_history import read_history
from lemmata.run.rewrite import request_rewrite
from lemmata.run.versions import current_paper, paper_versions
from lemmata.server.http import ApiError, json_body, run_dir_of, text_field
from lemmata.server.qa_stream import answer_events
from lemmata.server.supervisor import RunConflict, RunSupervisor

log = logging.getLogger("lemmata.server")
PAPER_FILES = {"paper.tex": ("tex", "text/plain; charset=utf-8"), "paper.pdf": ("pdf", "application/pdf")}


async def chat_history(request: Request) -> JSONResponse:
    run_dir = run_dir_of(request)
    return JSONResponse({"records": [record.model_dump() for record in read_history(run_dir)]})


async def versions(request: Request) -> JSONResponse:
    run_dir = run_dir_of(request)
    base = f"/api/runs/{run_dir.name}/versions"
    return JSONResponse(
        {
            "versions": [
                {
                    "version": n,
                    "tex": layout.paper_tex(n),
                    "pdf": (run_dir / layout.paper_pdf(n)).is_file(),
                    "rewrite_context": (run_dir / layout.rewrite_context(n)).is_file() if n > 1 else None,
                    "tex_url": f"{base}/{n}/paper.tex",
                    "pdf_url": f"{base}/{n}/paper.pdf",
                }
                for n in paper_versions(run_dir)
            ]
        }
    )


async def paper_file(request: Request) -> Response:
    """A version's LaTeX source or PDF (shown inline); 404 when that version has no such file."""
    run_dir = run_dir_of(request)
    version, name = request.path_params["version"], request.path_params["name"]
    if name not in PAPER_FILES:
        raise ApiError(404, f"no {name!r}: a version has paper.tex and paper.pdf")
    suffix, media_type = PAPER_FILES[name]
    path = run_dir / f"paper_v{version}.{suffix}"
    if not path.is_file():
        raise ApiError(404, f"run {run_dir.name} has no paper_v{version}.{suffix}")
    return FileResponse(
        path,
        media_type=media_type,
        filename=path.name,
        content_disposition_type="inline",
        headers={"cache-control": "no-cache"},
    )


async def ask(request: Request) -> Response:
    """A message typed in the chat. A question about the paper: 200 with the answer as
    server-sent events (see qa_stream); 400 for an empty one or a run without a paper, before any
    model call. Revision instructions (run/chat_intent decides): a rewrite, answered as
    POST /rewrite answers (202, 409, 400), the chat marking it."""
    run_dir = run_dir_of(request)
    question = text_field(await json_body(request), "question", "what you want to know about the paper")
    if not question.strip():
        raise ApiError(400, '"question" is empty: say what you want to know about the paper')
    instructions = revision_instructions(question)
    if instructions is not None:
        return await _start_rewrite(request, run_dir, instructions, from_chat=True)
    current_paper(run_dir)  # a run without a paper is a 400 now, not an event later
    return StreamingResponse(
        answer_events(run_dir, question, request.app.state.environ),
        media_type="text/event-stream",
        headers={"cache-control": "no-store"},
    )


async def rewrite(request: Request) -> JSONResponse:
    """202 at once, before any pipeline work; 409 while a rewrite works; 400 when the run's
    artifacts are missing or corrupt (the chat gets an error marker, the paper is unchanged)."""
    run_dir = run_dir_of(request)
    instructions = text_field(await json_body(request), "instructions", "the revision instructions")
    return await _start_rewrite(request, run_dir, instructions, from_chat=False)


async def _start_rewrite(request: Request, run_dir: Path, instructions: str, *, from_chat: bool) -> JSONResponse:
    supervisor: RunSupervisor = request.app.state.supervisor
    try:
        revision = await run_in_threadpool(supervisor.drive, run_dir, lambda: request_rewrite(run_dir, instructions))
    except RunConflict as exc:
        raise ApiError(409, f"{exc}; the earlier rewrite continues") from None
    log.info("rewrite of %s to version %d started", run_dir.name, revision.version)
    return JSONResponse(
        {
            "id": run_dir.name,
            "version": revision.version,
            "status": "rewrite started",
            "instructions": revision.instructions,
            "from_chat": from_chat,
            "poll": f"/api/runs/{run_dir.name}",
        },
        status_code=202,
    )
