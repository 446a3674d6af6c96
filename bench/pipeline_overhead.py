"""Pipeline overhead: wall time of a full `lemmata prove` run against the fake model server.

Scenarios: zero latency (pure overhead: Snakemake, job start-up, pdflatex) and a fixed latency
per model call. For each it prints the wall time, the time a model call was in flight (the union
of the calls' intervals, from the call log), the overhead (wall minus in flight), the ratio
wall / in flight, and the latency on the run's critical path (calls that must happen one after
another; a lemma waits only for the lemmas it depends on); then the medians of the repeats.
The runs share the machine's caches (TeX formats, embeddings), as a user's runs of one task do;
`--cold-checks` gives each run caches of its own but the TeX formats (made once per machine), as
a new task meets them. (Coq's acceptances are not remembered since issue 52: every file is
checked anew either way.)
Usage: python bench/pipeline_overhead.py [--latency 1.0] [--repeat 5] [--cold-checks]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import critical_path, search_settings  # bench/ is the script directory, hence on sys.path

from lemmata.artifacts import TheoryPlan, read_artifact
from lemmata.llm.calllog import read_call_records
from lemmata.machine_cache import cache_directory
from support import even_sum_session
from support.fake_llm_server import FakeLLMServer
from support.fake_search_servers import FakeSearchServers


def run_once(latency: float, cold_checks: bool = False) -> dict[str, float]:
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
        if cold_checks:
            env["XDG_CACHE_HOME"] = str(caches_with_the_tex_formats_alone(Path(tmp)))
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
        "in flight": in_flight(records),
        "critical": critical_path(records, {lemma.id: lemma.depends_on for lemma in plan.lemmas}),
    }


def caches_with_the_tex_formats_alone(tmp: Path) -> Path:
    """A cache folder for one run holding a copy of the machine's TeX formats and nothing else."""
    caches = tmp / "cache"
    formats = cache_directory("tex-formats")
    (caches / "lemmata").mkdir(parents=True, mode=0o700)
    if formats.is_dir():
        shutil.copytree(formats, caches / "lemmata" / "tex-formats")
    return caches


def in_flight(records: list[dict]) -> float:
    """Seconds during which at least one model call was in flight (a record ends at its timestamp)."""
    spans = sorted((r["timestamp"] - r["latency_s"], r["timestamp"]) for r in records)
    total, current_start, current_end = 0.0, None, None
    for start, end in spans:
        if current_end is None or start > current_end:
            if current_end is not None:
                total += current_end - current_start
            current_start, current_end = start, end
        else:
            current_end = max(current_end, end)
    return total + (current_end - current_start if current_end is not None else 0.0)


COLUMNS = (
    f"{'scenario':<26}{'wall s':>9}{'calls':>7}{'in flight s':>13}{'overhead s':>12}{'ratio':>8}{'critical s':>12}"
)


def row(name: str, r: dict[str, float]) -> str:
    overhead = r["wall"] - r["in flight"]
    ratio = f"{r['wall'] / r['in flight']:.2f}" if r["in flight"] > 0.05 else "-"
    return (
        f"{name:<26}{r['wall']:>9.2f}{r['calls']:>7.0f}{r['in flight']:>13.2f}{overhead:>12.2f}{ratio:>8}"
        f"{r['critical']:>12.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per model call in the slow scenario")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--cold-checks", action="store_true", help="each run with no embeddings remembered (a new task)"
    )
    args = parser.parse_args()
    print(COLUMNS)
    medians = []
    for latency in (0.0, args.latency):
        results = []
        for _ in range(args.repeat):
            results.append(run_once(latency, args.cold_checks))
            print(row(f"latency {latency:g} s/call", results[-1]), flush=True)
        median = {key: statistics.median(r[key] for r in results) for key in results[0]}
        median["overhead"] = statistics.median(r["wall"] - r["in flight"] for r in results)
        medians.append((f"median, {latency:g} s/call", median))
    print()
    print(COLUMNS)
    for name, median in medians:
        print(row(name, median) + f"   (median overhead of the runs: {median['overhead']:.2f} s)")


if __name__ == "__main__":
    main()
