"""The CLI surface (click runner) and the status API (Starlette test client), on hand-made runs."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from lemmata import __version__
from lemmata.artifacts import atomic_write_text
from lemmata.cli.main import cli
from lemmata.runs import Layout, RunLock, RunRecord, save_record, validate_session_id
from lemmata.errors import UserError
from lemmata.server.app import create_app


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Layout:
    monkeypatch.setenv("LEMMATA_HOME", str(tmp_path / "home"))
    return Layout(tmp_path / "home")


DECIDED = '{"gate": "g", "approved": true, "decided_by": "automatic"}'
#: The survey's artifact and its two gates' decisions: the survey stage is done.
SURVEY_DONE = {"survey.json": "{}", "gates/survey_papers.json": DECIDED, "gates/survey_review.json": DECIDED}


def make_run(layout: Layout, session_id: str, status: str = "completed", **files: str) -> Path:
    run_dir = layout.run_dir(session_id)
    record = RunRecord(session_id=session_id, mode="prove", task="the sum of two even integers is even",
                       output_dir="/tmp/out", gate_mode="auto", backend="local", status=status)
    save_record(run_dir, record)
    for name, text in files.items():
        atomic_write_text(run_dir / name.replace("__", "/"), text)
    return run_dir


def test_version():
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"lemmata, version {__version__}"


def test_status_lists_runs_and_flags_a_dead_running_run(layout):
    make_run(layout, "run-a")
    make_run(layout, "run-b", status="running")
    result = CliRunner().invoke(cli, ["status"])
    lines = result.output.splitlines()
    assert result.exit_code == 0
    assert lines[0].split()[:2] == ["run-a", "completed"]
    assert lines[1].split()[:2] == ["run-b", "interrupted"]  # nobody holds its lock


def test_status_of_a_run_shows_each_stage(layout):
    make_run(layout, "run-a", status="running", **SURVEY_DONE, **{"directions.json": "{}"})
    with RunLock(layout.run_dir("run-a")):
        result = CliRunner().invoke(cli, ["status", "run-a"])
    assert result.exit_code == 0
    stage_lines, file_lines = result.output.split("\nfiles:\n")
    states = {line.split()[0]: line.split()[-2] for line in stage_lines.splitlines()[2:]}
    assert states["survey"] == "done" and states["theory"] == "pending"
    assert "  survey.json " in file_lines and "theory.json" in file_lines
    assert "run run-a: running" in result.output


def test_status_with_no_runs(layout):
    assert "no runs yet" in CliRunner().invoke(cli, ["status"]).output


@pytest.mark.parametrize("bad", ["../etc", "a/b", "", "-x", "x" * 65, "a b"])
def test_invalid_session_ids_are_refused_before_touching_the_disk(layout, bad):
    with pytest.raises(UserError, match="not a valid session id"):
        validate_session_id(bad)
    if bad:
        result = CliRunner().invoke(cli, ["status", "--", bad])
        assert result.exit_code == 2 and "not a valid session id" in result.output


def test_unknown_session_is_a_clear_error(layout):
    result = CliRunner().invoke(cli, ["resume", "nope"])
    assert result.exit_code == 2 and "no run 'nope'" in result.output


def test_serve_refuses_a_non_loopback_bind(layout):
    result = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0"])
    assert result.exit_code == 2 and "only loopback" in result.output


def test_status_api_lists_and_polls_runs_logging_polls_at_debug(layout, caplog):
    make_run(layout, "run-a", **SURVEY_DONE)
    client = TestClient(create_app(layout))
    assert [r["id"] for r in client.get("/api/runs").json()["runs"]] == ["run-a"]
    with caplog.at_level(logging.DEBUG, logger="lemmata.server"):
        response = client.get("/api/runs/run-a")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "completed" and body["stages"][0] == {
        "stage": "survey", "state": "done", "artifact": "survey.json"}
    assert [r.levelno for r in caplog.records if "status poll" in r.getMessage()] == [logging.DEBUG]


def test_status_api_errors(layout):
    client = TestClient(create_app(layout))
    assert client.get("/api/runs/missing").status_code == 404
    assert client.get("/api/runs/bad%20id").status_code == 404
    make_run(layout, "run-c")
    atomic_write_text(layout.run_dir("run-c") / "run.json", "{not json")
    response = client.get("/api/runs/run-c")
    assert response.status_code == 400 and "run.json is corrupt" in response.json()["error"]


def test_a_rewrite_of_a_run_with_missing_artifacts_is_400_with_a_marker_in_the_chat(layout):
    run_dir = make_run(layout, "run-r", **{"paper_v1.tex": "\\documentclass{article}"})
    response = TestClient(create_app(layout)).post("/api/runs/run-r/rewrite", json={"instructions": "Shorter."})
    assert response.status_code == 400 and "cannot be rewritten" in response.json()["error"]
    assert not (run_dir / "revisions").exists() and (run_dir / "paper_v1.tex").read_text() == "\\documentclass{article}"
    history = TestClient(create_app(layout)).get("/api/runs/run-r/history").json()["records"]
    assert [(r["role"], r["marker"]) for r in history] == [("event", "error")]


@pytest.mark.parametrize("body, status, message", [
    pytest.param(b"{not json", 400, "not JSON", id="not-json"),
    pytest.param(b'["Shorter."]', 400, "JSON object", id="not-an-object"),
    pytest.param(b'{"text": "Shorter."}', 400, '"instructions"', id="no-instructions"),
    pytest.param(b'{"instructions": "   "}', 400, "instructions are empty", id="empty-instructions"),
    pytest.param(b'{"instructions": "' + b"x" * 70_000 + b'"}', 413, "larger than", id="too-large"),
])
def test_a_bad_rewrite_request_is_refused_before_anything_is_written(layout, body, status, message):
    run_dir = make_run(layout, "run-r", **{"paper_v1.tex": "x"})
    response = TestClient(create_app(layout)).post("/api/runs/run-r/rewrite", content=body,
                                                   headers={"content-type": "application/json"})
    assert response.status_code == status and message in response.json()["error"]
    assert not (run_dir / "revisions").exists()


@pytest.mark.parametrize("path", ["/api/runs/..%2F..%2Fetc/rewrite", "/api/runs/%2Fetc%2Fpasswd/history",
                                  "/api/runs/nope/versions", "/api/runs/a%20b/rewrite"])
def test_ids_that_are_not_runs_are_404_and_nothing_outside_the_data_directory_is_read(layout, path):
    client = TestClient(create_app(layout))
    response = client.post(path, json={"instructions": "x"}) if path.endswith("rewrite") else client.get(path)
    assert response.status_code == 404 and "root:" not in response.text


def test_versions_and_history_of_a_run(layout):
    make_run(layout, "run-v", **{"paper_v1.tex": "a", "paper_v1.pdf": "%PDF", "paper_v2.tex": "b",
                                 "rewrite_context_v2.json": "{}"})
    client = TestClient(create_app(layout))
    assert client.get("/api/runs/run-v/versions").json()["versions"] == [
        {"version": 1, "tex": "paper_v1.tex", "pdf": True, "rewrite_context": None},
        {"version": 2, "tex": "paper_v2.tex", "pdf": False, "rewrite_context": True}]
    status = client.get("/api/runs/run-v").json()
    assert status["versions"] == [1, 2] and status["rewrite_in_progress"] is False
    assert client.get("/api/runs/run-v/history").json() == {"records": []}
