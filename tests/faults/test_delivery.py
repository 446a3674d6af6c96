"""Faults at the copy-out to the output folder (issue 35, findings 1, 2 and 4), on the real CLI,
workflow and pdflatex with the fake model: links planted in a shared folder, a folder that is not
the user's or that others may write, a read-only folder, a full disk at delivery, two runs naming
one folder. Each test says what was lost: nothing."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import local_environment

from lemmata.run.qa_history import read_history
from lemmata.run.record import load_record, save_record
from support import even_sum_session
from support.cli import run_lemmata
from support.completed_run import copy_completed_home

NOBODY = 65534
INSTRUCTIONS = "Stress the parity argument and name the ideal 2Z explicitly"
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs and chown need root")


def environment(services, home: Path) -> dict[str, str]:
    return local_environment(home, *services)


@contextmanager
def tmpfs(at: Path, size: str, *options: str) -> Iterator[Path]:
    """A small file system of its own at `at` (a full disk, a read-only folder), always unmounted."""
    at.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join([f"size={size}", *options]), "tmpfs", str(at)], check=True)
    try:
        yield at
    finally:
        subprocess.run(["umount", "-l", str(at)], check=False)


def one_error_line(result: subprocess.CompletedProcess) -> str:
    """A refusal or failure the user can act on: one line, no traceback."""
    assert "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("lemmata: error: ")]
    assert len(errors) == 1, result.stderr
    return errors[0]


@pytest.fixture
def run(services, completed_home, tmp_path) -> tuple[Path, dict[str, str]]:
    """(run directory, environment) of a copy of the completed even-sum run."""
    env = environment(services, tmp_path / "home")
    return copy_completed_home(completed_home, tmp_path / "home", env), env


def test_links_planted_in_a_shared_sticky_folder_are_replaced_not_followed(services, tmp_path):
    """Another user plants `paper_v1.tex` -> the victim's file and `lemma_graph_v1.svg` -> a new
    path in a 1777 folder of the victim's. Lost: nothing: the victim's file keeps its text, no
    file appears where the second link points, the folder holds the paper itself."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for name, target in (("paper_v1.tex", victim), ("lemma_graph_v1.svg", elsewhere / "made.svg")):
        (shared / name).symlink_to(target)
        if os.geteuid() == 0:
            os.lchown(shared / name, NOBODY, NOBODY)  # planted by another user

    result = run_lemmata(
        ["prove", even_sum_session.TASK, "-o", str(shared)], environment(services, tmp_path / "home"), tmp_path
    )

    assert result.returncode == 0, result.stderr
    assert victim.read_text() == "precious\n"
    assert not (elsewhere / "made.svg").exists()
    (run_dir,) = (tmp_path / "home" / "runs").iterdir()
    for name in ("paper_v1.tex", "paper_v1.pdf", "lemma_graph_v1.svg"):
        assert not (shared / name).is_symlink() and (shared / name).is_file(), name
    assert (shared / "paper_v1.tex").read_bytes() == (run_dir / "paper_v1.tex").read_bytes()
    assert not list(shared.glob(".*.tmp"))


@pytest.mark.parametrize("kind", ["writable by others", "another user's", "under a file"])
def test_an_unsafe_output_folder_is_refused_before_any_model_call(services, tmp_path, kind):
    """A folder others may write (not sticky), one of another user, one below a file: refused with one line
    and exit 2 before the first model call. Lost: nothing: no call spent, no run made."""
    llm, _ = services
    output = tmp_path / "out"
    if kind == "writable by others":
        output.mkdir()
        output.chmod(0o777)
    elif kind == "another user's":
        if os.geteuid() != 0:
            pytest.skip("chown to another user needs root")
        output.mkdir()
        os.chown(output, NOBODY, NOBODY)
    else:  # a file as --output is click's to refuse (file_okay=False); a folder below one is ours
        output.write_text("not a folder\n")
        output = output / "paper"
    calls = len(llm.requests)

    result = run_lemmata(
        ["prove", even_sum_session.TASK, "-o", str(output)], environment(services, tmp_path / "home"), tmp_path
    )

    assert result.returncode == 2, result.stderr
    assert "output folder" in one_error_line(result)
    assert len(llm.requests) == calls
    assert not (tmp_path / "home" / "runs").exists() or not list((tmp_path / "home" / "runs").iterdir())


@needs_root
def test_a_read_only_output_folder_is_refused_before_any_model_call(services, tmp_path):
    """A read-only --output (root writes through modes, so a read-only mount): one line, exit 2,
    before the first model call. Lost: nothing: no call spent."""
    llm, _ = services
    calls = len(llm.requests)
    with tmpfs(tmp_path / "ro", "1m", "ro") as output:
        result = run_lemmata(
            ["prove", even_sum_session.TASK, "-o", str(output)], environment(services, tmp_path / "home"), tmp_path
        )
    assert result.returncode == 2, result.stderr
    assert "not writable" in one_error_line(result)
    assert len(llm.requests) == calls


@needs_root
def test_a_read_only_output_folder_stops_a_rewrite_before_any_model_call(services, run, tmp_path):
    """A rewrite (48 calls in the issue) into a folder that became read-only: refused first.
    Lost: nothing: no call, no request left pending, version 1 current."""
    llm, _ = services
    run_dir, env = run
    with tmpfs(tmp_path / "ro", "1m", "ro") as output:
        save_record(run_dir, load_record(run_dir), output_dir=str(output))
        calls = len(llm.requests)
        result = run_lemmata(["rewrite", run_dir.name, INSTRUCTIONS], env, tmp_path)
    assert result.returncode == 2, result.stderr
    assert "not writable" in one_error_line(result)
    assert len(llm.requests) == calls
    assert not (run_dir / "revisions").exists() or not list((run_dir / "revisions").glob("v*.json"))
    assert load_record(run_dir).status == "completed"


@needs_root
def test_a_full_disk_at_delivery_keeps_every_earlier_file_and_resume_delivers_the_current_version(run, tmp_path):
    """A rewrite whose delivery meets a full disk: one line saying where the paper is, exit 2; the
    user's edited paper_v1.tex whole, no part of version 2 in the folder. Once there is room,
    `resume` delivers version 2, the current one (as `status` says). Lost: nothing."""
    run_dir, env = run
    with tmpfs(tmp_path / "full", "512k") as output:
        save_record(run_dir, load_record(run_dir), output_dir=str(output))
        edited = "% my own edits\n" + (run_dir / "paper_v1.tex").read_text()
        (output / "paper_v1.tex").write_text(edited)
        free = os.statvfs(output)
        filler = output / "filler"
        filler.write_bytes(b"\0" * (free.f_bavail * free.f_frsize - 8192))

        result = run_lemmata(["rewrite", run_dir.name, INSTRUCTIONS], env, tmp_path)

        line = one_error_line(result)
        assert result.returncode == 2
        assert "No space left on device" in line and str(run_dir / "paper_v2.pdf") in line
        assert f"lemmata resume {run_dir.name}" in line
        assert (output / "paper_v1.tex").read_text() == edited
        assert sorted(p.name for p in output.iterdir()) == ["filler", "paper_v1.tex"]
        record = load_record(run_dir)
        assert (record.status, record.undelivered) == ("completed", 2)
        status = run_lemmata(["status", run_dir.name], env, tmp_path)
        assert "current: v2" in status.stdout and "lemmata resume" in status.stdout

        filler.unlink()
        resumed = run_lemmata(["resume", run_dir.name], env, tmp_path)

        assert resumed.returncode == 0, resumed.stderr
        assert resumed.stdout.strip().splitlines()[-1] == str(output / "paper_v2.pdf")
        assert (output / "paper_v2.pdf").read_bytes() == (run_dir / "paper_v2.pdf").read_bytes()
        assert (output / "paper_v2.tex").read_bytes() == (run_dir / "paper_v2.tex").read_bytes()
        assert (output / "paper_v1.tex").read_text() == edited
        assert load_record(run_dir).undelivered is None
        assert [record.marker for record in read_history(run_dir) if record.marker][-1] == "rewrite_saved"


def test_two_runs_never_share_an_output_folder(services, completed_home, tmp_path):
    """Without --output each run gets results/<run id>/; naming the folder of another run, or one
    holding a paper, keeps what it holds and gives the new run a folder inside it, named by its
    id, which it says (issue 54: such a folder was refused, so `--output ./results` worked once)."""
    home = tmp_path / "home"
    env = environment(services, home)
    first = copy_completed_home(completed_home, home, env)
    taken = Path(load_record(first).output_dir)
    before = (taken / "paper_v1.pdf").read_bytes()

    second = run_lemmata(["prove", even_sum_session.TASK, "-o", str(taken)], env, tmp_path)
    assert second.returncode == 0, second.stderr
    (run,) = {path.name for path in (home / "runs").iterdir()} - {first.name}
    assert f"the output folder {taken} is the output folder of run {first.name}: this run's paper goes to " in (
        second.stderr
    )
    assert Path(load_record(home / "runs" / run).output_dir) == taken / run
    assert (taken / run / "paper_v1.pdf").is_file() and second.stdout.strip().splitlines()[-1] == str(
        taken / run / "paper_v1.pdf"
    )
    assert (taken / "paper_v1.pdf").read_bytes() == before

    fourth = run_lemmata(["prove", even_sum_session.TASK], env, tmp_path)
    assert fourth.returncode == 0, fourth.stderr
    (new,) = {path.name for path in (home / "runs").iterdir()} - {first.name, run}
    assert fourth.stdout.strip().splitlines()[-1] == str(tmp_path / "results" / new / "paper_v1.pdf")
    assert (taken / "paper_v1.pdf").read_bytes() == before
