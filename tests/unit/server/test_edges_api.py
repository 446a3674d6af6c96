"""The API's edges (issue 35): values out of range, bodies nested too deep, limits with names, a
client that goes away, the token's scheme in lower case, a damaged run, a disk that refuses.
Each answer is one `{"error": ...}` with a 4xx or a named 5xx, never a traceback's 500."""

from __future__ import annotations

import asyncio
import logging
import shutil
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import TEST_API_TOKEN, api_client, make_run
from starlette.requests import Request

from lemmata.run.create import MAX_TASK_CHARS
from lemmata.server.http import MAX_JSON_DEPTH, ApiError, json_body
from lemmata.settings import MAX_TOKENS_CEILING
from support.fake_search_servers import unused_port


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model nobody answers, without retries: a run a regressed refusal let start ends at once."""
    monkeypatch.setenv("LLM_BACKEND", "local")
    monkeypatch.setenv("LOCAL_LLM_BASE_URL", f"http://127.0.0.1:{unused_port()}/v1")
    monkeypatch.setenv("LLM_RETRY_ATTEMPTS", "0")


@pytest.fixture
def client(data_home):
    with api_client(data_home) as test_client:
        yield test_client


def post_raw(client, path: str, raw: str):
    return client.post(path, content=raw.encode(), headers={"content-type": "application/json"})


@pytest.mark.parametrize("amount", ["NaN", "Infinity", "-Infinity", "1e999", "-1", "0", "1e12"])
def test_a_budget_that_is_no_finite_positive_amount_is_400_and_creates_no_run(data_home, client, amount):
    response = post_raw(client, "/api/runs", f'{{"task": "x", "budget_usd": {amount}}}')
    assert response.status_code == 400, response.text
    assert "budget_usd" in response.json()["error"] or "not a number JSON allows" in response.json()["error"]
    assert client.get("/api/runs").json() == {"runs": []}


def test_a_resume_with_an_infinite_budget_is_400_not_dropped(data_home, client):
    make_run(data_home, "run-p", status="paused")
    response = post_raw(client, "/api/runs/run-p/resume", '{"budget_usd": 1e999}')
    assert response.status_code == 400 and '"budget_usd"' in response.json()["error"]


def test_a_body_nested_30000_deep_is_400_not_a_recursion_error(client):
    response = post_raw(client, "/api/runs", "[" * 30_000)
    assert response.status_code == 400
    assert response.json() == {"error": f"the request body is nested deeper than {MAX_JSON_DEPTH} levels"}


def test_brackets_inside_strings_do_not_count_as_nesting(data_home, client):
    response = post_raw(client, "/api/runs", '{"task": "' + "[" * 100 + '", "gate": "sometimes"}')
    assert response.status_code == 400 and '"gate" must be one of' in response.json()["error"]


def test_a_token_limit_above_its_ceiling_is_refused_and_not_saved(client):
    response = client.put("/api/settings", json={"prover": 10**30})
    assert response.status_code == 400
    assert (
        "MAX_TOKENS_PROVER" in response.json()["error"] and f"at most {MAX_TOKENS_CEILING}" in response.json()["error"]
    )
    prover = next(row for row in client.get("/api/settings").json()["settings"] if row["field"] == "prover")
    assert prover["value"] == prover["default"] and prover["source"] == "default"


def test_a_task_too_long_for_the_briefing_is_400_with_the_reason(data_home, client):
    response = client.post("/api/runs", json={"task": "x" * (MAX_TASK_CHARS + 1)})
    assert response.status_code == 400
    assert f"more than the {MAX_TASK_CHARS:,}" in response.json()["error"] and "embeds" in response.json()["error"]
    assert client.get("/api/runs").json() == {"runs": []}


@pytest.mark.parametrize("control", ["\x00", "\x07", "\x1b[2J"])
def test_a_task_with_control_characters_is_400(data_home, client, control):
    response = client.post("/api/runs", json={"task": f"prove {control} this"})
    assert response.status_code == 400 and "control character" in response.json()["error"]
    assert client.get("/api/runs").json() == {"runs": []}


@pytest.mark.parametrize(
    "body, reason",
    [
        pytest.param(b'{"task": "prove \xff this"}', "is not UTF-8", id="invalid-utf8-body"),
        pytest.param(b'{"task": "prove \\ud83d this"}', "is not UTF-8 text", id="lone-surrogate-escape"),
    ],
)
def test_a_task_that_is_not_utf8_text_is_400_json_and_creates_no_run(data_home, client, body, reason):
    """Issue 53, item 5: a plain-text 500 before, and for the escape an orphan run folder."""
    response = client.post("/api/runs", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400 and response.headers["content-type"].startswith("application/json")
    assert reason in response.json()["error"]
    assert client.get("/api/runs").json() == {"runs": []}
    assert not (data_home.home / "runs").exists() or not any((data_home.home / "runs").iterdir())


def test_the_server_drives_at_most_its_limit_of_runs_at_once(data_home, client, monkeypatch):
    """At the cap, POST /api/runs is 429 with a clear error, and no run directory is made."""
    client.app.state.supervisor.max_runs = 0
    response = client.post("/api/runs", json={"task": "the sum of two even integers is even"})
    assert response.status_code == 429
    assert "MAX_DRIVEN_RUNS" in response.json()["error"]
    assert client.get("/api/runs").json() == {"runs": []}


def test_the_bearer_scheme_is_case_insensitive_the_token_is_not(client):
    for scheme in ("bearer", "BEARER", "Bearer"):
        assert client.get("/api/runs", headers={"Authorization": f"{scheme} {TEST_API_TOKEN}"}).status_code == 200
    assert client.get("/api/runs", headers={"Authorization": f"bearer {TEST_API_TOKEN.upper()}"}).status_code == 401
    assert client.get("/api/runs", headers={"Authorization": f"Basic {TEST_API_TOKEN}"}).status_code == 401
    assert client.get("/api/runs", headers={"Authorization": TEST_API_TOKEN}).status_code == 401


def test_a_run_with_a_corrupt_record_is_listed_as_damaged_naming_the_file(data_home, client):
    make_run(data_home, "run-a")
    broken = make_run(data_home, "run-b") / "run.json"
    broken.write_text('{"session_id": "run-b", "mode"', encoding="utf-8")
    body = client.get("/api/runs").json()
    assert [run["id"] for run in body["runs"]] == ["run-a"]
    [damaged] = body["damaged"]
    assert damaged["id"] == "run-b" and str(broken) in damaged["error"] and "damaged" in damaged["error"]


def test_an_invalid_id_of_5000_characters_is_not_echoed_whole(client):
    response = client.get("/api/runs/" + "a" * 5000 + "!")
    assert response.status_code == 404
    assert len(response.json()["error"]) < 300 and "5,001 characters" in response.json()["error"]


def test_a_client_that_disconnects_mid_body_is_a_400_not_a_traceback():
    """Starlette raises ClientDisconnect from the body's stream: the body read answers it."""
    messages = [
        {"type": "http.request", "body": b'{"task": ', "more_body": True},
        {"type": "http.disconnect"},
    ]

    async def receive():
        return messages.pop(0)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/api/runs",
        "headers": [(b"content-type", b"application/json")],
        "query_string": b"",
    }
    with pytest.raises(ApiError) as refused:
        asyncio.run(json_body(Request(scope, receive)))
    assert refused.value.status == 400 and "disconnected" in str(refused.value)


def test_a_data_directory_that_refuses_writes_is_one_line_naming_it(tmp_path, monkeypatch, caplog):
    """LEMMATA_HOME is a regular file: the start answers 500 with the path and what to do, logged
    as one line, not a traceback."""
    home = tmp_path / "home"
    home.write_text("not a folder")
    monkeypatch.setenv("LEMMATA_HOME", str(home))
    with api_client() as client, caplog.at_level(logging.ERROR, logger="lemmata.server"):
        response = client.post("/api/runs", json={"task": "the sum of two even integers is even"})
    assert response.status_code == 500
    assert str(home) in response.json()["error"] and "not a folder" in response.json()["error"].lower()
    assert "Traceback" not in caplog.text


class ProcessAtWork:
    """Stands in for a driving `lemmata resume`: alive until terminated. The capacity a server
    has is counted in such processes; what they would do is not what these tests look at."""

    def __init__(self, args, **_options) -> None:
        self.args, self.returncode = args, None

    def poll(self):
        return self.returncode

    def terminate(self) -> None:
        self.returncode = -15

    kill = terminate

    def wait(self, timeout=None):
        return self.returncode


TRIALS = 20


def test_simultaneous_starts_make_exactly_as_many_run_folders_as_202_answers(data_home, client, monkeypatch):
    """Issue 53, item 4: capacity was checked before the run's folder was made and enforced only
    after, so 12 simultaneous POST /api/runs under a limit of 4 answered 4 × 202 and 8 × 429 but
    left 12 folders, the refused ones listed as interrupted (and `resume` would start them)."""
    monkeypatch.setenv("LLM_BACKEND", "local")
    monkeypatch.setenv("LOCAL_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setattr("lemmata.server.supervisor.subprocess.Popen", ProcessAtWork)
    supervisor = client.app.state.supervisor
    supervisor.max_runs = 4

    def start(barrier: threading.Barrier, trial: int) -> int:
        barrier.wait(timeout=30)
        return client.post("/api/runs", json={"task": f"trial {trial}: two even integers"}).status_code

    for trial in range(TRIALS):
        barrier = threading.Barrier(12)
        with ThreadPoolExecutor(12) as pool:
            statuses = Counter(pool.map(start, [barrier] * 12, [trial] * 12))
        folders = [path for path in (data_home.home / "runs").iterdir() if path.is_dir()]
        assert statuses == {202: 4, 429: 8} and len(folders) == 4, (trial, statuses, len(folders))
        for process in supervisor.processes.values():
            process.terminate()
        for folder in folders:
            shutil.rmtree(folder)
