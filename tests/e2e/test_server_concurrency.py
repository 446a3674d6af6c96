"""The real server (`lemmata serve`, a subprocess) under simultaneous requests, on a completed run
made through the real workflow against the fake model and search services."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import TEST_API_TOKEN, local_environment

from lemmata.run.qa_history import read_history
from lemmata.run.record import load_record, save_record
from support.completed_run import copy_completed_home
from support.fake_search_servers import unused_port
from support.waiting import wait_until

INSTRUCTIONS = "Stress the parity argument and name the ideal 2Z explicitly"
REQUESTS = 100
REWRITE_TIMEOUT = 180.0
#: The token cli_environment gives the server, sent as an API client sends it.
AUTHORIZED = {"Authorization": f"Bearer {TEST_API_TOKEN}"}


def processes_of(home: Path) -> dict[int, str]:
    """Live processes whose environment has LEMMATA_HOME=`home`: the server, the rewrite it
    started, its Snakemake workflow and jobs. Command lines by pid."""
    marker, found = f"LEMMATA_HOME={home}".encode(), {}
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            environ = (proc / "environ").read_bytes()
            cmdline = (proc / "cmdline").read_bytes()
            zombie = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:  # ended meanwhile, or not ours
            continue
        if not zombie and marker in environ.split(b"\0"):
            found[int(proc.name)] = cmdline.replace(b"\0", b" ").decode(errors="replace")
    return found


@pytest.fixture
def server(services, completed_home, tmp_path) -> Iterator[tuple[str, Path]]:
    """(base URL, run directory): `lemmata serve` over a copy of the completed data directory.
    Stopped afterwards (SIGTERM: it stops the rewrites it started), and no process of the data
    directory may be left."""
    llm, search = services
    home = tmp_path / "home"
    env = local_environment(home, llm, search)
    run_dir = copy_completed_home(completed_home, home, env)
    save_record(run_dir, load_record(run_dir), output_dir=str(tmp_path / "out"))  # an output folder of its own
    port = unused_port()
    log_path = tmp_path / "server.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "lemmata", "serve", "--port", str(port)],
            env=env,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base_url = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        assert process.poll() is None, f"the server exited:\n{log_path.read_text()}"
        try:
            return httpx.get(f"{base_url}/api/runs", headers=AUTHORIZED, timeout=2, trust_env=False).status_code == 200
        except httpx.TransportError:
            return False

    try:
        wait_until(answers, 60, 0.1, message=lambda: f"the server did not answer within 60 s:\n{log_path.read_text()}")
        yield base_url, run_dir
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        wait_until(lambda: not processes_of(home), 60, 0.2, message=None)
        left = processes_of(home)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert not left, f"processes left after the server stopped: {left}"


def simultaneous_posts(base_url: str, path: str, body: dict, count: int) -> list[httpx.Response]:
    """`count` POSTs, each from its own thread on its own open connection, released together."""
    barrier = threading.Barrier(count)
    answers: list[httpx.Response | BaseException | None] = [None] * count

    def post(i: int) -> None:
        try:
            with httpx.Client(base_url=base_url, headers=AUTHORIZED, timeout=60, trust_env=False) as client:
                client.get("/api/runs")  # the connection is open before the barrier
                barrier.wait(timeout=60)
                answers[i] = client.post(path, json=body)
        except BaseException as exc:  # reported by the caller, not lost in the thread
            answers[i] = exc
            barrier.abort()

    threads = [threading.Thread(target=post, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    failed = [answer for answer in answers if not isinstance(answer, httpx.Response)]
    assert not failed, f"{len(failed)} requests got no answer, e.g. {failed[0]!r}"
    return answers  # type: ignore[return-value]


def latest_log(run_dir: Path) -> str:
    """The end of the run's most recently written log (the rewrite process's output, as a rule)."""
    logs = sorted((run_dir / "logs").glob("*.log"), key=lambda path: path.stat().st_mtime)
    return f"{logs[-1].name}:\n{logs[-1].read_text(errors='replace')[-3000:]}" if logs else "(no log)"


def test_of_100_simultaneous_rewrite_requests_exactly_one_is_accepted(server):
    base_url, run_dir = server
    answers = simultaneous_posts(
        base_url, f"/api/runs/{run_dir.name}/rewrite", {"instructions": INSTRUCTIONS}, REQUESTS
    )

    assert Counter(a.status_code for a in answers) == {202: 1, 409: REQUESTS - 1}
    (accepted,) = [a for a in answers if a.status_code == 202]
    assert accepted.json()["version"] == 2
    for refused in (a for a in answers if a.status_code == 409):
        assert isinstance(refused.json().get("error"), str) and refused.json()["error"]

    statuses: list[dict] = []
    with httpx.Client(base_url=base_url, headers=AUTHORIZED, timeout=30, trust_env=False) as client:

        def rewritten() -> dict | None:
            statuses.append(client.get(f"/api/runs/{run_dir.name}").json())
            done = not statuses[-1]["rewrite_in_progress"] and 2 in statuses[-1]["versions"]
            return statuses[-1] if done else None

        status = wait_until(
            rewritten,
            REWRITE_TIMEOUT,
            0.5,
            message=lambda: (
                f"the rewrite did not finish within {REWRITE_TIMEOUT:.0f} s: {statuses[-1]}\n{latest_log(run_dir)}"
            ),
        )
    assert status["versions"] == [1, 2] and status["status"] == "completed"
    assert sorted(path.name for path in (run_dir / "revisions").iterdir()) == ["v2.json"]
    markers = [record.marker for record in read_history(run_dir) if record.role == "event"]
    assert markers.count("rewrite_requested") == 1
    assert markers == ["rewrite_requested", "rewrite_saved"]
