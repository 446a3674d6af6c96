"""What happens before each job of the first run (issue 26): its stage's forecast is written once,
before the stage's first job, and the run's budget decides whether the job may start.

It runs in `run_script` (run/job.py), so it holds for every job however it is run: in the
workflow's process, or as a cluster job. A job the budget stops asks for a pause (`pause.flag`,
by "budget", with the reason) and raises BudgetReached before doing anything: the driver sees the
flag and stops the run at this job boundary.
"""

from __future__ import annotations

import time
from pathlib import Path

from lemmata import layout
from lemmata.agents.roles import ROLES
from lemmata.artifacts import StageForecast, Theory, read_artifact
from lemmata.errors import BudgetReached
from lemmata.jsonl import append_line
from lemmata.llm.calllog import read_call_records
from lemmata.llm.prices import load_prices
from lemmata.llm.resolve import resolve_models
from lemmata.run.pausing import request_pause
from lemmata.run.pipeline import stage_of_rule
from lemmata.run.record import load_record
from lemmata.run.spending.budget import Budget, Spent, budget_stop
from lemmata.run.spending.forecast import (
    FORECAST_STAGES,
    Pricing,
    forecast_stage,
    planned_lemmas,
    read_forecasts,
    run_history,
)
from lemmata.settings import Settings


def before_job(run_dir: Path, rule: str, version: int, settings: Settings, home: Path) -> None:
    """The stage's forecast, made if it has none; BudgetReached when the budget stops this job."""
    stage = stage_of_rule(rule)
    if version != 1 or stage not in FORECAST_STAGES:  # a rewrite is not forecast, nor held to the budget
        return
    forecast = read_forecasts(run_dir).get(stage) or record_forecast(run_dir, stage, settings, home)
    record = load_record(run_dir)
    budget = Budget(record.budget_usd, record.budget_tokens)
    if not budget:
        return
    calls = run_dir / layout.LLM_CALLS
    spent = Spent.of(read_call_records(calls) if calls.is_file() else [])
    reason = budget_stop(budget, spent, forecast)
    if reason:
        request_pause(run_dir, "budget", reason)
        raise BudgetReached(reason)


def record_forecast(run_dir: Path, stage: str, settings: Settings, home: Path) -> StageForecast:
    model, pricing = run_pricing(settings, home)
    lemmas, skipped = planned_lemmas(run_dir), ""
    if stage == "experiment":
        lemmas, skipped = experiment_lemmas(run_dir, settings)
    if skipped:
        forecast = StageForecast(
            stage=stage, made_at=time.time(), calls=0, tokens_in=0, tokens_out=0, cost_usd=0.0, lemmas=0, basis=skipped
        )
    else:
        history = run_history(home, exclude=run_dir)
        forecast = forecast_stage(stage, history, model, pricing, lemmas, turns=turns_allowed(settings))
    append_line(run_dir / layout.FORECASTS, forecast.model_dump_json())
    return forecast


def turns_allowed(settings: Settings) -> dict[str, int]:
    """The most calls each capped role may make: per lemma (the proofs' turns and checks, the
    experiment's tests) or per stage (the survey, the writer)."""
    proof_turns = settings.THEORY_STAGE_MAX_TURNS
    return {
        "prover": proof_turns,
        "verifier": proof_turns,
        "refuter": proof_turns,
        "experiment": settings.EXPERIMENT_MAX_TURNS,
        "survey": settings.SURVEY_MAX_TURNS,
        "writer": settings.WRITER_MAX_TURNS,
    }


def experiment_lemmas(run_dir: Path, settings: Settings) -> tuple[int, str]:
    """How many lemmas the experiment agent will write tests for (those left at low confidence
    without a formal statement lemmata runs itself, which costs no call), or 0 and why none: a
    run whose experiment calls no model is not paused for its forecast."""
    from lemmata.stages.experiment.lemma_checks import (  # the experiment job imports it anyway
        experiment_decision,
        model_tested,
    )

    theory = read_artifact(run_dir / layout.THEORY, Theory)
    runs, reason = experiment_decision(settings.EXPERIMENT_MODE, theory)
    if not runs:
        return 0, f"no experiment: {reason}"
    tested = len(model_tested(theory))
    return tested, "" if tested else "no experiment call: every lemma is verified or tested by its formal statement"


def run_pricing(settings: Settings, home: Path) -> tuple[str, Pricing]:
    """The run's model ("backend/model") and what a role's tokens cost on the model it calls."""
    backend = settings.LLM_BACKEND
    models = resolve_models(backend, settings)
    prices = load_prices(home)

    def pricing(role: str, tokens_in: int, tokens_out: int) -> float | None:
        model = models.fast if role in ROLES and ROLES[role].tier == "fast" else models.active
        return prices.cost(backend, model, tokens_in, tokens_out)

    return f"{backend}/{models.active}", pricing
