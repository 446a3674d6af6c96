"""Another local user against `lemmata serve` (issue 53, item 2), without the token: the token is
checked once a request's headers are complete, so a client that never completes them was never
answered, never timed out and never refused. 1,100 half-sent requests under the common limit of
1,024 open files stopped every legitimate request. Here the real server runs under that limit,
soft and hard, so raising it cannot help: what holds is the deadline for headers and the cap on
connections that have sent none."""

from __future__ import annotations

import resource
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import TEST_API_TOKEN, cli_environment

from lemmata.server.connections import HEADER_SECONDS
from support.fake_search_servers import unused_port
from support.waiting import wait_until

HALF_OPEN = 1_100
OPEN_FILES = 1_024
HALF_A_REQUEST = b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "  # never finished


def limited_to_1024_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES, OPEN_FILES))


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    port, log = unused_port(), tmp_path / "server.log"
    with open(log, "wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "lemmata", "serve", "--port", str(port)],
            env=cli_environment(tmp_path / "home"),
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            preexec_fn=limited_to_1024_files,
        )
    try:
        wait_until(lambda: polled(port, timeout=1) is not None, 30, 0.2, message=lambda: log.read_text())
        yield port, log
    finally:
        process.terminate()
        process.wait(timeout=30)


def polled(port: int, timeout: float = 5) -> float | None:
    """Seconds a legitimate GET /api/runs took, or None when it got no 200."""
    started = time.monotonic()
    try:
        answer = httpx.get(
            f"http://127.0.0.1:{port}/api/runs",
            headers={"Authorization": f"Bearer {TEST_API_TOKEN}"},
            timeout=timeout,
            trust_env=False,
        )
    except httpx.HTTPError:
        return None
    return time.monotonic() - started if answer.status_code == 200 else None


def half_open(port: int, count: int) -> list[socket.socket]:
    sockets = []
    for _ in range(count):
        connection = socket.create_connection(("127.0.0.1", port), timeout=5)
        connection.sendall(HALF_A_REQUEST)
        sockets.append(connection)
    return sockets


def test_half_sent_requests_beyond_the_open_file_limit_stall_no_legitimate_request(server):
    port, log = server
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(limit[0], 4 * HALF_OPEN), limit[1]))  # the attacker's own
    before = log.stat().st_size
    attack = half_open(port, HALF_OPEN)
    try:
        seconds = [polled(port) for _ in range(20)]
    finally:
        for connection in attack:
            connection.close()
    assert None not in seconds, seconds
    assert max(seconds) < 2.0, seconds  # a ceiling against a stall, not a speed target (bench/server_load.py)
    assert log.stat().st_size - before < 100_000  # no line per refused accept


def test_a_connection_that_never_finishes_its_headers_is_closed_at_the_deadline(server):
    port, _ = server
    (connection,) = half_open(port, 1)
    with connection:
        connection.settimeout(HEADER_SECONDS + 10)
        started = time.monotonic()
        assert connection.recv(1024) == b""  # closed by the server, nothing answered
        assert HEADER_SECONDS - 1 < time.monotonic() - started < HEADER_SECONDS + 5
