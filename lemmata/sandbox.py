"""Running model-written Python with limits: its own process, scratch directory, scrubbed
environment, CPU/memory/file-size limits, a wall-clock timeout, and no network where the
OS lets us make a private network namespace."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path


@dataclass(frozen=True)
class SandboxResult:
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool
    network_isolated: bool


@dataclass(frozen=True)
class Limits:
    wall_seconds: float = 30.0
    cpu_seconds: int = 20
    memory_bytes: int = 1 << 30
    file_bytes: int = 10 << 20


def run_python(code: str, limits: Limits = Limits()) -> SandboxResult:
    with tempfile.TemporaryDirectory(prefix="lemmata-sandbox-") as scratch:
        script = Path(scratch) / "check.py"
        script.write_text(code, encoding="utf-8")
        isolated = network_namespace_available()
        command = [sys.executable, "-I", str(script)]
        if isolated:
            command = [shutil.which("unshare") or "unshare", "--net", "--map-root-user", *command]
        env = {"PATH": "/usr/bin:/bin", "HOME": scratch, "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1"}
        process = subprocess.Popen(
            command, cwd=scratch, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=lambda: _apply(limits),
        )
        try:
            out, err = process.communicate(timeout=limits.wall_seconds)
            return SandboxResult(process.returncode, out, err, False, isolated)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
            return SandboxResult(-9, out, err, True, isolated)


def _apply(limits: Limits) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds))
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


@cache
def network_namespace_available() -> bool:
    """Whether `unshare --net` works here (it needs user namespaces or root)."""
    if not shutil.which("unshare"):
        return False
    try:
        probe = subprocess.run(["unshare", "--net", "--map-root-user", "true"], capture_output=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0
