"""The HTTP API with the real app (Starlette's test client) on hand-made runs: every endpoint
and status code, ids that are not runs, bodies too large, the token, no secret in an answer.
The same endpoints driving real runs end to end: tests/e2e/test_server_e2e.py."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
import time

import pytest
import yaml
from conftest import DECIDED, SURVEY_DONE, TEST_SERVER, api_client, make_run
from starlette.routing import Mount
from starlette.testclient import TestClient

from lemmata.artifacts import PauseRequest, RevisionRequest, atomic_write_text, read_artifact
from lemmata.run.gate_answers import GateAnswer, answer_path
from lemmata.run.pausing import pause_flag
from lemmata.run.record import RunLock, load_record, save_record
from lemmata.server.access import ServerAccess
from lemmata.server.app import ROUTES, create_app
from lemmata.server.supervisor import EXIT_GRACE_SECONDS, RunConflict, RunSupervisor
from lemmata.settings import Settings
from unit.run.test_cards import THEORY

#: A run waiting at the theory review: everything before it decided, theory.json written.
AT_THEORY_REVIEW = {
    **SURVEY_DONE,
    "directions.json": "{}",
    "gates/direction_review.json": DECIDED,
    "theory.json": THEORY.model_dump_json(),
}


@pytest.fixture
def client(data_home):
    """The app over `data_home`; its processes stopped when the test ends."""
    with api_client(data_home) as test_client:
        yield test_client


def events_of(stream_text: str) -> list[tuple[str, object]]:
    """(event, data) pairs of a server-sent event stream."""
    return [(m.group(1), json.loads(m.group(2))) for m in re.finditer(r"event: (\w+)\ndata: (.*)\n\n", stream_text)]


def test_status_api_lists_and_polls_runs_logging_polls_at_debug(data_home, client, caplog):
    make_run(data_home, "run-a", **SURVEY_DONE)
    assert [r["id"] for r in client.get("/api/runs").json()["runs"]] == ["run-a"]
    with caplog.at_level(logging.DEBUG, logger="lemmata.server"):
        response = client.get("/api/runs/run-a")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "completed" and body["stages"][0] == {
        "stage": "survey",
        "state": "done",
        "artifact": "survey.json",
    }
    assert [r.levelno for r in caplog.records if "status poll" in r.getMessage()] == [logging.DEBUG]


def test_status_api_errors(data_home, client):
    assert client.get("/api/runs/missing").status_code == 404
    assert client.get("/api/runs/bad%20id").status_code == 404
    make_run(data_home, "run-c")
    atomic_write_text(data_home.run_dir("run-c") / "run.json", "{not json")
    response = client.get("/api/runs/run-c")
    assert response.status_code == 400 and "run.json is corrupt" in response.json()["error"]


def test_a_rewrite_of_a_run_with_missing_artifacts_is_400_with_a_marker_in_the_chat(data_home, client):
    run_dir = make_run(data_home, "run-r", **{"paper_v1.tex": "\\documentclass{article}"})
    response = client.post("/api/runs/run-r/rewrite", json={"instructions": "Shorter."})
    assert response.status_code == 400 and "cannot be rewritten" in response.json()["error"]
    assert not (run_dir / "revisions").exists() and (run_dir / "paper_v1.tex").read_text() == "\\documentclass{article}"
    history = client.get("/api/runs/run-r/history").json()["records"]
    assert [(r["role"], r["marker"]) for r in history] == [("event", "error")]


def test_instructions_typed_in_the_chat_are_a_rewrite_refused_like_one(data_home, client):
    """The spec's Paper rewrite rule 1: the chat's message "Shorten the introduction" is a rewrite
    request, with POST /rewrite's 400 (and marker) for a run that cannot be rewritten, and its 409
    while a process works on the run; no model is asked (no backend is configured here)."""
    run_dir = make_run(data_home, "run-r", **{"paper_v1.tex": "\\documentclass{article}"})
    response = client.post("/api/runs/run-r/ask", json={"question": "Shorten the introduction"})
    assert response.status_code == 400 and "cannot be rewritten" in response.json()["error"]
    assert not (run_dir / "revisions").exists()
    history = client.get("/api/runs/run-r/history").json()["records"]
    assert [(r["role"], r["marker"]) for r in history] == [("event", "error")]
    with RunLock(run_dir):
        busy = client.post("/api/runs/run-r/ask", json={"question": "rewrite: number the equations"})
    assert busy.status_code == 409 and "the earlier rewrite continues" in busy.json()["error"]
    assert not (run_dir / "revisions").exists()


@pytest.mark.parametrize(
    "body, status, message",
    [
        pytest.param(b"{not json", 400, "not JSON", id="not-json"),
        pytest.param(b'["Shorter."]', 400, "JSON object", id="not-an-object"),
        pytest.param(b'{"text": "Shorter."}', 400, '"instructions"', id="no-instructions"),
        pytest.param(b'{"instructions": "   "}', 400, "instructions are empty", id="empty-instructions"),
        pytest.param(b'{"instructions": "' + b"x" * 70_000 + b'"}', 413, "larger than", id="too-large"),
    ],
)
def test_a_bad_rewrite_request_is_refused_before_anything_is_written(data_home, client, body, status, message):
    run_dir = make_run(data_home, "run-r", **{"paper_v1.tex": "x"})
    response = client.post("/api/runs/run-r/rewrite", content=body, headers={"content-type": "application/json"})
    assert response.status_code == status and message in response.json()["error"]
    assert not (run_dir / "revisions").exists()


RUN_PATHS = [
    ("GET", ""),
    ("GET", "/events"),
    ("GET", "/lemma-graph.svg"),
    ("GET", "/history"),
    ("GET", "/versions"),
    ("GET", "/versions/1/paper.tex"),
    ("GET", "/versions/1/paper.pdf"),
    ("POST", "/gates/theory_review"),
    ("POST", "/pause"),
    ("POST", "/resume"),
    ("POST", "/ask"),
    ("POST", "/rewrite"),
]


@pytest.mark.parametrize("run_id", ["..%2F..%2Fetc", "%2Fetc%2Fpasswd", "..", "nope", "a%20b", "%2E%2E"])
@pytest.mark.parametrize("method, path", RUN_PATHS)
def test_ids_that_are_not_runs_are_404_and_nothing_outside_the_data_directory_is_read(
    data_home, client, run_id, method, path
):
    (data_home.home.parent / "secret.txt").write_text("root:x:0:0")  # beside the data directory
    response = client.request(method, f"/api/runs/{run_id}{path}", json={"instructions": "x", "question": "x"})
    assert response.status_code == 404 and "root:" not in response.text
    assert "error" in response.json()
    assert not (data_home.home / "runs").exists() and not (data_home.home / "sessions").exists()


def test_versions_and_history_of_a_run(data_home, client):
    make_run(
        data_home,
        "run-v",
        **{"paper_v1.tex": "a", "paper_v1.pdf": "%PDF", "paper_v2.tex": "b", "rewrite_context_v2.json": "{}"},
    )
    base = "/api/runs/run-v/versions"
    assert client.get(base).json()["versions"] == [
        {
            "version": 1,
            "tex": "paper_v1.tex",
            "pdf": True,
            "rewrite_context": None,
            "tex_url": f"{base}/1/paper.tex",
            "pdf_url": f"{base}/1/paper.pdf",
        },
        {
            "version": 2,
            "tex": "paper_v2.tex",
            "pdf": False,
            "rewrite_context": True,
            "tex_url": f"{base}/2/paper.tex",
            "pdf_url": f"{base}/2/paper.pdf",
        },
    ]
    status = client.get("/api/runs/run-v").json()
    assert status["versions"] == [1, 2] and status["rewrite_in_progress"] is False
    assert client.get("/api/runs/run-v/history").json() == {"records": []}


def test_a_versions_files_are_served_inline_and_a_missing_one_is_404(data_home, client):
    make_run(data_home, "run-f", **{"paper_v1.tex": "\\documentclass{article}", "paper_v1.pdf": "%PDF-1.5 x"})
    tex = client.get("/api/runs/run-f/versions/1/paper.tex")
    assert tex.status_code == 200 and tex.text == "\\documentclass{article}"
    assert tex.headers["content-type"] == "text/plain; charset=utf-8"
    pdf = client.get("/api/runs/run-f/versions/1/paper.pdf")
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")
    assert pdf.headers["content-type"] == "application/pdf"
    assert pdf.headers["content-disposition"].startswith("inline")
    for path in ("2/paper.tex", "1/paper.json", "1/run.json", "0/paper.tex", "x/paper.pdf", "1/..%2Frun.json"):
        response = client.get(f"/api/runs/run-f/versions/{path}")
        assert response.status_code == 404 and "error" in response.json(), path


def test_unknown_endpoints_and_methods_answer_json(client):
    assert client.get("/api/nothing").json()["error"].startswith("Not Found")
    response = client.delete("/api/runs")
    assert response.status_code == 405 and "DELETE /api/runs" in response.json()["error"]


@pytest.mark.parametrize(
    "body, message",
    [
        pytest.param({"mode": "prove"}, '"task"', id="no-task"),
        pytest.param({"mode": "prove", "task": "  "}, '"task" is empty', id="empty-task"),
        pytest.param({"mode": "conjecture", "task": "x"}, '"mode" must be one of', id="bad-mode"),
        pytest.param({"mode": "prove", "task": "x", "gate": "sometimes"}, '"gate" must be one of', id="bad-gate"),
        pytest.param({"mode": "from-papers"}, '"papers" must list', id="no-papers"),
        pytest.param({"mode": "from-papers", "papers": ["2101.00001", 7]}, '"papers" must list', id="bad-paper"),
        pytest.param({"mode": "from-papers", "papers": ["p"] * 21}, '"papers" must list', id="too-many-papers"),
        pytest.param({"task": "x"}, "LLM_RETRY_WAIT_MIN", id="bad-setting"),
        pytest.param({"task": "x", "domain": ["bandits"]}, '"domain"', id="domain-not-text"),
        pytest.param({"task": "x", "domain": "b" * 101}, "the domain must be one line", id="domain-too-long"),
        pytest.param(
            {"task": "x", "domain": "bandits\nand more"}, "the domain must be one line", id="domain-two-lines"
        ),
    ],
)
def test_a_bad_start_request_is_400_and_creates_no_run(data_home, client, monkeypatch, body, message):
    if "bad-setting" in message or message == "LLM_RETRY_WAIT_MIN":
        monkeypatch.setenv("LLM_RETRY_WAIT_MIN", "-1")
    response = client.post("/api/runs", json=body)
    assert response.status_code == 400 and message in response.json()["error"]
    assert client.get("/api/runs").json() == {"runs": []}


def test_a_start_without_the_embedded_model_says_how_to_install_it(data_home, client):
    response = client.post("/api/runs", json={"task": "the sum of two even integers is even"})
    assert response.status_code == 400 and "lemmata model install" in response.json()["error"]
    assert client.get("/api/runs").json() == {"runs": []}


def test_a_started_run_is_written_and_handed_to_a_supervised_process(data_home, client, monkeypatch):
    monkeypatch.setenv("LLM_BACKEND", "local")
    monkeypatch.setenv("LOCAL_LLM_BASE_URL", "http://127.0.0.1:9/v1")  # nobody answers: the run fails, later
    response = client.post("/api/runs", json={"mode": "explore", "task": "parity of sums", "gate": "auto"})
    assert response.status_code == 202
    session_id = response.json()["id"]
    assert response.json() == {
        "id": session_id,
        "status": "running",
        "poll": f"/api/runs/{session_id}",
        "events": f"/api/runs/{session_id}/events",
    }
    record = load_record(data_home.run_dir(session_id))
    assert (record.mode, record.task, record.gate_mode, record.backend) == (
        "explore",
        "parity of sums",
        "auto",
        "local",
    )
    assert record.output_dir == str(data_home.home / "results" / session_id)
    process = client.app.state.supervisor.processes[session_id]
    assert process.args[-3:] == ["resume", session_id, "--wait-at-gates"]
    assert client.get(f"/api/runs/{session_id}").json()["working"] is True


@pytest.mark.parametrize(
    "environment, body, gate_mode",
    [
        pytest.param({}, {"task": "x"}, "auto", id="the-settings-default"),
        pytest.param({"GATE_MODE": "none"}, {"task": "x"}, "none", id="the-setting"),
        pytest.param({"GATE_MODE": "none"}, {"task": "x", "gate": "human"}, "human", id="chosen-for-the-run"),
    ],
)
def test_a_run_started_over_http_takes_its_gate_mode_from_the_settings(
    data_home, client, monkeypatch, environment, body, gate_mode
):
    """Issue 23: `human` was forced by the API's default (and the form's); GATE_MODE now decides
    unless the request names a gate mode, as in a terminal."""
    monkeypatch.setenv("LLM_BACKEND", "local")
    monkeypatch.setenv("LOCAL_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    response = client.post("/api/runs", json=body)
    assert response.status_code == 202, response.text
    assert load_record(data_home.run_dir(response.json()["id"])).gate_mode == gate_mode


@pytest.mark.parametrize(
    "body, domain",
    [
        pytest.param(
            {"mode": "prove", "task": "UCB1's regret is logarithmic", "domain": " multi-armed bandits "},
            "multi-armed bandits",
            id="prove",
        ),
        pytest.param(
            {"mode": "from-papers", "papers": ["2101.00001"], "domain": "bandits"}, "bandits", id="from-papers"
        ),
        pytest.param(
            {"mode": "explore", "task": "bandits", "domain": "ignored"}, "bandits", id="explore-uses-its-task"
        ),
        pytest.param({"mode": "prove", "task": "x"}, "", id="none"),
    ],
)
def test_a_started_run_keeps_the_research_domain_it_was_given(data_home, client, monkeypatch, body, domain):
    monkeypatch.setenv("LLM_BACKEND", "local")
    monkeypatch.setenv("LOCAL_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    response = client.post("/api/runs", json=body)
    assert response.status_code == 202
    config = yaml.safe_load((data_home.run_dir(response.json()["id"]) / "config.yaml").read_text(encoding="utf-8"))
    assert config["domain"] == domain


def test_the_status_poll_shows_the_waiting_gate_with_its_question_and_card(data_home, client):
    make_run(data_home, "run-g", status="waiting", **AT_THEORY_REVIEW)
    body = client.get("/api/runs/run-g").json()
    assert body["status"] == "waiting" and body["working"] is False and body["rewrite_in_progress"] is False
    gate = body["gate"]
    assert (gate["gate"], gate["kind"], gate["second_look"]) == ("theory_review", "theory_review", False)
    assert "Approve the lemma chain" in gate["question"]
    assert "L1 [parity] verified" in gate["card"] and "L3 [closure] low confidence" in gate["card"]
    assert gate["card"].startswith("Main result: NOT established: the proof of lemma extra failed")
    assert "Checked by: not recorded" in gate["card"]  # a theory recorded before checkers still renders
    assert [card["stage"] for card in body["cards"]] == ["survey", "theory"]
    assert {s["stage"]: s["state"] for s in body["stages"]}["theory_review_gate"] == "waiting"
    assert body["tokens"] == {
        "calls": 0,
        "in": 0,
        "out": 0,
        "cost_usd": 0,
        "cost_unknown_calls": 0,
        "cost": "$0 (no call)",
    }


def test_a_gate_decision_is_saved_for_the_next_drive_and_the_run_goes_on(data_home, client):
    run_dir = make_run(data_home, "run-g", status="waiting", **AT_THEORY_REVIEW)
    response = client.post("/api/runs/run-g/gates/theory_review", json={"approved": True, "feedback": "Cite L2."})
    assert response.status_code == 202 and response.json() == {"id": "run-g", "status": "running"}
    answer = read_artifact(answer_path(run_dir, "theory_review"), GateAnswer)
    assert (answer.approved, answer.feedback) == (True, "Cite L2.")
    assert client.app.state.supervisor.processes["run-g"].args[-3:] == ["resume", "run-g", "--wait-at-gates"]


@pytest.mark.parametrize(
    "gate, body, status, message",
    [
        pytest.param("theory_review", {"feedback": "x"}, 400, '"approved" must be', id="no-approval"),
        pytest.param("theory_review", {"approved": "yes"}, 400, '"approved" must be', id="approval-not-bool"),
        pytest.param("theory_review", {"approved": False}, 400, 'needs "step"', id="first-rejection-without-step"),
        pytest.param("theory_review", {"approved": True, "feedback": 3}, 400, '"feedback"', id="feedback-not-text"),
        pytest.param("direction", {"direction": " "}, 400, '"direction" is empty', id="empty-direction"),
        pytest.param(
            "experiment_review", {"approved": True}, 409, "waits at the theory_review gate", id="another-gate"
        ),
        pytest.param("final_review", {"approved": True}, 404, "no gate 'final_review'", id="unknown-gate"),
    ],
)
def test_a_bad_gate_decision_is_refused_and_nothing_is_saved(data_home, client, gate, body, status, message):
    run_dir = make_run(data_home, "run-g", status="waiting", **AT_THEORY_REVIEW)
    response = client.post(f"/api/runs/run-g/gates/{gate}", json=body)
    assert response.status_code == status and message in response.json()["error"]
    assert not answer_path(run_dir, "theory_review").parent.exists() and not client.app.state.supervisor.processes


def test_a_decision_for_a_run_that_does_not_wait_is_409(data_home, client):
    make_run(data_home, "run-c", **AT_THEORY_REVIEW, **{"gates/theory_review.json": DECIDED})
    response = client.post("/api/runs/run-c/gates/theory_review", json={"approved": True})
    assert response.status_code == 409 and "waits at no gate" in response.json()["error"]


def test_pause_is_202_while_a_process_works_and_409_otherwise(data_home, client):
    run_dir = make_run(data_home, "run-p", status="running")
    response = client.post("/api/runs/run-p/pause")
    assert response.status_code == 409 and "not running (status interrupted)" in response.json()["error"]
    with RunLock(run_dir):  # a `lemmata` process drives it
        response = client.post("/api/runs/run-p/pause")
    assert response.status_code == 202 and response.json() == {"id": "run-p", "status": "pause requested"}
    assert read_artifact(pause_flag(run_dir), PauseRequest).by == "browser"


def test_resume_is_202_for_a_paused_run_and_409_when_busy_or_completed(data_home, client):
    run_dir = make_run(data_home, "run-p", status="paused")
    with RunLock(run_dir):
        busy = client.post("/api/runs/run-p/resume")
    assert busy.status_code == 409 and "in progress" in busy.json()["error"]
    assert client.post("/api/runs/run-p/resume").status_code == 202
    assert client.post("/api/runs/run-p/resume").status_code in (409, 202)  # 409 while its process lives
    make_run(data_home, "run-c")
    done = client.post("/api/runs/run-c/resume")
    assert done.status_code == 409 and "completed: nothing to resume" in done.json()["error"]


def test_the_event_stream_replays_the_log_and_ends_when_no_process_works(data_home, client):
    log_lines = [  # as our Snakemake logger plugin writes them (abridged)
        {"t": 1.0, "event": "workflow_started", "msg": "Workflow has started!"},
        {"t": 1.1, "event": "job_info", "jobid": 1, "rule_name": "prove_lemma", "wildcards": {"lemma": "L1"}},
        {"t": 1.1, "event": "shellcmd", "msg": "Shell command: None"},
        {"t": 2.0, "event": "job_finished", "job_id": 1, "msg": "Finished jobid: 1 (Rule: prove_lemma)"},
        {"t": 2.0, "event": "progress", "done": 1, "total": 9},
        {"t": 2.1, "event": "job_info", "jobid": 2, "rule_name": "theory_review_gate"},
        {"t": 2.5, "event": "error", "msg": "RuleException:\nCalledProcessError in file /x/gates.smk"},
        {"t": 2.5, "event": "job_error", "jobid": 2, "rule_name": "theory_review_gate"},
    ]
    make_run(
        data_home,
        "run-e",
        status="waiting",
        **AT_THEORY_REVIEW,
        **{"logs/events.jsonl": "".join(json.dumps(line) + "\n" for line in log_lines) + '{"cut'},
    )
    response = client.get("/api/runs/run-e/events")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    events = events_of(response.text)
    assert [data for name, data in events if name == "workflow"] == [  # the cut-off last line waits
        {"event": "workflow_started", "t": 1.0},
        {"event": "job_started", "t": 1.1, "job": 1, "rule": "prove_lemma", "wildcards": {"lemma": "L1"}},
        {"event": "job_finished", "t": 2.0, "job": 1, "rule": "prove_lemma"},
        {"event": "progress", "t": 2.0, "done": 1, "total": 9},
        {"event": "job_started", "t": 2.1, "job": 2, "rule": "theory_review_gate", "wildcards": {}},
        {"event": "job_failed", "t": 2.5, "job": 2, "rule": "theory_review_gate", "gate": True},
    ]
    (status,) = [data for name, data in events if name == "status"]
    assert status["status"] == "waiting" and status["gate"]["gate"] == "theory_review"
    assert events[-1] == ("end", {"status": "waiting"})


def test_the_settings_tab_maps_the_twelve_token_limits_and_saves_them_for_the_next_run(data_home, client, monkeypatch):
    settings = client.get("/api/settings").json()["settings"]
    assert len(settings) == 12 and {s["source"] for s in settings} == {"default"}
    assert settings[1] == {
        "field": "prover",
        "name": "MAX_TOKENS_PROVER",
        "value": 4096,
        "default": 4096,
        "used_for": "proof generation",
        "source": "default",
    }
    saved = client.put("/api/settings", json={"prover": 5000, "sketch": 700}).json()["settings"]
    by_field = {s["field"]: s for s in saved}
    assert (by_field["prover"]["value"], by_field["prover"]["source"]) == (5000, "saved")
    assert Settings.from_environment().MAX_TOKENS_PROVER == 5000  # what the next run reads
    monkeypatch.setenv("MAX_TOKENS_SKETCH", "800")  # the environment wins, and says so
    sketch = next(s for s in client.get("/api/settings").json()["settings"] if s["field"] == "sketch")
    assert (sketch["value"], sketch["source"]) == (800, "environment")
    assert sketch["used_for"] == "proof sketch"  # the theory review's sketch (stages/theory/sketch.py)


@pytest.mark.parametrize(
    "body, message",
    [
        pytest.param({"prover": 0}, "prover=0 is not valid", id="zero"),
        pytest.param({"prover": -5}, "prover=-5 is not valid", id="negative"),
        pytest.param({"prover": "5000"}, "prover='5000' is not valid", id="text"),
        pytest.param({"prover": True}, "prover=True is not valid", id="boolean"),
        pytest.param({"prover": 2.5}, "prover=2.5 is not valid", id="fraction"),
        pytest.param({"sketch": 700, "turns": 3}, "'turns' is not a token-limit field", id="unknown-field"),
        pytest.param({"MAX_TOKENS_PROVER": 3}, "is not a token-limit field", id="setting-name-not-field"),
    ],
)
def test_a_bad_setting_is_400_and_nothing_is_saved(data_home, client, body, message):
    response = client.put("/api/settings", json=body)
    assert response.status_code == 400 and message in response.json()["error"]
    assert not (data_home.home / "settings.json").exists()
    assert {s["source"] for s in client.get("/api/settings").json()["settings"]} == {"default"}


def test_with_a_token_every_api_call_needs_it_and_the_page_does_not(data_home):
    make_run(data_home, "run-a")
    access = ServerAccess.for_bind(*TEST_SERVER, token="s3cret-token")
    client = TestClient(create_app(data_home, access=access), base_url="http://{}:{}".format(*TEST_SERVER))
    for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": "s3cret-token"}):
        response = client.get("/api/runs/run-a", headers=headers)
        assert response.status_code == 401 and "s3cret-token" not in response.text
        assert response.headers["www-authenticate"] == "Bearer"
    assert client.post("/api/runs/run-a/rewrite", json={"instructions": "x"}).status_code == 401
    assert not (data_home.run_dir("run-a") / "revisions").exists()
    assert client.get("/api/runs/run-a", headers={"authorization": "Bearer s3cret-token"}).status_code == 200
    assert client.get("/").status_code == 200


def test_no_answer_carries_a_credential(data_home, monkeypatch):
    monkeypatch.setenv("VENDORA_API_KEY", "sk-vendora-do-not-leak")
    monkeypatch.setenv("LLM_BACKEND", "vendora")
    with api_client(data_home) as client:
        started = client.post("/api/runs", json={"task": "the sum of two even integers is even"})
        assert started.status_code == 202
        session_id = started.json()["id"]
        texts = [
            client.get(path).text
            for path in (
                "/api/runs",
                f"/api/runs/{session_id}",
                "/api/settings",
                f"/api/runs/{session_id}/history",
                "/api/openapi.json",
                "/",
            )
        ]
    assert all("sk-vendora-do-not-leak" not in text for text in texts)
    run_dir = data_home.run_dir(session_id)
    assert all("sk-vendora-do-not-leak" not in p.read_text(errors="replace") for p in run_dir.rglob("*") if p.is_file())


def test_the_openapi_description_names_exactly_the_apps_endpoints(client):
    document = client.get("/api/openapi.json").json()
    described = {(path, method.upper()) for path, operations in document["paths"].items() for method in operations}
    routed = {
        (re.sub(r":\w+}", "}", route.path), method)
        for route in ROUTES
        if not isinstance(route, Mount) and route.path.startswith("/api/")
        for method in route.methods - {"HEAD"}
    }
    assert described == routed
    assert document["openapi"].startswith("3.1")


def test_the_page_and_its_assets_are_served_and_nothing_beside_them(client):
    page = client.get("/")
    assert page.status_code == 200 and "<title>" in page.text
    assert "script-src 'self';" in page.headers["content-security-policy"]
    assert client.get("/static/app.js").status_code == 200
    assert client.get("/static/..%2Fapp.py").status_code == 404
    assert client.get("/static/../app.py").status_code == 404


def test_the_status_poll_shows_an_unfinished_rewrites_steps(data_home, client):
    request = RevisionRequest(version=2, base_version=1, instructions="Shorter proofs.", requested_at=1.0)
    run_dir = make_run(
        data_home,
        "run-w",
        status="paused",
        **{"paper_v1.tex": "x", "revisions__v2.json": request.model_dump_json(), "versions__v2__theory.json": "{}"},
    )
    body = client.get("/api/runs/run-w").json()
    assert body["rewrite"] == {
        "version": 2,
        "instructions": "Shorter proofs.",
        "steps": [
            {"step": "theory", "state": "done"},
            {"step": "experiment", "state": "pending"},
            {"step": "writer", "state": "pending"},
            {"step": "compile", "state": "pending"},
        ],
    }
    with RunLock(run_dir):  # a process works on it: the first step not done is the running one
        steps = client.get("/api/runs/run-w").json()["rewrite"]["steps"]
    assert [s["state"] for s in steps] == ["done", "running", "pending", "pending"]
    (run_dir / "rewrite_context_v2.json").write_text("{}")
    assert client.get("/api/runs/run-w").json()["rewrite"] is None


def test_a_stage_is_running_while_a_working_process_has_a_job_of_it_unfinished(data_home, client):
    log_lines = [
        {"event": "workflow_started"},
        {"event": "job_info", "jobid": 1, "rule_name": "survey"},
        {"event": "workflow_started"},  # a later invocation: the earlier one's jobs are over
        {"event": "job_info", "jobid": 4, "rule_name": "prove_lemma", "wildcards": {"lemma": "L1"}},
    ]
    run_dir = make_run(
        data_home,
        "run-s",
        status="running",
        **SURVEY_DONE,
        **{
            "directions.json": "{}",
            "gates/direction_review.json": DECIDED,
            "logs/events.jsonl": "".join(json.dumps(line) + "\n" for line in log_lines),
        },
    )
    with RunLock(run_dir):
        states = {s["stage"]: s["state"] for s in client.get("/api/runs/run-s").json()["stages"]}
    assert (states["survey"], states["theory"], states["experiment"]) == ("done", "running", "pending")
    states = {s["stage"]: s["state"] for s in client.get("/api/runs/run-s").json()["stages"]}
    assert states["theory"] == "pending"  # its driver died: nothing runs


class WatchedProcess(subprocess.Popen):
    """A process whose waits are noted: whether the supervisor waited for it, and how long at most."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.waits: list[float | None] = []

    def wait(self, timeout: float | None = None) -> int:
        self.waits.append(timeout)
        return super().wait(timeout)


def test_a_decision_waits_for_the_process_that_just_stopped_at_the_gate_but_not_for_one_at_work(data_home):
    run_dir = make_run(data_home, "run-x", status="completed")
    supervisor = RunSupervisor()
    try:
        # Just started: the record is still the old one, so the process is at work: refused at once.
        supervisor._started_at["run-x"] = time.time()
        at_work = WatchedProcess([sys.executable, "-c", "import time; time.sleep(30)"])
        supervisor.processes["run-x"] = at_work
        with pytest.raises(RunConflict):
            supervisor.drive(run_dir, lambda: None)
        assert at_work.waits == []  # not waited for
        at_work.kill()
        at_work.wait()

        # It has recorded that it waits at a gate and is exiting: the decision waits for that.
        supervisor._started_at["run-x"] = time.time()
        exiting = WatchedProcess([sys.executable, "-c", "import time; time.sleep(0.5)"])
        supervisor.processes["run-x"] = exiting
        save_record(run_dir, load_record(run_dir), status="waiting")
        prepared = []
        supervisor.drive(run_dir, lambda: prepared.append("answer saved"))
        assert prepared == ["answer saved"] and exiting.waits == [EXIT_GRACE_SECONDS]
    finally:
        supervisor.stop_all(wait_seconds=5)


def test_the_checking_models_list_every_backend_with_its_trust_but_the_test_backend(data_home, client):
    models = {row["backend"]: row for row in client.get("/api/calibrations").json()["models"]}
    assert "replay" not in models and {"vendora", "local", "embedded"} <= set(models)
    assert models["local"]["trust"] == "uncalibrated" and models["local"]["proofs"] == 120
    assert models["local"]["command"] == f"lemmata calibrate --backend local --model {models['local']['model']}"
    assert models["local"]["forecast"].startswith("120 proofs, at most 240 calls")


@pytest.mark.parametrize(
    "body, message",
    [
        ({}, 'the body is {"backend": NAME}'),
        ({"backend": "local", "model": "x"}, 'the body is {"backend": NAME}'),
        ({"backend": "replay"}, "'replay' is not a backend: use one of vendora"),
        ({"backend": "nope"}, "'nope' is not a backend"),
    ],
)
def test_a_calibration_of_no_backend_is_400_and_starts_nothing(data_home, client, body, message):
    response = client.post("/api/calibrations", json=body)
    assert response.status_code == 400 and message in response.json()["error"]
    assert client.get("/api/calibrations").json()["running"] is False


def test_a_calibration_of_a_backend_without_its_credential_is_400_naming_it(data_home, client, monkeypatch):
    monkeypatch.delenv("VENDORA_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    response = client.post("/api/calibrations", json={"backend": "vendorx"})
    assert response.status_code == 400 and "VENDORX_API_KEY" in response.json()["error"]


def test_a_bug_in_the_middle_of_an_answer_ends_its_stream_with_an_error_event(data_home, client, monkeypatch, caplog):
    """Issue 53, item 5: an answer that failed by anything but one of our errors (half an emoji made
    the call log's write raise) ended the event stream with no error, and the chat showed a
    half answer as if it were whole."""
    make_run(data_home, "run-q", **{"paper_v1.tex": "x"})

    def half_then_a_bug(run_dir, question, on_text, on_restart, environ):
        on_text("The proof rests on")
        raise UnicodeEncodeError("utf-8", "\ud83d", 0, 1, "surrogates not allowed")

    monkeypatch.setattr("lemmata.server.qa_stream.ask_about_paper", half_then_a_bug)
    with caplog.at_level(logging.ERROR, logger="lemmata.server"):
        response = client.post("/api/runs/run-q/ask", json={"question": "What does it rest on?"})
    events = events_of(response.text)
    assert events[0] == ("piece", "The proof rests on")
    assert events[-1][0] == "error" and "UnicodeEncodeError" in events[-1][1]["error"]
    assert "this is a bug in lemmata" in events[-1][1]["error"]
    assert "Traceback" in caplog.text  # the server's log keeps what a report needs
