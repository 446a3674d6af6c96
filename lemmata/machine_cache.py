"""lemmata's caches of the machine: `$XDG_CACHE_HOME/lemmata/<name>/` (default `~/.cache`).

What is kept there is derived from lemmata's own inputs and can always be made again (TeX formats,
sentence embeddings; never a verdict: a Coq check is run each time); it is not research data, so it lives
outside `$LEMMATA_HOME`. Each cache is a folder of its user's alone: one another user could write
(an `XDG_CACHE_HOME` in a shared folder) is not used, since what is planted there would be taken
as lemmata's own (a format's text in our papers).
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_directory(name: str) -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lemmata" / name


def private_cache(name: str) -> Path | None:
    """The cache folder `name`, made (0700) if missing; None when it cannot be made or is not its
    user's alone."""
    directory = cache_directory(name)
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        status = directory.stat()
    except OSError:
        return None
    if status.st_uid != os.geteuid() or status.st_mode & 0o022:
        return None
    return directory


def forget_least_recently_used(directory: Path, capacity: int) -> None:
    """Remove the files of `directory` least recently used (by modification time: readers touch
    what they use) beyond `capacity` files."""
    try:
        entries = list(os.scandir(directory))
        if len(entries) <= capacity:
            return
        entries.sort(key=lambda entry: entry.stat().st_mtime)
    except OSError:  # another process removed one meanwhile: left for the next time
        return
    for entry in entries[: len(entries) - capacity]:
        Path(entry.path).unlink(missing_ok=True)


def touch(path: Path) -> None:
    """Mark `path` as just used."""
    try:
        os.utime(path)
    except OSError:
        pass
