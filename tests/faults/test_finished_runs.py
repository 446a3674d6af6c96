"""Faults at a completed run (issue 35, finding 3), on the real CLI and workflow with the fake
model: a re-saved lemma file, a user's edit of the delivered paper, a corrupt lemma, a deleted
theory. A completed run is finished: `resume` reports and changes nothing (as the API's 409),
a rewrite reruns nothing of version 1, a damaged run says what is damaged and what to do.
Each test says what was lost: nothing."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from conftest import local_environment

from lemmata.run.record import load_record, save_record
from support.cli import run_lemmata
from support.completed_run import copy_completed_home

INSTRUCTIONS = "Stress the parity argument and name the ideal 2Z explicitly"
#: Files a command may touch without changing the run: the run's lock, Snakemake's bookkeeping.
BOOKKEEPING = (".lemmata.lock", ".snakemake/")


def one_error_line(result: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("lemmata: error: ")]
    assert len(errors) == 1, result.stderr
    return errors[0]


def snapshot(run_dir: Path) -> dict[str, tuple[str, int]]:
    """Every file of the run but the bookkeeping: its digest and modification time."""
    return {
        name: (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
        for path in sorted(run_dir.rglob("*"))
        if path.is_file() and not (name := path.relative_to(run_dir).as_posix()).startswith(BOOKKEEPING)
    }


def resave(path: Path, text: str) -> None:
    """A file written again, a second later than anything the run made."""
    path.write_text(text, encoding="utf-8")
    later = time.time() + 1
    os.utime(path, (later, later))


@pytest.fixture
def run(services, completed_home, tmp_path) -> tuple[Path, dict[str, str]]:
    """(run directory, environment) of a copy of the completed even-sum run, delivered to out/."""
    llm, search = services
    home = tmp_path / "home"
    env = local_environment(home, llm, search)
    run_dir = copy_completed_home(completed_home, home, env)
    shutil.copytree(home / "out", tmp_path / "out")
    save_record(run_dir, load_record(run_dir), output_dir=str(tmp_path / "out"))
    return run_dir, env


def test_resume_of_a_completed_run_changes_nothing_after_a_resaved_lemma_and_an_edited_paper(services, run, tmp_path):
    """The issue's resume re-ran assembly, review gate, experiment, writer and compile (8 calls),
    replaced the reviewer's decision and the user's edit. Now: one line, exit 2, as the API's 409.
    Lost: nothing: no call, every file of the run as it was, the user's edit kept."""
    llm, _ = services
    run_dir, env = run
    lemma = run_dir / "theory/lemmas/L2.json"
    resave(lemma, json.dumps(json.loads(lemma.read_text()), indent=4))
    edited = "% my own edits\n" + (tmp_path / "out/paper_v1.tex").read_text()
    (tmp_path / "out/paper_v1.tex").write_text(edited)
    before, calls = snapshot(run_dir), len(llm.requests)

    result = run_lemmata(["resume", run_dir.name], env, tmp_path)

    assert result.returncode == 2, result.stderr
    line = one_error_line(result)
    assert "is completed: nothing to resume" in line and str(tmp_path / "out/paper_v1.pdf") in line
    assert len(llm.requests) == calls
    assert snapshot(run_dir) == before
    assert (tmp_path / "out/paper_v1.tex").read_text() == edited


def test_a_rewrite_after_a_resaved_lemma_reruns_nothing_of_version_1(services, run, tmp_path):
    """Version 1's theory, its review decision, experiment and paper are finished: a lemma file
    written again (same data) does not make a rewrite make them again. Lost: nothing of v1."""
    llm, _ = services
    run_dir, env = run
    lemma = run_dir / "theory/lemmas/L2.json"
    resave(lemma, json.dumps(json.loads(lemma.read_text()), indent=4))
    finished = ["theory.json", "gates/theory_review.json", "experiment.json", "paper_v1.tex", "paper_v1.pdf"]
    before = {name: v for name, v in snapshot(run_dir).items() if name in finished}

    result = run_lemmata(["rewrite", run_dir.name, INSTRUCTIONS], env, tmp_path)

    assert result.returncode == 0, result.stderr
    assert {name: v for name, v in snapshot(run_dir).items() if name in finished} == before
    assert (run_dir / "paper_v2.pdf").is_file() and (tmp_path / "out/paper_v2.pdf").is_file()


def test_a_corrupt_lemma_file_keeps_the_theory_and_the_completed_run(run, tmp_path):
    """The issue's resume deleted a valid theory.json and turned the run failed (no rewrite after).
    Now status and resume name the corrupt file. Lost: nothing: theory.json whole, still completed."""
    run_dir, env = run
    resave(run_dir / "theory/lemmas/L2.json", '{"lemma_id": "L2", "proof": ')
    before = snapshot(run_dir)

    resumed = run_lemmata(["resume", run_dir.name], env, tmp_path)
    status = run_lemmata(["status", run_dir.name], env, tmp_path)

    assert resumed.returncode == 2, resumed.stderr
    assert "theory/lemmas/L2.json is corrupt" in one_error_line(resumed)
    assert snapshot(run_dir) == before
    assert load_record(run_dir).status == "completed"
    assert "theory/lemmas/L2.json is corrupt" in status.stdout and "restore the file" in status.stdout


def test_a_deleted_theory_is_named_by_status_resume_and_rewrite(run, tmp_path):
    """A run whose theory.json was deleted: no command could finish or explain it. Now each names
    the file and what to do. Lost: nothing more: every other file as it was, the paper delivered."""
    run_dir, env = run
    (run_dir / "theory.json").unlink()
    before = snapshot(run_dir)

    status = run_lemmata(["status", run_dir.name], env, tmp_path)
    resumed = run_lemmata(["resume", run_dir.name], env, tmp_path)
    rewrite = run_lemmata(["rewrite", run_dir.name, INSTRUCTIONS], env, tmp_path)

    assert "theory.json is missing" in status.stdout and "restore the file" in status.stdout
    assert resumed.returncode == 2 and "theory.json is missing" in one_error_line(resumed)
    assert str(tmp_path / "out/paper_v1.pdf") in one_error_line(resumed)
    assert rewrite.returncode == 2 and "theory.json is missing" in one_error_line(rewrite)
    after = snapshot(run_dir)
    assert {name: v for name, v in after.items() if name != "paper_qa_history.jsonl"} == {
        name: v for name, v in before.items() if name != "paper_qa_history.jsonl"
    }
    assert load_record(run_dir).status == "completed"
