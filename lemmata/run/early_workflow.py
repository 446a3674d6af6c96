"""Snakemake's interpreter, started with a `lemmata` command that will run the workflow.

A run's workflow process spends its first 0.5 s importing Snakemake, and `lemmata` its first
0.4 s importing itself and preparing the run, one after the other (2 cores, 2026-11-28). So the
command's first lines (`lemmata/cli/entry.py`) start the workflow process at once, as
`python -m lemmata.run.snakemake_process --await-invocation` in its own session and told by the
kernel when its parent dies, like the one the driver would start. It imports Snakemake while
`lemmata` works, then waits on its standard input. The driver, when it starts Snakemake, hands it
the command line, working directory, environment and log it would have started it with
and umask (`hand_over`), one JSON line; from there it is the process the driver would have
started.
A command that starts no workflow (a refused task, a finished run) closes the pipe on exit and
the waiting process ends without a word. This module imports nothing of lemmata but the kernel's
parent-death signal: it runs before the rest of the command is imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from lemmata.run.parent_death import terminate_with_parent

AWAIT_INVOCATION = "--await-invocation"
MODULE = "lemmata.run.snakemake_process"
#: The commands that run the workflow (`lemmata ask` and `rewrite` start it from the server's side).
WORKFLOW_COMMANDS = frozenset({"prove", "explore", "from-papers", "resume"})
#: Where a waiting process stands: no run directory, so `workflow.workflow_processes` never counts it.
WAITING_DIRECTORY = "/"

_waiting: subprocess.Popen[bytes] | None = None
_waiting_pythonpath = ""  # what the waiting process was started with, and so imports from


def start_for(arguments: Sequence[str]) -> None:
    """Start the workflow process now when `lemmata ARGUMENTS` will need one."""
    global _waiting, _waiting_pythonpath
    if not arguments or arguments[0] not in WORKFLOW_COMMANDS or {"-h", "--help"} & set(arguments):
        return
    _waiting_pythonpath = package_path(os.environ)
    try:
        _waiting = subprocess.Popen(
            [sys.executable, "-m", MODULE, AWAIT_INVOCATION],
            cwd=WAITING_DIRECTORY,
            env={**os.environ, "PYTHONPATH": _waiting_pythonpath},
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # as the driver starts it: a Ctrl+C is the driver's to handle
            preexec_fn=terminate_with_parent,
        )
    except OSError:  # the driver will start one the usual way
        _waiting = None


def package_path(environ: Mapping[str, str]) -> str:
    """PYTHONPATH with lemmata's parent folder first (Snakemake imports lemmata's logger plugin)."""
    package_parent = str(Path(__file__).resolve().parents[2])
    return os.pathsep.join(p for p in (package_parent, environ.get("PYTHONPATH", "")) if p)


def hand_over(command: Sequence[str], cwd: Path, env: Mapping[str, str], log: Path) -> subprocess.Popen[bytes] | None:
    """The waiting process, now running `command` in `cwd` with `env`, its output appended to
    `log`; None when there is none to take (none started, it died, or `command` is not the one it
    can become), and the caller starts the process itself."""
    global _waiting
    process, _waiting = _waiting, None
    if process is None or process.stdin is None:
        return None
    prefix = [sys.executable, "-m", MODULE]
    if list(command[:3]) != prefix or env.get("PYTHONPATH") != _waiting_pythonpath or process.poll() is not None:
        process.stdin.close()  # it ends without a word
        return None
    umask = os.umask(0o077)  # the driver's (lemmata makes its files private), which it started with
    os.umask(umask)
    invocation = {"argv": list(command[3:]), "cwd": str(cwd), "env": dict(env), "log": str(log), "umask": umask}
    try:
        process.stdin.write(json.dumps(invocation).encode() + b"\n")
        process.stdin.close()
    except OSError:  # it died meanwhile
        process.wait()
        return None
    return process
