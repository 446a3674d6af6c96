"""The run's budget (issue 26): when a job may not start, in words naming spent, forecast and
limit; where a budget comes from; a USD budget on a model without a price refused up front; and
the job boundary that writes each stage's forecast once and asks for the pause."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lemmata import layout
from lemmata.artifacts import StageForecast, write_artifact
from lemmata.errors import BudgetReached, UserError
from lemmata.llm.prices import load_prices
from lemmata.run.pausing import pause_request
from lemmata.run.record import RunRecord, save_record
from lemmata.run.spending.budget import Budget, Spent, budget_from_environment, budget_stop, check_priced
from lemmata.run.spending.forecast import read_forecasts
from lemmata.run.spending.stage_boundary import before_job
from lemmata.settings import Settings
from unit.run.test_cards import THEORY


def forecast(stage: str = "theory", calls: int = 10, cost: float | None = 0.30, tokens: int = 5000) -> StageForecast:
    return StageForecast(
        stage=stage, made_at=0, calls=calls, tokens_in=tokens - 1000, tokens_out=1000, cost_usd=cost, basis="x"
    )


def spent(usd: float = 0.25, tokens: int = 4000, stages: tuple[str, ...] = ("survey",)) -> Spent:
    return Spent(usd, 0, tokens, frozenset(stages))


def test_a_stage_whose_forecast_would_pass_the_budget_does_not_start() -> None:
    assert budget_stop(Budget(usd=0.50), spent(), forecast()) == (
        "the theory stage is forecast to cost $0.3000 (10 calls); with $0.2500 spent so far, "
        "that would pass the budget of $0.5000"
    )
    assert budget_stop(Budget(usd=0.60), spent(), forecast()) is None  # it fits


def test_once_a_stage_has_begun_only_a_spent_budget_stops_its_jobs() -> None:
    begun = spent(stages=("survey", "theory"))
    assert budget_stop(Budget(usd=0.50), begun, forecast()) is None  # its forecast was weighed at its start
    assert budget_stop(Budget(usd=0.25), begun, forecast()) == "the budget of $0.2500 is spent ($0.2500 so far)"


def test_a_stage_forecast_to_call_no_model_is_never_stopped() -> None:
    assert budget_stop(Budget(usd=0.10), spent(), forecast("compile", calls=0, cost=0.0)) is None


def test_a_token_budget_holds_a_free_model_and_a_forecast_of_unknown_cost_meets_only_the_spent_check() -> None:
    assert budget_stop(Budget(tokens=8000), spent(usd=0), forecast(cost=0.0)) == (
        "the theory stage is forecast to use 5,000 tokens (10 calls); with 4,000 used so far, "
        "that would pass the budget of 8,000 tokens"
    )
    assert budget_stop(Budget(tokens=4000), spent(), forecast()) == "the budget of 4,000 tokens is spent (4,000 so far)"
    assert budget_stop(Budget(usd=0.50), spent(), forecast(cost=None)) is None


def test_what_was_spent_is_read_from_the_call_records() -> None:
    records = [
        {"role": "survey", "scope": "survey", "tokens_in": 100, "tokens_out": 20, "cost_usd": 0.01},
        {"role": "prover", "scope": "prove_lemma:L1", "tokens_in": 300, "tokens_out": None, "cost_usd": None},
    ]
    assert Spent.of(records) == Spent(0.01, 1, 420, frozenset({"survey", "theory"}))


def test_a_budget_comes_from_the_environment_and_a_bad_one_is_refused_by_name() -> None:
    assert budget_from_environment({"LEMMATA_BUDGET_USD": "2.50", "LEMMATA_BUDGET_TOKENS": "200_000"}) == Budget(
        2.5, 200_000
    )
    assert not budget_from_environment({})
    for variable, value in (("LEMMATA_BUDGET_USD", "two dollars"), ("LEMMATA_BUDGET_TOKENS", "-5")):
        with pytest.raises(UserError, match=f"^{variable}='{value}' is not a positive"):
            budget_from_environment({variable: value})
    assert Budget(0.5, 1000).text == "$0.5000 and 1,000 tokens" and Budget().text == "none"
    assert Budget(tokens=9).resume_command("s1") == "lemmata resume s1 --budget-tokens N"
    assert Budget(0.5, 9).resume_command("s1") == "lemmata resume s1 --budget USD --budget-tokens N"


def test_a_budget_in_dollars_needs_the_price_of_every_model_the_run_calls(tmp_path: Path) -> None:
    prices = load_prices(tmp_path)
    check_priced(Budget(usd=1.0), "vendora", ("claude-sonnet-4-5", "claude-haiku-4-5"), prices, tmp_path)
    check_priced(Budget(usd=1.0), "embedded", ("qwen",), prices, tmp_path)  # free: nothing to price
    check_priced(Budget(tokens=10), "local", ("local-model",), prices, tmp_path)  # tokens need no price
    with pytest.raises(
        UserError, match=f"needs the price of model 'local-model' \\(local\\).*add it to {tmp_path}/prices.yaml"
    ):
        check_priced(Budget(usd=1.0), "local", ("local-model",), prices, tmp_path)


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """runs/s1 of a data directory with no earlier run (the forecasts come from the prior)."""
    run_dir = tmp_path / "home" / "runs" / "s1"
    run_dir.mkdir(parents=True)
    record = RunRecord(session_id="s1", mode="prove", task="t", output_dir="o", gate_mode="auto", backend="local")
    save_record(run_dir, record, budget_tokens=12_000)
    return run_dir


SETTINGS = Settings.from_mapping({"LLM_BACKEND": "local"})


def test_the_first_job_of_a_stage_writes_its_forecast_once(run_dir: Path) -> None:
    home = run_dir.parent.parent
    before_job(run_dir, "intake", 1, SETTINGS, home)
    before_job(run_dir, "survey", 1, SETTINGS, home)
    before_job(run_dir, "theory_review_gate", 1, SETTINGS, home)  # a gate's stage calls no model
    before_job(run_dir, "rewrite_theory", 2, SETTINGS, home)  # a rewrite is not forecast
    assert len((run_dir / layout.FORECASTS).read_text().splitlines()) == 1
    assert read_forecasts(run_dir)["survey"].runs == 0  # the prior: no earlier run in this home


def test_a_job_the_budget_stops_asks_for_a_pause_with_the_reason_and_starts_nothing(run_dir: Path) -> None:
    home = run_dir.parent.parent
    (run_dir / layout.LLM_CALLS).write_text(
        json.dumps({"role": "survey", "scope": "survey", "tokens_in": 9000, "tokens_out": 500}) + "\n"
    )
    with pytest.raises(BudgetReached, match="^the theory stage is forecast to use .* the budget of 12,000 tokens$"):
        before_job(run_dir, "formalize", 1, SETTINGS, home)
    request = pause_request(run_dir)
    assert request is not None and request.by == "budget" and request.reason.startswith("the theory stage is forecast")


def test_an_experiment_that_will_not_run_is_forecast_to_make_no_call_and_never_pauses_the_run(run_dir: Path) -> None:
    """A run with EXPERIMENT_MODE=false, its token budget nearly spent: the experiment's forecast
    from the prior would pass it, but the experiment calls no model, so its job starts."""
    home = run_dir.parent.parent
    write_artifact(run_dir / layout.THEORY, THEORY)
    (run_dir / layout.LLM_CALLS).write_text(
        json.dumps({"role": "writer", "scope": "theory_plan", "tokens_in": 11_000, "tokens_out": 500}) + "\n"
    )
    before_job(
        run_dir, "experiment", 1, Settings.from_mapping({"LLM_BACKEND": "local", "EXPERIMENT_MODE": "false"}), home
    )
    forecast = read_forecasts(run_dir)["experiment"]
    assert (forecast.calls, forecast.basis) == (0, "no experiment: EXPERIMENT_MODE=false")
    assert pause_request(run_dir) is None
