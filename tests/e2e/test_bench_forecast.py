"""bench/forecast_error.py over the recorded runs: a row per stage that calls the model, and the
prior lemmata ships is the one the bench measures on those runs (so it can be measured again)."""

from __future__ import annotations

import subprocess
import sys

import yaml

from support import REPO

BENCH = [sys.executable, str(REPO / "bench/forecast_error.py")]


def test_the_bench_prints_the_forecast_error_of_each_stage_over_the_recorded_runs() -> None:
    done = subprocess.run(BENCH, capture_output=True, text=True, check=True, cwd=REPO)
    runs = int(done.stdout.split(" recorded runs", 1)[0])
    assert runs >= 5
    rows = {line.split("  ")[0].strip(): line.split() for line in done.stdout.splitlines()[5:]}
    assert set(rows) == {"survey", "direction planning", "theory", "experiment", "writer"}
    assert all(row[-4].endswith("%") and row[-1].endswith("%") for row in rows.values())


def test_the_shipped_prior_is_the_one_measured_on_the_recorded_runs() -> None:
    done = subprocess.run([*BENCH, "--prior"], capture_output=True, text=True, check=True, cwd=REPO)
    shipped = yaml.safe_load((REPO / "lemmata/run/spending/forecast_prior.yaml").read_text(encoding="utf-8"))
    assert yaml.safe_load(done.stdout) == shipped
