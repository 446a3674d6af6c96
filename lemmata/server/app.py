"""Starlette app: the run list, the status poll, the chat history, paper versions and rewrites,
read from (and, for rewrites, started on) run directories."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from functools import wraps
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from lemmata.errors import LemmataError, UserError
from lemmata.pipeline import stage_states
from lemmata.qa_history import read_history
from lemmata.runs import Layout, RunRecord, live_status, load_record
from lemmata.server.qa_stream import answer_events
from lemmata.server.rewrites import RewriteInProgress, RewriteSupervisor
from lemmata.versions import current_paper, paper_versions

#: A request body larger than this is refused unread (413): instructions are text, not files.
MAX_BODY_BYTES = 64 * 1024

log = logging.getLogger("lemmata.server")


def _summary(layout: Layout, record: RunRecord) -> dict[str, object]:
    status = live_status(layout.run_dir(record.session_id), record)
    return {"id": record.session_id, "mode": record.mode, "task": record.task, "status": status,
            "message": record.message, "created": record.created, "updated": record.updated}


async def list_runs(request: Request) -> JSONResponse:
    layout: Layout = request.app.state.layout
    return JSONResponse({"runs": [_summary(layout, r) for r in layout.run_records()]})


class ApiError(Exception):
    """An answer other than 200, with its status and a message for the caller."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _run_dir(request: Request) -> Path:
    """The run directory of the path's id: validated before the disk is touched; 404 if none."""
    layout: Layout = request.app.state.layout
    try:
        return layout.existing_run_dir(request.path_params["id"])
    except UserError as exc:
        raise ApiError(404, str(exc)) from None


def _errors_as_json(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """Our errors as `{"error": ...}`: ApiError with its status, any other (bad input, a corrupt
    run.json) 400; bugs stay 500 with their traceback in the server log."""

    @wraps(handler)
    async def handle(request: Request) -> Response:
        try:
            return await handler(request)
        except ApiError as exc:
            return JSONResponse({"error": str(exc)}, status_code=exc.status)
        except LemmataError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
    return handle


@_errors_as_json
async def run_status(request: Request) -> JSONResponse:
    run_dir = _run_dir(request)
    record = load_record(run_dir)
    body = _summary(request.app.state.layout, record)
    body["stages"] = [{"stage": s.name, "state": state, "artifact": s.artifact}
                      for s, state in stage_states(run_dir, set(), None)]
    body["versions"] = paper_versions(run_dir)
    body["rewrite_in_progress"] = request.app.state.rewrites.in_progress(run_dir.name)
    log.debug("status poll %s: %s", run_dir.name, body["status"])
    return JSONResponse(body)


@_errors_as_json
async def chat_history(request: Request) -> JSONResponse:
    run_dir = _run_dir(request)
    return JSONResponse({"records": [record.model_dump() for record in read_history(run_dir)]})


@_errors_as_json
async def versions(request: Request) -> JSONResponse:
    run_dir = _run_dir(request)
    return JSONResponse({"versions": [
        {"version": n, "tex": f"paper_v{n}.tex", "pdf": (run_dir / f"paper_v{n}.pdf").is_file(),
         "rewrite_context": (run_dir / f"rewrite_context_v{n}.json").is_file() if n > 1 else None}
        for n in paper_versions(run_dir)]})


async def _json_body(request: Request) -> dict:
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY_BYTES):
        raise ApiError(413, f"the request body is larger than {MAX_BODY_BYTES} bytes")
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY_BYTES:
            raise ApiError(413, f"the request body is larger than {MAX_BODY_BYTES} bytes")
    try:
        body = json.loads(raw or b"{}")
    except ValueError:
        raise ApiError(400, "the request body is not JSON") from None
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    return body


@_errors_as_json
async def ask(request: Request) -> Response:
    """A question about the paper: 200 with the answer as server-sent events (see qa_stream);
    400 for an empty question or a run without a paper, before any model call."""
    run_dir = _run_dir(request)
    body = await _json_body(request)
    question = body.get("question")
    if not isinstance(question, str) or not question.strip():
        raise ApiError(400, 'the body needs "question": what you want to know about the paper, as text')
    current_paper(run_dir)  # a run without a paper is a 400 now, not an event later
    return StreamingResponse(answer_events(run_dir, question, request.app.state.environ),
                             media_type="text/event-stream", headers={"cache-control": "no-store"})


@_errors_as_json
async def rewrite(request: Request) -> JSONResponse:
    """202 at once, before any pipeline work; 409 while a rewrite works; 400 when the run's
    artifacts are missing or corrupt (the chat gets an error marker, the paper is unchanged)."""
    run_dir = _run_dir(request)
    body = await _json_body(request)
    instructions = body.get("instructions")
    if not isinstance(instructions, str):
        raise ApiError(400, 'the body needs "instructions": the revision instructions as text')
    supervisor: RewriteSupervisor = request.app.state.rewrites
    try:
        revision = await run_in_threadpool(supervisor.start, run_dir, instructions)
    except RewriteInProgress as exc:
        raise ApiError(409, f"{exc}; the earlier rewrite continues") from None
    log.info("rewrite of %s to version %d started", run_dir.name, revision.version)
    return JSONResponse({"id": run_dir.name, "version": revision.version, "status": "rewrite started",
                         "poll": f"/api/runs/{run_dir.name}"}, status_code=202)


def _stops_rewrites_at_shutdown(supervisor: RewriteSupervisor):
    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        supervisor.stop_all()
    return lifespan


def create_app(layout: Layout | None = None, environ: Mapping[str, str] | None = None) -> Starlette:
    """The app over `layout` (default: $LEMMATA_HOME); rewrite processes get `environ`."""
    supervisor = RewriteSupervisor(environ)
    app = Starlette(routes=[
        Route("/api/runs", list_runs, methods=["GET"]),
        Route("/api/runs/{id}", run_status, methods=["GET"]),
        Route("/api/runs/{id}/history", chat_history, methods=["GET"]),
        Route("/api/runs/{id}/versions", versions, methods=["GET"]),
        Route("/api/runs/{id}/rewrite", rewrite, methods=["POST"]),
        Route("/api/runs/{id}/ask", ask, methods=["POST"]),
    ], lifespan=_stops_rewrites_at_shutdown(supervisor))
    app.state.layout = layout or Layout.from_environment()
    app.state.rewrites = supervisor
    app.state.environ = environ
    return app
