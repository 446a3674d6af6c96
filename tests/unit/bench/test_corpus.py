"""bench/corpus.py: the task corpus is what issue 54 asks for, and each task's command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from unit.bench import load_bench

corpus = load_bench("corpus")


def test_the_corpus_holds_twelve_tasks_or_more_of_every_kind_asked_for_each_saying_why() -> None:
    tasks = corpus.load_corpus(corpus.DEFAULT_CORPUS)
    assert len(tasks) >= 12
    assert set(corpus.REQUIRED_KINDS) <= {task.kind for task in tasks}
    assert all(len(task.why) > 40 for task in tasks)
    assert {task.mode for task in tasks} == set(corpus.MODES)


def test_each_mode_runs_its_own_command() -> None:
    prove, explore, papers = (
        corpus.Task("a", "prove", "k", "w", task="1 + 1 = 2."),
        corpus.Task("b", "explore", "k", "w", domain="parity"),
        corpus.Task("c", "from-papers", "k", "w", papers=("2101.00001", "1905.01234")),
    )
    assert prove.arguments() == ["prove", "1 + 1 = 2."]
    assert explore.arguments() == ["explore", "parity"]
    assert papers.arguments() == ["from-papers", "2101.00001", "1905.01234"]


@pytest.mark.parametrize(
    "entry",
    [
        {"name": "x", "mode": "prove", "kind": "k", "why": "w"},  # no task
        {"name": "x", "mode": "explore", "kind": "k", "why": "w", "task": "t"},  # no domain
        {"name": "x", "mode": "prove", "kind": "k", "task": "t"},  # no why
        {"name": "x", "mode": "guess", "kind": "k", "why": "w", "task": "t"},
    ],
)
def test_a_malformed_task_is_an_error_naming_it(entry: dict, tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps({"tasks": [entry]}), encoding="utf-8")
    with pytest.raises(ValueError, match="task 'x'"):
        corpus.load_corpus(path)


def test_two_tasks_of_one_name_are_an_error(tmp_path: Path) -> None:
    task = {"name": "x", "mode": "prove", "kind": "k", "why": "w", "task": "t"}
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps({"tasks": [task, task]}), encoding="utf-8")
    with pytest.raises(ValueError, match="unique name"):
        corpus.load_corpus(path)


def test_a_run_that_made_no_folder_is_a_failure_with_its_last_words() -> None:
    run = corpus.read_run(corpus.Task("a", "prove", "k", "w", task="t"), None, 3.0, "lemmata: error: no model")
    assert run.failed and run.defects == ["no run was made: lemmata: error: no model"]
    assert "DEFECT: no run was made" in corpus.report([run])
