"""The processes a lemmata run left behind: every live process whose environment names the test's
data directory (the driver passes LEMMATA_HOME to Snakemake, its jobs, their sandboxes and the
model server). Zombies do not count: they run nothing and hold nothing."""

from __future__ import annotations

import os
from pathlib import Path

from support.waiting import wait_until


def processes_of(home: Path) -> dict[int, str]:
    """pid -> command line of the live processes working for the data directory `home`."""
    marker = f"LEMMATA_HOME={home}".encode()
    found = {}
    for entry in Path("/proc").glob("[0-9]*"):
        pid = int(entry.name)
        if pid == os.getpid():
            continue
        try:
            if marker not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
            found[pid] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:  # it ended while we looked
            continue
    return found


def wait_until_none_left(home: Path, timeout: float) -> None:
    """Fails naming what still runs for `home` after `timeout` seconds."""
    wait_until(
        lambda: not processes_of(home),
        timeout,
        0.1,
        message=lambda: f"still running for {home} after {timeout} s: {processes_of(home)}",
    )
