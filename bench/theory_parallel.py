"""Theory stage parallelism: wall time of proving n lemmas against the fake model server.

For each plan size and shape, a fresh run directory goes through the upstream stages at zero
latency (whatever Snakemake needs for `theory/plan.json`), then gets a seeded plan of n lemmas:

- independent: no dependencies, so all lemma jobs can run at once;
- chained: layers of width ceil(sqrt(n)), every lemma of a layer depending on all lemmas of the
  layer before.

Then Snakemake makes `theory.json` with a fixed latency per model call, and the table compares
its wall time with the critical-path floor: latency x (layers on the longest dependency chain x
calls per lemma + calls of the assembly stages), and the same floor measured from the run's
call log. Every lemma gets a confident proof citing its dependencies, so each costs exactly one
prover call (no verifier, no retry). Targets: wall / floor <= 1.25, and 8 independent lemmas
in less than 1.5 x the time of 1.

Usage: python bench/theory_parallel.py [--latency 5.0] [--sizes 1,4,8,16] [--jobs 16]
                                       [--shapes independent,chained]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _common import critical_path  # bench/ is the script directory, hence on sys.path

from lemmata import layout
from lemmata.artifacts import Lemma, TaskInput, TheoryPlan, write_artifact
from lemmata.llm.calllog import read_call_records
from lemmata.run.create import create_run
from lemmata.run.record import DataHome, RunRecord, new_session_id
from lemmata.run.workflow import snakemake_command, workflow_environment
from lemmata.settings import Settings
from support import even_sum_session
from support.fake_llm_server import FakeLLMServer, RecordedRequest, prompt_text

SHAPES = ("independent", "chained")
PROVER_CALLS_PER_LEMMA = 1  # confident, citing proofs: auto-accepted without a verifier call
ASSEMBLY_CALLS = 3  # assembler, consistency, crystallizer; the citations pass, so no retry
RATIO_TARGET = 1.25
SCALING_SIZE, SCALING_TARGET = 8, 1.5
ASSESSMENT = {
    "confidence": 0.95,
    "completeness": "complete",
    "gaps": [],
    "weakest_step": "none",
    "techniques_used": ["induction"],
}
LEMMA_BEING_PROVED = re.compile(r"Lemma to prove now \[([^\]]+)\]")
USABLE_LEMMAS = re.compile(r"Earlier lemmas you may use[^\n]*\n(.*?)(?:\n\s*\n|\Z)", re.DOTALL)  # up to a blank line
LISTED_LEMMA = re.compile(r"^\[([^\]]+)\]", re.MULTILINE)
ASSEMBLER_LISTED_LEMMA = re.compile(r"^\[([^\]]+)\] \(", re.MULTILINE)  # "[L1] (proved, confidence 0.95) ..."


@dataclass(frozen=True)
class Measurement:
    """One configuration's theory stage: wall time, its two floors, and the prover calls made."""

    shape: str
    size: int
    layers: int
    wall: float
    floor: float
    log_floor: float
    prover_calls: int


def seeded_plan(size: int, shape: str) -> TheoryPlan:
    """Lemmas L1..Ln with distinct statements; chained: each layer depends on the whole previous one."""
    width = size if shape == "independent" else math.ceil(math.sqrt(size))
    lemmas = []
    for index in range(size):
        layer = index // width
        previous_layer = range((layer - 1) * width, layer * width) if layer else range(0)
        lemmas.append(
            Lemma(
                id=f"L{index + 1}",
                statement=f"For every integer $k$, $2k + {2 * index}$ is even.",
                depends_on=[f"L{i + 1}" for i in previous_layer],
            )
        )
    return TheoryPlan(goal=even_sum_session.PLANNER["goal"], level="full", lemmas=lemmas)


def longest_chain(plan: TheoryPlan) -> int:
    """Lemmas on the longest dependency chain (plan order lists dependencies first)."""
    depth: dict[str, int] = {}
    for lemma in plan.lemmas:
        depth[lemma.id] = 1 + max((depth[d] for d in lemma.depends_on), default=0)
    return max(depth.values())


def prover_answer(request: RecordedRequest) -> str:
    """A confident proof of the requested lemma that cites every lemma the prompt offers."""
    prompt = prompt_text(request.body)
    lemma_id = LEMMA_BEING_PROVED.search(prompt).group(1)
    usable = USABLE_LEMMAS.search(prompt)
    cited = LISTED_LEMMA.findall(usable.group(1)) if usable else []
    uses = " and ".join(f"[{i}]" for i in cited) or "the definition of evenness"
    proof = (
        f"Proof of {lemma_id}. Write the number as twice an integer, using {uses}; "
        "the integers are closed under addition, so the witness is an integer. QED"
    )
    return proof + "\n\n```json\n" + json.dumps(ASSESSMENT) + "\n```"


def assembler_answer(request: RecordedRequest) -> str:
    """An assembled proof citing every listed lemma, so the consistency check passes at once."""
    cited = " ".join(f"[{i}]" for i in ASSEMBLER_LISTED_LEMMA.findall(prompt_text(request.body)))
    return f"Combine the lemmas {cited}: each gives a factor of two, and their sum is even."


def install_answers(server: FakeLLMServer) -> None:
    """The even-sum session for the upstream stages; theory roles that scale with any plan."""
    even_sum_session.install(server)
    server.set_default("prover", prover_answer)
    server.set_default("assembler", assembler_answer)
    server.set_default("consistency", json.dumps({"consistent": True, "issues": []}))
    server.set_default("crystallizer", even_sum_session.THEOREM)


def new_run(home: Path, server: FakeLLMServer) -> Path:
    """A run directory as `lemmata prove` makes it; default settings, so the user's .env cannot skew
    timings, and no search (the upstream stages only set the theory up)."""
    settings = Settings.from_mapping(
        {"LLM_BACKEND": "local", "LOCAL_LLM_BASE_URL": server.openai_base_url, "SEARCH_TOOLS": False}
    )
    session_id = new_session_id()
    run_dir = DataHome(home).run_dir(session_id)
    record = RunRecord(
        session_id=session_id,
        mode="prove",
        task=even_sum_session.TASK,
        output_dir=str(home / "out"),
        gate_mode=settings.GATE_MODE,
        backend="local",
    )
    create_run(run_dir, record, TaskInput(session_id=session_id, mode="prove", task=even_sum_session.TASK), settings)
    return run_dir


def make(run_dir: Path, target: str, jobs: int, env: dict[str, str]) -> float:
    """Run Snakemake on one target; its wall time in seconds."""
    started = time.monotonic()
    result = subprocess.run(
        [*snakemake_command(run_dir, jobs), target],
        cwd=run_dir,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    wall = time.monotonic() - started
    if result.returncode != 0:
        raise RuntimeError(f"snakemake {target} failed in {run_dir}:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    return wall


def measure(home: Path, server: FakeLLMServer, size: int, shape: str, latency: float, jobs: int) -> Measurement:
    """Upstream stages at zero latency, then the seeded plan, then `theory.json` timed at `latency`."""
    run_dir = new_run(home, server)
    env = {**workflow_environment(run_dir), "LEMMATA_HOME": str(home)}  # jobs must not touch the user's home
    server.latency = 0.0
    make(run_dir, "theory/plan.json", jobs, env)
    plan = seeded_plan(size, shape)
    write_artifact(run_dir / "theory" / "plan.json", plan)
    (run_dir / layout.LLM_CALLS).unlink(missing_ok=True)  # only the theory stage's calls count
    server.latency = latency
    wall = make(run_dir, "theory.json", jobs, env)
    records = list(read_call_records(run_dir / layout.LLM_CALLS))
    layers = longest_chain(plan)
    return Measurement(
        shape=shape,
        size=size,
        layers=layers,
        wall=wall,
        floor=latency * (layers * PROVER_CALLS_PER_LEMMA + ASSEMBLY_CALLS),
        log_floor=critical_path(records, {lemma.id: lemma.depends_on for lemma in plan.lemmas}),
        prover_calls=sum(record["role"] == "prover" for record in records),
    )


def row(m: Measurement, single_lemma_wall: float | None) -> str:
    """One table line; the scaling column only for independent plans (chained ones add layers)."""
    scaling = f"{m.wall / single_lemma_wall:.2f}" if m.shape == "independent" and single_lemma_wall else "-"
    return (
        f"{m.shape:<13}{m.size:>4}{m.layers:>8}{m.wall:>9.2f}{m.floor:>9.2f}{m.log_floor:>13.2f}"
        f"{m.wall / m.floor:>12.2f}{m.prover_calls:>14}{scaling:>11}"
    )


def targets(results: list[Measurement]) -> list[str]:
    """The targets under the table, each with whether this run met it."""
    worst = max(results, key=lambda m: m.wall / m.floor)
    lines = [
        f"target wall/floor <= {RATIO_TARGET}: {verdict(worst.wall / worst.floor <= RATIO_TARGET)} "
        f"(worst {worst.wall / worst.floor:.2f}, {worst.shape} n={worst.size})"
    ]
    independent = {m.size: m.wall for m in results if m.shape == "independent"}
    if 1 in independent and SCALING_SIZE in independent:
        scaling = independent[SCALING_SIZE] / independent[1]
        lines.append(
            f"target {SCALING_SIZE} independent lemmas < {SCALING_TARGET} x the time of 1: "
            f"{verdict(scaling < SCALING_TARGET)} ({scaling:.2f} x)"
        )
    miscounted = [m for m in results if m.prover_calls != m.size * PROVER_CALLS_PER_LEMMA]
    lines.append(f"prover calls = n (one per lemma): {verdict(not miscounted)}")
    return lines


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def positive_latency(text: str) -> float:
    """Seconds per call; zero would make every floor zero and every ratio meaningless."""
    latency = float(text)
    if latency <= 0:
        raise argparse.ArgumentTypeError("the latency must be positive")
    return latency


def size_list(text: str) -> list[int]:
    """Comma-separated plan sizes, ascending (the 1-lemma run comes first: the others compare with it)."""
    sizes = sorted({int(size) for size in text.split(",")})
    if min(sizes) < 1:
        raise argparse.ArgumentTypeError("plan sizes must be at least 1")
    return sizes


def shape_list(text: str) -> list[str]:
    """Comma-separated shapes, independent first (its 1-lemma run is the scaling reference)."""
    unknown = set(text.split(",")) - set(SHAPES)
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown shape {', '.join(sorted(unknown))}; choose from {', '.join(SHAPES)}")
    return [shape for shape in SHAPES if shape in text.split(",")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=positive_latency, default=5.0, help="seconds per model call")
    parser.add_argument("--sizes", type=size_list, default="1,4,8,16", help="lemmas per plan, comma-separated")
    parser.add_argument("--jobs", type=int, default=16, help="Snakemake --cores (lemma jobs wait on I/O)")
    parser.add_argument("--shapes", type=shape_list, default=",".join(SHAPES), help="independent and/or chained")
    args = parser.parse_args()
    print(f"latency {args.latency:g} s/call, --cores {args.jobs}")
    print(
        f"{'shape':<13}{'n':>4}{'layers':>8}{'wall s':>9}{'floor s':>9}{'log floor s':>13}"
        f"{'wall/floor':>12}{'prover calls':>14}{'x 1 lemma':>11}"
    )
    results: list[Measurement] = []
    with tempfile.TemporaryDirectory(prefix="lemmata-bench-") as tmp, FakeLLMServer() as server:
        install_answers(server)
        for shape in args.shapes:
            for size in args.sizes:
                results.append(measure(Path(tmp), server, size, shape, args.latency, args.jobs))
                single = next((m.wall for m in results if m.shape == "independent" and m.size == 1), None)
                print(row(results[-1], single), flush=True)
    print()
    print("\n".join(targets(results)))


if __name__ == "__main__":
    main()
