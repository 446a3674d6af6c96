"""The HTTP API driving a real run end to end: started over HTTP, every gate decided over HTTP
(a first theory rejection included), a pause and a resume in the middle, the live event stream
as the way to wait, on the fake model and search servers through the real workflow and pdflatex."""

from __future__ import annotations

import threading
from pathlib import Path

from conftest import api_client, cli_environment
from starlette.testclient import TestClient
from unit.server.test_server_api import events_of

from lemmata.artifacts import GateDecision, TheoryRework, read_artifact
from lemmata.llm.calllog import read_call_records
from lemmata.run.pausing import checkpoint_file
from lemmata.run.record import DataHome
from lemmata.run.workflow import STOP_NOTICE
from support import even_sum_session
from support.fake_llm_server import RecordedRequest
from support.waiting import wait_until


def run_until_it_stops(client: TestClient, run_id: str) -> list[tuple[str, object]]:
    """The live events until no process works on the run any more (the stream then ends)."""
    response = client.get(f"/api/runs/{run_id}/events")
    assert response.status_code == 200
    return events_of(response.text)


def decide(client: TestClient, run_id: str, gate: str, **decision: object) -> list[tuple[str, object]]:
    status = client.get(f"/api/runs/{run_id}").json()
    assert (status["status"], status["gate"]["gate"]) == ("waiting", gate), status["message"]
    response = client.post(f"/api/runs/{run_id}/gates/{gate}", json=decision)
    assert response.status_code == 202, response.text
    return run_until_it_stops(client, run_id)


def calls(run_dir: Path, role: str) -> list[dict]:
    return [r for r in read_call_records(run_dir / "llm_calls.jsonl") if r["role"] == role]


def test_a_run_started_over_http_waits_at_each_gate_for_its_decision_pauses_resumes_and_completes(services, tmp_path):
    llm, search = services
    home = tmp_path / "home"
    env = cli_environment(home, LLM_BACKEND="local", LOCAL_LLM_BASE_URL=llm.openai_base_url, **search.settings_values())
    with api_client(DataHome(home), environ=env) as client:
        started = client.post("/api/runs", json={"task": even_sum_session.TASK, "gate": "human"})
        assert started.status_code == 202
        run_id = started.json()["id"]
        run_dir = home / "runs" / run_id

        events = run_until_it_stops(client, run_id)
        assert {"event": "job_finished", "rule": "survey"}.items() <= next(
            data
            for name, data in events
            if name == "workflow" and data.get("rule") == "survey" and data["event"] == "job_finished"
        ).items()
        assert any(name == "workflow" and data["event"] == "job_failed" and data["gate"] for name, data in events)
        assert events[0][0] == "status" and events[-1] == ("end", {"status": "waiting"})
        assert [d["gate"]["gate"] for n, d in events if n == "status" and d["gate"]] == ["survey_review"]

        decide(client, run_id, "survey_review", approved=True, feedback="")

        # A pause while the theory's first lemma is being proved: the run stops at a rule boundary.
        paused_once = threading.Event()

        def pause_at_the_first_proof(request: RecordedRequest) -> None:
            if request.headers.get("x-lemmata-role") == "prover" and not paused_once.is_set():
                paused_once.set()
                log = Path(run_dir) / "logs/snakemake.log"
                notices = log.read_text(errors="replace").count(STOP_NOTICE)
                (Path(run_dir) / "pause-now").touch()
                # The pause request lands while this call is in flight: it is answered only once
                # the driver has told Snakemake to stop.
                wait_until(lambda: log.read_text(errors="replace").count(STOP_NOTICE) != notices, 30, message=None)

        llm.before_answer = pause_at_the_first_proof
        response = client.post(
            f"/api/runs/{run_id}/gates/direction_review",
            json={"approved": True, "feedback": "Keep the proof elementary"},
        )
        assert response.status_code == 202
        wait_until(lambda: (run_dir / "pause-now").exists(), 120, 0.1, message=None)
        assert client.post(f"/api/runs/{run_id}/pause").status_code == 202
        events = run_until_it_stops(client, run_id)
        llm.before_answer = None
        assert events[-1] == ("end", {"status": "paused"})
        assert checkpoint_file(run_dir).exists()
        assert client.post(f"/api/runs/{run_id}/pause").status_code == 409  # nothing runs now

        assert client.post(f"/api/runs/{run_id}/resume").status_code == 202
        assert run_until_it_stops(client, run_id)[-1] == ("end", {"status": "waiting"})
        gate = client.get(f"/api/runs/{run_id}").json()["gate"]
        assert gate["gate"] == "theory_review" and gate["second_look"] is False and "L4" in gate["card"]

        # A first rejection: the theory runs once more with the objection, then asks again.
        decide(
            client,
            run_id,
            "theory_review",
            approved=False,
            step="4",
            issue="closure of Z under addition is assumed, not shown",
        )
        assert client.get(f"/api/runs/{run_id}").json()["gate"]["second_look"] is True
        decide(
            client, run_id, "theory_review", approved=True, feedback="Stress the parity argument in the introduction"
        )
        events = decide(client, run_id, "experiment_review", approved=True, feedback="")
        assert events[-1] == ("end", {"status": "completed"})

        status = client.get(f"/api/runs/{run_id}").json()
        assert status["versions"] == [1] and status["working"] is False and status["tokens"]["calls"] > 0
        pdf = client.get(f"/api/runs/{run_id}/versions/1/paper.pdf")
        assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")

    rework = read_artifact(run_dir / "gates/theory_rework.json", TheoryRework)
    assert (rework.step, rework.issue) == ("L4", "closure of Z under addition is assumed, not shown")
    decision = read_artifact(run_dir / "gates/theory_review.json", GateDecision)
    assert (decision.approved, decision.decided_by) == (True, "user")
    assert "Stress the parity argument" in calls(run_dir, "writer")[0]["messages"][-1]["content"]
    assert "Keep the proof elementary" in "\n".join(m["content"] for m in calls(run_dir, "decomposer")[0]["messages"])
    assert len(calls(run_dir, "decomposer")) == 2  # the rework's second plan, nothing more: the pause redid nothing


PAUSE_TRIALS = 20


def test_a_pause_sent_the_moment_a_run_starts_is_never_dropped(services, tmp_path):
    """Issue 53, item 3: a pause sent from the browser within about a second of a start was
    answered 202 and then lost, removed by the new driver as it took the run's lock (a removal
    meant for the flags of dead runs). 20 starts, each paused at once: every one pauses."""
    llm, search = services
    home = tmp_path / "home"
    env = cli_environment(home, LLM_BACKEND="local", LOCAL_LLM_BASE_URL=llm.openai_base_url, **search.settings_values())
    outcomes = []
    with api_client(DataHome(home), environ=env) as client:
        for _ in range(PAUSE_TRIALS):
            started = client.post("/api/runs", json={"task": even_sum_session.TASK})
            assert started.status_code == 202, started.text
            run_id = started.json()["id"]
            paused = client.post(f"/api/runs/{run_id}/pause")
            assert paused.status_code == 202, paused.text
            client.app.state.supervisor.processes[run_id].wait(timeout=120)
            outcomes.append(client.get(f"/api/runs/{run_id}").json()["status"])
    assert outcomes == ["paused"] * PAUSE_TRIALS
    assert all(checkpoint_file(run_dir).exists() for run_dir in (home / "runs").iterdir())
