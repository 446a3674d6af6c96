"""The Starlette app: the HTTP API over run directories (runs, gates, the paper, its Q&A and
rewrites, settings) and the browser UI's page. Nothing here runs the workflow: processes the
RunSupervisor starts do."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from lemmata.errors import SettingsError
from lemmata.run.record import DataHome
from lemmata.server import paper_api, runs_api
from lemmata.server.access import ServerAccess
from lemmata.server.calibrations import CalibrationRunner, checking_models
from lemmata.server.connections import AcceptErrorsRateLimited
from lemmata.server.guard import RequestGuard
from lemmata.server.http import ERROR_HANDLERS, ApiError, json_body
from lemmata.server.openapi import openapi_document
from lemmata.server.settings_tab import save_token_limits, token_limits
from lemmata.server.supervisor import RunSupervisor

STATIC = Path(__file__).parent / "static"
#: The page loads only its own scripts and styles, and shows PDFs from the API (or, behind a
#: token, from blob: copies): model-written text it displays can never run as code.
PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "frame-src 'self' blob:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


async def page(request: Request) -> FileResponse:
    # no-referrer: the page is opened with its token in the URL (?token=); no request it makes
    # may carry that URL along before the page takes the token out of the address bar.
    return FileResponse(
        STATIC / "index.html",
        headers={
            "cache-control": "no-cache",
            "content-security-policy": PAGE_POLICY,
            "x-content-type-options": "nosniff",
            "referrer-policy": "no-referrer",
        },
    )


async def openapi(request: Request) -> JSONResponse:
    return JSONResponse(openapi_document())


async def get_settings(request: Request) -> JSONResponse:
    return JSONResponse({"settings": token_limits(request.app.state.environ)})


async def put_settings(request: Request) -> JSONResponse:
    body = await json_body(request)
    try:
        save_token_limits(body, request.app.state.environ)
    except SettingsError as error:
        raise ApiError(400, str(error)) from None
    return JSONResponse({"settings": token_limits(request.app.state.environ)})


async def get_calibrations(request: Request) -> JSONResponse:
    return JSONResponse(_calibrations(request))


async def start_calibration(request: Request) -> JSONResponse:
    """Measure a backend's checking model (`lemmata calibrate --yes` in a process of its own)."""
    body = await json_body(request)
    backend = body.get("backend")
    if not isinstance(backend, str) or set(body) != {"backend"}:
        raise ApiError(400, 'the body is {"backend": NAME}: the backend whose checking model to measure')
    request.app.state.calibrations.start(backend, request.app.state.data_home.home)
    return JSONResponse(_calibrations(request), status_code=202)


def _calibrations(request: Request) -> dict:
    runner = request.app.state.calibrations
    models = checking_models(request.app.state.environ, request.app.state.data_home.home, runner)
    return {"models": models, "running": runner.running()}


async def no_such_endpoint(request: Request, exc: Exception) -> JSONResponse:
    """Starlette's own 404/405 (no route; a method the route lacks) as our `{"error": ...}`."""
    assert isinstance(exc, HTTPException)  # registered for the status codes only Starlette raises
    return JSONResponse(
        {
            "error": f"{exc.detail}: {request.method} {request.url.path}; the endpoints are described "
            "at /api/openapi.json"
        },
        status_code=exc.status_code,
    )


def _stops_drives_at_shutdown(supervisor: RunSupervisor, calibrations: CalibrationRunner):
    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        asyncio.get_running_loop().set_exception_handler(AcceptErrorsRateLimited())
        yield
        supervisor.stop_all()
        calibrations.stop()

    return lifespan


ROUTES = [
    Route("/api/runs", runs_api.list_runs, methods=["GET"]),
    Route("/api/runs", runs_api.start_run, methods=["POST"]),
    Route("/api/runs/{id}", runs_api.run_status, methods=["GET"]),
    Route("/api/runs/{id}/gates/{gate}", runs_api.decide_gate, methods=["POST"]),
    Route("/api/runs/{id}/pause", runs_api.pause, methods=["POST"]),
    Route("/api/runs/{id}/resume", runs_api.resume, methods=["POST"]),
    Route("/api/runs/{id}/events", runs_api.events, methods=["GET"]),
    Route("/api/runs/{id}/lemma-graph.svg", runs_api.lemma_graph, methods=["GET"]),
    Route("/api/runs/{id}/history", paper_api.chat_history, methods=["GET"]),
    Route("/api/runs/{id}/versions", paper_api.versions, methods=["GET"]),
    Route("/api/runs/{id}/versions/{version:int}/{name}", paper_api.paper_file, methods=["GET"]),
    Route("/api/runs/{id}/ask", paper_api.ask, methods=["POST"]),
    Route("/api/runs/{id}/rewrite", paper_api.rewrite, methods=["POST"]),
    Route("/api/settings", get_settings, methods=["GET"]),
    Route("/api/settings", put_settings, methods=["PUT"]),
    Route("/api/calibrations", get_calibrations, methods=["GET"]),
    Route("/api/calibrations", start_calibration, methods=["POST"]),
    Route("/api/openapi.json", openapi, methods=["GET"]),
    Route("/", page, methods=["GET"]),
    Mount("/static", StaticFiles(directory=STATIC, check_dir=False), name="static"),
]


def create_app(
    data_home: DataHome | None = None, environ: Mapping[str, str] | None = None, *, access: ServerAccess
) -> Starlette:
    """The app over `data_home` (default: $LEMMATA_HOME); the processes it starts get `environ`
    (default: the server's). `access` is required: every app answers only its Host names, its
    own page and, unless it is a loopback app without one, the holders of its token."""
    supervisor, calibrations = RunSupervisor(environ), CalibrationRunner(environ)
    app = Starlette(
        routes=ROUTES,
        middleware=[Middleware(RequestGuard, access=access)],
        lifespan=_stops_drives_at_shutdown(supervisor, calibrations),
        exception_handlers={404: no_such_endpoint, 405: no_such_endpoint, **ERROR_HANDLERS},
    )
    app.state.data_home = data_home or DataHome.from_environment()
    app.state.supervisor = supervisor
    app.state.calibrations = calibrations
    app.state.environ = environ
    app.state.live_runs = runs_api.LiveRuns()
    return app
