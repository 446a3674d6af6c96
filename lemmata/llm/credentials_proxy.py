"""Use the login of Anthropic's own CLI (Claude Code) when VENDORA_API_KEY is empty.

The CLI keeps an OAuth token in its credentials file. The Anthropic SDK only knows API keys, so
the `vendora` backend talks to a loopback proxy instead, which swaps the SDK's placeholder key for
the OAuth token. The token is re-read on every request: the CLI refreshes it in place, and a
long run must pick up the new one without a restart. The token never appears in logs or messages.
"""

from __future__ import annotations

import hmac
import http.client
import json
import secrets
import socketserver
import threading
import time
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from lemmata.credentials import oauth_entry
from lemmata.errors import UserError

DEFAULT_UPSTREAM = "https://api.anthropic.com"
OAUTH_BETA = "oauth-2025-04-20"
REFRESH_HINT = "run Claude Code (`claude`) once to refresh its login, or set VENDORA_API_KEY"
HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "trailers",
    "transfer-encoding",
    "upgrade",
    "proxy-connection",
}
# Credentials and routing the proxy sets itself; content-length because the body is re-sent whole.
REPLACED_REQUEST_HEADERS = HOP_BY_HOP | {"x-api-key", "authorization", "host", "content-length"}
CHUNK_SIZE = 64 * 1024
#: The largest request body relayed: the Messages API's own limit (32 MB). A body is held in
#: memory whole before it is sent on, so a larger one is refused unread (413).
MAX_REQUEST_BYTES = 32 * 1024 * 1024
#: Seconds a client may leave the proxy waiting on one socket operation (the request line,
#: headers, body, or taking the answer); then its connection is dropped. The SDK sends its
#: request at once and reads the answer as it comes: only a stalled or hostile client waits.
CLIENT_TIMEOUT = 60.0


def has_cli_credentials(path: Path) -> bool:
    """Whether the file holds a CLI login; expiry is ignored so an expired login still gets its hint."""
    try:
        token = oauth_entry(path).get("accessToken")
    except (OSError, ValueError):
        return False
    return isinstance(token, str) and bool(token)


def read_access_token(path: Path, now: float | None = None) -> str:
    """The OAuth access token from the file, or a UserError that says how to get a valid one."""
    try:
        entry = oauth_entry(path)
    except FileNotFoundError:
        raise UserError(
            f"no Claude Code login found at {path}: log in with `claude` once, or set VENDORA_API_KEY"
        ) from None
    except (OSError, ValueError):  # unreadable, not UTF-8, not JSON, or no claudeAiOauth object
        raise UserError(f"cannot read the Claude Code login in {path}: {REFRESH_HINT}") from None
    token = entry.get("accessToken")
    if not isinstance(token, str) or not token:
        raise UserError(f"the Claude Code login in {path} has no access token: {REFRESH_HINT}")
    expires_ms = entry.get("expiresAt")
    if isinstance(expires_ms, (int, float)) and not isinstance(expires_ms, bool):
        if expires_ms / 1000 <= (time.time() if now is None else now):
            expired = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(expires_ms / 1000))
            raise UserError(f"the Claude Code login in {path} expired at {expired}: {REFRESH_HINT}")
    return token


def _presented_key(incoming: Message) -> str:
    """The key a client sent: as x-api-key, or (as this SDK does) as a bearer token."""
    authorization = incoming.get("Authorization", "")
    bearer = authorization[len("Bearer ") :] if authorization.startswith("Bearer ") else ""
    return incoming.get("x-api-key", "") or bearer


def _upstream_headers(incoming: Message, token: str) -> dict[str, str]:
    """The client's headers without its credentials and hop-by-hop ones, plus the OAuth ones."""
    listed = {name.strip().lower() for name in incoming.get("Connection", "").split(",")}  # also hop-by-hop
    dropped = REPLACED_REQUEST_HEADERS | listed | {"anthropic-beta"}
    headers = {name: value for name, value in incoming.items() if name.lower() not in dropped}
    betas = [beta.strip() for value in incoming.get_all("anthropic-beta", []) for beta in value.split(",")]
    headers["anthropic-beta"] = ",".join([beta for beta in betas if beta and beta != OAUTH_BETA] + [OAUTH_BETA])
    headers["Authorization"] = f"Bearer {token}"
    return headers


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.0"  # one request per connection: a relayed body may end at close

    def setup(self) -> None:
        # StreamRequestHandler.setup applies it to the socket. typeshed declares `timeout` a ClassVar;
        # one value per proxy is set here, on the instance.
        self.timeout = self.server.proxy.client_timeout  # type: ignore[misc]
        super().setup()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Stay quiet: access logs would clutter the run's output."""

    def do_POST(self) -> None:  # every method is relayed the same way
        self._relay()

    do_GET = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_POST

    def _relay(self) -> None:
        proxy = self.server.proxy
        # Any local process can reach a loopback port (other users of a shared node too): only
        # the holder of this proxy's own key may spend the researcher's login. Checked on the
        # headers, before the body: a stranger must not make the proxy read, hold or wait for one.
        if not hmac.compare_digest(_presented_key(self.headers), proxy.client_key):
            return self._send_error(401, "authentication_error", "credentials proxy: wrong or missing client key")
        body = self._read_body()
        if body is None:
            return
        try:
            token = read_access_token(proxy.credentials_path)
        except UserError as exc:
            return self._send_error(401, "authentication_error", str(exc))
        connection = proxy._connect()  # does not connect yet, cannot fail
        try:
            connection.request(
                self.command,
                proxy._prefix + self.path,
                body=body or None,
                headers=_upstream_headers(self.headers, token),
            )
            response = connection.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            connection.close()
            message = f"credentials proxy cannot reach {proxy.upstream_host}: {exc}"
            return self._send_error(502, "api_error", message)  # 5xx: the SDK's caller retries it
        try:
            self.send_response_only(response.status, response.reason)  # upstream's Date and Server follow
            for name, value in response.getheaders():
                if name.lower() not in HOP_BY_HOP:
                    self.send_header(name, value)
            self.end_headers()
            # read1 hands over what has arrived, so server-sent events reach the SDK as they come.
            while chunk := response.read1(CHUNK_SIZE):
                self.wfile.write(chunk)
                self.wfile.flush()
        except (OSError, http.client.HTTPException):
            pass  # either side hung up mid-answer; the SDK sees a cut body and reports it
        finally:
            connection.close()

    def _read_body(self) -> bytes | None:
        """The request body, of the length its Content-Length declares; None once an error is sent
        for a body without one (chunked), with a bad one, or over MAX_REQUEST_BYTES."""
        if self.headers.get("Transfer-Encoding"):
            self._send_error(411, "invalid_request_error", "credentials proxy: send the body with a Content-Length")
            return None
        declared = self.headers.get("Content-Length", "0").strip()
        if not declared.isdigit():
            self._send_error(400, "invalid_request_error", "credentials proxy: the Content-Length is not a number")
            return None
        if int(declared) > MAX_REQUEST_BYTES:
            self._send_error(
                413,
                "request_too_large",
                f"credentials proxy: the request body is larger than {MAX_REQUEST_BYTES} bytes",
            )
            return None
        return self.rfile.read(int(declared))

    def _send_error(self, status: int, kind: str, message: str) -> None:
        """An Anthropic-shaped error, so the SDK raises its usual exception for the status."""
        data = json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass  # the client already gave up


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a stuck upstream call must not keep the process alive
    proxy: CredentialsProxy

    def server_bind(self) -> None:
        """Bind without HTTPServer's getfqdn(), which can wait on a reverse DNS lookup."""
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = "127.0.0.1", int(self.server_address[1])


class CredentialsProxy:
    """Loopback HTTP proxy that adds the CLI's OAuth token to every Anthropic API request."""

    def __init__(
        self,
        credentials_path: Path,
        upstream_base_url: str = DEFAULT_UPSTREAM,
        timeout: float = 600.0,
        client_timeout: float = CLIENT_TIMEOUT,
    ) -> None:
        self.credentials_path = credentials_path
        upstream = urlsplit(upstream_base_url)
        if upstream.scheme not in ("http", "https") or not upstream.hostname:
            raise ValueError(f"upstream_base_url must be an http(s) URL, not {upstream_base_url!r}")
        self._upstream = upstream
        self._prefix = upstream.path.rstrip("/")
        self.upstream_host = upstream.netloc
        self.timeout = timeout  # per socket operation upstream; long streams are fine while bytes flow
        self.client_timeout = client_timeout  # per socket operation with the client
        #: What the SDK must send as its API key; never leaves this process.
        self.client_key = secrets.token_urlsafe(32)
        self._server: _Server | None = None

    def _connect(self) -> http.client.HTTPConnection:
        kind = http.client.HTTPSConnection if self._upstream.scheme == "https" else http.client.HTTPConnection
        return kind(self._upstream.hostname or "", self._upstream.port, timeout=self.timeout)

    def start(self) -> CredentialsProxy:
        """Bind a free port on 127.0.0.1 (never another interface) and serve in a daemon thread."""
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.proxy = self
        # A short poll interval keeps close() quick.
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="credentials-proxy", daemon=True
        ).start()
        return self

    @property
    def base_url(self) -> str:
        """The URL to give the Anthropic SDK as base_url."""
        if self._server is None:
            raise RuntimeError("credentials proxy has not been started")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        """Stop serving and free the port; safe to call twice."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> CredentialsProxy:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()
