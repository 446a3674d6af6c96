"""Starting a box, watching its whole-box limits, and ending it with nothing left behind.

`open_box` starts `argv` inside bubblewrap (`bubblewrap.py`) in a cgroup of its own
(`cgroups.py`), with resource limits per process as a second layer, and on leaving kills every
process of the box and removes its cgroup. `box_problem()` says, once per process, why boxes
cannot run here (bubblewrap missing, namespaces forbidden), so callers refuse with that message
instead of running unconfined.
"""

from __future__ import annotations

import contextlib
import os
import resource
import secrets
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache

from lemmata.errors import UserError
from lemmata.isolation.bubblewrap import SETPRIV, Identity, Layout, bwrap_command, system_library_paths
from lemmata.isolation.cgroups import BoxCgroup, CgroupEvents, CgroupUnavailable, open_cgroup

#: Set to `per-process` to run experiments where no cgroup can be made, with per-process limits
#: only (weaker: see SECURITY.md). Read from the environment only: no settings file, browser form
#: or run directory can loosen the box.
WEAKER_LIMITS_VARIABLE = "LEMMATA_SANDBOX_LIMITS"
PER_PROCESS = "per-process"
#: Run as root, each box gets a uid of its own from this range: nobody's outside, so no other
#: process on the host shares its signals, its files or its process count.
BOX_UIDS = range(1_800_000_000, 1_800_000_000 + (1 << 24))
INSTALL_HINT = "install bubblewrap 0.8 or newer (Debian/Ubuntu: apt-get install bubblewrap; bin/setup does)"


class BoxUnavailable(UserError):
    """This machine cannot give untrusted work its box; the message says what to install or enable."""


@dataclass(frozen=True)
class BoxLimits:
    """Limits of one box. memory_bytes, processes and cpu_seconds hold for all its processes
    together (and memory includes the scratch tmpfs); file_bytes and open_files per process."""

    wall_seconds: float = 30.0
    cpu_seconds: float = 20.0
    memory_bytes: int = 1 << 30
    processes: int = 32
    scratch_bytes: int = 64 << 20
    file_bytes: int = 10 << 20
    open_files: int = 64


@dataclass(frozen=True)
class BoxSpec:
    """What runs in a box and what it sees. `read_only`: host paths shown at the same place;
    `scratch`: the writable tmpfs and working directory (its size is limits.scratch_bytes)."""

    argv: Sequence[str]
    read_only: Sequence[str]
    environment: Mapping[str, str]
    limits: BoxLimits = BoxLimits()
    scratch: str = "/box/work"
    whole_box_limits: bool = True  # False: TeX, which cannot fork or allocate much by itself


@dataclass
class Box:
    """A running box: its process (bwrap) and, when it has one, its cgroup."""

    process: subprocess.Popen[bytes]
    cgroup: BoxCgroup | None
    limits: BoxLimits
    protections: tuple[str, ...] = ()
    _cpu_at_end: float | None = field(default=None, repr=False)
    _events_at_end: CgroupEvents | None = field(default=None, repr=False)

    def cpu_seconds(self) -> float | None:
        """CPU time of the whole box so far; None without a cgroup."""
        if self._cpu_at_end is not None:
            return self._cpu_at_end
        return self.cgroup.cpu_seconds() if self.cgroup else None

    def over_cpu(self) -> bool:
        spent = self.cpu_seconds()
        return spent is not None and spent >= self.limits.cpu_seconds

    def events(self) -> CgroupEvents:
        if self._events_at_end is not None:
            return self._events_at_end
        return self.cgroup.events() if self.cgroup else CgroupEvents()


@contextlib.contextmanager
def open_box(
    spec: BoxSpec,
    *,
    stdin: int = subprocess.DEVNULL,
    stdout: int = subprocess.PIPE,
    stderr: int = subprocess.PIPE,
    pass_fds: Sequence[int] = (),
) -> Iterator[Box]:
    """Start the box; on leaving, every process in it is killed and its cgroup removed."""
    problem = box_problem()
    if problem:
        raise BoxUnavailable(problem)
    cgroup = whole_box_cgroup(spec.limits) if spec.whole_box_limits else None
    identity = box_identity()
    layout = Layout(tuple(spec.read_only), spec.scratch, spec.limits.scratch_bytes)
    bwrap = _bwrap()
    if bwrap is None:  # box_problem() looked once per process: bwrap has gone since
        raise BoxUnavailable(f"the sandbox needs bubblewrap (bwrap), which is not installed: {INSTALL_HINT}")
    command = bwrap_command(layout, identity, spec.environment, spec.argv, bwrap=bwrap)
    try:
        process = subprocess.Popen(
            command,
            env={"PATH": "/usr/bin:/bin"},
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            pass_fds=tuple(pass_fds),
            start_new_session=True,
            preexec_fn=_preexec(spec.limits, cgroup, identity),
        )
    except BaseException:
        if cgroup:
            cgroup.remove()
        raise
    box = Box(process, cgroup, spec.limits, _protections(cgroup, identity))
    try:
        yield box
    finally:
        _end(box)


def whole_box_cgroup(limits: BoxLimits) -> BoxCgroup | None:
    """A cgroup with the box's limits; None when the user accepted per-process limits and no cgroup
    can be made. Raises BoxUnavailable when no box can run here, or no cgroup without that consent."""
    problem = box_problem()
    if problem:
        raise BoxUnavailable(problem)
    try:
        cgroup = open_cgroup()
    except CgroupUnavailable as error:
        if os.environ.get(WEAKER_LIMITS_VARIABLE) == PER_PROCESS:
            return None
        raise BoxUnavailable(
            f"the sandbox limits memory, processes and CPU time of a whole test with a cgroup, and none can be "
            f"made here ({error}). Run lemmata as root, or in a cgroup v2 subtree delegated to your user with the "
            f"memory and pids controllers, or set {WEAKER_LIMITS_VARIABLE}={PER_PROCESS} to accept limits per "
            f"process only (weaker: see SECURITY.md)"
        ) from None
    try:
        cgroup.set_limits(limits.memory_bytes + limits.scratch_bytes, limits.processes)
    except OSError:
        cgroup.remove()
        raise
    return cgroup


def _preexec(limits: BoxLimits, cgroup: BoxCgroup | None, identity: Identity) -> Callable[[], None]:
    """Between fork and exec of bwrap: join the cgroup, set the per-process limits."""
    cpu = max(1, int(limits.cpu_seconds + 0.999))
    # In a user namespace the kernel also counts the user's other processes: allow for them.
    user_processes = tasks_of_user(os.getuid()) + limits.processes if not identity.privileged and not cgroup else None

    def apply() -> None:
        if cgroup is not None:
            cgroup.join()
        # The hard CPU limit a second above the soft one: SIGXCPU first, SIGKILL if it is ignored.
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if identity.privileged:
            # The box's uid is its own: the kernel's count of that uid's processes is the box's.
            # Above the cgroup's cap when there is one, so that the cgroup, which says so, refuses first.
            processes = limits.processes + (8 if cgroup is not None else 0)
            resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
        elif user_processes is not None:
            resource.setrlimit(resource.RLIMIT_NPROC, (user_processes, user_processes))

    return apply


def _end(box: Box) -> None:
    """Kill the box and all it started; keep its CPU time; remove its cgroup."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(box.process.pid, 9)
    if box.cgroup:
        box.cgroup.kill()
    box.process.wait()
    for stream in (box.process.stdin, box.process.stdout, box.process.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):  # a pipe to the dead box: its buffered bytes go nowhere
                stream.close()
    if box.cgroup:
        box._cpu_at_end, box._events_at_end = box.cgroup.cpu_seconds(), box.cgroup.events()
        box.cgroup.remove()


def _protections(cgroup: BoxCgroup | None, identity: Identity) -> tuple[str, ...]:
    """What holds around the work, as the experiment records and the cards show it."""
    names = [
        "bubblewrap box",
        "read-only system",
        "scratch tmpfs",
        "no network",
        "pid namespace",
        "environment from nothing",
        "unprivileged uid" if identity.privileged else "user namespace",
        "no capabilities",
        "wall-clock timeout",
    ]
    names.append(f"whole-test limits (cgroup v{cgroup.version})" if cgroup else "per-process limits only")
    return tuple(names)


def box_identity() -> Identity:
    if os.geteuid() == 0:
        uid = BOX_UIDS.start + secrets.randbelow(len(BOX_UIDS))
        return Identity(True, uid, uid)
    return Identity(False, os.getuid(), os.getgid())


def python_paths() -> tuple[str, ...]:
    """What the box shows of Python, read-only: the interpreter (interpreter_paths), the
    virtualenv it runs in and the site-packages it imports from; and lemmata's own package, whose
    formal statements the experiment runs in the box (in site-packages already, unless installed
    in editable mode from a checkout). Other sys.path entries (the rest of a checkout) stay outside."""
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    paths = {*interpreter_paths(), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], package}
    if sys.prefix != sys.base_prefix:
        paths.add(sys.prefix)  # a virtualenv is Python's own: its pyvenv.cfg, bin/ links, site-packages
    return tuple(sorted(paths))


def interpreter_paths(executable: str = sys.executable) -> tuple[str, ...]:
    """What `executable` needs to start: each link from it to the interpreter and the interpreter
    itself (a virtualenv's bin/python, a version manager's python3), the standard library, and the
    shared libpython of a build made with --enable-shared. Not the interpreter's prefix or its
    folder: a distribution's interpreter is /usr/bin/python3.11, beside every other program of
    the system, under the prefix /usr."""
    standard_library = (
        sysconfig.get_path("stdlib"),
        sysconfig.get_path("platstdlib", vars={"platbase": sys.base_exec_prefix}),  # not a virtualenv's
    )
    paths = {*_links_to(executable), *standard_library}
    if sysconfig.get_config_var("Py_ENABLE_SHARED"):
        library = os.path.join(sysconfig.get_config_var("LIBDIR") or "", sysconfig.get_config_var("INSTSONAME") or "")
        if os.path.isfile(library):
            paths.update(_links_to(library))
    return tuple(sorted(paths))


def _links_to(path: str) -> list[str]:
    """`path`, the path each symbolic link on the way leads to, and the file it ends at."""
    chain = [os.path.abspath(path)]
    while os.path.islink(chain[-1]) and len(chain) < 40:
        chain.append(os.path.normpath(os.path.join(os.path.dirname(chain[-1]), os.readlink(chain[-1]))))
    # realpath: the file itself, when a folder on the way is a link
    return list(dict.fromkeys([*chain, os.path.realpath(path)]))


@cache
def box_problem() -> str:
    """Why no box can run here, in words for the user; "" when boxes work. Tried once per process."""
    bwrap = _bwrap()
    if bwrap is None:
        return f"the sandbox needs bubblewrap (bwrap), which is not installed: {INSTALL_HINT}"
    identity = box_identity()
    if identity.privileged and not os.access(SETPRIV, os.X_OK):
        return f"run as root, the sandbox needs {SETPRIV} (util-linux) to switch to an unprivileged uid"
    layout = Layout((*python_paths(), *system_library_paths(), SETPRIV), "/box/work", 1 << 20)
    command = bwrap_command(layout, identity, {"PATH": "/usr/bin"}, [sys.executable, "-I", "-S", "-c", "pass"], bwrap)
    try:
        probe = subprocess.run(command, env={"PATH": "/usr/bin:/bin"}, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as error:
        return f"the sandbox could not start bubblewrap ({error}): {INSTALL_HINT}"
    if probe.returncode == 0:
        return ""
    detail = probe.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit status {probe.returncode}"]
    hint = INSTALL_HINT
    if "namespace" in detail[0].lower() and not identity.privileged:
        hint = (
            "this system forbids unprivileged user namespaces: allow them (sysctl kernel.unprivileged_userns_clone=1 "
            "and user.max_user_namespaces > 0; on Ubuntu 24.04 AppArmor's bwrap profile), or run lemmata as root"
        )
    return f"the sandbox could not start ({detail[0]}): {hint}"


def _bwrap() -> str | None:
    return shutil.which("bwrap", path="/usr/bin:/bin:/usr/local/bin:" + os.environ.get("PATH", ""))


def tasks_of_user(uid: int) -> int:
    """Threads of all processes whose real user is `uid`, as the kernel counts for RLIMIT_NPROC."""
    count = 0
    for status in os.scandir("/proc"):
        if not status.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, KeyError):
            with open(f"/proc/{status.name}/status") as handle:
                fields = dict(line.split(":", 1) for line in handle if ":" in line)
            if int(fields["Uid"].split()[0]) == uid:
                count += int(fields["Threads"])
    return count
