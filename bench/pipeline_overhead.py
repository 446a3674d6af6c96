"""Pipeline overhead: wall time of a full `lemmata prove` run against the fake model server.

Scenarios: zero latency (pure overhead: Snakemake, job start-up, pdflatex) and a fixed
latency per model call, compared with the latency on the run's critical path (calls that
must happen one after another; a lemma's proof waits for the lemmas it depends on, so the
lemma part counts the longest dependency chain). Prints a table. Usage: python bench/pipeline_overhead.py [--latency 1.0] [--repeat 1]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import critical_path, search_settings  # bench/ is the script directory, hence on sys.path

from lemmata.artifacts import TheoryPlan, read_artifact
from lemmata.llm.calllog import read_call_records
from support import even_sum_session
from support.fake_llm_server import FakeLLMServer
from support.fake_search_servers import FakeSearchServers


def run_once(latency: float) -> dict[str, float]:
    with (
        tempfile.TemporaryDirectory(prefix="lemmata-bench-") as tmp,
        FakeLLMServer(latency=latency) as server,
        FakeSearchServers() as search,
    ):
        even_sum_session.install(server)
        home = Path(tmp) / "home"
        env = {
            **os.environ,
            "LEMMATA_HOME": str(home),
            "LLM_BACKEND": "local",
            "LOCAL_LLM_BASE_URL": server.openai_base_url,
            "TEXMFVAR": str(Path(tmp) / "texmf"),
            **search_settings(search),
        }
        started = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "lemmata", "prove", even_sum_session.TASK, "-o", "out"],
            env=env,
            cwd=tmp,
            check=True,
            capture_output=True,
            stdin=subprocess.DEVNULL,
        )
        wall = time.monotonic() - started
        run_dir = next((home / "runs").iterdir())
        records = list(read_call_records(run_dir / "llm_calls.jsonl"))
        plan = read_artifact(run_dir / "theory" / "plan.json", TheoryPlan)
    return {
        "wall": wall,
        "calls": len(records),
        "sum": sum(r["latency_s"] for r in records),
        "critical": critical_path(records, {lemma.id: lemma.depends_on for lemma in plan.lemmas}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per model call in the slow scenario")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    print(f"{'scenario':<22}{'wall s':>9}{'calls':>7}{'sum of call s':>15}{'critical path s':>17}{'overhead s':>12}")
    for latency in (0.0, args.latency):
        for _ in range(args.repeat):
            r = run_once(latency)
            name = f"latency {latency:g} s/call"
            print(
                f"{name:<22}{r['wall']:>9.2f}{r['calls']:>7}{r['sum']:>15.2f}{r['critical']:>17.2f}"
                f"{r['wall'] - r['critical']:>12.2f}"
            )


if __name__ == "__main__":
    main()
