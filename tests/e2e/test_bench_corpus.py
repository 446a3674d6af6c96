"""bench/corpus.py end to end: the real `lemmata prove` of a one-task corpus against the fake model
(the even-sum session, 127.0.0.1): the table, the lemma statuses, the audit's verdict, the exit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import cli_environment

from support import REPO, even_sum_session
from support.fake_llm_server import FakeLLMServer


def run_corpus(tmp_path: Path, fake: FakeLLMServer, task: str) -> subprocess.CompletedProcess[str]:
    corpus = tmp_path / "tasks.json"
    entry = {"name": "even-sum", "mode": "prove", "kind": "parity", "task": task, "why": "the baseline"}
    corpus.write_text(json.dumps({"tasks": [entry]}), encoding="utf-8")
    env = cli_environment(tmp_path / "home", LOCAL_LLM_BASE_URL=fake.openai_base_url)
    return subprocess.run(
        [sys.executable, str(REPO / "bench" / "corpus.py"), "--backend", "local", "--corpus", str(corpus)]
        + ["--keep", str(tmp_path / "kept"), "--timeout", "600"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )


def test_a_completed_task_with_a_clean_paper_is_reported_and_passes(tmp_path: Path) -> None:
    with FakeLLMServer() as fake:
        even_sum_session.install(fake)
        result = run_corpus(tmp_path, fake, even_sum_session.TASK)
    assert result.returncode == 0, result.stdout + result.stderr
    row = next(line for line in result.stdout.splitlines() if line.startswith("even-sum "))
    assert " completed " in row and "parity" in row
    assert "even-sum: lemmas L1 " in result.stdout and "defects: none" in result.stdout
    assert "1 tasks: median" in result.stdout and "0 defects" in result.stdout
    assert "[1/1] even-sum: completed" in result.stderr


def test_a_task_that_makes_no_run_fails_the_bench(tmp_path: Path) -> None:
    with FakeLLMServer() as fake:
        result = run_corpus(tmp_path, fake, "   ")  # an empty task: refused before any run exists
    assert result.returncode == 1
    assert "DEFECT: no run was made" in result.stdout
