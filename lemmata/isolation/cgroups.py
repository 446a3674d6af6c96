"""A control group per box: memory, process count and CPU time of all its processes together.

Resource limits (`setrlimit`) hold per process: dozens of 1 GiB processes each stay under a
1 GiB limit. A cgroup counts the box as a whole, and its tmpfs pages too. lemmata makes one
under its own cgroup, for each box:
- cgroup v1 (one hierarchy per controller, as on this project's CI machines): memory, pids and
  cpuacct, writable by root;
- cgroup v2: a child of lemmata's own cgroup when memory and pids are enabled for its children
  and lemmata may write there (root, or a subtree delegated to the user).
Where neither works, `open_cgroup` raises CgroupUnavailable and the caller decides (the
experiment sandbox refuses, unless the user accepted per-process limits).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

V1_CONTROLLERS = ("memory", "pids", "cpuacct")
_names = itertools.count()


class CgroupUnavailable(Exception):
    """No cgroup lemmata may limit; the message says why."""


@dataclass(frozen=True)
class CgroupEvents:
    """What the kernel refused the box: processes killed for memory, forks over the cap."""

    oom_kills: int = 0
    forks_refused: int = 0


class BoxCgroup:
    """One box's cgroup: directories to write limits into, join, read, empty and remove."""

    def __init__(self, directories: dict[str, Path], version: int) -> None:
        self.directories = directories  # controller (or "unified") -> directory
        self.version = version

    def set_limits(self, memory_bytes: int, processes: int) -> None:
        if self.version == 2:
            directory = self.directories["unified"]
            _write(directory / "memory.max", memory_bytes)
            _write(directory / "memory.swap.max", 0, optional=True)
            _write(directory / "pids.max", processes)
            return
        memory = self.directories["memory"]
        _write(memory / "memory.limit_in_bytes", memory_bytes)
        _write(memory / "memory.memsw.limit_in_bytes", memory_bytes, optional=True)  # no swapping around it
        _write(self.directories["pids"] / "pids.max", processes)

    def join(self) -> None:
        """Move the calling process in (called between fork and exec: children follow)."""
        for directory in self.directories.values():
            _write(directory / "cgroup.procs", os.getpid())

    def cpu_seconds(self) -> float:
        """CPU time of every process that ever ran in the box."""
        with contextlib.suppress(OSError, ValueError):
            if self.version == 2:
                stat = _fields(self.directories["unified"] / "cpu.stat")
                return stat.get("usage_usec", 0) / 1e6
            return int((self.directories["cpuacct"] / "cpuacct.usage").read_text()) / 1e9
        return 0.0

    def events(self) -> CgroupEvents:
        memory = self.directories["unified" if self.version == 2 else "memory"]
        pids = self.directories["unified" if self.version == 2 else "pids"]
        memory_events = _fields(memory / ("memory.events" if self.version == 2 else "memory.oom_control"))
        return CgroupEvents(memory_events.get("oom_kill", 0), _fields(pids / "pids.events").get("max", 0))

    def processes(self) -> list[int]:
        directory = next(iter(self.directories.values()))
        with contextlib.suppress(OSError):
            return [int(line) for line in (directory / "cgroup.procs").read_text().split()]
        return []

    def kill(self) -> None:
        """SIGKILL every process in the box, including any the box hid from its pid namespace's init."""
        kill_file = self.directories.get("unified", Path("/nonexistent")) / "cgroup.kill"
        if kill_file.exists():
            with contextlib.suppress(OSError):
                _write(kill_file, 1)
        for pause in _pauses(0.5):
            pids = self.processes()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(pause)

    def remove(self, patience: float = 2.0) -> None:
        """Kill what is left and remove the directories (a cgroup goes once its processes are gone:
        reaped, which for orphans is up to the machine's init, hence `patience` seconds)."""
        self.kill()
        for directory in self.directories.values():
            for pause in _pauses(patience):
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # EBUSY: a killed process not reaped yet
                    time.sleep(pause)


def _pauses(patience: float) -> Iterator[float]:
    """Pauses between looks at processes that are going (1 ms, doubling to 10 ms), for about
    `patience` seconds in all: a killed box's processes are usually gone within a millisecond or
    two, and a fixed 10 ms pause cost each box's end that much (2026-11-29)."""
    pause, waited = 0.001, 0.0
    while True:
        yield pause
        waited += pause
        if waited >= patience:
            return
        pause = min(2 * pause, 0.01)


def open_cgroup() -> BoxCgroup:
    """A new, empty cgroup for one box; raises CgroupUnavailable with the reason."""
    mounts = list(_cgroup_mounts())
    own = _own_cgroups()
    reasons = []
    for attempt in (_open_v1, _open_v2):
        try:
            return attempt(mounts, own)
        except CgroupUnavailable as error:
            reasons.append(str(error))
    raise CgroupUnavailable("; ".join(reasons))


def remove_boxes_of(creator: int) -> int:
    """Empty and remove the cgroups of the boxes process `creator` made (they are named after it)
    and left behind: it was killed before it could (a SIGKILLed Snakemake, whose jobs open boxes).
    Only call this once `creator` is gone; how many directories were removed."""
    removed = 0
    for key, parent in _box_parents():
        for directory in parent.glob(f"lemmata-box-{creator}-*"):
            if directory.is_dir():
                # Its processes died with it, orphans: removable once init has reaped them.
                BoxCgroup({key: directory}, 2 if key == "unified" else 1).remove(patience=15.0)
                removed += not directory.exists()
    return removed


def _box_parents() -> list[tuple[str, Path]]:
    """(controller, or "unified" for v2; the directory) where this process makes its boxes' cgroups."""
    mounts, own = list(_cgroup_mounts()), _own_cgroups()
    parents = []
    for controller in V1_CONTROLLERS:
        mount = next((m for m in mounts if m[2] == "cgroup" and controller in m[3]), None)
        if mount is not None and controller in own:
            parents.append((controller, _child_path(mount, own[controller]).parent))
    mount = next((m for m in mounts if m[2] == "cgroup2"), None)
    if mount is not None and "" in own:
        parents.append(("unified", _child_path(mount, own[""]).parent))
    return parents


def _open_v1(mounts: list[tuple[str, str, str, set[str]]], own: dict[str, str]) -> BoxCgroup:
    directories = {}
    for controller in V1_CONTROLLERS:
        mount = next((m for m in mounts if m[2] == "cgroup" and controller in m[3]), None)
        if mount is None or controller not in own:
            raise CgroupUnavailable(f"cgroup v1: no {controller} hierarchy")
        directories[controller] = _child_path(mount, own[controller])
    return _make(directories, 1, "cgroup v1")


def _open_v2(mounts: list[tuple[str, str, str, set[str]]], own: dict[str, str]) -> BoxCgroup:
    mount = next((m for m in mounts if m[2] == "cgroup2"), None)
    if mount is None or "" not in own:
        raise CgroupUnavailable("cgroup v2: not mounted")
    child = _child_path(mount, own[""])
    parent = child.parent
    enabled = set(_read(parent / "cgroup.subtree_control").split())
    if not {"memory", "pids"} <= enabled:
        try:
            _write(parent / "cgroup.subtree_control", "+memory +pids")
        except OSError as error:
            raise CgroupUnavailable(
                f"cgroup v2: memory and pids are not enabled below {parent} and cannot be ({error.strerror})"
            ) from None
    return _make({"unified": child}, 2, "cgroup v2")


def _make(directories: dict[str, Path], version: int, name: str) -> BoxCgroup:
    made = []
    try:
        for directory in directories.values():
            directory.mkdir()
            made.append(directory)
    except OSError as error:
        for directory in made:
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise CgroupUnavailable(f"{name}: cannot create {error.filename} ({error.strerror})") from None
    return BoxCgroup(directories, version)


def _child_path(mount: tuple[str, str, str, set[str]], own_path: str) -> Path:
    """A new directory name below our own cgroup in that hierarchy."""
    mount_point, mount_root = mount[0], mount[1]
    relative = own_path[len(mount_root) :] if own_path.startswith(mount_root) else own_path
    name = f"lemmata-box-{os.getpid()}-{next(_names)}"
    return Path(mount_point + "/" + relative.strip("/")) / name if relative.strip("/") else Path(mount_point) / name


def _cgroup_mounts() -> Iterator[tuple[str, str, str, set[str]]]:
    """(mount point, root, type, super options) of each cgroup mount, from mountinfo."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            before, _, after = line.partition(" - ")
            fields, tail = before.split(), after.split()
            if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
                yield _unescape(fields[4]), _unescape(fields[3]), tail[0], set(tail[2].split(","))


def _own_cgroups() -> dict[str, str]:
    """Our cgroup path per v1 controller, and "" for the v2 hierarchy."""
    own = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                own[controller] = path
    return own


def _unescape(field: str) -> str:
    return field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def _fields(path: Path) -> dict[str, int]:
    """A flat-keyed cgroup file ("key value" lines) as a dict; {} when unreadable."""
    values = {}
    for line in _read(path).splitlines():
        key, _, value = line.partition(" ")
        with contextlib.suppress(ValueError):
            values[key] = int(value)
    return values


def _read(path: Path) -> str:
    with contextlib.suppress(OSError):
        return path.read_text()
    return ""


def _write(path: Path, value: object, optional: bool = False) -> None:
    if optional and not path.exists():
        return
    with open(path, "w") as handle:  # one write: cgroup files take one value per write
        handle.write(str(value))
