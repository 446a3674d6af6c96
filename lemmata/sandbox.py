"""Running model-written Python with limits, and saying why a run was stopped or denied.

Layers, outermost first (README, "Experiment sandbox", has the table of what each enforces):
- namespaces, when the OS allows them (`unshare`): a private network namespace with only a
  loopback that is down, and a private pid namespace with its own /proc, so the script sees no
  other process and every process it leaves behind dies with it;
- an unprivileged user: run as root, lemmata runs the script as `nobody` when that user can run
  the interpreter, else as a root confined to a user namespace;
- resource limits on the process (CPU time, address space, file size, open files, processes)
  and a wall-clock timeout that kills the whole process group;
- a scratch directory as cwd, HOME and TMPDIR, an environment built from nothing (no
  credentials, tokens, proxies or LEMMATA_* variables), stdin closed;
- inside, `sandbox_launcher.py`: an audit hook that denies network, processes, native calls and
  file access outside the sandbox, and a supervisor that reports how the script ended.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import resource
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from lemmata import sandbox_launcher

LAUNCHER_SOURCE = Path(sandbox_launcher.__file__)
SCRIPT_NAME = "check.py"
LAUNCHER_NAME = "_lemmata_launcher.py"
#: Processes the script may add to what its user already runs: the supervisor and the worker need
#: two, but other jobs of the same user start processes meanwhile, and a failed fork would read as
#: the script's crash. Enough to stop a fork bomb, not to trip over a busy machine.
PROCESS_MARGIN = 64
#: One thread each: numerical libraries would otherwise start a thread per core.
THREAD_VARIABLES = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
NAMESPACES = ("--net", "--pid", "--fork", "--mount-proc", "--kill-child")


@dataclass(frozen=True)
class Limits:
    wall_seconds: float = 30.0
    cpu_seconds: int = 20
    memory_bytes: int = 1 << 30
    file_bytes: int = 10 << 20
    open_files: int = 64
    output_bytes: int = 1 << 20  # of stdout and of stderr, the tail is kept (the counts line is last)


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


@dataclass(frozen=True)
class Isolation:
    """What the OS lets us put around the script: an `unshare` prefix and a user to switch to."""

    prefix: tuple[str, ...] = ()
    network: bool = False
    pids: bool = False
    user_namespace: bool = False  # root inside is confined to it: no capability outside
    uid: int | None = None  # the unprivileged user the script runs as, when lemmata runs as root
    gid: int | None = None

    def protections(self, guard: bool) -> tuple[str, ...]:
        names = ["resource limits", "wall-clock timeout", "scrubbed environment", "scratch directory"]
        names += ["network namespace"] * self.network + ["pid namespace"] * self.pids
        names += ["user namespace"] * self.user_namespace
        names += ["unprivileged user"] * (self.uid is not None) + ["audit hook"] * guard
        return tuple(names)


def run_python(code: str, limits: Limits = Limits(), *, guard: bool = True,
               modules: Mapping[str, Path] | None = None) -> SandboxResult:
    """Run `code` in the sandbox. `modules` (import name -> source file), a domain plugin's
    numerical tools, are copied next to the script, whose directory the launcher puts on the
    import path. `guard=False` leaves out the audit hook and the supervisor, so that tests can
    check the OS layers alone."""
    modules = dict(modules or {})
    _check_modules(modules, guard)
    isolation = isolation_available()
    with tempfile.TemporaryDirectory(prefix="lemmata-sandbox-", ignore_cleanup_errors=True) as scratch:
        for name, source in modules.items():
            shutil.copyfile(source, Path(scratch) / f"{name}.py")
        status_read, status_write = os.pipe()
        try:
            command = _command(Path(scratch), code, isolation, guard, status_write)
            process = subprocess.Popen(
                command, cwd=scratch, env=script_environment(scratch), stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, pass_fds=(status_write,),
                preexec_fn=_preexec(limits, isolation, process_limit(isolation.uid)),
            )
        except BaseException:
            os.close(status_read)
            raise
        finally:
            os.close(status_write)
        try:
            stdout, stderr, timed_out = _collect(process, limits)
        finally:
            _kill_group(process)  # what the script left behind; all of it on a timeout or an interrupt
        records = status_records(_read_available(status_read))
    return _result(process.returncode, stdout, stderr, timed_out, records, limits, isolation.protections(guard))


def _check_modules(modules: Mapping[str, Path], guard: bool) -> None:
    if modules and not guard:
        raise ValueError("sandbox modules are put on the import path by the launcher: they need guard=True")
    for name, source in modules.items():
        if not name.isidentifier() or f"{name}.py" in (SCRIPT_NAME, LAUNCHER_NAME):
            raise ValueError(f"sandbox module name {name!r}: use a Python identifier other than check or the launcher's")
        if not Path(source).is_file():
            raise ValueError(f"sandbox module {name!r}: no file {source}")


def _command(scratch: Path, code: str, isolation: Isolation, guard: bool, status_fd: int) -> list[str]:
    """Write the script (and the launcher) into scratch; the command that runs them."""
    script = scratch / SCRIPT_NAME
    script.write_text(code, encoding="utf-8")
    run = [sys.executable, "-I", "-B", str(script)]
    if guard:
        launcher = scratch / LAUNCHER_NAME
        shutil.copyfile(LAUNCHER_SOURCE, launcher)
        run = [sys.executable, "-I", "-B", str(launcher), str(script), str(status_fd)]
    if isolation.uid is not None:
        for path in (scratch, *scratch.iterdir()):
            os.chown(path, isolation.uid, isolation.gid or isolation.uid)
    return [*isolation.prefix, *run]


def script_environment(scratch: str) -> dict[str, str]:
    """The script's whole environment: nothing of the parent's comes through."""
    return {"PATH": "/usr/bin:/bin", "HOME": scratch, "TMPDIR": scratch, "LANG": "C.UTF-8", **THREAD_VARIABLES}


def _preexec(limits: Limits, isolation: Isolation, processes: int | None) -> Callable[[], None]:
    """What the child does between fork and exec: the limits, and the switch to `nobody`."""
    def apply() -> None:
        # The hard CPU limit a second above the soft one: SIGXCPU first, SIGKILL if it is ignored.
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if processes is not None:
            resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
        if isolation.uid is not None and not isolation.prefix:  # else unshare switches, after the namespaces
            os.setgroups([])
            os.setgid(isolation.gid or isolation.uid)
            os.setuid(isolation.uid)
    return apply


def _collect(process: subprocess.Popen[bytes], limits: Limits) -> tuple[str, str, bool]:
    """stdout and stderr (the tail of each, up to limits.output_bytes) until the process ends or
    the wall clock runs out; and whether it ran out."""
    deadline = time.monotonic() + limits.wall_seconds
    assert process.stdout is not None and process.stderr is not None
    buffers = {process.stdout.fileno(): bytearray(), process.stderr.fileno(): bytearray()}
    open_fds = set(buffers)
    while open_fds:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return (*_text(buffers, process), True)
        ended = process.poll() is not None
        ready = [key.fd for key, _ in _select(open_fds, 0 if ended else min(remaining, 0.25))]
        if ended and not ready:
            break  # a process the script left behind may hold the pipes: it dies with the group
        for fd in ready:
            chunk = os.read(fd, 1 << 16)
            if chunk:
                _keep_tail(buffers[fd], chunk, limits.output_bytes)
            else:
                open_fds.discard(fd)
    try:
        process.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return (*_text(buffers, process), True)
    return (*_text(buffers, process), False)


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


def _text(buffers: dict[int, bytearray], process: subprocess.Popen[bytes]) -> tuple[str, str]:
    assert process.stdout is not None and process.stderr is not None
    return (buffers[process.stdout.fileno()].decode("utf-8", "replace"),
            buffers[process.stderr.fileno()].decode("utf-8", "replace"))


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def _read_available(fd: int) -> bytes:
    """What the status pipe holds now; never waits for a writer the script may have left behind."""
    os.set_blocking(fd, False)
    data = b""
    try:
        while len(data) < (64 << 10) and (chunk := os.read(fd, 1 << 16)):
            data += chunk
    except BlockingIOError:
        pass
    finally:
        os.close(fd)
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


def _result(returncode: int, stdout: str, stderr: str, timed_out: bool, records: list[dict], limits: Limits,
            protections: tuple[str, ...]) -> SandboxResult:
    # The supervisor writes the last end record; the worker may write a denial before it.
    end = next((r for r in reversed(records) if isinstance(r.get("exit", r.get("signal")), int)), {})
    if "signal" in end:
        returncode = -end["signal"]
    elif "exit" in end:
        returncode = end["exit"]
    cpu = end.get("cpu_seconds") if isinstance(end.get("cpu_seconds"), (int, float)) else None
    denied = next((str(r["denied"]) for r in records if "denied" in r), "")
    limits_hit = {r["limit"] for r in records if isinstance(r.get("limit"), str)}
    stopped = stop_reason(timed_out=timed_out, denied=denied, limits_hit=limits_hit,
                          signal_number=-returncode if returncode < 0 else 0, cpu_seconds=cpu, limits=limits)
    return SandboxResult(returncode, stdout, stderr, timed_out, "network namespace" in protections, stopped, cpu,
                         protections)


def stop_reason(*, timed_out: bool, denied: str, limits_hit: set[str], signal_number: int,
                cpu_seconds: float | None, limits: Limits) -> str:
    """Why the sandbox ended or refused the script, in words for the record and for the model."""
    reasons = [f"denied: {denied}"] if denied else []
    cpu_spent = cpu_seconds is not None and cpu_seconds >= limits.cpu_seconds
    if timed_out:
        reasons.append(f"stopped: ran past the {limits.wall_seconds:g} s wall-clock limit")
    elif "memory" in limits_hit:
        reasons.append(f"stopped: exceeded the {_size(limits.memory_bytes)} memory limit (MemoryError)")
    elif signal_number == signal.SIGXCPU or (signal_number == signal.SIGKILL and cpu_spent):
        reasons.append(f"stopped: exceeded the {limits.cpu_seconds} s CPU-time limit")
    elif signal_number == signal.SIGXFSZ or "file size" in limits_hit:
        reasons.append(f"stopped: wrote a file past the {_size(limits.file_bytes)} file-size limit")
    elif signal_number == signal.SIGKILL:
        reasons.append("stopped: killed by the system (SIGKILL), probably for lack of memory")
    return "; ".join(reasons)


def _size(count: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size:
            return f"{count / size:g} {unit}"
    return f"{count} bytes"


def process_limit(uid: int | None) -> int | None:
    """RLIMIT_NPROC for the script: what its user already runs plus a margin. The kernel counts
    processes (threads, in fact) per user and exempts root, so as root there is no limit to set:
    there the pid namespace and the audit hook are what hold a fork bomb."""
    user = os.getuid() if uid is None else uid
    if user == 0:
        return None
    return tasks_of_user(user) + PROCESS_MARGIN


def tasks_of_user(uid: int) -> int:
    """Threads of all processes whose real user is `uid`, as the kernel counts for RLIMIT_NPROC."""
    count = 0
    for status in Path("/proc").glob("[0-9]*/status"):
        with contextlib.suppress(OSError):
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
            if int(fields["Uid"].split()[0]) == uid:
                count += int(fields["Threads"])
    return count


@cache
def isolation_available() -> Isolation:
    """The strongest isolation that works here, tried once per process."""
    for candidate in isolation_candidates():
        if _works(candidate):
            return candidate
    return Isolation()


def isolation_candidates() -> list[Isolation]:
    unshare = shutil.which("unshare")
    if os.geteuid() != 0:
        # User namespaces let an ordinary user make the other namespaces.
        if not unshare:
            return []
        user = (unshare, "--user", "--map-root-user")
        return [Isolation((*user, *NAMESPACES), network=True, pids=True, user_namespace=True),
                Isolation((*user, "--net"), network=True, user_namespace=True)]
    try:
        nobody = pwd.getpwnam("nobody")
        uid, gid = nobody.pw_uid, nobody.pw_gid
    except KeyError:
        uid = gid = None
    candidates = []
    if unshare and uid is not None:
        switch = ("--setgid", str(gid), "--setuid", str(uid))
        candidates.append(Isolation((unshare, *NAMESPACES, *switch), network=True, pids=True, uid=uid, gid=gid))
    if unshare:
        # `nobody` may be unable to run the interpreter (installed under /root, say): then root
        # in a user namespace, whose capabilities stop at its border; then plain namespaces.
        user = (unshare, "--user", "--map-root-user")
        candidates.append(Isolation((*user, *NAMESPACES), network=True, pids=True, user_namespace=True))
        candidates.append(Isolation((unshare, *NAMESPACES), network=True, pids=True))
    if uid is not None:
        candidates.append(Isolation(uid=uid, gid=gid))
    return candidates


def _works(candidate: Isolation) -> bool:
    """Whether Python starts (and finds numpy) inside `candidate`: the unprivileged user may be
    unable to read an interpreter installed under /root, a container may forbid namespaces."""
    with tempfile.TemporaryDirectory(prefix="lemmata-sandbox-probe-") as scratch:
        if candidate.uid is not None:
            os.chown(scratch, candidate.uid, candidate.gid or candidate.uid)
        command = [*candidate.prefix, sys.executable, "-I", "-B", "-c", "import numpy"]
        try:
            probe = subprocess.run(command, cwd=scratch, env=script_environment(scratch), capture_output=True,
                                   timeout=20, preexec_fn=_preexec(Limits(), candidate, None))
        except (OSError, subprocess.SubprocessError):
            return False
    return probe.returncode == 0
