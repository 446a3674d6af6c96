"""Files of a data home are private: what lemmata writes there is for its user alone.

A run folder holds every prompt and answer (the unpublished research), its logs, forecasts and
figures; `lemmata check` keeps its logs in the data home too. None of it may be readable by other
users of the machine, whatever their umask (SECURITY.md). This holds at the OS level, not by a
chmod per file: every entry point sets the umask to 077 (the CLI, and with it `lemmata serve`
and the runs it starts; the Snakefile, for a workflow's jobs on other machines), and every
process started from there (Snakemake, its jobs, the boxes) inherits it. The data home and its
`runs/` folder are also made 0700 explicitly, and an existing looser home is made private once.

The user's own umask is kept (USER_UMASK_VARIABLE) for what lemmata hands over to them: the
papers delivered to an --output folder.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from pathlib import Path

PRIVATE_UMASK = 0o077
PRIVATE_DIRECTORY = 0o700
#: The umask the user started lemmata with, in octal, for the processes lemmata starts.
USER_UMASK_VARIABLE = "LEMMATA_USER_UMASK"


def make_files_private() -> None:
    """From now on this process (and every process it starts) creates files 0600, folders 0700."""
    previous = os.umask(PRIVATE_UMASK)
    if not _octal(os.environ.get(USER_UMASK_VARIABLE, "")):  # the first lemmata process saw the user's
        os.environ[USER_UMASK_VARIABLE] = f"{previous:03o}"


def user_umask() -> int:
    """The umask the user started lemmata with (for files delivered to them); the current one when
    lemmata did not change it."""
    saved = _octal(os.environ.get(USER_UMASK_VARIABLE, ""))
    if saved is not None:
        return saved
    current = os.umask(PRIVATE_UMASK)
    os.umask(current)
    return current


def private_directory(path: Path) -> Path:
    """`path`, with each folder made for it (parents too) 0700 whatever the umask."""
    path = Path(path)
    for folder in reversed([folder for folder in (path, *path.parents) if not folder.exists()]):
        folder.mkdir(mode=PRIVATE_DIRECTORY, exist_ok=True)
        folder.chmod(PRIVATE_DIRECTORY)  # mkdir's mode passes through the umask
    return path


def make_data_home_private(home: Path) -> None:
    """A data home of ours that others may enter is made 0700, once, with one line saying so: below
    it, whatever an older lemmata (or another umask) left readable is then out of their reach."""
    with contextlib.suppress(OSError):  # no home yet, not a folder, not ours: nothing to tighten here
        status = home.stat()
        if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.geteuid():
            return
        loose = stat.S_IMODE(status.st_mode)
        if loose & 0o077:
            home.chmod(loose & PRIVATE_DIRECTORY)
            sys.stderr.write(
                f"lemmata: made the data directory {home} private (mode {loose:o} -> {loose & 0o700:o}): "
                "it holds every prompt and answer of your runs\n"
            )


def _octal(text: str) -> int | None:
    try:
        return int(text, 8) & 0o777 if text else None
    except ValueError:
        return None
