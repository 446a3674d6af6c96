"""What the HTTP API says and takes of a run's spending (issue 26): its budget, in a start or
resume request and in the status poll, and each stage's forecast beside what the stage used."""

from __future__ import annotations

from pathlib import Path

from lemmata.run.record import RunRecord
from lemmata.run.spending.budget import MAX_BUDGET_TOKENS, MAX_BUDGET_USD, Budget, budget_problem
from lemmata.run.spending.forecast import actual_by_stage, forecast_against_actual, read_forecasts
from lemmata.server.http import ApiError


def budget_of(body: dict) -> Budget:
    """The optional "budget_usd" (dollars) and "budget_tokens" of a start or resume request."""
    amount, tokens = body.get("budget_usd"), body.get("budget_tokens")
    if budget_problem(amount, None):
        raise ApiError(
            400, f'"budget_usd" must be a positive number of dollars of at most {MAX_BUDGET_USD:,}, e.g. 2.5, or absent'
        )
    if budget_problem(None, tokens):
        raise ApiError(
            400,
            f'"budget_tokens" must be a positive whole number of tokens of at most {MAX_BUDGET_TOKENS:,}, or absent',
        )
    return Budget(None if amount is None else float(amount), tokens)


def budget_status(record: RunRecord) -> dict[str, object] | None:
    """The run's budget for the status poll; None when it has none."""
    budget = Budget(record.budget_usd, record.budget_tokens)
    return {"usd": budget.usd, "tokens": budget.tokens, "text": budget.text} if budget else None


def stage_forecasts(run_dir: Path) -> list[dict[str, object]]:
    """Each stage's forecast, made before its first job, beside what the stage used so far."""
    actual = actual_by_stage(run_dir)
    return [
        {
            "stage": stage,
            "calls": forecast.calls,
            "tokens": forecast.tokens,
            "cost_usd": forecast.cost_usd,
            "basis": forecast.basis,
            "used_calls": actual[stage].calls if stage in actual else 0,
            "text": forecast_against_actual(forecast, actual.get(stage)),
        }
        for stage, forecast in read_forecasts(run_dir).items()
    ]
