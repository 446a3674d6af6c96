"""Forecast error: how far each stage's forecast (run/spending/forecast.py) falls from what the stage used,
over recorded runs.

The runs are taken in the order they were made. Each is forecast the way lemmata forecasts it:
from the runs made before it (the first from the bundled prior, which was measured on these same
runs: that one forecast is in-sample), the theory before its plan (so with the earlier runs'
middle lemma count), the experiment with the run's own lemma count, each role capped at the
turns the default settings allow. The cost is priced at
claude-sonnet-4-5's prices (the recorded runs are of the free embedded model), so it weighs
tokens in and out as a provider would bill them.

It prints, per stage: the runs forecast, the mean calls and tokens used and forecast, the mean
absolute error of calls, tokens and cost in percent of the actual, and the mean signed error of
the cost (positive: the forecast was too high). `--prior` prints, instead, the prior that
lemmata/run/spending/forecast_prior.yaml holds, measured on the given runs.

Usage: python bench/forecast_error.py [RUN ...]   (a call log, a run directory or a data directory;
default: bench/data/recorded_runs/*.jsonl and tests/data/embedded_runs/*/llm_calls.jsonl)
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from lemmata import layout
from lemmata.llm.calllog import read_call_records
from lemmata.llm.prices import load_prices
from lemmata.run.spending.forecast import (
    FORECAST_STAGES,
    PER_LEMMA_STAGES,
    RecordedRun,
    Usage,
    forecast_stage,
    recorded_run,
    run_history,
)
from lemmata.run.spending.stage_boundary import turns_allowed
from lemmata.settings import Settings

REPO = Path(__file__).resolve().parent.parent
#: The turns the default settings allow: the recorded runs ran with them.
TURNS = turns_allowed(Settings.from_mapping({}))
PRICED_AS = ("vendora", "claude-sonnet-4-5")


def default_logs() -> list[Path]:
    return sorted((REPO / "bench/data/recorded_runs").glob("*.jsonl")) + sorted(
        (REPO / "tests/data/embedded_runs").glob(f"*/{layout.LLM_CALLS}")
    )


def load_runs(paths: list[Path]) -> list[tuple[str, float, RecordedRun]]:
    """(name, when it started, the run) for each call log, run directory or data directory."""
    runs = []
    for path in paths:
        if (path / "runs").is_dir():  # a data directory: its runs, with the stages they finished
            runs += [(f"{path.name}/{r.model}", 0.0, r) for r in run_history(path, limit=10_000)]
            continue
        log = path / layout.LLM_CALLS if path.is_dir() else path
        records = list(read_call_records(log))
        if not records:
            continue
        name = path.name if path.is_dir() else (log.parent.name if log.name == layout.LLM_CALLS else log.stem)
        runs.append((name, min(float(r.get("timestamp") or 0) for r in records), recorded_run(records)))
    return sorted(runs, key=lambda run: run[1])


def actual_usage(run: RecordedRun, stage: str) -> Usage:
    used = Usage()
    for role_usage in run.usage(stage, run.lemmas).values():
        used.add(role_usage)
    return used


def percent(forecast: float, actual: float) -> float:
    return 100.0 * (forecast - actual) / actual if actual else 0.0


def error_table(runs: list[RecordedRun]) -> list[str]:
    prices = load_prices(Path("/nonexistent"))  # the bundled table only: no user's prices

    def pricing(role: str, tokens_in: int, tokens_out: int) -> float | None:
        return prices.cost(*PRICED_AS, tokens_in, tokens_out)

    rows: dict[str, list[tuple[float, float, float, float, float, float]]] = defaultdict(list)
    for index, run in enumerate(runs):
        for stage in FORECAST_STAGES:
            if stage not in run.stages:
                continue
            lemmas = run.lemmas if stage in PER_LEMMA_STAGES and stage != "theory" else None
            earlier = runs[:index][::-1]  # newest first, as run_history gives them
            forecast = forecast_stage(stage, earlier, run.model, pricing, lemmas, turns=TURNS)
            used = actual_usage(run, stage)
            cost = pricing("", round(used.tokens_in), round(used.tokens_out)) or 0.0
            rows[stage].append(
                (
                    used.calls,
                    forecast.calls,
                    used.tokens_in + used.tokens_out,
                    forecast.tokens,
                    cost,
                    forecast.cost_usd or 0.0,
                )
            )
    header = (
        f"{'stage':<20} {'runs':>4} {'calls':>6} {'fcast':>6} {'tokens':>7} {'fcast':>7} "
        f"{'|err| calls':>11} {'|err| tokens':>12} {'|err| cost':>10} {'bias cost':>9}"
    )
    lines = [header, "-" * len(header)]
    for stage in FORECAST_STAGES:
        if not rows[stage] or not any(row[0] for row in rows[stage]):
            continue
        table = rows[stage]

        def mean(column: int, table: list[tuple[float, ...]] = table) -> float:
            return statistics.fmean(row[column] for row in table)

        def abs_error(actual: int, forecast: int, table: list[tuple[float, ...]] = table) -> float:
            return statistics.fmean(abs(percent(row[forecast], row[actual])) for row in table)

        bias = statistics.fmean(percent(row[5], row[4]) for row in table)
        lines.append(
            f"{stage:<20} {len(table):>4} {mean(0):>6.1f} {mean(1):>6.1f} {mean(2):>7.0f} {mean(3):>7.0f} "
            f"{abs_error(0, 1):>10.0f}% {abs_error(2, 3):>11.0f}% {abs_error(4, 5):>9.0f}% {bias:>+8.0f}%"
        )
    return lines


def prior_yaml(runs: list[RecordedRun], lemmas: int = 3) -> str:
    """The mean run, its per-lemma part for `lemmas` lemmas, as forecast_prior.yaml holds it."""
    lines = [f"measured_on: {runs[0].model}", f"lemmas: {lemmas}"]
    for part in ("fixed", "per_lemma"):
        lines.append(f"{part}:")
        for stage in FORECAST_STAGES:
            roles: dict[str, Usage] = defaultdict(Usage)
            for run in runs:
                scale = lemmas / max(1, run.lemmas) if part == "per_lemma" else 1.0
                for role, used in getattr(run, part).get(stage, {}).items():
                    roles[role].add(used, scale / len(runs))
            if roles:
                lines.append(f"  {stage}:")
                lines += [
                    f"    {role}: [{u.calls:.2f}, {u.tokens_in:.0f}, {u.tokens_out:.0f}]" for role, u in roles.items()
                ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="*", type=Path, help="call logs, run directories or data directories")
    parser.add_argument("--prior", action="store_true", help="print the prior measured on the runs instead")
    args = parser.parse_args()
    loaded = load_runs(args.runs or default_logs())
    if len(loaded) < 2:
        sys.exit(f"forecast_error: {len(loaded)} recorded run(s) found; the bench needs at least 2")
    runs = [run for _, _, run in loaded]
    if args.prior:
        print(prior_yaml(runs))
        return
    print(f"{len(runs)} recorded runs, in the order they were made: " + ", ".join(name for name, _, _ in loaded))
    print(f"cost priced as {PRICED_AS[1]}; errors in percent of what the stage used\n")
    print("\n".join(error_table(runs)))


if __name__ == "__main__":
    main()
