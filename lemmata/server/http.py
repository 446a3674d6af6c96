"""What every endpoint shares: errors as `{"error": ...}`, the run of the path's id (validated
before the disk is touched), and size-limited JSON bodies sent as JSON."""

from __future__ import annotations

import errno
import json
import logging
from pathlib import Path

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response

from lemmata.errors import LemmataError, UserError
from lemmata.os_errors import describe_os_error, is_environmental
from lemmata.redaction import redact_known
from lemmata.run.record import DataHome

log = logging.getLogger("lemmata.server")
#: A request body larger than this is refused unread (413): bodies are text, not files.
MAX_BODY_BYTES = 64 * 1024
#: How deep a request body's arrays and objects may nest: the API's bodies are 2 deep at most.
MAX_JSON_DEPTH = 32


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


async def refused_file(request: Request, exc: Exception) -> Response:
    """A file the system would not let us read or write (a full disk, a read-only data directory)
    as one line naming it: 507 for a full disk, else 500. An OSError without a file is a bug."""
    assert isinstance(exc, OSError)
    if not is_environmental(exc):
        raise exc
    message = error_text(request, describe_os_error(exc))
    log.error("%s %s: %s", request.method, request.url.path, message)
    status = 507 if exc.errno in (errno.ENOSPC, errno.EDQUOT) else 500
    return JSONResponse({"error": message}, status_code=status)


#: Registered once on the app (Starlette's `exception_handlers`), for every endpoint.
ERROR_HANDLERS = {ApiError: api_error, LemmataError: bad_input, OSError: refused_file}


def error_text(request: Request, exc: Exception | str) -> str:
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
    try:
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_BODY_BYTES:
                raise ApiError(413, f"the request body is larger than {MAX_BODY_BYTES} bytes")
    except ClientDisconnect:  # the client went away mid-body: nobody to answer, nothing to log
        raise ApiError(400, "the client disconnected before sending the whole body") from None
    body = parse_json(raw or b"{}")
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    return body


def parse_json(raw: bytes) -> object:
    """Strict JSON: nested at most MAX_JSON_DEPTH deep (checked before parsing: Python's parser
    recurses, and 30,000 `[` would be a RecursionError), no NaN or Infinity (not JSON, and no
    budget or limit can be either); 400 naming what is wrong."""
    if json_depth(raw) > MAX_JSON_DEPTH:
        raise ApiError(400, f"the request body is nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(
            400, f"the request body is not UTF-8: byte 0x{raw[exc.start]:02X} at offset {exc.start}; send JSON in UTF-8"
        ) from None
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except ValueError as exc:
        detail = f": {exc}" if isinstance(exc, _NotJsonNumber) else ""
        raise ApiError(400, f"the request body is not JSON{detail}") from None
    try:  # an escape such as \ud83d without its partner: a string no file can hold
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        half = exc.object[exc.start]
        raise ApiError(
            400,
            f"the request body is not UTF-8 text: it holds U+{ord(half):04X}, half of a surrogate pair "
            "without its other half (a \\u escape cut in two)",
        ) from None
    return value


class _NotJsonNumber(ValueError):
    pass


def _no_constant(name: str) -> object:
    raise _NotJsonNumber(f"{name} is not a number JSON allows: give a finite number")


def json_depth(raw: bytes) -> int:
    """How deep the arrays and objects of a JSON text nest (brackets inside strings not counted).
    A linear scan, whatever the text is: it runs before the parser."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return deepest


def text_field(body: dict, name: str, meaning: str, required: bool = True) -> str:
    """`body[name]` as text; 400 naming the field when it is missing (if required) or not text."""
    value = body.get(name, None if required else "")
    if not isinstance(value, str):
        raise ApiError(400, f'the body needs "{name}": {meaning}, as text')
    return value
