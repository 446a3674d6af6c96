"""A file the system would not let us read or write, said as one line: the path, why, what to do.

Shared by the CLI and the server: a full disk, a read-only or missing folder, a file where a
folder should be are faults of the machine, not of lemmata, and are reported as such.
"""

from __future__ import annotations

import errno
import os

from lemmata.settings import lemmata_home

#: What to do about a file the system refused, by errno.
_ADVICE = {
    errno.ENOSPC: "the disk is full: free some space, then run the command again (a run goes on with "
    "`lemmata resume ID`; nothing it finished is lost)",
    errno.EDQUOT: "the disk quota is used up: free some space, then run the command again",
    errno.EROFS: "that file system is read-only: use a folder you can write to",
    errno.EACCES: "permission denied: use a folder you can write to",
    errno.EPERM: "operation not permitted: use a folder you can write to",
    errno.ENOTDIR: "a part of that path is a file, not a folder: use a folder",
    errno.EEXIST: "a file of that name is in the way: move it, or use another folder",
    errno.ENOENT: "a folder of that path does not exist and could not be made: use a folder that exists",
    errno.EISDIR: "that is a folder, not a file",
}


#: Refusals that come from the machine whatever the call: a write that found the disk full (its
#: OSError may name no file: a buffered write fails at close), a read-only or failing disk.
_MACHINE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO)


def is_environmental(exc: OSError) -> bool:
    """A file the system refused (it names one) or a disk that refuses everything: the machine's
    fault, said in one line. Any other OSError is treated as our bug."""
    return exc.filename is not None or exc.errno in _MACHINE_ERRNOS


def describe_os_error(exc: OSError) -> str:
    """`path: reason: what to do`, and where LEMMATA_HOME points when the path is inside it."""
    path = os.fsdecode(exc.filename) if exc.filename is not None else "a file lemmata was writing"
    reason = exc.strerror or type(exc).__name__
    advice = _ADVICE.get(exc.errno or 0, "check that path")
    where = ""
    try:
        home = str(lemmata_home())
    except Exception:  # noqa: BLE001 - the home is only a hint here
        home = ""
    inside = path == home or path.startswith(home.rstrip("/") + "/") or home.startswith(path + "/")
    if home and (inside or exc.filename is None):
        where = f" (LEMMATA_HOME is {home})"
    return f"{path}: {reason}: {advice}{where}"


#: Less free space than this on a run's disk after its workflow failed: the disk is why.
FULL_DISK_BYTES = 1 << 20


def disk_is_full(path: os.PathLike[str] | str) -> bool:
    """The file system of `path` has (almost) no room left for an unprivileged writer."""
    try:
        status = os.statvfs(path)
    except OSError:
        return False
    return status.f_bavail * status.f_frsize < FULL_DISK_BYTES
