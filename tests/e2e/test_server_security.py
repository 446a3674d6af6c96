"""Attacks on `lemmata serve` (the real server, a subprocess) by what a web page the researcher
visits, or another user of the machine, could send: no token, a wrong one, a foreign Host (DNS
rebinding), a cross-site "simple" POST that would start a run with `gate: none`, a request the
browser marks cross-site or same-site, JSON sent as text/plain. Each attack isolates one
protection (the others would let it through), so removing that protection fails its test.
What the server must still accept (its own page, a client with the token) is checked beside."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from conftest import cli_environment, make_run
from starlette.testclient import TestClient

from lemmata.cli.main import cli
from lemmata.run.record import DataHome
from support.served import Served, lemmata_serve
from support.waiting import wait_until

#: What a page of another site would have a visitor's browser start: a run nobody reviews.
HOSTILE_RUN = {"mode": "prove", "task": "spend this researcher's model budget", "gate": "none"}
SETTING_CHANGE = {"prover": 1234}


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("security") / "home"
    make_run(DataHome(home), "run-a")
    return home


@pytest.fixture(scope="module")
def guarded(home) -> Iterator[tuple[Served, str]]:
    """(server, the token it printed): `lemmata serve` as a researcher starts it, with no
    LEMMATA_API_TOKEN in its environment."""
    env = {k: v for k, v in cli_environment(home).items() if k != "LEMMATA_API_TOKEN"}
    with lemmata_serve(env, home.parent) as served:
        printed = re.search(re.escape(served.base_url) + r"/\?token=([A-Za-z0-9_-]+)", served.printed())
        assert printed, f"no URL with a token among what the server printed:\n{served.printed()}"
        yield served, printed.group(1)


@pytest.fixture(scope="module")
def tokenless(home) -> Iterator[Served]:
    """`lemmata serve --no-token`: loopback without a token, the setting DNS rebinding and
    cross-site requests aim at."""
    env = {k: v for k, v in cli_environment(home).items() if k != "LEMMATA_API_TOKEN"}
    with lemmata_serve(env, home.parent, "--no-token") as served:
        yield served


@pytest.fixture(autouse=True)
def undo_what_got_through(home) -> Iterator[None]:
    """The data directory as it was after each test: an attack that got through fails its own
    test, not every later one (the servers are shared by the module)."""
    yield
    (home / "settings.json").unlink(missing_ok=True)
    for run_dir in (home / "runs").iterdir():
        if run_dir.name != "run-a":
            shutil.rmtree(run_dir, ignore_errors=True)


def call(served: Served, method: str, path: str, token: str | None = None, **kwargs) -> httpx.Response:
    headers = dict(kwargs.pop("headers", {}))
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.request(method, served.base_url + path, headers=headers, timeout=10, trust_env=False, **kwargs)


def error_of(response: httpx.Response) -> str:
    assert response.headers["content-type"] == "application/json", response.text
    return response.json()["error"]


def nothing_was_changed(home: Path) -> bool:
    """No setting saved and no run besides the hand-made one."""
    return not (home / "settings.json").exists() and [p.name for p in (home / "runs").iterdir()] == ["run-a"]


def test_serve_makes_a_token_of_its_own_prints_the_page_url_with_it_and_the_api_needs_it(guarded):
    served, token = guarded
    assert len(token) >= 40  # secrets.token_urlsafe(32)
    for headers in ({}, {"Authorization": "Bearer not-the-token"}, {"Authorization": token}):
        refused = call(served, "GET", "/api/runs", headers=headers)
        assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
        assert "token printed by `lemmata serve`" in error_of(refused) and token not in refused.text
    in_the_query = call(served, "GET", f"/api/runs?token={token}")  # the URL's token is for the page only
    assert in_the_query.status_code == 401
    assert [r["id"] for r in call(served, "GET", "/api/runs", token).json()["runs"]] == ["run-a"]
    assert call(served, "GET", "/").status_code == 200  # the page carries no data and asks for the token


def test_the_server_log_does_not_keep_the_token_of_the_page_url(guarded):
    served, token = guarded
    assert call(served, "GET", f"/?token={token}").status_code == 200
    assert call(served, "GET", "/api/runs", token).status_code == 200
    assert served.printed().count(token) == 1  # the URL line it printed at the start, not the access log


def test_a_wrong_token_changes_nothing(guarded, home):
    served, _ = guarded
    response = call(served, "PUT", "/api/settings", "a-guessed-token", json=SETTING_CHANGE)
    assert response.status_code == 401 and nothing_was_changed(home)


@pytest.mark.parametrize(
    "host", ["evil.example:{port}", "evil.example", "127.0.0.1.evil.example:{port}", "127.0.0.1:1", ""]
)
def test_a_foreign_host_is_refused_even_with_the_token(guarded, home, host):
    served, token = guarded
    headers = {"Host": host.format(port=served.port)}
    for method, path, body in (
        ("GET", "/api/runs", None),
        ("GET", "/", None),
        ("PUT", "/api/settings", SETTING_CHANGE),
    ):
        response = call(served, method, path, token, headers=headers, json=body)
        assert response.status_code == 403, (method, path, response.text)
        assert "not an address of this server" in error_of(response) and f"127.0.0.1:{served.port}" in error_of(
            response
        )
    assert nothing_was_changed(home)


def test_dns_rebinding_cannot_read_a_server_without_a_token(tokenless):
    """A page of evil.example whose name now resolves to 127.0.0.1 reads with Host evil.example."""
    rebound = call(tokenless, "GET", "/api/runs", headers={"Host": f"evil.example:{tokenless.port}"})
    assert rebound.status_code == 403 and "run-a" not in rebound.text
    for own_name in ("127.0.0.1", "localhost", "[::1]"):
        answered = call(tokenless, "GET", "/api/runs", headers={"Host": f"{own_name}:{tokenless.port}"})
        assert answered.status_code == 200, own_name


def test_a_cross_site_simple_post_cannot_start_a_run(tokenless, guarded, home):
    """A form or fetch() with `mode: no-cors` of another site: text/plain needs no preflight."""
    served, token = guarded
    for server, credential in ((tokenless, None), (served, token)):
        response = call(
            server,
            "POST",
            "/api/runs",
            credential,
            content=json.dumps(HOSTILE_RUN),
            headers={"Content-Type": "text/plain", "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
        )
        assert response.status_code == 403 and "another site" in error_of(response)
    assert nothing_was_changed(home)


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "null",
        "http://127.0.0.1:1",
        "http://localhost:{port}",
        "https://127.0.0.1:{port}.evil.example",
    ],
)
def test_a_state_change_from_another_origin_is_refused_with_the_token_and_json(guarded, home, origin):
    served, token = guarded
    headers = {"Origin": origin.format(port=served.port)}
    for method, path, body in (
        ("PUT", "/api/settings", SETTING_CHANGE),
        ("POST", "/api/runs", HOSTILE_RUN),
        ("POST", "/api/runs/run-a/resume", None),
    ):
        response = call(served, method, path, token, headers=headers, json=body)
        assert response.status_code == 403, (method, path, response.text)
        assert "another site" in error_of(response)
    assert nothing_was_changed(home)


@pytest.mark.parametrize("site", ["cross-site", "same-site"])
def test_a_request_the_browser_marks_as_from_another_site_is_refused(guarded, home, site):
    """same-site: a page on another port of this machine (sites ignore ports) is not this server."""
    served, token = guarded
    response = call(served, "PUT", "/api/settings", token, json=SETTING_CHANGE, headers={"Sec-Fetch-Site": site})
    assert response.status_code == 403 and "another site" in error_of(response)
    assert nothing_was_changed(home)


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None]
)
def test_a_json_body_needs_the_json_content_type(guarded, home, content_type):
    served, token = guarded
    headers = {"Content-Type": content_type} if content_type else {}
    for method, path, body in (("PUT", "/api/settings", SETTING_CHANGE), ("POST", "/api/runs", HOSTILE_RUN)):
        response = call(served, method, path, token, content=json.dumps(body), headers=headers)
        assert response.status_code == 415, (method, path, response.text)
        assert "Content-Type: application/json" in error_of(response)
    assert nothing_was_changed(home)


def test_the_servers_own_page_and_a_client_with_the_token_are_answered(guarded, home):
    """What the page sends (its Origin, same-origin) and what curl sends (neither) pass."""
    served, token = guarded
    own_page = {"Origin": served.base_url, "Sec-Fetch-Site": "same-origin"}
    for headers in (own_page, {}, {"Sec-Fetch-Site": "none"}):
        response = call(served, "PUT", "/api/settings", token, json=SETTING_CHANGE, headers=headers)
        assert response.status_code == 200, (headers, response.text)
    charset = call(
        served,
        "PUT",
        "/api/settings",
        token,
        content=json.dumps(SETTING_CHANGE),
        headers={"Content-Type": "application/json; charset=utf-8"},
    )
    assert charset.status_code == 200 and (home / "settings.json").exists()


@pytest.fixture
def bound(data_home, monkeypatch):
    """`lemmata serve ARGS` up to the app it would serve: (result, app, host)."""
    import uvicorn

    from lemmata.server import serving

    served: dict = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, **_: served.update(app=app, host=host))
    # No socket is opened, so none is probed: 10.1.2.3 is not an address of this machine.
    monkeypatch.setattr(serving, "check_port_free", lambda bind, port: None)

    def serve(*args: str):
        result = CliRunner().invoke(cli, ["serve", *args])
        return result, served.get("app"), served.get("host")

    return serve


def test_no_token_is_for_loopback_only(bound, monkeypatch):
    monkeypatch.delenv("LEMMATA_API_TOKEN", raising=False)
    result, app, _ = bound("--host", "0.0.0.0", "--no-token")
    assert result.exit_code == 2 and app is None
    assert "--no-token is for loopback only" in result.output
    monkeypatch.setenv("LEMMATA_API_TOKEN", "a-long-random-secret")
    result, app, _ = bound("--no-token")
    assert result.exit_code == 2 and app is None and "LEMMATA_API_TOKEN" in result.output


def test_off_loopback_the_bound_address_and_the_allowed_names_are_this_servers_hosts(bound, monkeypatch):
    monkeypatch.setenv("LEMMATA_API_TOKEN", "a-long-random-secret")
    result, app, host = bound("--host", "0.0.0.0", "--port", "9000", "--allow-host", "node7.cluster.example")
    assert result.exit_code == 0 and host == "0.0.0.0", result.output
    authorized = {"authorization": "Bearer a-long-random-secret"}
    for name, status in (
        ("node7.cluster.example:9000", 200),
        ("127.0.0.1:9000", 200),
        ("evil.example:9000", 403),
        ("node7.cluster.example:9001", 403),
    ):
        client = TestClient(app, base_url=f"http://{name}", headers=authorized)
        assert client.get("/api/runs").status_code == status, name
    result, app, _ = bound("--host", "10.1.2.3", "--port", "9000")
    assert TestClient(app, base_url="http://10.1.2.3:9000", headers=authorized).get("/api/runs").status_code == 200


# =========================================================================== the access log


@pytest.mark.parametrize("level, polls_shown", [("info", False), ("debug", True)])
def test_successful_status_polls_are_logged_at_debug_only(home, level: str, polls_shown: bool) -> None:
    """Issue 23: every open page polls GET /api/runs/{id} every 2.5 s; uvicorn's access log showed
    each at INFO. The server's real output: a poll shows only at --log-level debug, as DEBUG;
    other requests and failed polls still show at INFO."""
    env = cli_environment(home)
    with lemmata_serve(env, home.parent, "--log-level", level) as served:
        token = env["LEMMATA_API_TOKEN"]
        for _ in range(3):
            assert call(served, "GET", "/api/runs/run-a", token).status_code == 200
        assert call(served, "GET", "/api/runs", token).status_code == 200
        assert call(served, "GET", "/api/runs/no-such-run", token).status_code == 404
        # The access log is written after the answer: the last request's line says all are there.
        wait_until(lambda: '"GET /api/runs/no-such-run HTTP/1.1" 404' in served.printed(), 10, message=None)
        lines = served.printed().splitlines()
    polls = [line for line in lines if '"GET /api/runs/run-a HTTP/1.1" 200' in line]
    assert len(polls) == (3 if polls_shown else 0), lines
    assert all(line.startswith("DEBUG") for line in polls)
    assert any('"GET /api/runs HTTP/1.1" 200' in line and line.startswith("INFO") for line in lines), lines
    assert any('"GET /api/runs/no-such-run HTTP/1.1" 404' in line and line.startswith("INFO") for line in lines)
