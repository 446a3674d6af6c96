"""Starlette app: the run list and the status poll, read from run directories."""

from __future__ import annotations

import logging

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from lemmata.errors import LemmataError, UserError
from lemmata.pipeline import stage_states
from lemmata.runs import Layout, RunRecord, live_status, load_record

log = logging.getLogger("lemmata.server")


def _summary(layout: Layout, record: RunRecord) -> dict[str, object]:
    status = live_status(layout.run_dir(record.session_id), record)
    return {"id": record.session_id, "mode": record.mode, "task": record.task, "status": status,
            "message": record.message, "created": record.created, "updated": record.updated}


async def list_runs(request: Request) -> JSONResponse:
    layout: Layout = request.app.state.layout
    return JSONResponse({"runs": [_summary(layout, r) for r in layout.run_records()]})


async def run_status(request: Request) -> JSONResponse:
    layout: Layout = request.app.state.layout
    session_id = request.path_params["id"]
    try:
        run_dir = layout.existing_run_dir(session_id)
        record = load_record(run_dir)
    except UserError as exc:
        return JSONResponse({"error": str(exc)}, status_code=404)
    except LemmataError as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)
    body = _summary(layout, record)
    body["stages"] = [{"stage": s.name, "state": state, "artifact": s.artifact}
                      for s, state in stage_states(run_dir, set(), None)]
    log.debug("status poll %s: %s", session_id, body["status"])
    return JSONResponse(body)


def create_app(layout: Layout | None = None) -> Starlette:
    app = Starlette(routes=[
        Route("/api/runs", list_runs, methods=["GET"]),
        Route("/api/runs/{id}", run_status, methods=["GET"]),
    ])
    app.state.layout = layout or Layout.from_environment()
    return app
