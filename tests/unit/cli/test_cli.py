"""The CLI surface (click runner), on hand-made runs."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from conftest import SURVEY_DONE, make_run
from starlette.testclient import TestClient

from lemmata import __version__
from lemmata.cli.main import cli
from lemmata.errors import UserError
from lemmata.run.record import RunLock, validate_session_id


def test_version():
    """The version is the interface's release lemmata implements (the spec's v0.2.0; issue 54)."""
    result = CliRunner().invoke(cli, ["--version"])
    assert (
        result.exit_code == 0 and result.output.strip() == "lemmata, version 0.2.0" == f"lemmata, version {__version__}"
    )


def test_status_lists_runs_and_flags_a_dead_running_run(data_home):
    make_run(data_home, "run-a")
    make_run(data_home, "run-b", status="running")
    result = CliRunner().invoke(cli, ["status"])
    lines = result.output.splitlines()
    assert result.exit_code == 0
    assert lines[0].split()[:2] == ["run-a", "completed"]
    assert lines[1].split()[:2] == ["run-b", "interrupted"]  # nobody holds its lock


def test_status_of_a_run_shows_each_stage(data_home):
    make_run(data_home, "run-a", status="running", **SURVEY_DONE, **{"directions.json": "{}"})
    with RunLock(data_home.run_dir("run-a")):
        result = CliRunner().invoke(cli, ["status", "run-a"])
    assert result.exit_code == 0
    stage_lines, file_lines = result.output.split("\nfiles:\n")
    states = {line.split()[0]: line.split()[-2] for line in stage_lines.splitlines()[2:]}
    assert states["survey"] == "done" and states["theory"] == "pending"
    assert "  survey.json " in file_lines and "theory.json" in file_lines
    assert "run run-a: running" in result.output


def test_status_with_no_runs(data_home):
    assert "no runs yet" in CliRunner().invoke(cli, ["status"]).output


@pytest.mark.parametrize("bad", ["../etc", "a/b", "", "-x", "x" * 65, "a b", "run-a\n"])  # "\n": issue 53
def test_invalid_session_ids_are_refused_before_touching_the_disk(data_home, bad):
    with pytest.raises(UserError, match="not a valid session id"):
        validate_session_id(bad)
    if bad:
        result = CliRunner().invoke(cli, ["status", "--", bad])
        assert result.exit_code == 2 and "not a valid session id" in result.output


def test_unknown_session_is_a_clear_error(data_home):
    result = CliRunner().invoke(cli, ["resume", "nope"])
    assert result.exit_code == 2 and "no run 'nope'" in result.output


def test_serve_makes_a_token_when_none_is_set_and_prints_the_page_url_with_it(data_home, monkeypatch):
    import uvicorn

    served = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, **_: served.update(app=app, host=host))
    result = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0", "--port", "9000"])
    assert result.exit_code == 0, result.output
    token = re.search(r"http://127\.0\.0\.1:9000/\?token=(\S+)", result.output).group(1)
    client = TestClient(served["app"], base_url="http://127.0.0.1:9000")
    assert served["host"] == "0.0.0.0" and client.get("/api/runs").status_code == 401
    assert client.get("/api/runs", headers={"authorization": f"Bearer {token}"}).status_code == 200


def test_serve_with_a_token_of_the_environment_requires_it_and_never_prints_it(data_home, monkeypatch):
    import uvicorn

    served = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, **_: served.update(app=app, host=host))
    monkeypatch.setenv("LEMMATA_API_TOKEN", "a-long-random-secret")
    result = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0", "--port", "9000"])
    assert result.exit_code == 0 and "API token required" in result.output
    assert "a-long-random-secret" not in result.output
    client = TestClient(served["app"], base_url="http://127.0.0.1:9000")
    assert served["host"] == "0.0.0.0" and client.get("/api/runs").status_code == 401
    assert client.get("/api/runs", headers={"authorization": "Bearer a-long-random-secret"}).status_code == 200
    assert "LEMMATA_API_TOKEN" not in served["app"].state.supervisor.environ  # the runs it starts never see it


def test_a_domain_that_is_not_one_short_line_is_refused_before_a_run_is_made(data_home):
    result = CliRunner().invoke(cli, ["prove", "x", "--domain", "bandits " * 20])
    assert result.exit_code != 0 and "the domain must be one line of at most 100 characters" in result.output
    assert not (data_home.home / "runs").exists() or not any((data_home.home / "runs").iterdir())


def test_plugins_lists_the_shipped_bandits_plugin_with_what_it_adds():
    result = CliRunner().invoke(cli, ["plugins"])
    assert result.exit_code == 0
    assert "bandits: multi-armed bandits" in result.output
    assert "domains: multi-armed bandits, bandits" in result.output
    assert "skills: 1; sandbox modules: bandit_regret" in result.output
