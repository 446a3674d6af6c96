"""The bubblewrap command line of a box: what it sees, who it runs as, with which environment.

A pure function of its inputs, so tests can read the command a box gets. bubblewrap (`bwrap`,
Debian's package `bubblewrap`, 0.8 or newer) builds a new root from nothing but the paths named
here; everything else of the host (/root, /home, /tmp, /run and its sockets, $LEMMATA_HOME) is
simply absent.

Two ways to become an unprivileged user:
- lemmata runs as root: bwrap makes the namespaces as root (no user namespace: in one, the box's
  uid would be root's outside), then `setpriv` switches to a uid of its own that is nobody's
  outside, with no capabilities, an empty bounding set and no-new-privileges;
- lemmata runs as a user: bwrap makes a user namespace for that user, forbids further user
  namespaces inside, and the box runs as the user's uid without capabilities.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: The merged-/usr links of a Debian root (/lib -> usr/lib, ...): recreated as links in the box.
ROOT_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: Where the dynamic linker and the C library live: every box needs them to start a program.
SYSTEM_LIBRARIES = ("/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libx32", "/etc/ld.so.cache")
SETPRIV = "/usr/bin/setpriv"
#: Namespaces of every box. No user namespace here: see Identity.
NAMESPACES = ("--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try")


@dataclass(frozen=True)
class Identity:
    """Who the box runs as. `privileged`: bwrap runs as root and `setpriv` drops to uid/gid."""

    privileged: bool
    uid: int
    gid: int


@dataclass(frozen=True)
class Layout:
    """What the box sees: host paths shown read-only at the same place, and one writable tmpfs of
    `scratch_bytes`, its working directory."""

    read_only: tuple[str, ...]
    scratch: str
    scratch_bytes: int


def bwrap_command(
    layout: Layout, identity: Identity, environment: Mapping[str, str], argv: Sequence[str], bwrap: str = "bwrap"
) -> list[str]:
    """The whole command that runs `argv` in the box."""
    command = [bwrap, *NAMESPACES, "--die-with-parent", "--new-session"]
    if not identity.privileged:
        command += ["--unshare-user", "--disable-userns", "--uid", str(identity.uid), "--gid", str(identity.gid)]
    command += ["--clearenv"]
    for name, value in environment.items():
        command += ["--setenv", name, value]
    command += ["--proc", "/proc", "--dev", "/dev"]
    command += _mounts(layout)
    command += ["--remount-ro", "/", "--chdir", layout.scratch]
    if identity.privileged:
        # setpriv needs these three to switch user and empty its bounding set; it drops them all.
        command += [
            "--cap-add",
            "CAP_SETUID",
            "--cap-add",
            "CAP_SETGID",
            "--cap-add",
            "CAP_SETPCAP",
            SETPRIV,
            f"--reuid={identity.uid}",
            f"--regid={identity.gid}",
            "--clear-groups",
            "--no-new-privs",
            "--inh-caps=-all",
            "--bounding-set=-all",
        ]
    return [*command, "--", *argv]


def _mounts(layout: Layout) -> list[str]:
    """Read-only binds (a missing path is left out: bwrap would fail on it; a path inside another
    bound one is already there), the parents they need as plain directories anyone may enter, the
    scratch tmpfs, the root links."""
    arguments: list[str] = []
    made: set[str] = set()
    bound: list[str] = []
    for path in sorted(set(layout.read_only)):
        if any(_inside(path, outer) for outer in bound) or not os.path.lexists(path):
            continue
        arguments += _parents(path, made)
        arguments += ["--ro-bind", path, path]
        bound.append(path)
    arguments += _parents(layout.scratch, made)
    arguments += ["--perms", "1777", "--size", str(layout.scratch_bytes), "--tmpfs", layout.scratch]
    for link in ROOT_LINKS:
        if os.path.islink(link) and link not in bound:
            arguments += ["--symlink", os.readlink(link), link]
    return arguments


def _parents(path: str, made: set[str]) -> list[str]:
    """`--dir` for each parent of `path` not made yet: bwrap would make them 0700 (as the host's
    /root is), which the box's uid could not enter."""
    arguments = []
    parts = path.strip("/").split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        parent = "/" + "/".join(parts[:depth])
        if parent not in made:
            made.add(parent)
            arguments += ["--perms", "0755", "--dir", parent]
    return arguments


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def system_library_paths() -> tuple[str, ...]:
    """The dynamic linker's places; a root that is not merged-/usr has real /lib directories."""
    real_root_dirs = [
        link
        for link in ROOT_LINKS
        if os.path.isdir(link) and not os.path.islink(link) and link not in ("/bin", "/sbin")
    ]
    return (*SYSTEM_LIBRARIES, *real_root_dirs)
