"""Crash and resume: SIGKILL a `lemmata prove` run at a random moment, then `lemmata resume` it.

An uninterrupted run of the even-sum session against the fake model server is measured first:
its wall time is the span the kill moments are drawn from (uniformly, so that kills land in
every stage), its model calls the reference. Each trial then starts the same run in a fresh
LEMMATA_HOME and, at its moment, kills the driver, its Snakemake workflow process and every job
with SIGKILL, as a power cut would: no handler runs, Snakemake's lock and its incomplete markers
stay. The trial passes when `lemmata resume` exits 0 with the run completed and the paper made,
every file that was done at the kill is unchanged (same sha256, same mtime: nothing finished was
recomputed), and the only model calls beyond the reference are those of jobs that were
unfinished at the kill (their output missing or marked incomplete). Prints a table, with what
resume said it repaired under each trial; exits 1 if a trial failed a check.

Usage: python bench/kill_resume.py [--trials 10] [--seed 1] [--latency 0.3] [--span SECONDS]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from _common import search_settings  # bench/ is the script directory, hence on sys.path

from lemmata import layout
from lemmata.llm.calllog import read_call_records
from lemmata.run.events import JobBoard, TailReader
from lemmata.run.pipeline import artifact_states, incomplete_outputs, stage_of_rule, stage_states
from lemmata.run.record import load_record
from lemmata.run.workflow import workflow_processes
from support import even_sum_session
from support.fake_llm_server import FakeLLMServer
from support.fake_search_servers import FakeSearchServers

RESUME_TIMEOUT = 300.0
#: How long SIGKILLed processes may take to be gone before the snapshot is taken anyway.
EXIT_WAIT = 10.0

Call = tuple[str, str]  # (role, scope) of one model call


@dataclass(frozen=True)
class Job:
    """A job the workflow started, as its event log names it."""

    rule: str
    wildcards: tuple[str, ...]
    outputs: tuple[str, ...]


@dataclass
class Reference:
    """The uninterrupted run: how long it took and the calls it made."""

    seconds: float
    calls: Counter[Call]


@dataclass
class AtTheKill:
    """The run directory as the crash left it."""

    done_files: dict[str, tuple[str, int]]  # path -> (sha256, st_mtime_ns), for files `done` at the kill
    calls: Counter[Call]
    unfinished_jobs: set[Job]  # started, with an output missing or marked incomplete
    started_jobs: set[Job]
    running: str  # for the table: the stage and the jobs that were running


@dataclass
class Trial:
    number: int
    kill_at: float
    running: str = "-"
    kept: str = "-"
    calls: str = "-"  # made before the kill + made by the resume
    extra_calls: str = "-"
    repaired: list[str] = field(default_factory=list)
    returncode: int | None = None
    resume_seconds: float | None = None
    done_at_kill: int = 0
    recomputed: int = 0
    resumed: bool = False  # there was a recorded run to resume
    completed: bool = False  # resume exited 0 and the run is completed
    failures: list[str] = field(default_factory=list)


# --- the run's world: a temporary LEMMATA_HOME and the fake services --------------------------


@contextmanager
def fake_world(latency: float) -> Iterator[tuple[Path, dict[str, str]]]:
    """A temporary working directory and the environment of a `lemmata` process that works in it:
    its own LEMMATA_HOME, the fake model server (the even-sum session) and fake search services."""
    with (
        tempfile.TemporaryDirectory(prefix="lemmata-kill-") as tmp,
        FakeLLMServer(latency=latency) as server,
        FakeSearchServers() as search,
    ):
        even_sum_session.install(server)
        workdir = Path(tmp)
        env = {
            **os.environ,
            "LEMMATA_HOME": str(workdir / "home"),
            "LLM_BACKEND": "local",
            "LOCAL_LLM_BASE_URL": server.openai_base_url,
            "TEXMFVAR": str(workdir / "texmf"),
            **search_settings(search),
        }
        yield workdir, env


def start_lemmata(args: list[str], workdir: Path, env: dict[str, str], log_name: str) -> subprocess.Popen:
    """`lemmata ARGS` in a session of its own, as started from a terminal; its output in a file:
    a pipe nobody reads could fill up and stall it."""
    with open(workdir / log_name, "wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "lemmata", *args],
            env=env,
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )


def recorded_run_dir(home: Path) -> Path | None:
    """The run directory, once the run is recorded (run.json written); None before."""
    records = list((home / "runs").glob(f"*/{layout.RUN_RECORD}"))
    return records[0].parent if records else None


def model_calls(run_dir: Path) -> Counter[Call]:
    log = run_dir / layout.LLM_CALLS
    return Counter((r["role"], r["scope"]) for r in read_call_records(log)) if log.exists() else Counter()


def measure_uninterrupted_run(latency: float) -> Reference:
    with fake_world(latency) as (workdir, env):
        started = time.monotonic()
        returncode = start_lemmata(["prove", even_sum_session.TASK], workdir, env, "prove.log").wait()
        seconds = time.monotonic() - started
        run_dir = recorded_run_dir(Path(env["LEMMATA_HOME"]))
        if returncode != 0 or run_dir is None:
            tail = (workdir / "prove.log").read_text(errors="replace")[-2000:]
            sys.exit(f"the uninterrupted run failed (exit {returncode}):\n{tail}")
        return Reference(seconds, model_calls(run_dir))


# --- the crash -----------------------------------------------------------------------------------


def child_processes(pid: int) -> set[int]:
    """Children of every thread of `pid` (Snakemake starts jobs from threads)."""
    children: set[int] = set()
    for listing in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            children.update(int(child) for child in listing.read_text().split())
        except OSError:  # the thread or the process ended meanwhile
            continue
    return children


def signal_process_and_group(pid: int, signum: int) -> None:
    for send in (lambda: os.killpg(os.getpgid(pid), signum), lambda: os.kill(pid, signum)):
        try:
            send()
        except ProcessLookupError:  # already gone
            pass


def freeze_trees(roots: set[int]) -> set[int]:
    """SIGSTOP `roots` and all their descendants, with their process groups. Repeated until a pass
    finds no new process: a process may have been starting a child as it was stopped."""
    frozen: set[int] = set()
    while True:
        found = set(roots).union(*(child_processes(pid) for pid in frozen)) - frozen
        if not found:
            return frozen
        for pid in found:
            signal_process_and_group(pid, signal.SIGSTOP)
        frozen |= found


def is_gone(pid: int) -> bool:
    """Ended, or a zombie: either way it writes nothing any more."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"  # the state follows the command name in parentheses


def crash(driver: subprocess.Popen, home: Path) -> Path | None:
    """SIGKILL the driver, its workflow process and every job at one moment, like a power cut.

    One process group is not enough: the Snakemake workflow runs in a session of its own (so that
    a Ctrl+C at the terminal reaches only the driver), and pdflatex and the experiment's sandbox
    start sessions of their own too. So everything is frozen first (SIGSTOP, which no handler
    sees either): the driver's group, so that it starts no new workflow; the workflow processes
    `workflow_processes` finds; and every descendant of them all. Then all of it is killed.
    Returns the run directory (None if the run was not recorded yet), looked up once the driver
    was stopped, so that the run cannot appear in between."""
    signal_process_and_group(driver.pid, signal.SIGSTOP)
    run_dir = recorded_run_dir(home)
    roots = {driver.pid, *(workflow_processes(run_dir) if run_dir else [])}
    frozen = freeze_trees(roots)
    for pid in frozen:
        signal_process_and_group(pid, signal.SIGKILL)
    driver.wait()
    deadline = time.monotonic() + EXIT_WAIT
    while not all(is_gone(pid) for pid in frozen) and time.monotonic() < deadline:
        time.sleep(0.02)
    return run_dir


def stop_leftover_workflows(run_dir: Path | None) -> None:
    """Clean-up after a trial (a resume that timed out, say): no workflow outlives its directory."""
    for pid in workflow_processes(run_dir) if run_dir else []:
        signal_process_and_group(pid, signal.SIGKILL)


# --- what the crash left --------------------------------------------------------------------------


def started_jobs(run_dir: Path) -> set[Job]:
    events = TailReader(run_dir / layout.EVENTS).read_new()
    return {
        Job(e["rule_name"], tuple((e.get("wildcards") or {}).values()), tuple(e.get("output") or ()))
        for e in events
        if e.get("event") == "job_info" and e.get("rule_name")
    }


def running_at_the_kill(run_dir: Path) -> str:
    """The stage of the jobs that were running, and the jobs, from the event log as the driver
    shows them; with no job running, the stage that was next."""
    board = JobBoard()
    for event in TailReader(run_dir / layout.EVENTS).read_new():
        board.apply(event)
    if board.running:
        stages = sorted({stage_of_rule(rule) for rule in board.running_rules()})
        return f"{', '.join(stages)} ({', '.join(board.running_labels())})"
    next_stage = next((stage.name for stage, state in stage_states(run_dir, set(), None) if state != "done"), None)
    # Between two jobs: the driver at a gate, or Snakemake starting up or choosing the next job.
    return f"{next_stage} (no job running)" if next_stage else "after the last stage"


def file_fingerprint(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


def snapshot(run_dir: Path) -> AtTheKill:
    done = {name: file_fingerprint(run_dir / name) for _, name, state in artifact_states(run_dir) if state == "done"}
    incomplete = incomplete_outputs(run_dir)
    jobs = started_jobs(run_dir)
    unfinished = {job for job in jobs if any(out in incomplete or not (run_dir / out).exists() for out in job.outputs)}
    return AtTheKill(done, model_calls(run_dir), unfinished, jobs, running_at_the_kill(run_dir))


def job_of_scope(scope: str, jobs: set[Job]) -> Job | None:
    """The job that made a call: the scope is its rule, or its rule and a detail, which for a
    rule with wildcards is their value ("prove_lemma:L4"), else a part ("survey:arXiv:...")."""
    rule, _, detail = scope.partition(":")
    return next((job for job in jobs if job.rule == rule and (not job.wildcards or detail in job.wildcards)), None)


# --- one trial --------------------------------------------------------------------------------


def run_trial(number: int, kill_at: float, latency: float, reference: Reference) -> Trial:
    trial = Trial(number, kill_at)
    with fake_world(latency) as (workdir, env):
        home = Path(env["LEMMATA_HOME"])
        started = time.monotonic()
        driver = start_lemmata(["prove", even_sum_session.TASK], workdir, env, "prove.log")
        try:
            time.sleep(max(0.0, started + kill_at - time.monotonic()))
            ended_before_the_kill = driver.poll()
            run_dir = crash(driver, home)
            if ended_before_the_kill not in (None, 0):
                trial.failures.append(f"the run failed before the kill (exit {ended_before_the_kill})")
            if run_dir is None:
                trial.running = "before the run was recorded: nothing to resume"
                return trial
            at_kill = snapshot(run_dir)
            trial.resumed = True
            trial.running = "after the run ended" if ended_before_the_kill == 0 else at_kill.running
            resume_and_check(trial, run_dir, workdir, env, at_kill, reference)
        finally:  # interrupted (Ctrl+C) or a check that raised: no process outlives the directory
            if driver.poll() is None:
                crash(driver, home)
            stop_leftover_workflows(recorded_run_dir(home))
    return trial


def resume_and_check(
    trial: Trial, run_dir: Path, workdir: Path, env: dict[str, str], at_kill: AtTheKill, reference: Reference
) -> None:
    started = time.monotonic()
    resume = start_lemmata(["resume", run_dir.name], workdir, env, "resume.log")
    try:
        trial.returncode = resume.wait(timeout=RESUME_TIMEOUT)
    except subprocess.TimeoutExpired:
        crash(resume, Path(env["LEMMATA_HOME"]))
        trial.failures.append(f"resume did not end within {RESUME_TIMEOUT:.0f} s")
    trial.resume_seconds = time.monotonic() - started
    output = (workdir / "resume.log").read_text(errors="replace").strip().splitlines()
    trial.repaired = [line for line in output if line.startswith("repaired:")]

    if trial.returncode not in (0, None):
        trial.failures.append(f"resume exited {trial.returncode}: {output[-1] if output else '(no output)'}")
    status = load_record(run_dir).status
    trial.completed = trial.returncode == 0 and status == "completed"
    if status != "completed":
        trial.failures.append(f"run status {status!r}, not 'completed'")
    if not (run_dir / "paper_v1.pdf").is_file():
        trial.failures.append("no paper_v1.pdf")
    check_done_files_kept(trial, run_dir, at_kill)
    check_model_calls(trial, run_dir, at_kill, reference)


def check_done_files_kept(trial: Trial, run_dir: Path, at_kill: AtTheKill) -> None:
    changed = [
        name
        for name, fingerprint in at_kill.done_files.items()
        if not (run_dir / name).is_file() or file_fingerprint(run_dir / name) != fingerprint
    ]
    trial.done_at_kill, trial.recomputed = len(at_kill.done_files), len(changed)
    trial.kept = f"{len(at_kill.done_files) - len(changed)}/{len(at_kill.done_files)}"
    if changed:
        trial.failures.append(f"files done at the kill were made again: {', '.join(changed)}")


def check_model_calls(trial: Trial, run_dir: Path, at_kill: AtTheKill, reference: Reference) -> None:
    """Over the crashed run and its resume, a call beyond the reference is allowed only for a job
    that was unfinished at the kill: its calls before the kill are lost with it. Fewer calls than
    the reference would mean a half-made output was taken as finished."""
    calls = model_calls(run_dir)
    trial.calls = f"{at_kill.calls.total()}+{calls.total() - at_kill.calls.total()}"
    extra, missing = calls - reference.calls, reference.calls - calls
    scopes = Counter(scope for (_, scope), count in extra.items() for _ in range(count))
    trial.extra_calls = describe_extra_calls(scopes)
    not_allowed = sorted(
        scope for scope in scopes if job_of_scope(scope, at_kill.started_jobs) not in at_kill.unfinished_jobs
    )
    if not_allowed:
        trial.failures.append(
            f"extra calls by jobs that had finished, or not started, at the kill: {', '.join(not_allowed)}"
        )
    if missing:
        trial.failures.append(f"calls an uninterrupted run makes are missing: {sorted(missing.elements())}")


def describe_extra_calls(scopes: Counter[str]) -> str:
    if not scopes:
        return "0"
    named = ", ".join(scope + (f" x{count}" if count > 1 else "") for scope, count in sorted(scopes.items()))
    return f"{sum(scopes.values())}: {named}"


# --- the table --------------------------------------------------------------------------------

#: The extra calls come last: they name scopes, and vary in width.
COLUMNS = (
    f"{'trial':>5} {'kill s':>7}  {'running at the kill':<46} {'done kept':>9} {'calls':>6} {'rc':>3} "
    f"{'resume s':>9}  extra calls"
)


def print_row(trial: Trial) -> None:
    resume_seconds = "-" if trial.resume_seconds is None else f"{trial.resume_seconds:.1f}"
    returncode = "-" if trial.returncode is None else str(trial.returncode)
    print(
        f"{trial.number:>5} {trial.kill_at:>7.1f}  {trial.running:<46} {trial.kept:>9} {trial.calls:>6} "
        f"{returncode:>3} {resume_seconds:>9}  {trial.extra_calls}"
    )
    for line in trial.repaired:
        print(f"{'':>15}{line}")
    for failure in trial.failures:
        print(f"{'':>15}FAILED: {failure}")
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1, help="for the kill moments")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per model call")
    parser.add_argument(
        "--span",
        type=float,
        default=None,
        help="draw kill moments from [0, SPAN] s, not from the length of an uninterrupted run",
    )
    args = parser.parse_args()

    # The reference calls do not depend on the latency: with --span, the reference run is made at zero latency.
    reference = measure_uninterrupted_run(0.0 if args.span else args.latency)
    span = args.span or reference.seconds
    print(
        f"uninterrupted run: {reference.seconds:.1f} s, {reference.calls.total()} model calls; "
        f"kill moments drawn from [0, {span:.1f}] s (seed {args.seed}, latency {args.latency:g} s/call)"
    )
    rng = random.Random(args.seed)
    moments = [rng.uniform(0.0, span) for _ in range(args.trials)]
    print(
        COLUMNS + "\n" + " " * 15 + "(done kept: files done at the kill and unchanged after the resume; "
        "calls: model calls before the kill + by the resume)"
    )
    trials = []
    for number, kill_at in enumerate(moments, start=1):
        trials.append(run_trial(number, kill_at, args.latency, reference))
        print_row(trials[-1])

    print_summary(trials)
    sys.exit(1 if any(trial.failures for trial in trials) else 0)


def print_summary(trials: list[Trial]) -> None:
    resumed = [trial for trial in trials if trial.resumed]
    unrecorded = len(trials) - len(resumed)
    done_at_kills = sum(trial.done_at_kill for trial in resumed)
    print(
        f"completed by resume: {sum(t.completed for t in resumed)}/{len(resumed)} trials"
        + (f" ({unrecorded} killed before the run was recorded, nothing to resume)" if unrecorded else "")
        + f"; files done at a kill and recomputed: {sum(t.recomputed for t in resumed)} of {done_at_kills}"
        + f"; trials failing a check: {sum(bool(t.failures) for t in trials)}"
    )


if __name__ == "__main__":
    main()
