"""Where a box's inputs wait on the host: a folder only our user may pass.

A box started by root drops to an unprivileged uid (bubblewrap.py) that must read its inputs, so
the folder the box binds is made 0755 and its files 0644. In the temporary directory those modes
alone would let every user of the machine read the inputs (a model's test of an unpublished
lemma, the paper being compiled), so the bound folder sits inside one made 0700: others cannot
pass it on the host, while in the box the bound folder hangs from parents bubblewrap makes.

The private folder is named by our pid and host: a process killed before it removed its folders
(SIGKILL runs no handler) leaves them behind. Before a process makes its first folder, it removes
our user's folders of this host whose process no longer runs, and earlier versions' experiment
folders, readable by all, once a day old (`remove_staging_of_dead_processes`). The workflow's
process starts the spare TeX box as it starts, so a resumed run clears what the killed one left,
and a job on a cluster node what an earlier job there left. The host in the name keeps a
temporary directory that cluster nodes share from taking another node's live process for a dead one.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

PREFIX = "lemmata-box-"
#: What earlier versions named their TeX boxes' folders (bound directly, pid-named as here).
OLDER_PREFIXES = ("lemmata-tex-",)
#: What earlier versions named their experiment boxes' folders: open to all, named by no process.
#: One untouched for a day is abandoned (a box's wall-clock limit is seconds): it is removed too.
OLDER_UNNAMED_PREFIX = "lemmata-sandbox-"
ABANDONED_AFTER_SECONDS = 24 * 3600
BOUND = "inputs"


_cleared = threading.Event()  # this process removed what dead processes left


@contextlib.contextmanager
def staging_folder() -> Iterator[Path]:
    """A new folder for a box's inputs, inside a private one; both removed on leaving."""
    if not _cleared.is_set():
        _cleared.set()
        remove_staging_of_dead_processes()
    private = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}@{this_host()}-"))  # 0700 whatever the umask
    try:
        bound = private / BOUND
        bound.mkdir()
        yield bound
    finally:
        shutil.rmtree(private, ignore_errors=True)


def open_to_the_box(folder: Path) -> None:
    """Let the box's uid read `folder` and all in it (the private folder around keeps others out)."""
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


def this_host() -> str:
    """The host's name as a folder name may hold it (no "@", no "/")."""
    return re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname()) or "_"


def remove_staging_of_dead_processes(folder: Path | None = None) -> list[Path]:
    """Remove our user's staging folders in `folder` (the temporary directory) made on this host by
    a process that no longer runs; the ones removed. A live process's folder, another user's,
    another host's, or one not named by a process is left alone."""
    removed = []
    for path in (folder or Path(tempfile.gettempdir())).glob("lemmata-*-*"):
        try:
            if path.lstat().st_uid != os.geteuid() or not path.is_dir() or not _abandoned(path):
                continue
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _abandoned(path: Path) -> bool:
    if path.name.startswith(OLDER_UNNAMED_PREFIX):
        return time.time() - path.lstat().st_mtime > ABANDONED_AFTER_SECONDS
    pid = _maker(path.name)
    return pid is not None and not _running(pid)


def _maker(name: str) -> int | None:
    """The pid of the process of this host that made the folder `name`; None if not one of ours.
    Earlier versions named their TeX boxes' folders by pid alone: those are taken as this host's."""
    if name.startswith(PREFIX):
        pid, at, rest = name[len(PREFIX) :].partition("@")
        made_here = at and rest.rsplit("-", 1)[0] == this_host()
        return int(pid) if made_here and pid.isdigit() else None
    for prefix in OLDER_PREFIXES:
        if name.startswith(prefix):
            pid = name[len(prefix) :].split("-", 1)[0]
            return int(pid) if pid.isdigit() else None
    return None


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: running
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """A process that ended and is not reaped yet (a workflow killed with its driver is nobody's
    child until something reaps it): it answers signal 0, and makes no more folders."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):  # no /proc (not Linux), or the process just went
        return False
    return state == "Z"
