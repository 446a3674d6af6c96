"""Status polls of a run with a large call log: what one GET /api/runs/{id} costs the server.

A run whose survey is done (its card shows what its calls used) and whose `llm_calls.jsonl` holds
SIZE megabytes of realistic records (1.5 kB prompt, 0.5 kB answer each) is polled REPEAT times
through Starlette's test client, in this process: the first poll, which reads the whole log once,
then the median and the slowest of the others, which should read only what was appended (none
here). Before issue 53 every poll parsed the whole log, up to four times (the forecasts and each
stage card), inside the event loop, where every other request waited for it.

Usage: python bench/status_poll.py [--sizes 1 10 50] [--repeat 15]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import _common  # noqa: F401 - puts tests/ on sys.path

RECORD = {
    "role": "prover",
    "scope": "prove_lemma:L1",
    "tokens_in": 900,
    "tokens_out": 300,
    "cost_usd": 0.001,
    "messages": [{"role": "user", "content": "x" * 1500}],
    "response": "y" * 500,
}


def polls(megabytes: int, repeat: int) -> list[float]:
    home = Path(tempfile.mkdtemp()) / "home"
    os.environ["LEMMATA_HOME"] = str(home)
    from conftest import SURVEY_DONE, api_client, make_run

    from lemmata import layout
    from lemmata.artifacts import StageForecast
    from lemmata.run.record import DataHome

    data_home = DataHome(home)
    run_dir = make_run(data_home, "run-p", status="running", **SURVEY_DONE, **{"config.yaml": "LLM_BACKEND: local\n"})
    forecast = StageForecast(stage="survey", made_at=0, calls=2, tokens_in=1, tokens_out=1, cost_usd=0.0, basis="b")
    (run_dir / layout.FORECASTS).write_text(forecast.model_dump_json() + "\n")
    line = json.dumps(RECORD) + "\n"
    (run_dir / layout.LLM_CALLS).write_text(line * (megabytes * 1_000_000 // len(line)))
    seconds = []
    with api_client(data_home) as client:
        for _ in range(repeat):
            started = time.perf_counter()
            assert client.get("/api/runs/run-p").status_code == 200
            seconds.append(time.perf_counter() - started)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 50], help="call log sizes in MB")
    parser.add_argument("--repeat", type=int, default=15, help="polls per size")
    args = parser.parse_args()
    print(f"{'call log':>9} {'first poll ms':>14} {'median ms':>10} {'slowest ms':>11}")
    for size in args.sizes:
        seconds = polls(size, args.repeat)
        rest = seconds[1:] or seconds
        print(
            f"{size:>6} MB {seconds[0] * 1000:>14.0f} {statistics.median(rest) * 1000:>10.1f} {max(rest) * 1000:>11.1f}"
        )


if __name__ == "__main__":
    main()
