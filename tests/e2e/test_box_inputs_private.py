"""A box's inputs are the researcher's: a model's test of an unpublished lemma, the paper being
compiled. They wait on the host in the temporary directory, where every user of the machine may
look, and the box's own unprivileged uid must read them (isolation/staging.py). Attack: while a
box runs, another user of the machine (not the box's uid) reads them there. The box must still
read them, and nothing of them stays once it has ended."""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest

from lemmata.isolation.sandbox import SandboxResult, run_python
from lemmata.latex.texbox import open_tex_box
from support.waiting import wait_until

ATTACKER = 65533  # neither root nor the boxes' uid

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="acting as another user needs root")


def files_holding(marker: str, since: float) -> list[Path]:
    """Files of lemmata's in the temporary directory, in folders made or changed after `since`,
    whose text holds `marker`. Other tests' boxes come and go meanwhile: os.walk passes over a
    folder removed as it is read."""
    found = []
    for top in Path(tempfile.gettempdir()).glob("lemmata-*"):
        try:
            if top.stat().st_mtime < since:
                continue
        except OSError:
            continue
        for folder, _, names in os.walk(top):
            for path in (Path(folder) / name for name in names):
                try:
                    if marker in path.read_text(errors="replace"):
                        found.append(path)
                except OSError:
                    continue  # removed meanwhile
    return found


def read_by_another_user(path: Path) -> subprocess.CompletedProcess[str]:
    command = ["setpriv", f"--reuid={ATTACKER}", f"--regid={ATTACKER}", "--clear-groups", "cat", str(path)]
    return subprocess.run(command, capture_output=True, text=True, timeout=30)


def test_another_user_cannot_read_the_test_a_box_runs_and_the_box_can() -> None:
    marker, since = f"unpublished-lemma-{uuid.uuid4().hex}", time.time() - 1
    code = f"import time\nSECRET = {marker!r}\ntime.sleep(3)\nprint('read my own script')\n"
    results: list[SandboxResult] = []
    running = threading.Thread(target=lambda: results.append(run_python(code)))
    running.start()
    try:
        staged = wait_until(lambda: files_holding(marker, since), 30, 0.02)
        for path in staged:
            attempt = read_by_another_user(path)
            assert attempt.returncode != 0 and marker not in attempt.stdout, f"another user read {path}"
    finally:
        running.join(60)
    assert results and results[0].returncode == 0 and "read my own script" in results[0].stdout, results
    assert files_holding(marker, since) == []


def test_another_user_cannot_read_the_paper_a_tex_box_compiles_and_the_box_can(tmp_path: Path) -> None:
    marker, since = f"unpublished-theorem-{uuid.uuid4().hex}", time.time() - 1
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / "paper.tex").write_text(f"\\documentclass{{article}}\\begin{{document}}{marker}\\end{{document}}\n")
    with open_tex_box(inputs) as tex:
        staged = files_holding(marker, since)
        assert staged, "the paper is staged for the box in the temporary directory"
        for path in staged:
            attempt = read_by_another_user(path)
            assert attempt.returncode != 0 and marker not in attempt.stdout, f"another user read {path}"
        returncode, timed_out = tex.run(["pdflatex", "-interaction=nonstopmode", "paper.tex"], 60)
        assert (returncode, timed_out) == (0, False)
        assert (tex.read("paper.pdf", 1 << 20) or b"").startswith(b"%PDF")
    assert files_holding(marker, since) == []
