"""A TeX box started ahead for the next use (texbox.SpareBox, issue 38): each box still serves
one use, gets its inputs when taken, and none outlives its process's discard."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from lemmata.latex import texbox
from lemmata.latex.texbox import SpareBox, StartedBox, run_tex_once

pytestmark = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")

DOCUMENT = r"\documentclass{article}\begin{document}%s\end{document}"


@pytest.fixture
def spare(monkeypatch: pytest.MonkeyPatch) -> SpareBox:
    """A kept spare for this test alone, its boxes counted; discarded at the end."""
    spare = SpareBox()
    starts: list[str] = []
    start = texbox.start_tex_box

    def counted_start() -> StartedBox:
        starts.append(threading.current_thread().name)  # who started it: a caller, or the spare's thread
        return start()

    monkeypatch.setattr(texbox, "SPARE", spare)
    monkeypatch.setattr(texbox, "start_tex_box", counted_start)
    spare.starts = starts  # type: ignore[attr-defined]
    yield spare
    spare.discard()


def wait_for_a_spare(spare: SpareBox) -> StartedBox:
    deadline = time.monotonic() + 30
    while spare._spare is None:
        assert time.monotonic() < deadline, "no spare box started"
        time.sleep(0.01)
    return spare._spare


def log_of(text: str) -> bytes:
    returncode, _, found = run_tex_once(
        {"a.tex": DOCUMENT % text}, ["pdflatex", "-interaction=nonstopmode", "a.tex"], 60, {"a.log": (1 << 16, True)}
    )
    assert returncode == 0
    return found["a.log"] or b""


def test_the_next_box_waits_started_and_each_use_gets_a_fresh_one(spare: SpareBox) -> None:
    spare.keep()
    ahead = wait_for_a_spare(spare)
    assert sorted(os.listdir(ahead.staging)) == [texbox.DRIVER_NAME]  # started before any input existed
    assert b"Output written" in log_of("first")
    assert ahead.box.process.poll() is not None  # used once, then ended with its staging folder
    assert not ahead.staging.exists()
    following = wait_for_a_spare(spare)
    assert following is not ahead and following.box.process.poll() is None
    assert b"Output written" in log_of("second")
    assert spare.starts[:2] == [texbox.KEEPER_THREAD] * 2  # the first spare, the one after the first use
    assert threading.current_thread().name not in spare.starts  # the caller started no box of its own


def test_a_spare_outlives_the_thread_that_asked_for_it(spare: SpareBox) -> None:
    """bubblewrap's --die-with-parent kills a box when the thread that started it ends: spares are
    started by one thread that lives as long as the process, whichever thread asked."""
    asker = threading.Thread(target=spare.keep)
    asker.start()
    asker.join()
    waiting = wait_for_a_spare(spare)
    time.sleep(0.5)  # a box killed with its starting thread would be dead by now
    assert waiting.box.process.poll() is None
    assert b"Output written" in log_of("from a spare that lived")


def test_a_spare_that_died_waiting_is_replaced_by_a_new_box(spare: SpareBox) -> None:
    spare.keep()
    dead = wait_for_a_spare(spare)
    os.killpg(dead.box.process.pid, 9)
    dead.box.process.wait()
    assert b"Output written" in log_of("after the spare died")
    assert not dead.staging.exists()


def test_a_spare_whose_staging_folder_was_removed_is_replaced_by_a_new_box(spare: SpareBox) -> None:
    """A cleaner of the temporary directory (or a person) removed the waiting spare's folder."""
    spare.keep()
    waiting = wait_for_a_spare(spare)
    shutil.rmtree(waiting.staging)
    assert b"Output written" in log_of("after the folder went")
    assert waiting.box.process.poll() is not None


def test_without_keep_no_box_is_started_ahead(spare: SpareBox) -> None:
    """The workflow process keeps a spare; tests, the server and a cluster job do not."""
    assert b"Output written" in log_of("alone")
    time.sleep(0.2)
    assert spare._spare is None and len(spare.starts) == 1


def test_discard_ends_the_spare_and_no_new_one_starts_after_it(spare: SpareBox) -> None:
    """At the process's exit (an exit handler), and for good: a late `keep` starts nothing."""
    spare.keep()
    waiting = wait_for_a_spare(spare)
    spare.discard()
    assert waiting.box.process.poll() is not None and not waiting.staging.exists()
    spare.keep()
    time.sleep(0.2)
    assert spare._spare is None and len(spare.starts) == 1


def test_the_driver_copies_nothing_and_ends_when_closed_unused(tmp_path: Path) -> None:
    """A spare no one took: its input folder may be empty; closing its input ends the driver."""
    started = texbox.start_tex_box()
    try:
        assert started.box.process.stdin is not None
        started.box.process.stdin.close()
        assert started.box.process.wait(timeout=30) == 0
    finally:
        started.close()
