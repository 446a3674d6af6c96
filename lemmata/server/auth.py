"""Bearer-token authentication of the API: required when the server listens beyond loopback,
honoured on loopback when a token is set. The page and its assets carry no data and are served
without it; the page asks for the token when the API answers 401."""

from __future__ import annotations

import hmac
import json

from starlette.types import ASGIApp, Receive, Scope, Send

TOKEN_VARIABLE = "LEMMATA_API_TOKEN"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


class BearerTokenRequired:
    """ASGI middleware: every /api request needs `Authorization: Bearer <token>`, else 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/api/"):
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                body = json.dumps({"error": f"this server needs its API token: send `Authorization: Bearer "
                                            f"<{TOKEN_VARIABLE}>`"}).encode()
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
