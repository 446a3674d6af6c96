"""`lemmata serve`: decide the server's access (a token made for this start unless
LEMMATA_API_TOKEN gives one, or none with --no-token on loopback), say where to open the page,
and run uvicorn with an access log that does not keep the page URL's token."""

from __future__ import annotations

import logging
import os
import re
import socket
import traceback
from collections.abc import Iterable, Mapping

import click

from lemmata import __version__
from lemmata.errors import UserError
from lemmata.server.access import TOKEN_VARIABLE, ServerAccess, new_token
from lemmata.settings import load_environment

#: The value of a `token` query parameter in a logged request line.
TOKEN_IN_QUERY = re.compile(r"(?<=[?&]token=)[^&\s]*")
#: The status poll's path (GET /api/runs/{id}, with any query), as uvicorn logs it.
STATUS_POLL = re.compile(r"/api/runs/[A-Za-z0-9][A-Za-z0-9_-]{0,63}(?:\?.*)?")


class HidesPageToken(logging.Filter):
    """Blanks `?token=...` in uvicorn's access log: the page is opened with its token in the URL,
    and a log kept in a file (systemd, a batch job's output) must not hold it. uvicorn logs
    the request line as the third argument of its record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and len(record.args) >= 3 and isinstance(record.args[2], str):
            record.args = (*record.args[:2], TOKEN_IN_QUERY.sub("[hidden]", record.args[2]), *record.args[3:])
        return True


class StatusPollsAtDebug(logging.Filter):
    """Successful status polls go to the access log at DEBUG (the spec's rule): every open page
    polls its run every 2.5 s, which at INFO would bury every other line. uvicorn logs a request
    as (client, method, path with query, HTTP version, status)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if not (
            isinstance(args, tuple)
            and len(args) >= 5
            and args[1] == "GET"
            and isinstance(args[2], str)
            and STATUS_POLL.fullmatch(args[2])
            and isinstance(args[4], int)
            and 200 <= args[4] < 300
        ):
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


class RedactsTracebacks(logging.Filter):
    """A bug's traceback in the server log (uvicorn's "Exception in ASGI application") without a
    secret of the server or its runs: a traceback can quote a request's headers or a key."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self.environ = environ

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info or record.exc_text:
            from lemmata.redaction import redact_known

            text = record.exc_text or "".join(traceback.format_exception(*record.exc_info))  # type: ignore[misc]
            record.exc_text, record.exc_info = redact_known(text, self.environ).rstrip(), None
            record.msg, record.args = redact_known(record.getMessage(), self.environ), None
        return True


def server_access(bind: str, port: int, no_token: bool, allow_hosts: Iterable[str]) -> tuple[ServerAccess, bool]:
    """(the access, whether its token was made here: then the URL printed must carry it, the
    only place the researcher can learn it)."""
    configured = load_environment().get(TOKEN_VARIABLE, "").strip()
    if no_token and configured:
        raise UserError(
            f"--no-token, yet {TOKEN_VARIABLE} is set: unset it to serve without a token, or drop "
            "--no-token to require it"
        )
    token = None if no_token else configured or new_token()
    return ServerAccess.for_bind(bind, port, token, allow_hosts), not no_token and not configured


def announcement(access: ServerAccess, token_made_here: bool) -> str:
    """Where to open the page, with the token when it was made here (as Jupyter prints it)."""
    if access.token is None:
        return (
            f"lemmata {__version__}: open {access.page_url}\n(--no-token: every process and user of this "
            "machine can call the API)"
        )
    if token_made_here:
        return (
            f"lemmata {__version__}: open\n\n    {access.page_url}?token={access.token}\n\n(the page keeps "
            "the token; API clients send it as `Authorization: Bearer <token>`; a new token each start, "
            f"unless {TOKEN_VARIABLE} sets one)"
        )
    return (
        f"lemmata {__version__}: open {access.page_url}?token=<{TOKEN_VARIABLE}>, or {access.page_url} and "
        f"give the page the token (API token required: {TOKEN_VARIABLE})"
    )


def check_port_free(bind: str, port: int) -> None:
    """UserError when `bind`:`port` cannot be listened on (another server has it, a name that does
    not resolve), before a URL with a fresh token is printed for a server that will not start."""
    try:
        infos = socket.getaddrinfo(bind or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            probe.bind(address)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise UserError(
            f"cannot listen on {bind}:{port} ({reason}): another server may use that port; "
            "choose another with --port, or stop it"
        ) from None


def serve(bind: str, port: int, no_token: bool, allow_hosts: Iterable[str], log_level: str = "info") -> None:
    access, token_made_here = server_access(bind, port, no_token, allow_hosts)
    check_port_free(bind, port)
    import uvicorn

    from lemmata.server.app import create_app
    from lemmata.server.connections import GuardedH11Protocol, raise_the_open_file_limit

    click.echo(announcement(access, token_made_here), err=True)
    access_log = logging.getLogger("uvicorn.access")
    access_log.addFilter(StatusPollsAtDebug())
    access_log.addFilter(HidesPageToken())
    # The runs it starts (and the model-written code they run) have no use for the API token.
    runs_environment = {name: value for name, value in os.environ.items() if name != TOKEN_VARIABLE}
    for name in ("uvicorn.error", "lemmata.server"):
        logging.getLogger(name).addFilter(RedactsTracebacks(runs_environment))
    # Clients that never finish a request cannot take every descriptor (server/connections.py).
    raise_the_open_file_limit()
    # No colours: the log reaches the terminal through the escaping streams (terminal_text.py),
    # where uvicorn's colour sequences would show as text.
    uvicorn.run(
        create_app(environ=runs_environment, access=access),
        host=bind,
        port=port,
        log_level=log_level,
        use_colors=False,
        http=GuardedH11Protocol,
    )
