"""The checks every request passes before any endpoint sees it (ASGI middleware):

1. its Host is one of this server's names (ServerAccess.hosts): a page of evil.example whose
   name was made to resolve to 127.0.0.1 (DNS rebinding) sends `Host: evil.example` and would
   otherwise read the API as its own origin;
2. for /api: no browser says it comes from another site: an `Origin` that is not this server's,
   or `Sec-Fetch-Site` cross-site or same-site (a page on another port of this machine is
   same-site, since sites ignore ports, and is no more trusted than any other page). Reads are
   refused too: nothing but lemmata's own page has a reason to call, and a refused read leaks
   nothing by its timing or size. Clients that are not browsers send neither header;
3. for /api: the bearer token, unless the server runs with `--no-token` (loopback only).

The page and its scripts carry no data and need no token: the page takes it from its URL."""

from __future__ import annotations

import hmac

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from lemmata.server.access import TOKEN_VARIABLE, ServerAccess

#: Sec-Fetch-Site values of a request made by a page that is not this server's own.
OTHER_SITES = ("cross-site", "same-site")


class Refused(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or {}


class RequestGuard:
    """ASGI middleware enforcing `access`; a refusal is `{"error": ...}` saying what to do."""

    def __init__(self, app: ASGIApp, access: ServerAccess) -> None:
        self.app = app
        self.access = access
        self._expected = access.token.encode() if access.token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            try:
                self.check(scope)
            except Refused as refusal:
                response = JSONResponse({"error": str(refusal)}, status_code=refusal.status, headers=refusal.headers)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def check(self, scope: Scope) -> None:
        headers = Headers(scope=scope)
        host = headers.get("host", "").lower()
        if host not in self.access.hosts:
            raise Refused(
                403,
                f"Host {host[:100]!r} is not an address of this server, which answers "
                f"{self.access.described_hosts()}: open {self.access.page_url}, or start "
                "`lemmata serve --allow-host NAME` to reach it by another name",
            )
        if scope["path"].startswith("/api/"):
            self._check_same_origin(headers, host)
            self._check_token(scope)

    def _check_same_origin(self, headers: Headers, host: str) -> None:
        origin = headers.get("origin")
        site = headers.get("sec-fetch-site", "").lower()
        if origin is not None and origin.lower() not in (f"http://{host}", f"https://{host}"):
            sender = f"Origin {origin[:100]!r}"
        elif site in OTHER_SITES:
            sender = f"Sec-Fetch-Site: {site}"
        else:
            return
        raise Refused(
            403,
            f"a page of another site ({sender}) may not call this API: use lemmata's own page at "
            f"{self.access.page_url}, or a client that is not a browser",
        )

    def _check_token(self, scope: Scope) -> None:
        if self._expected is None:
            return
        given = next((value for name, value in scope["headers"] if name == b"authorization"), b"")
        scheme, _, credentials = given.strip().partition(b" ")
        # The scheme is case-insensitive (RFC 7235: `bearer` is `Bearer`); the token is not.
        if scheme.lower() != b"bearer" or not hmac.compare_digest(credentials.strip(), self._expected):
            raise Refused(
                401,
                "this server needs its API token: send `Authorization: Bearer <token>` with the "
                f"token printed by `lemmata serve` (or {TOKEN_VARIABLE}, when set), or open the "
                "page at the URL it printed",
                headers={"www-authenticate": "Bearer"},
            )
