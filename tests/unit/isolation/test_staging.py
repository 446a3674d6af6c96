"""The folders a box reads its inputs from (isolation/staging.py): open to the box inside a folder
only our user may pass, named by our process, and removed by the next process that opens a box
when the process that made them was killed."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from lemmata.isolation import staging


def test_the_bound_folder_is_open_inside_a_private_one_named_by_the_process_and_both_go() -> None:
    with staging.staging_folder() as bound:
        (bound / "check.py").write_text("print(1)")
        (bound / "figures").mkdir()
        (bound / "figures" / "plot.pdf").write_bytes(b"%PDF")
        staging.open_to_the_box(bound)
        private = bound.parent
        assert private.name.startswith(f"{staging.PREFIX}{os.getpid()}@{staging.this_host()}-")
        assert stat.S_IMODE(private.stat().st_mode) == 0o700
        modes = {p.relative_to(bound).as_posix(): stat.S_IMODE(p.stat().st_mode) for p in [bound, *bound.rglob("*")]}
        assert modes == {".": 0o755, "check.py": 0o644, "figures": 0o755, "figures/plot.pdf": 0o644}
    assert not private.exists()


def test_the_private_folder_is_private_whatever_the_umask() -> None:
    previous = os.umask(0o002)
    try:
        with staging.staging_folder() as bound:
            assert stat.S_IMODE(bound.parent.stat().st_mode) == 0o700
    finally:
        os.umask(previous)


def dead_pid() -> int:
    finished = subprocess.Popen(["true"])  # its pid, free once it has been waited for
    finished.wait()
    return finished.pid


def test_folders_of_killed_processes_are_removed_and_no_other(tmp_path: Path) -> None:
    """A workflow killed while a box ran leaves that box's folder: the next process that opens a
    box removes it (and an earlier version's TeX folder), never a live process's, one another host
    made (a temporary directory cluster nodes share), or another kind."""
    dead, here = dead_pid(), staging.this_host()
    stale = tmp_path / f"{staging.PREFIX}{dead}@{here}-abc123"
    older = tmp_path / f"lemmata-tex-{dead}-abc124"
    live = tmp_path / f"{staging.PREFIX}{os.getpid()}@{here}-def456"
    elsewhere = tmp_path / f"{staging.PREFIX}{dead}@another-node-7-def457"
    unnamed = tmp_path / f"{staging.PREFIX}notapid@{here}-ghi789"
    other = tmp_path / "lemmata-tex-inputs-xyz"
    # an earlier version's experiment folders, open to all and named by no process: one a day old
    # and more is abandoned, a recent one may be a running box's
    abandoned, recent = tmp_path / "lemmata-sandbox-t3dbebb_", tmp_path / "lemmata-sandbox-s2sf7rc4"
    for folder in (stale, older, live, elsewhere, unnamed, other, abandoned, recent):
        (folder / staging.BOUND).mkdir(parents=True)
        (folder / staging.BOUND / "check.py").write_text("print(1)")
    a_day_ago = time.time() - staging.ABANDONED_AFTER_SECONDS - 60
    os.utime(abandoned, (a_day_ago, a_day_ago))
    assert sorted(staging.remove_staging_of_dead_processes(tmp_path)) == sorted([stale, older, abandoned])
    assert not stale.exists() and not older.exists() and not abandoned.exists()
    assert live.exists() and elsewhere.exists() and unnamed.exists() and other.exists() and recent.exists()


def test_a_killed_process_not_yet_reaped_left_its_folders_for_good(tmp_path: Path) -> None:
    """A workflow killed with its driver is nobody's child until something reaps it; while it is a
    zombie it answers signal 0 as if it ran, and the resumed run kept its folders (the kill fault
    test, 2026-12-02). A zombie makes no more folders: its are abandoned."""
    zombie = subprocess.Popen(["true"])  # exits, and is not waited for until the end of the test
    try:
        stat_file = Path(f"/proc/{zombie.pid}/stat")
        deadline = time.monotonic() + 10
        while stat_file.read_text().rsplit(")", 1)[1].split()[0] != "Z":
            assert time.monotonic() < deadline, "the child did not exit"
            time.sleep(0.01)
        left = tmp_path / f"{staging.PREFIX}{zombie.pid}@{staging.this_host()}-abc123"
        (left / staging.BOUND).mkdir(parents=True)
        assert staging.remove_staging_of_dead_processes(tmp_path) == [left]
    finally:
        zombie.wait()


@pytest.mark.skipif(os.geteuid() != 0, reason="a folder of another user needs root to make")
def test_another_users_folder_is_left_alone(tmp_path: Path) -> None:
    theirs = tmp_path / f"{staging.PREFIX}{dead_pid()}@{staging.this_host()}-abc123"
    theirs.mkdir()
    os.chown(theirs, 65533, 65533)
    assert staging.remove_staging_of_dead_processes(tmp_path) == []
    assert theirs.exists()


def test_the_first_folder_a_process_makes_clears_what_dead_processes_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(staging, "_cleared", threading.Event())  # as in a new process
    stale = tmp_path / f"{staging.PREFIX}{dead_pid()}@{staging.this_host()}-abc123"
    stale.mkdir()
    with staging.staging_folder() as bound:
        assert bound.parent.parent == tmp_path and not stale.exists()
    stale.mkdir()
    with staging.staging_folder():
        assert stale.exists()  # once per process: the glob is not paid at every box


def test_a_host_name_is_made_fit_for_a_folder_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "gethostname", lambda: "node/1@rack-2.cluster")
    assert staging.this_host() == "node_1_rack-2.cluster"
    monkeypatch.setattr(socket, "gethostname", lambda: "")
    assert staging.this_host() == "_"
