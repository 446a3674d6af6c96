"""What every endpoint shares: errors as `{"error": ...}`, the run of the path's id (validated
before the disk is touched), and size-limited JSON bodies sent as JSON."""

from __future__ import annotations

import json
from pathlib import Path

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lemmata.errors import LemmataError, UserError
from lemmata.redaction import redact_known
from lemmata.run.record import DataHome

#: A request body larger than this is refused unread (413): bodies are text, not files.
MAX_BODY_BYTES = 64 * 1024


class ApiError(Exception):
    """An answer other than 200, with its status and a message for the caller."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def api_error(request: Request, exc: Exception) -> Response:
    """An ApiError as `{"error": ...}` with its status."""
    status = exc.status if isinstance(exc, ApiError) else 400
    return JSONResponse({"error": error_text(request, exc)}, status_code=status)


async def bad_input(request: Request, exc: Exception) -> Response:
    """Any other error of ours (bad input, a corrupt run.json) as a 400 `{"error": ...}`; bugs
    stay 500 with their traceback in the server log."""
    return JSONResponse({"error": error_text(request, exc)}, status_code=400)


#: Registered once on the app (Starlette's `exception_handlers`), for every endpoint.
ERROR_HANDLERS = {ApiError: api_error, LemmataError: bad_input}


def error_text(request: Request, exc: Exception) -> str:
    """The message for the caller, without a secret of this server or of the runs it starts."""
    return redact_known(str(exc), request.app.state.environ)


def run_dir_of(request: Request) -> Path:
    """The run directory of the path's id: validated before the disk is touched; 404 if none."""
    data_home: DataHome = request.app.state.data_home
    try:
        return data_home.existing_run_dir(request.path_params["id"])
    except UserError as exc:
        raise ApiError(404, str(exc)) from None


def require_json_content_type(request: Request) -> None:
    """415 unless the body is declared `application/json`. A page of another site can send a
    "simple" cross-site POST (text/plain, a form) without asking the server first; only a JSON
    content type makes the browser ask (a CORS preflight, which this server never grants). So a
    body is parsed as JSON only when it says it is JSON."""
    declared = request.headers.get("content-type", "")
    if declared.split(";", 1)[0].strip().lower() != "application/json":
        raise ApiError(
            415,
            f"send the body as JSON with `Content-Type: application/json` "
            f"(this request's Content-Type: {declared[:100] or 'none'})",
        )


async def json_body(request: Request) -> dict:
    """The request's JSON object: declared JSON (415), at most MAX_BODY_BYTES (413), an object (400)."""
    require_json_content_type(request)
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


def text_field(body: dict, name: str, meaning: str, required: bool = True) -> str:
    """`body[name]` as text; 400 naming the field when it is missing (if required) or not text."""
    value = body.get(name, None if required else "")
    if not isinstance(value, str):
        raise ApiError(400, f'the body needs "{name}": {meaning}, as text')
    return value
