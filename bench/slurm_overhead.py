"""SLURM against one machine: the same `lemmata prove` of the even-sum task, with the fake model
and search servers, under the `local` profile and under `slurm` on a one-node SLURM started on
127.0.0.1 (support.slurm_cluster; root, Debian's packages). Then what the slurm extra
costs a run that does not use it: the time from `lemmata prove` to its first job.

Prints two tables:
- per profile: wall time, the lemma jobs' span (first start to last end, from the run's job
  events), the experiment's, and the overhead of each cluster job against the local run;
- time to the first job of a local run: without the extra, with it and a controller answering,
  with it and a SLURM configuration but no controller (the reason it is an extra).

Usage: python bench/slurm_overhead.py --slurm-venv .venv-slurm [--repeat 1]
       python bench/slurm_overhead.py --startup-only [--lemmata "python -m lemmata"] [--cwd DIR]
(--lemmata/--cwd: time another checkout's start, e.g. the commit before the profiles.)
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import search_settings  # bench/ is the script directory, hence on sys.path

from support import even_sum_session
from support.fake_llm_server import FakeLLMServer
from support.fake_search_servers import FakeSearchServers
from support.slurm_cluster import SlurmCluster, install_packages


def prove(command: list[str], home: Path, env: dict[str, str], cwd: Path, *options: str) -> tuple[float, Path]:
    started = time.monotonic()
    subprocess.run(
        [*command, "prove", even_sum_session.TASK, "-o", str(home / "out"), *options],
        env=env,
        cwd=cwd,
        check=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )
    return time.monotonic() - started, next((home / "runs").iterdir())


def job_spans(run_dir: Path) -> dict[str, tuple[float, float]]:
    """rule -> (first start, last end), from the lemmata logger's job events."""
    started: dict[int, tuple[str, float]] = {}
    spans: dict[str, tuple[float, float]] = {}
    for line in (run_dir / "logs" / "events.jsonl").read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("event") == "job_info":
            started[event["jobid"]] = (event["rule_name"], event["t"])
        elif event.get("event") == "job_finished" and event["job_id"] in started:
            rule, begin = started[event["job_id"]]
            first, last = spans.get(rule, (begin, event["t"]))
            spans[rule] = (min(first, begin), max(last, event["t"]))
    return spans


def first_job_delay(run_dir: Path, started_at: float) -> float:
    first = json.loads((run_dir / "logs" / "events.jsonl").read_text(encoding="utf-8").splitlines()[0])["t"]
    return first - started_at


def environment(home: Path, llm: FakeLLMServer, search: FakeSearchServers, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "LEMMATA_HOME": str(home),
        "LLM_BACKEND": "local",
        "LOCAL_LLM_BASE_URL": llm.openai_base_url,
        "TEXMFVAR": str(home / "texmf"),
        **search_settings(search),
        **extra,
    }


def compare_profiles(slurm_venv: Path, repeat: int) -> None:
    install_packages()
    rows = []
    with (
        tempfile.TemporaryDirectory(prefix="lemmata-bench-") as tmp,
        FakeLLMServer() as llm,
        FakeSearchServers() as search,
    ):
        even_sum_session.install(llm)
        cluster = SlurmCluster(Path(tmp) / "slurm")
        cluster.start()
        try:
            for attempt in range(repeat):
                for profile, command in (
                    ("local", [sys.executable, "-m", "lemmata"]),
                    ("slurm", [str(slurm_venv / "bin" / "lemmata")]),
                ):
                    home = Path(tmp) / f"{profile}-{attempt}"
                    wall, run_dir = prove(
                        command,
                        home,
                        environment(home, llm, search, **cluster.environment()),
                        Path(tmp),
                        "--profile",
                        profile,
                    )
                    spans = job_spans(run_dir)
                    rows.append(
                        (profile, wall, *(spans[rule][1] - spans[rule][0] for rule in ("prove_lemma", "experiment")))
                    )
        finally:
            cluster.stop()
    print("| profile | wall s | lemma jobs s | experiment s |")
    print("|---|---|---|---|")
    for profile in ("local", "slurm"):
        mine = [row for row in rows if row[0] == profile]
        print(
            f"| {profile} | " + " | ".join(f"{statistics.median(row[i] for row in mine):.1f}" for i in (1, 2, 3)) + " |"
        )
    local = [row for row in rows if row[0] == "local"]
    slurm = [row for row in rows if row[0] == "slurm"]
    extra = [statistics.median(r[i] for r in slurm) - statistics.median(r[i] for r in local) for i in (1, 2, 3)]
    print(
        f"\nSLURM adds {extra[0]:.1f} s to the run: {extra[1]:.1f} s to the lemma group job and {extra[2]:.1f} s to "
        f"the experiment job (per cluster job: about {(extra[1] + extra[2]) / 2:.1f} s)."
    )


def startup_table(commands: dict[str, tuple[list[str], Path, dict[str, str]]], repeat: int) -> None:
    print("\n| lemmata | to first job s (median) | runs |")
    print("|---|---|---|")
    with (
        tempfile.TemporaryDirectory(prefix="lemmata-bench-") as tmp,
        FakeLLMServer() as llm,
        FakeSearchServers() as search,
    ):
        even_sum_session.install(llm)
        for number, (label, (command, cwd, extra)) in enumerate(commands.items()):
            delays = []
            for attempt in range(repeat):
                home = Path(tmp) / f"{number}-{attempt}"
                started = time.time()  # the job events' clock
                subprocess.run(
                    [*command, "prove", even_sum_session.TASK, "-o", str(home / "out")],
                    env=environment(home, llm, search, **extra),
                    cwd=cwd,
                    check=True,
                    capture_output=True,
                    stdin=subprocess.DEVNULL,
                )
                delays.append(first_job_delay(next((home / "runs").iterdir()), started))
            print(f"| {label} | {statistics.median(delays):.2f} | {len(delays)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slurm-venv", type=Path, default=Path(".venv-slurm"))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--startup-only", action="store_true")
    parser.add_argument("--lemmata", default=f"{sys.executable} -m lemmata", help="the command timed in --startup-only")
    parser.add_argument("--cwd", type=Path, default=Path.cwd(), help="where --lemmata runs (a checkout, for -m)")
    args = parser.parse_args()
    if args.startup_only:
        startup_table({args.lemmata: (shlex.split(args.lemmata), args.cwd.resolve(), {})}, max(args.repeat, 3))
        return
    slurm_venv = args.slurm_venv.resolve()
    compare_profiles(slurm_venv, args.repeat)
    with tempfile.TemporaryDirectory(prefix="lemmata-slurm-") as tmp:
        cluster = SlurmCluster(Path(tmp))
        cluster.start()
        try:
            commands = {
                "without the slurm extra": ([sys.executable, "-m", "lemmata"], Path(tmp), {}),
                "with the extra, a controller answering": (
                    [str(slurm_venv / "bin" / "lemmata")],
                    Path(tmp),
                    cluster.environment(),
                ),
            }
            startup_table(commands, max(args.repeat, 3))
        finally:
            cluster.stop()
        # SLURM_CONF still names the configuration; no controller answers any more.
        startup_table(
            {
                "with the extra, a configuration, no controller": (
                    [str(slurm_venv / "bin" / "lemmata")],
                    Path(tmp),
                    cluster.environment(),
                )
            },
            1,
        )


if __name__ == "__main__":
    main()
