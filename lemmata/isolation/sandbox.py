"""Running model-written Python in a box, and saying why a run was stopped or denied.

The box (`lemmata.isolation`, README "Experiment sandbox" has the table) is what holds: its own
root showing only the interpreter and its libraries read-only, a size-capped scratch tmpfs as
the only writable place, no network, no other process, an environment built from nothing, a uid
of its own without capabilities, and memory, process count and CPU time capped for the whole
test by a cgroup, with a wall clock. Inside, `sandbox_launcher.py` runs the script under an
audit hook that names what an ordinary test reached for, and a supervisor that reports how the
script ended.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import signal
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from lemmata.isolation import launcher as sandbox_launcher
from lemmata.isolation.box import Box, BoxLimits, BoxSpec, BoxUnavailable, open_box, python_paths, whole_box_cgroup
from lemmata.isolation.bubblewrap import SETPRIV, system_library_paths
from lemmata.isolation.staging import open_to_the_box, staging_folder
from lemmata.process_exit import wait_for_exit

LAUNCHER_SOURCE = Path(sandbox_launcher.__file__)
SCRIPT_NAME = "check.py"
LAUNCHER_NAME = "_lemmata_launcher.py"
#: The box's writable tmpfs: working directory, HOME and TMPDIR of the script.
SCRATCH = "/box/work"
#: One thread each: numerical libraries would otherwise start a thread per core.
THREAD_VARIABLES = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@dataclass(frozen=True)
class Limits(BoxLimits):
    """A test's limits: the box's (wall, CPU, memory and processes for the whole test), and
    output_bytes of stdout and of stderr, whose tail is kept (the counts line is last)."""

    output_bytes: int = 1 << 20


@dataclass(frozen=True)
class SandboxResult:
    returncode: int  # the script's exit status, or minus the signal that ended it
    stdout: str
    stderr: str
    timed_out: bool
    network_isolated: bool
    stopped: str = ""  # why the sandbox stopped or denied the script; "" when it ended by itself
    cpu_seconds: float | None = None
    protections: tuple[str, ...] = ()


def run_python(
    code: str, limits: Limits = Limits(), *, guard: bool = True, modules: Mapping[str, Path] | None = None
) -> SandboxResult:
    """Run `code` in a box. `modules` (import name -> source file), a domain plugin's numerical
    tools, are copied next to the script, whose directory the launcher puts on the import path.
    `guard=False` leaves out the audit hook and the supervisor, so that tests can show the box
    holds alone. Raises BoxUnavailable when this machine cannot make the box."""
    modules = dict(modules or {})
    _check_modules(modules, guard)
    with staging_folder() as inputs:
        argv = _write_inputs(inputs, code, modules, guard)
        status_read, status_write = os.pipe()
        try:
            spec = BoxSpec(
                [*argv, str(status_write)] if guard else argv,
                box_paths(str(inputs)),
                script_environment(),
                limits,
                SCRATCH,
            )
            with open_box(spec, pass_fds=(status_write,)) as box:
                os.close(status_write)
                status_write = -1
                stdout, stderr, stop = _collect(box, limits)
            records = status_records(_read_available(status_read))
        finally:
            for fd in (status_read, status_write):
                with contextlib.suppress(OSError):
                    if fd >= 0:
                        os.close(fd)
    protections = (*box.protections, *(("audit hook (telemetry)",) if guard else ()))
    return _result(box, stdout, stderr, stop, records, limits, protections)


def sandbox_problem() -> str:
    """Why no test can run here (no bubblewrap, namespaces forbidden, no cgroup for the whole-test
    limits and no opt-in to weaker ones), in words for the user; "" when tests can run."""
    try:
        cgroup = whole_box_cgroup(Limits())
    except BoxUnavailable as error:
        return str(error)
    if cgroup:
        cgroup.remove()
    return ""


def box_paths(inputs: str) -> tuple[str, ...]:
    """What the test sees, read-only: Python, the system's shared libraries, the input directory
    (and setpriv, which drops root's privileges as the box starts)."""
    return (*python_paths(), *system_library_paths(), inputs, *((SETPRIV,) if os.geteuid() == 0 else ()))


def _write_inputs(inputs: Path, code: str, modules: dict[str, Path], guard: bool) -> list[str]:
    """The script, the launcher and the modules, readable by the box's uid; the command."""
    script = inputs / SCRIPT_NAME
    script.write_text(code, encoding="utf-8")
    for name, source in modules.items():
        shutil.copyfile(source, inputs / f"{name}.py")
    argv = [sys.executable, "-I", "-B", str(script)]
    if guard:
        shutil.copyfile(LAUNCHER_SOURCE, inputs / LAUNCHER_NAME)
        argv = [sys.executable, "-I", "-B", str(inputs / LAUNCHER_NAME), str(script)]
    open_to_the_box(inputs)
    return argv


def _check_modules(modules: Mapping[str, Path], guard: bool) -> None:
    if modules and not guard:
        raise ValueError("sandbox modules are put on the import path by the launcher: they need guard=True")
    for name, source in modules.items():
        if not name.isidentifier() or f"{name}.py" in (SCRIPT_NAME, LAUNCHER_NAME):
            raise ValueError(
                f"sandbox module name {name!r}: use a Python identifier other than check or the launcher's"
            )
        if not Path(source).is_file():
            raise ValueError(f"sandbox module {name!r}: no file {source}")


def script_environment() -> dict[str, str]:
    """The script's whole environment: nothing of the parent's comes through."""
    return {"PATH": "/usr/bin:/bin", "HOME": SCRATCH, "TMPDIR": SCRATCH, "LANG": "C.UTF-8", **THREAD_VARIABLES}


def _collect(box: Box, limits: Limits) -> tuple[str, str, str]:
    """stdout and stderr (the tail of each, up to limits.output_bytes) until the box ends, runs
    out of wall clock or of CPU time (of all its processes); and which of the two ran out."""
    process = box.process
    deadline = time.monotonic() + limits.wall_seconds
    assert process.stdout is not None and process.stderr is not None
    buffers = {process.stdout.fileno(): bytearray(), process.stderr.fileno(): bytearray()}
    open_fds = set(buffers)
    stop = ""
    while open_fds:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            stop = "wall"
            break
        if box.over_cpu():
            stop = "cpu"
            break
        ended = process.poll() is not None
        ready = [key.fd for key, _ in _select(open_fds, 0 if ended else min(remaining, 0.1))]
        if ended and not ready:
            break
        for fd in ready:
            chunk = os.read(fd, 1 << 16)
            if chunk:
                _keep_tail(buffers[fd], chunk, limits.output_bytes)
            else:
                open_fds.discard(fd)
    while not stop and not wait_for_exit(process, min(deadline - time.monotonic(), 0.1)):
        stop = "wall" if time.monotonic() >= deadline else "cpu" if box.over_cpu() else ""
    return (
        buffers[process.stdout.fileno()].decode("utf-8", "replace"),
        buffers[process.stderr.fileno()].decode("utf-8", "replace"),
        stop,
    )


def _select(fds: set[int], timeout: float) -> list[tuple[selectors.SelectorKey, int]]:
    with selectors.DefaultSelector() as selector:
        for fd in fds:
            selector.register(fd, selectors.EVENT_READ)
        return selector.select(timeout)


def _keep_tail(buffer: bytearray, chunk: bytes, limit: int) -> None:
    """Append, keeping at most `limit` bytes: a runaway printer must not fill our memory."""
    buffer += chunk
    if len(buffer) > limit:
        del buffer[: len(buffer) - limit]


def _read_available(fd: int) -> bytes:
    """What the status pipe holds now; never waits for a writer the script may have left behind."""
    os.set_blocking(fd, False)
    data = b""
    with contextlib.suppress(BlockingIOError):
        while len(data) < (64 << 10) and (chunk := os.read(fd, 1 << 16)):
            data += chunk
    return data


def status_records(data: bytes) -> list[dict]:
    """The JSON lines of the status pipe (see sandbox_launcher); anything else is ignored."""
    records = []
    for line in data.decode("utf-8", "replace").splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            record = json.loads(line)
            if isinstance(record, dict):
                records.append(record)
    return records


def _result(
    box: Box, stdout: str, stderr: str, stop: str, records: list[dict], limits: Limits, protections: tuple[str, ...]
) -> SandboxResult:
    # The supervisor writes the last end record; the worker may write a denial before it.
    end: dict = next((r for r in reversed(records) if isinstance(r.get("exit", r.get("signal")), int)), {})
    if stop:
        returncode = -signal.SIGKILL  # we ended the box
    elif "signal" in end:
        returncode = -end["signal"]
    elif "exit" in end:
        returncode = end["exit"]
    else:  # the supervisor itself did not report: killed with its worker (out of memory, say)
        returncode = -signal.SIGKILL if box.events().oom_kills else box.process.returncode
    cpu = box.cpu_seconds()
    if cpu is None and isinstance(end.get("cpu_seconds"), (int, float)):
        cpu = end["cpu_seconds"]
    denied = next((str(r["denied"]) for r in records if "denied" in r), "")
    limits_hit = {r["limit"] for r in records if isinstance(r.get("limit"), str)}
    events = box.events()
    if events.oom_kills:
        limits_hit.add("memory (whole test)")
    if events.forks_refused:
        limits_hit.add("processes")
    stopped = stop_reason(
        timed_out=stop == "wall",
        denied=denied,
        limits_hit=limits_hit,
        signal_number=-returncode if returncode < 0 else 0,
        cpu_seconds=limits.cpu_seconds if stop == "cpu" else cpu,
        limits=limits,
    )
    return SandboxResult(returncode, stdout, stderr, stop == "wall", True, stopped, cpu, protections)


def stop_reason(
    *, timed_out: bool, denied: str, limits_hit: set[str], signal_number: int, cpu_seconds: float | None, limits: Limits
) -> str:
    """Why the sandbox ended or refused the script, in words for the record and for the model."""
    reasons = [f"denied: {denied}"] if denied else []
    cpu_spent = cpu_seconds is not None and cpu_seconds >= limits.cpu_seconds
    if timed_out:
        reasons.append(f"stopped: ran past the {limits.wall_seconds:g} s wall-clock limit")
    elif "memory" in limits_hit:
        reasons.append(f"stopped: exceeded the {_size(limits.memory_bytes)} memory limit (MemoryError)")
    elif "memory (whole test)" in limits_hit:
        reasons.append(f"stopped: its processes together exceeded the {_size(limits.memory_bytes)} memory limit")
    elif signal_number == signal.SIGXCPU or (signal_number == signal.SIGKILL and cpu_spent):
        reasons.append(f"stopped: exceeded the {limits.cpu_seconds:g} s CPU-time limit")
    elif signal_number == signal.SIGXFSZ or "file size" in limits_hit:
        reasons.append(f"stopped: wrote a file past the {_size(limits.file_bytes)} file-size limit")
    elif "scratch" in limits_hit:
        reasons.append(f"stopped: filled the {_size(limits.scratch_bytes)} scratch directory")
    elif "processes" in limits_hit:
        reasons.append(f"stopped: tried to run more than {limits.processes} processes at once")
    elif signal_number == signal.SIGKILL:
        reasons.append("stopped: killed by the system (SIGKILL), probably for lack of memory")
    return "; ".join(reasons)


def _size(count: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size:
            return f"{count / size:g} {unit}"
    return f"{count} bytes"
