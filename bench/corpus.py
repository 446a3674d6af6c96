"""The task corpus on the real model: every task of bench/data/corpus/tasks.json run in turn.

Each task runs as a researcher runs it (`lemmata prove`, `explore` or `from-papers`, no terminal, so
every gate takes its default), one after the other in one fresh data directory that shares the
installed model's prompt states, as embedded_run.py does. A from-papers task reaches the fake
search servers of tests/support (127.0.0.1: the papers it names are theirs); every other task runs
with SEARCH_TOOLS=false, as the README's main command. For each task the bench prints the wall
time, the model calls, the run's final status, its main result, each lemma's status, the prose
repairs the writer made (paper_v1.json) and every defect the paper audit finds in the delivered
PDF (tests/support/paper_audit.py: what a researcher checks). Then the median and the longest
time. Exit 1 when a task did not end completed with a PDF, or its paper has a defect.

Usage: python bench/corpus.py [--only NAME ...] [--backend embedded] [--corpus FILE] [--keep DIR]
                              [--timeout 1800]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from _common import search_settings  # bench/ is the script directory, hence on sys.path

from lemmata import layout
from lemmata.artifacts import PaperMeta, Theory, read_artifact
from lemmata.errors import ArtifactError
from lemmata.home_layout import MODELS, PROMPT_STATES
from lemmata.llm.calllog import read_call_records
from lemmata.run.record import load_record
from lemmata.settings import lemmata_home
from lemmata.verification.ladder import label
from support.fake_search_servers import FakeSearchServers
from support.paper_audit import audit_run

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO / "bench" / "data" / "corpus" / "tasks.json"
MODES = ("prove", "explore", "from-papers")
#: The kinds issue 54 asks the corpus to hold, each at least once.
REQUIRED_KINDS = (
    "divisibility",
    "congruences",
    "real inequality",
    "sums and induction",
    "sequences",
    "statement with parameters",
    "combinatorial count",
    "false statement",
    "explore",
    "from-papers",
)


@dataclass(frozen=True)
class Task:
    name: str
    mode: str
    kind: str
    why: str
    task: str = ""
    domain: str = ""
    papers: tuple[str, ...] = ()

    def arguments(self) -> list[str]:
        """The `lemmata` command line of this task, without the output folder."""
        if self.mode == "prove":
            return ["prove", self.task]
        if self.mode == "explore":
            return ["explore", self.domain]
        return ["from-papers", *self.papers]


def load_corpus(path: Path) -> list[Task]:
    """The corpus's tasks; a malformed entry is an error naming it."""
    entries = json.loads(path.read_text(encoding="utf-8"))["tasks"]
    tasks, names = [], set()
    for entry in entries:
        name = entry.get("name", "?")
        task = Task(
            name=name,
            mode=entry.get("mode", ""),
            kind=entry.get("kind", ""),
            why=entry.get("why", ""),
            task=entry.get("task", ""),
            domain=entry.get("domain", ""),
            papers=tuple(entry.get("papers", ())),
        )
        needed = {"prove": task.task, "explore": task.domain, "from-papers": task.papers}.get(task.mode)
        if not needed or not task.why or not task.kind or name in names:
            raise ValueError(
                f"{path}: task {name!r} needs a unique name, a mode of {MODES}, its input, a kind and a why"
            )
        names.add(name)
        tasks.append(task)
    return tasks


@dataclass
class TaskRun:
    """What one task's run came to."""

    task: Task
    wall_s: float
    status: str = "no run"
    calls: int = 0
    main_result: str = ""
    lemmas: list[str] = field(default_factory=list)
    repairs: dict[str, int] = field(default_factory=dict)
    defects: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.status != "completed" or bool(self.defects)


def read_run(task: Task, run_dir: Path | None, wall_s: float, last_words: str = "") -> TaskRun:
    """The run's record, theory, paper metadata and audit (a run that made no folder: its last words)."""
    result = TaskRun(task, wall_s)
    if run_dir is None:
        result.defects.append(f"no run was made: {last_words or 'no output'}")
        return result
    result.status = load_record(run_dir).status
    calls = run_dir / layout.LLM_CALLS
    result.calls = sum(1 for _ in read_call_records(calls)) if calls.exists() else 0
    try:
        theory = read_artifact(run_dir / layout.THEORY, Theory)
    except ArtifactError as error:
        result.defects.append(f"no theory: {error}")
        return result
    result.main_result = label(theory.main_result_status)
    result.lemmas = [f"{lemma.id} {label(lemma.status)}" for lemma in theory.lemmas]
    pdf = run_dir / layout.paper_pdf(1)
    if result.status == "completed" and not pdf.is_file():
        result.defects.append("completed without paper_v1.pdf")
    if pdf.is_file():
        result.defects += audit_run(run_dir, pdf)
        try:
            result.repairs = read_artifact(run_dir / layout.paper_meta(1), PaperMeta).prose_repairs
        except ArtifactError as error:
            result.defects.append(f"no paper metadata: {error}")
    return result


def run_task(task: Task, home: Path, environ: dict[str, str], timeout: float) -> TaskRun:
    """One task as `lemmata` runs it, in `home`; the run it made, read."""
    before = set((home / "runs").iterdir()) if (home / "runs").is_dir() else set()
    out = home / "out" / task.name
    started = time.monotonic()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "lemmata", *task.arguments(), "--output", str(out)],
            env=environ,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        last_words = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ""
    except subprocess.TimeoutExpired:
        last_words = f"stopped after {timeout:.0f} s (--timeout)"
    wall = time.monotonic() - started
    made = sorted(set((home / "runs").iterdir()) - before) if (home / "runs").is_dir() else []
    run = read_run(task, made[-1] if made else None, wall, last_words)
    if last_words.startswith("stopped after"):
        run.defects.append(last_words)
    return run


def report(runs: list[TaskRun]) -> str:
    """The table of the runs, then each run's lemmas, repairs and defects, then the times."""
    lines = [
        f"{'task':<24} {'kind':<26} {'time s':>7} {'calls':>5}  {'status':<10} main result",
        "-" * 100,
    ]
    for run in runs:
        lines.append(
            f"{run.task.name:<24} {run.task.kind:<26} {run.wall_s:>7.0f} {run.calls:>5}  {run.status:<10} "
            f"{run.main_result or '-'}"
        )
    for run in runs:
        lines.append(f"\n{run.task.name}: lemmas {', '.join(run.lemmas) or 'none'}")
        repairs = ", ".join(f"{kind} {count}" for kind, count in run.repairs.items())
        lines.append(f"  prose repairs: {repairs or 'none'}")
        lines += [f"  DEFECT: {defect}" for defect in run.defects] or ["  defects: none"]
    walls = [run.wall_s for run in runs]
    if walls:
        lines.append(
            f"\n{len(runs)} tasks: median {statistics.median(walls):.0f} s, longest {max(walls):.0f} s; "
            f"{sum(run.status == 'completed' for run in runs)} completed; "
            f"{sum(len(run.defects) for run in runs)} defects"
        )
    return "\n".join(lines)


def data_home(keep: Path | None) -> Path:
    """A fresh data directory sharing the installed model's prompt states (see embedded_run.py)."""
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="lemmata-corpus-home-", dir=keep))
    installed = lemmata_home() / MODELS / PROMPT_STATES
    installed.mkdir(parents=True, exist_ok=True)
    (home / MODELS).mkdir()
    (home / MODELS / PROMPT_STATES).symlink_to(installed)
    return home


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=[], help="run only these tasks (by name)")
    parser.add_argument("--backend", default="embedded", help="LLM_BACKEND of the runs (default embedded)")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--keep", type=Path, help="make the data directory here (default: a temp dir)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds a task may take (default 1800)")
    args = parser.parse_args()
    tasks = load_corpus(args.corpus)
    unknown = set(args.only) - {task.name for task in tasks}
    if unknown:
        sys.exit(f"no such task in {args.corpus}: {', '.join(sorted(unknown))}")
    tasks = [task for task in tasks if not args.only or task.name in args.only]
    home = data_home(args.keep)
    environ = {**os.environ, "LEMMATA_HOME": str(home), "LLM_BACKEND": args.backend}
    if args.backend == "embedded":
        from lemmata.llm.embedded_model import default_model_path

        environ["LEMMATA_EMBEDDED_MODEL"] = str(default_model_path(lemmata_home()))
    runs = []
    with FakeSearchServers() as search:
        for number, task in enumerate(tasks, 1):
            searching = {**search_settings(search), "SEARCH_TOOLS": "true"} if task.mode == "from-papers" else {}
            run = run_task(task, home, {**environ, "SEARCH_TOOLS": "false", **searching}, args.timeout)
            print(
                f"[{number}/{len(tasks)}] {task.name}: {run.status}, {run.wall_s:.0f} s, {len(run.defects)} defects",
                file=sys.stderr,
                flush=True,
            )
            runs.append(run)
    print(f"data directory: {home}\n")
    print(report(runs))
    sys.exit(1 if any(run.failed for run in runs) else 0)


if __name__ == "__main__":
    main()
