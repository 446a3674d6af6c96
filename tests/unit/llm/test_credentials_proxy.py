"""The CLI-login proxy over real sockets: the real Anthropic SDK -> proxy -> fake provider."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anthropic
import pytest
from conftest import write_cli_login

from lemmata.credentials import DEFAULT_CREDENTIALS_FILE, credentials_file
from lemmata.errors import UserError
from lemmata.llm.credentials_proxy import (
    MAX_REQUEST_BYTES,
    OAUTH_BETA,
    CredentialsProxy,
    has_cli_credentials,
    read_access_token,
)
from support.fake_llm_server import FakeLLMServer

TOKEN = "sk-ant-oat01-first-secret-token"
ROLE = {"X-Lemmata-Role": "survey"}
HOUR = 3600.0


def write_login(path: Path, token: str | None = TOKEN, expires_at: float | None = None, **entry: Any) -> Path:
    return write_cli_login(path, token, expires_at, **entry)


@pytest.fixture
def login(tmp_path: Path) -> Path:
    return write_login(tmp_path / ".credentials.json")


@pytest.fixture
def proxy(login: Path, fake_llm: FakeLLMServer) -> Iterator[CredentialsProxy]:
    with CredentialsProxy(login, fake_llm.anthropic_base_url) as started:
        yield started


def sdk(proxy: CredentialsProxy) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=proxy.client_key, base_url=proxy.base_url, max_retries=0, timeout=10)


def ask(proxy: CredentialsProxy, **extra: Any) -> Any:
    return sdk(proxy).messages.create(
        model="claude-fake",
        max_tokens=50,
        extra_headers={**ROLE, **extra},
        messages=[{"role": "user", "content": "hello"}],
    )


def test_request_carries_the_cli_token_instead_of_the_api_key(
    proxy: CredentialsProxy, fake_llm: FakeLLMServer, capfd: pytest.CaptureFixture[str]
) -> None:
    fake_llm.enqueue("survey", "answer through the proxy")
    message = ask(proxy)
    assert capfd.readouterr() == ("", "")  # quiet: no access log, let alone the token
    assert message.content[0].text == "answer through the proxy"
    [request] = fake_llm.calls("survey")
    assert request.path == "/v1/messages"
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["anthropic-beta"] == OAUTH_BETA
    assert "x-api-key" not in request.headers
    assert request.body["messages"] == [{"role": "user", "content": "hello"}]


@pytest.mark.parametrize(
    ("sent", "expected"),
    [
        ("prompt-caching-2024-07-31", f"prompt-caching-2024-07-31,{OAUTH_BETA}"),
        (f"{OAUTH_BETA}, files-api-2025-04-14", f"files-api-2025-04-14,{OAUTH_BETA}"),
    ],
)
def test_existing_beta_header_is_kept_and_extended(
    proxy: CredentialsProxy, fake_llm: FakeLLMServer, sent: str, expected: str
) -> None:
    fake_llm.enqueue("survey", "ok")
    ask(proxy, **{"anthropic-beta": sent})
    assert fake_llm.calls("survey")[0].headers["anthropic-beta"] == expected


def test_token_is_reread_on_every_request(proxy: CredentialsProxy, login: Path, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue("survey", "first", "second")
    assert ask(proxy).content[0].text == "first"
    write_login(login, token="sk-ant-oat01-refreshed-token")
    assert ask(proxy).content[0].text == "second"
    sent = [r.headers["authorization"] for r in fake_llm.calls("survey")]
    assert sent == [f"Bearer {TOKEN}", "Bearer sk-ant-oat01-refreshed-token"]


def test_path_prefix_and_query_reach_the_upstream(login: Path, fake_llm: FakeLLMServer) -> None:
    # The fake only routes /v1/messages, so a prefixed upstream shows up as a recorded 404 path.
    with CredentialsProxy(login, fake_llm.anthropic_base_url + "/prefix/") as proxy:
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(
                urllib.request.Request(f"{proxy.base_url}/v1/models?limit=5", headers={"x-api-key": proxy.client_key}),
                timeout=10,
            )
    caught.value.close()  # an HTTPError holds the response's socket
    assert caught.value.code == 404
    assert fake_llm.requests[0].path == "/prefix/v1/models"


def test_streaming_answer_passes_through(proxy: CredentialsProxy, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue("survey", "a streamed answer in several pieces")
    with sdk(proxy).messages.stream(
        model="claude-fake", max_tokens=50, extra_headers=ROLE, messages=[{"role": "user", "content": "hello"}]
    ) as stream:
        pieces = list(stream.text_stream)
    assert len(pieces) > 1
    assert "".join(pieces) == "a streamed answer in several pieces"
    assert fake_llm.calls("survey")[0].body["stream"] is True


class _HalfStreamHandler(BaseHTTPRequestHandler):
    """Sends one event, then waits until the test has read it through the proxy before finishing."""

    protocol_version = "HTTP/1.0"
    first_seen: threading.Event
    waited_ok: list[bool]

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(b"data: first\n\n")
        self.wfile.flush()
        self.waited_ok.append(self.first_seen.wait(5))
        self.wfile.write(b"data: second\n\n")


def test_stream_chunks_are_relayed_as_they_arrive(login: Path) -> None:
    handler = type("Handler", (_HalfStreamHandler,), {"first_seen": threading.Event(), "waited_ok": []})
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=upstream.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        with CredentialsProxy(login, f"http://127.0.0.1:{upstream.server_address[1]}") as proxy:
            request = urllib.request.Request(
                f"{proxy.base_url}/v1/messages", data=b"{}", method="POST", headers={"x-api-key": proxy.client_key}
            )
            with urllib.request.urlopen(request, timeout=10) as response:
                assert response.readline() == b"data: first\n"
                handler.first_seen.set()
                assert response.read() == b"\ndata: second\n\n"
    finally:
        upstream.shutdown()
        upstream.server_close()
    assert handler.waited_ok == [True]  # the first event arrived before the upstream finished


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "no Claude Code login"),
        ("{not json", "cannot read"),
        ('["a list"]', "cannot read"),
        ('{"claudeAiOauth": "x"}', "cannot read"),
        ('{"claudeAiOauth": {"accessToken": ""}}', "no access token"),
        ('{"claudeAiOauth": {"refreshToken": "r"}}', "no access token"),
    ],
)
def test_unusable_file_is_a_user_error(tmp_path: Path, content: str | None, expected: str) -> None:
    path = tmp_path / ".credentials.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(UserError, match=expected) as caught:
        read_access_token(path)
    assert str(path) in str(caught.value) and "VENDORA_API_KEY" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_expired_token_says_how_to_refresh_without_showing_it(tmp_path: Path) -> None:
    path = write_login(tmp_path / ".credentials.json", expires_at=1_000_000)
    with pytest.raises(UserError, match="expired") as caught:
        read_access_token(path)
    message = str(caught.value)
    assert TOKEN not in message and "refresh" in message and "VENDORA_API_KEY" in message
    assert read_access_token(path, now=999_999.0) == TOKEN  # still valid a second before


def test_valid_token_is_returned(login: Path) -> None:
    assert read_access_token(login) == TOKEN


def test_file_without_expiry_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"claudeAiOauth": {"accessToken": TOKEN}}), encoding="utf-8")
    assert read_access_token(path) == TOKEN


def test_unreadable_login_gives_401_through_the_proxy(
    proxy: CredentialsProxy, login: Path, fake_llm: FakeLLMServer
) -> None:
    login.write_text("{broken", encoding="utf-8")
    with pytest.raises(anthropic.AuthenticationError) as caught:
        ask(proxy)
    assert "cannot read the Claude Code login" in str(caught.value)
    assert fake_llm.requests == []


def test_expired_login_gives_401_without_the_token(proxy: CredentialsProxy, login: Path) -> None:
    write_login(login, expires_at=time.time() - HOUR)
    with pytest.raises(anthropic.AuthenticationError) as caught:
        ask(proxy)
    assert caught.value.status_code == 401
    assert TOKEN not in str(caught.value) and TOKEN not in caught.value.response.text


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_unreachable_upstream_gives_502(login: Path) -> None:
    with CredentialsProxy(login, f"http://127.0.0.1:{closed_port()}") as proxy:
        with pytest.raises(anthropic.InternalServerError) as caught:
            ask(proxy)
    assert caught.value.status_code == 502
    assert caught.value.body["error"]["type"] == "api_error"
    assert TOKEN not in caught.value.response.text


def test_upstream_errors_are_relayed_unchanged(proxy: CredentialsProxy, fake_llm: FakeLLMServer) -> None:
    from support.fake_llm_server import Fault

    fake_llm.inject_fault("survey", Fault(status=529, message="overloaded now"))
    with pytest.raises(anthropic.APIStatusError) as caught:
        ask(proxy)
    assert caught.value.status_code == 529
    assert caught.value.body["error"]["message"] == "overloaded now"


def test_has_cli_credentials(tmp_path: Path, login: Path) -> None:
    assert has_cli_credentials(login)
    assert has_cli_credentials(write_login(tmp_path / "expired.json", expires_at=1.0))  # expiry is reported later
    assert not has_cli_credentials(tmp_path / "missing.json")
    assert not has_cli_credentials(tmp_path)  # a directory
    assert not has_cli_credentials(write_login(tmp_path / "no-token.json", token=None))
    assert not has_cli_credentials(write_login(tmp_path / "empty-token.json", token=""))
    for name, content in {
        "broken": "{",
        "list": "[1]",
        "text": '"x"',
        "oauth-list": '{"claudeAiOauth": []}',
        "not-utf8": b"\xff\xfe{",
    }.items():
        path = tmp_path / f"{name}.json"
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        assert not has_cli_credentials(path), name


def test_credentials_file_defaults_to_the_cli_login(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert credentials_file("") == tmp_path / ".claude" / ".credentials.json"
    assert credentials_file("") == DEFAULT_CREDENTIALS_FILE.expanduser()
    assert credentials_file("~/elsewhere.json") == tmp_path / "elsewhere.json"
    assert credentials_file("/abs/c.json") == Path("/abs/c.json")


def test_proxy_binds_loopback_only(proxy: CredentialsProxy) -> None:
    assert proxy.base_url.startswith("http://127.0.0.1:")
    assert proxy._server is not None and proxy._server.server_address[0] == "127.0.0.1"


def test_close_frees_the_port_and_is_idempotent(login: Path) -> None:
    proxy = CredentialsProxy(login).start()
    port = int(proxy.base_url.rsplit(":", 1)[1])
    proxy.close()
    proxy.close()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_upstream_must_be_an_http_url(login: Path) -> None:
    with pytest.raises(ValueError, match="http"):
        CredentialsProxy(login, "ftp://example.com")


def test_a_caller_without_the_proxy_key_is_refused(fake_llm: FakeLLMServer, login: Path) -> None:
    """Another local process (another user of a shared node) must not spend the researcher's login."""
    with CredentialsProxy(login, fake_llm.anthropic_base_url) as proxy:
        stranger = anthropic.Anthropic(api_key="guessed-key", base_url=proxy.base_url, max_retries=0, timeout=10)
        with pytest.raises(anthropic.AuthenticationError):
            stranger.messages.create(
                model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}], extra_headers=ROLE
            )
    assert fake_llm.calls("survey") == []


@dataclass(frozen=True)
class Exchange:
    """What came back on a raw socket, whether the proxy closed the connection (not our wait
    running out), and after how long."""

    received: bytes
    closed_by_proxy: bool
    seconds: float


def raw_exchange(proxy: CredentialsProxy, sent: bytes, wait: float = 5.0) -> Exchange:
    """`sent` written on a raw socket (requests no HTTP client would send), then read until the
    proxy closes the connection or `wait` s pass."""
    host, port = proxy.base_url.removeprefix("http://").split(":")
    began = time.monotonic()
    received, closed = b"", False
    with socket.create_connection((host, int(port)), timeout=wait) as connection:
        connection.sendall(sent)
        try:
            while chunk := connection.recv(65536):
                received += chunk
            closed = True
        except TimeoutError:
            pass
    return Exchange(received, closed, time.monotonic() - began)


def request_head(key: str, *headers: str) -> bytes:
    lines = ["POST /v1/messages HTTP/1.1", "Host: 127.0.0.1", f"x-api-key: {key}", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def test_a_caller_without_the_key_is_refused_before_its_body_is_read(
    proxy: CredentialsProxy, fake_llm: FakeLLMServer
) -> None:
    """A stranger announcing 10 GB (and sending none of it) gets its 401 at once: the proxy
    neither reads nor waits for a body it would throw away."""
    # A proxy that waited for the body would answer nothing before its client timeout, longer than our wait.
    assert proxy.client_timeout > 5
    exchange = raw_exchange(proxy, request_head("guessed-key", "Content-Length: 10000000000"), wait=5)
    assert exchange.received.startswith(b"HTTP/1.0 401 ") and exchange.closed_by_proxy, exchange
    assert b"wrong or missing client key" in exchange.received and fake_llm.calls("survey") == []


@pytest.mark.parametrize(
    ("header", "status"),
    [
        pytest.param(f"Content-Length: {MAX_REQUEST_BYTES + 1}", b"413", id="over-the-cap"),
        pytest.param("Content-Length: 12abc", b"400", id="not-a-number"),
        pytest.param("Transfer-Encoding: chunked", b"411", id="no-length"),
    ],
)
def test_a_body_the_proxy_cannot_size_or_will_not_hold_is_refused_unread(
    proxy: CredentialsProxy, fake_llm: FakeLLMServer, header: str, status: bytes
) -> None:
    assert proxy.client_timeout > 5  # waiting for the body, it would answer nothing within our wait
    exchange = raw_exchange(proxy, request_head(proxy.client_key, header, "X-Lemmata-Role: survey"), wait=5)
    assert exchange.received.startswith(b"HTTP/1.0 " + status + b" ") and exchange.closed_by_proxy, exchange
    assert fake_llm.calls("survey") == []


@pytest.mark.parametrize(
    "sent",
    [
        pytest.param(b"POST /v1/messages HTTP/1.1\r\n", id="headers-never-end"),
        pytest.param(None, id="body-never-comes"),
    ],
)
def test_a_client_that_stalls_is_dropped_after_the_client_timeout(
    login: Path, fake_llm: FakeLLMServer, sent: bytes | None
) -> None:
    with CredentialsProxy(login, fake_llm.anthropic_base_url, client_timeout=0.5) as proxy:
        head = sent or request_head(proxy.client_key, "Content-Length: 100", "X-Lemmata-Role: survey") + b'{"mod'
        exchange = raw_exchange(proxy, head, wait=10)
    # Dropped by the proxy (not our 10 s wait running out), and not before its timeout.
    assert exchange.received == b"" and exchange.closed_by_proxy and exchange.seconds > 0.4, exchange
    assert fake_llm.calls("survey") == []
