"""What the HTTP API takes and says of a run's spending (issue 26): a budget in a start or resume
request, refused with a 400 naming what is wrong; the budget and each stage's forecast in the
status poll."""

from __future__ import annotations

import pytest
from conftest import SURVEY_DONE, api_client, make_run

from lemmata import layout as files
from lemmata.artifacts import StageForecast
from lemmata.run.record import load_record

CONFIG = {"config.yaml": "LLM_BACKEND: local\n"}


@pytest.fixture
def client(data_home):
    with api_client(data_home) as test_client:
        yield test_client


@pytest.mark.parametrize(
    "budget, message",
    [
        pytest.param({"budget_usd": -1}, '"budget_usd" must be a positive number of dollars', id="negative"),
        pytest.param({"budget_usd": "5"}, '"budget_usd" must be a positive number', id="text"),
        pytest.param({"budget_usd": True}, '"budget_usd" must be a positive number', id="boolean"),
        pytest.param({"budget_tokens": 2.5}, '"budget_tokens" must be a positive whole number', id="fraction"),
        pytest.param({"budget_usd": 5}, "a budget in USD needs the price of model 'local-model'", id="no-price"),
    ],
)
def test_a_bad_budget_in_a_start_request_is_400_and_creates_no_run(data_home, client, monkeypatch, budget, message):
    monkeypatch.setenv("LLM_BACKEND", "local")
    response = client.post("/api/runs", json={"task": "x", **budget})
    assert response.status_code == 400 and message in response.json()["error"]
    assert client.get("/api/runs").json() == {"runs": []}


def test_a_run_started_with_a_budget_keeps_it(data_home, client, monkeypatch):
    monkeypatch.setenv("LLM_BACKEND", "local")
    monkeypatch.setenv("LOCAL_LLM_BASE_URL", "http://127.0.0.1:9/v1")  # nobody answers: the run fails, later
    data_home.home.mkdir(parents=True)
    (data_home.home / "prices.yaml").write_text("models:\n  local-model: {input: 2.0, output: 8.0}\n")
    response = client.post("/api/runs", json={"task": "x", "budget_usd": 0.5, "budget_tokens": 90_000})
    assert response.status_code == 202
    record = load_record(data_home.run_dir(response.json()["id"]))
    assert (record.budget_usd, record.budget_tokens) == (0.5, 90_000)


def test_a_resume_may_give_a_new_budget_and_a_bad_one_changes_nothing(data_home, client):
    run_dir = make_run(data_home, "run-b", status="paused", **CONFIG)
    refused = client.post("/api/runs/run-b/resume", json={"budget_usd": 2})  # no price for local-model
    assert refused.status_code == 400 and "--budget-tokens" in refused.json()["error"]
    assert load_record(run_dir).budget_usd is None
    assert client.post("/api/runs/run-b/resume", json={"budget_tokens": 0}).status_code == 400
    assert client.post("/api/runs/run-b/resume", json={"budget_tokens": 50_000}).status_code == 202
    assert load_record(run_dir).budget_tokens == 50_000


def test_the_status_poll_gives_the_budget_and_each_stages_forecast_beside_what_it_used(data_home, client):
    run_dir = make_run(data_home, "run-f", status="paused", **SURVEY_DONE, **CONFIG)
    record = load_record(run_dir)
    (run_dir / "run.json").write_text(record.model_copy(update={"budget_tokens": 8000}).model_dump_json())
    forecast = StageForecast(stage="survey", made_at=0, calls=2, tokens_in=900, tokens_out=100, cost_usd=0.0, basis="b")
    (run_dir / files.FORECASTS).write_text(forecast.model_dump_json() + "\n")
    (run_dir / files.LLM_CALLS).write_text(
        '{"role": "survey", "scope": "survey", "tokens_in": 400, "tokens_out": 50, "cost_usd": 0.0}\n'
    )
    body = client.get("/api/runs/run-f").json()
    assert body["budget"] == {"usd": None, "tokens": 8000, "text": "8,000 tokens"}
    assert body["forecasts"] == [
        {
            "stage": "survey",
            "calls": 2,
            "tokens": 1000,
            "cost_usd": 0.0,
            "basis": "b",
            "used_calls": 1,
            "text": "forecast 2 calls, 1,000 tokens, $0.0000; used 1 call, 450 tokens, $0.0000",
        }
    ]
    make_run(data_home, "run-n")
    assert client.get("/api/runs/run-n").json()["budget"] is None


def test_a_poll_reads_only_the_calls_logged_since_the_last_poll(data_home, client, monkeypatch):
    """Issue 53, item 8: every poll parsed the whole call log in the event loop (10 MB: 136-224 ms a
    poll, 50 MB about 1 s, and every other request waited). Past the first poll, reading the whole
    log again is an error here; the forecasts still count the calls appended since."""
    run_dir = make_run(data_home, "run-f", status="paused", **SURVEY_DONE, **CONFIG)
    forecast = StageForecast(stage="survey", made_at=0, calls=2, tokens_in=900, tokens_out=100, cost_usd=0.0, basis="b")
    (run_dir / files.FORECASTS).write_text(forecast.model_dump_json() + "\n")
    call = '{"role": "survey", "scope": "survey", "tokens_in": 400, "tokens_out": 50, "cost_usd": 0.0}\n'
    (run_dir / files.LLM_CALLS).write_text(call * 1000)
    assert client.get("/api/runs/run-f").json()["forecasts"][0]["used_calls"] == 1000

    def whole_log(*_args, **_kwargs):
        raise AssertionError("a status poll read the whole call log again")

    monkeypatch.setattr("lemmata.llm.calllog.read_call_records", whole_log)
    monkeypatch.setattr("lemmata.run.spending.forecast.read_call_records", whole_log)
    with open(run_dir / files.LLM_CALLS, "a", encoding="utf-8") as log:
        log.write(call * 2)
    body = client.get("/api/runs/run-f").json()
    assert body["forecasts"][0]["used_calls"] == 1002 and body["tokens"]["calls"] == 1002
