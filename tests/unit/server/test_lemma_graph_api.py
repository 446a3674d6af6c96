"""GET /api/runs/{id}/lemma-graph.svg (issue 26) with the real app on hand-made runs: the picture
as it stands (proofs on disk, the lemmas whose job runs, each lemma's calls), served as an SVG that
may run and load nothing, 404 before the plan, guarded like every run endpoint; the status poll's
`lemma_graph` URL changes when the picture does."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from conftest import api_client, make_run

from lemmata import layout as files  # `layout` is the data directory fixture here
from lemmata.artifacts import Lemma, TheoryPlan, write_artifact
from unit.run.test_cards import lemma

SVG = "{http://www.w3.org/2000/svg}"
PLAN = TheoryPlan(
    goal="the sum of two even integers is even",
    level="full",
    lemmas=[
        Lemma(id="L1", statement="a = 2m"),
        Lemma(id="L2", statement="a + b = 2(m + n)", depends_on=["L1"]),
        Lemma(id="L3", statement="<b>so</b> a + b is even & done", depends_on=["L2"]),
    ],
)


@pytest.fixture
def client(data_home):
    with api_client(data_home) as test_client:
        yield test_client


def statuses(svg: str) -> dict[str, str]:
    root = ET.fromstring(svg)
    return {g.get("data-lemma"): g.get("data-status") for g in root.iter(f"{SVG}g") if g.get("class") == "lemma"}


def planned_run(data_home, session_id: str = "run-g"):
    run_dir = make_run(data_home, session_id, status="running")
    write_artifact(run_dir / files.PLAN, PLAN)
    return run_dir


def test_before_the_plan_the_picture_is_404_and_the_poll_names_none(data_home, client):
    make_run(data_home, "run-g", status="running")
    response = client.get("/api/runs/run-g/lemma-graph.svg")
    assert response.status_code == 404 and "no lemma plan yet" in response.json()["error"]
    assert client.get("/api/runs/run-g").json()["lemma_graph"] is None
    assert client.get("/api/runs/nope/lemma-graph.svg").status_code == 404


def test_the_picture_is_an_svg_that_runs_and_loads_nothing(data_home, client):
    planned_run(data_home)
    response = client.get("/api/runs/run-g/lemma-graph.svg")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("image/svg+xml")
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "sandbox" in policy and "script-src" not in policy
    assert response.headers["x-content-type-options"] == "nosniff" and response.headers["cache-control"] == "no-store"
    assert "<b>" not in response.text and "&lt;b&gt;so&lt;/b&gt; a + b is even &amp; done" in response.text
    assert statuses(response.text) == {"L1": "pending", "L2": "pending", "L3": "pending"}


def test_the_live_picture_shows_proofs_running_jobs_and_each_lemmas_calls(data_home, client, monkeypatch):
    run_dir = planned_run(data_home)
    proof = lemma("L1", "verifier_pass", "proved", 0.9, attempts=2).model_copy(update={"statement": "a = 2m"})
    write_artifact(run_dir / files.lemma("L1"), proof)
    events = [{"event": "job_info", "jobid": 7, "rule_name": "prove_lemma", "wildcards": {"lemma": "L2"}}]
    calls = [
        {"scope": "prove_lemma:L1", "role": "prover", "cost_usd": 0.02},
        {"scope": "prove_lemma:L2", "role": "prover", "cost_usd": 0.01},
        {"scope": "survey", "role": "survey", "cost_usd": 1.0},
    ]
    (run_dir / files.EVENTS).parent.mkdir(parents=True, exist_ok=True)
    (run_dir / files.EVENTS).write_text("".join(json.dumps(e) + "\n" for e in events))
    (run_dir / files.LLM_CALLS).write_text("".join(json.dumps(c) + "\n" for c in calls))
    monkeypatch.setattr(client.app.state.supervisor, "working", lambda run_dir: True)
    svg = client.get("/api/runs/run-g/lemma-graph.svg").text
    assert statuses(svg) == {"L1": "reviewed", "L2": "running", "L3": "pending"}
    assert "prover turns: 2; model calls: 1; cost: $0.0200" in svg
    assert "prover turns: not yet; model calls: 1; cost: $0.0100" in svg
    # A driver that is gone has no running job: what its board said last is not shown as running.
    monkeypatch.setattr(client.app.state.supervisor, "working", lambda run_dir: False)
    assert statuses(client.get("/api/runs/run-g/lemma-graph.svg").text)["L2"] == "pending"


def test_the_poll_gives_a_new_url_when_the_picture_changes(data_home, client):
    run_dir = planned_run(data_home)
    first = client.get("/api/runs/run-g").json()["lemma_graph"]
    assert first.startswith("/api/runs/run-g/lemma-graph.svg?v=")
    assert client.get("/api/runs/run-g").json()["lemma_graph"] == first  # nothing changed: the same URL
    write_artifact(run_dir / files.lemma("L1"), lemma("L1", "verifier_pass", "proved", 0.9))
    second = client.get("/api/runs/run-g").json()["lemma_graph"]
    assert second != first and client.get(second).status_code == 200
    with (run_dir / files.LLM_CALLS).open("a") as calls:
        calls.write(json.dumps({"scope": "prove_lemma:L2", "role": "prover", "cost_usd": 0.01}) + "\n")
    assert client.get("/api/runs/run-g").json()["lemma_graph"] != second


def test_the_picture_needs_the_token_and_refuses_other_sites(data_home, client):
    planned_run(data_home)
    assert client.get("/api/runs/run-g/lemma-graph.svg", headers={"Authorization": ""}).status_code == 401
    cross = client.get("/api/runs/run-g/lemma-graph.svg", headers={"Sec-Fetch-Site": "cross-site"})
    assert cross.status_code == 403 and "another site" in cross.json()["error"]
