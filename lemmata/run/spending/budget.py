"""A run's budget (issue 26): in USD, in tokens (for a free model), or both.

Before each job of a stage that calls the model (run/spending/stage_boundary.py), the run asks whether it
may start: not when the budget is spent, nor, before the stage's first call, when what is spent
plus the stage's forecast would pass it. The job then asks for a pause, and the run stops at
that job boundary as with `lemmata pause`: running jobs finish, nothing is half-written, and
`lemmata resume ID --budget N` goes on with a larger budget.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lemmata.artifacts import StageForecast
from lemmata.errors import UserError
from lemmata.home_layout import PRICES
from lemmata.llm.calllog import call_tokens
from lemmata.llm.prices import FREE_BACKENDS, PriceTable, load_prices, usd
from lemmata.llm.resolve import resolve_models
from lemmata.run.record import load_record, run_settings, save_record
from lemmata.run.spending.costs import CostSummary, stage_of_scope

#: The largest budgets accepted: finite, so that every comparison with what is spent means
#: something; far above any run (a full run costs dollars and a few million tokens), so a value
#: above them is a typo.
MAX_BUDGET_USD = 100_000
MAX_BUDGET_TOKENS = 10_000_000_000


@dataclass(frozen=True)
class Budget:
    usd: float | None = None
    tokens: int | None = None

    def __bool__(self) -> bool:
        return self.usd is not None or self.tokens is not None

    @property
    def text(self) -> str:
        """ "$0.50", "200,000 tokens", "$0.50 and 200,000 tokens"; "none"."""
        parts = ([usd(self.usd)] if self.usd is not None else []) + (
            [f"{self.tokens:,} tokens"] if self.tokens is not None else []
        )
        return " and ".join(parts) or "none"

    def resume_command(self, session_id: str) -> str:
        """How to go on with a larger budget of the kinds this one has."""
        options = (["--budget USD"] if self.usd is not None else []) + (
            ["--budget-tokens N"] if self.tokens is not None else []
        )
        return " ".join([f"lemmata resume {session_id}", *options])


@dataclass(frozen=True)
class Spent:
    """What a run's calls used so far, and the stages they were made in."""

    usd: float
    unknown_calls: int
    tokens: int
    stages: frozenset[str]

    @classmethod
    def of(cls, records: Iterable[Mapping[str, Any]]) -> Spent:
        cost, tokens, stages = CostSummary(), 0, set()
        for record in records:
            cost.add_record(record)
            tokens += sum(call_tokens(record))
            stages.add(stage_of_scope(str(record.get("scope", ""))))
        return cls(cost.known_usd, cost.unknown_calls, tokens, frozenset(stages))


def budget_stop(budget: Budget, spent: Spent, forecast: StageForecast) -> str | None:
    """Why the next job of `forecast.stage` must not start, or None. A stage forecast to make no
    call is never stopped: it costs nothing."""
    if forecast.calls == 0:
        return None
    starting = forecast.stage not in spent.stages
    stage = f"the {forecast.stage} stage"
    if budget.usd is not None:
        if spent.usd >= budget.usd:
            return f"the budget of {usd(budget.usd)} is spent ({usd(spent.usd)} so far)"
        if starting and forecast.cost_usd is not None and spent.usd + forecast.cost_usd > budget.usd:
            return (
                f"{stage} is forecast to cost {usd(forecast.cost_usd)} ({forecast.calls} calls); with "
                f"{usd(spent.usd)} spent so far, that would pass the budget of {usd(budget.usd)}"
            )
    if budget.tokens is not None:
        if spent.tokens >= budget.tokens:
            return f"the budget of {budget.tokens:,} tokens is spent ({spent.tokens:,} so far)"
        if starting and spent.tokens + forecast.tokens > budget.tokens:
            return (
                f"{stage} is forecast to use {forecast.tokens:,} tokens ({forecast.calls} calls); with "
                f"{spent.tokens:,} used so far, that would pass the budget of {budget.tokens:,} tokens"
            )
    return None


#: Where a budget comes from when the command line gives none.
BUDGET_USD_VARIABLE = "LEMMATA_BUDGET_USD"
BUDGET_TOKENS_VARIABLE = "LEMMATA_BUDGET_TOKENS"


def budget_from_environment(environ: Mapping[str, str]) -> Budget:
    """LEMMATA_BUDGET_USD / LEMMATA_BUDGET_TOKENS; UserError naming the variable when not a positive number."""
    amount = _positive(environ, BUDGET_USD_VARIABLE, float, "a positive number of dollars, e.g. 2.50")
    tokens = _positive(environ, BUDGET_TOKENS_VARIABLE, int, "a positive whole number of tokens, e.g. 200000")
    return Budget(amount, None if tokens is None else int(tokens))


def _positive(environ: Mapping[str, str], name: str, kind: type[float] | type[int], what: str) -> float | None:
    text = environ.get(name, "").strip()
    if not text:
        return None
    try:
        value = kind(text.replace("_", ""))
    except ValueError:
        value = 0
    ceiling = MAX_BUDGET_USD if kind is float else MAX_BUDGET_TOKENS
    if not 0 < value <= ceiling:  # NaN is not in any range
        raise UserError(f"{name}={text[:40]!r} is not {what}, at most {ceiling:,}: fix it or unset it")
    return value


def budget_problem(amount: object, tokens: object) -> str | None:
    """What is wrong with a budget given as values (a request's JSON, an option), or None: a USD
    amount must be a finite number in (0, MAX_BUDGET_USD], tokens a whole number in
    [1, MAX_BUDGET_TOKENS]. NaN, infinity and 1e999 are refused, never dropped or compared."""
    if amount is not None and (
        isinstance(amount, bool)
        or not isinstance(amount, int | float)
        or not math.isfinite(amount)
        or not 0 < amount <= MAX_BUDGET_USD
    ):
        return f"a budget in USD must be a positive number of dollars of at most {MAX_BUDGET_USD:,}, e.g. 2.5"
    if tokens is not None and (
        isinstance(tokens, bool) or not isinstance(tokens, int) or not 0 < tokens <= MAX_BUDGET_TOKENS
    ):
        return f"a budget in tokens must be a positive whole number of at most {MAX_BUDGET_TOKENS:,}"
    return None


def check_priced(budget: Budget, backend: str, models: Iterable[str], prices: PriceTable, home: Path) -> None:
    """A budget in USD needs the price of each model the run calls: UserError naming the one
    without (a free backend costs nothing: its USD budget is never reached, and needs no price)."""
    if budget.usd is None or backend in FREE_BACKENDS:
        return
    for model in models:
        if model not in prices.models:
            raise UserError(
                f"a budget in USD needs the price of model {model!r} ({backend}), and lemmata has none: add it "
                f"to {Path(home) / PRICES} (docs/configuration.md), or give a budget in tokens "
                f"(--budget-tokens, {BUDGET_TOKENS_VARIABLE})"
            )


def change_budget(run_dir: Path, home: Path, budget: Budget) -> None:
    """A new budget for a run (resume --budget): what `budget` sets replaces the run's, the rest stays."""
    record = load_record(run_dir)
    new = Budget(budget.usd or record.budget_usd, budget.tokens or record.budget_tokens)
    settings = run_settings(run_dir)
    models = resolve_models(record.backend, settings)
    check_priced(new, record.backend, (models.active, models.fast), load_prices(home), home)
    save_record(run_dir, record, budget_usd=new.usd, budget_tokens=new.tokens)
