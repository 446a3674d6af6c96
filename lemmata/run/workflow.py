"""Snakemake as a subprocess: the command that runs the packaged workflow on a run directory,
its environment, how many jobs at once, and the processes already running it."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

from lemmata import layout
from lemmata.isolation.box import WEAKER_LIMITS_VARIABLE
from lemmata.run.early_workflow import AWAIT_INVOCATION, package_path
from lemmata.run.events import JobBoard
from lemmata.settings import load_environment

PROVIDER_JOBS = 10
EMBEDDED_JOBS = 2
#: What Snakemake logs when it is told to stop (SIGTERM/SIGINT) and lets running jobs finish.
STOP_NOTICE = "Will exit after finishing currently running jobs"


#: Signals that end a process without letting it say anything: SIGKILL (by hand, the
#: out-of-memory killer). Snakemake handles SIGTERM and SIGINT itself (STOP_NOTICE).
KILLING_SIGNALS = (signal.SIGKILL,)


@dataclass
class Invocation:
    returncode: int
    board: JobBoard
    paused: bool = False
    log_text: str = ""  # what Snakemake wrote during this invocation
    calls: list[dict[str, Any]] = field(default_factory=list)  # the call records it made, when killed
    boxes_removed: int = 0  # cgroups of its jobs' boxes it left, removed after it was killed

    @property
    def signal(self) -> int | None:
        """The signal that ended Snakemake: a negative status from Popen, or 128 + the signal's
        number where a shell or container wrapper reported it (137 for SIGKILL)."""
        if self.returncode < 0:
            return -self.returncode
        return self.returncode - 128 if self.returncode - 128 in KILLING_SIGNALS else None

    def killed(self) -> bool:
        """Snakemake was ended by a signal it could not handle (not our pause's SIGTERM): its running
        jobs died with it, no job failed."""
        return self.signal is not None and not self.paused

    def stopped_from_outside(self) -> bool:
        """Snakemake got a signal (not from us): it let running jobs finish, and no job failed."""
        return not self.paused and not self.board.failed_rules and STOP_NOTICE in self.log_text


def default_jobs(backend: str) -> int:
    """Parallel jobs: lemma jobs wait on a provider, not on the CPU, so a full plan (up to 10
    lemmas) is proved at once; the embedded model answers one call at a time (a file lock), so
    more than two processes would only hold more memory."""
    if backend == "embedded":
        return EMBEDDED_JOBS
    return max(PROVIDER_JOBS, os.cpu_count() or 1)


def snakefile() -> Path:
    return Path(str(files("lemmata") / "Snakefile"))


def snakemake_command(run_dir: Path, jobs: int | None, profile_arguments: Sequence[str] = ()) -> list[str]:
    """`jobs` None: the profile's (a cluster profile's `jobs:`). The options after the profile's
    hold whatever the profile says: code and software-env changes must not rerun finished
    stages (each rerun costs model calls), and the driver reads the lemmata logger's events."""
    return [
        *_workflow_on(run_dir, profile_arguments),
        *(["--jobs", str(jobs)] if jobs else []),
        "--logger",
        "lemmata",
        "--rerun-incomplete",
        "--rerun-triggers",
        "mtime",
        "params",
        "input",
        # The default ILP scheduler starts a solver process before every job; our DAG is small
        # and its jobs need no packing, so picking them greedily costs nothing.
        "--scheduler",
        "greedy",
        # Jobs run in Snakemake's process, on its worker threads (rules/common.smk, run_script).
        "--force-use-threads",
        "--nocolor",
    ]


def _workflow_on(run_dir: Path, profile_arguments: Sequence[str] = ()) -> list[str]:
    """Snakemake on the packaged workflow, in the run directory, with its settings; a profile's
    options come before the configfile so that the run's own settings win."""
    return [
        sys.executable,
        "-m",
        "lemmata.run.snakemake_process",  # Snakemake's CLI, without its idle second at exit
        "--snakefile",
        str(snakefile()),
        "--directory",
        str(run_dir),
        *profile_arguments,
        "--configfile",
        str(run_dir / layout.CONFIG),
    ]


def workflow_processes(run_dir: Path) -> list[int]:
    """Snakemake processes running the workflow on `run_dir` (one whose driver was killed keeps
    running). The directory is compared resolved: the data directory may have been named through
    a symbolic link. Our own short-lived `--unlock` and `--report` invocations do not count."""
    wanted = Path(run_dir).resolve()
    pids = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = [arg.decode(errors="replace") for arg in cmdline.read_bytes().split(b"\0")]
        except OSError:
            continue
        if not any("snakemake" in arg for arg in args) or {"--unlock", "--report"} & set(args):
            continue
        directory = args[args.index("--directory") + 1] if "--directory" in args[:-1] else ""
        if AWAIT_INVOCATION in args:  # started early (early_workflow.py): it works where it was sent
            with suppress(OSError):
                directory = os.readlink(cmdline.parent / "cwd")
        if directory and Path(directory).resolve() == wanted:
            pids.append(int(cmdline.parent.name))
    return sorted(pids)


def report_command(run_dir: Path, output: Path) -> list[str]:
    """Snakemake's HTML report of the run; --nolock, so a report of a running run does not wait."""
    return [
        *_workflow_on(run_dir),
        "--report",
        str(output),
        "--nolock",
        "--nocolor",
    ]


def workflow_environment(run_dir: Path) -> dict[str, str]:
    """The job environment: ours plus .env values, the logger plugin importable, events routed."""
    environ = load_environment()
    if WEAKER_LIMITS_VARIABLE not in os.environ:  # a .env file may not loosen the sandbox (SECURITY.md)
        environ.pop(WEAKER_LIMITS_VARIABLE, None)
    environ["PYTHONPATH"] = package_path(environ)
    environ["LEMMATA_EVENTS_FILE"] = str(run_dir / layout.EVENTS)
    return environ
