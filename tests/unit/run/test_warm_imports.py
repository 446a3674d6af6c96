"""The stages' code imported while the first model call waits (run/warm_imports.py, issue 38)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from lemmata.run import job as job_module
from lemmata.run import warm_imports
from lemmata.run.pipeline import STAGES


@pytest.fixture
def fresh_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(warm_imports, "_enabled", False)
    monkeypatch.setattr(warm_imports, "_started", False)


def test_the_scripts_of_the_pipelines_rules_come_in_the_pipelines_order() -> None:
    modules = warm_imports.stage_scripts()
    names = [module.rsplit(".", 1)[1] for module in modules]
    rules = [rule for stage in STAGES for rule in stage.rules]
    assert {"survey", "formalize", "theory_plan", "prove_lemma", "experiment", "writer", "compile"} <= set(names)
    assert names == [rule for rule in rules if rule in names]  # the order the run meets them in
    assert all(module.startswith("lemmata.scripts.") for module in modules)


def test_nothing_starts_in_a_process_that_did_not_enable_it(fresh_state: None) -> None:
    """A job in a process of its own (a cluster job) would import stages it never runs."""
    assert warm_imports.start_once() is None


def test_once_enabled_one_thread_starts_however_many_jobs_ask(
    fresh_state: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    imported: list[str] = []
    monkeypatch.setattr(warm_imports, "warm_up", lambda: imported.append("all"))
    warm_imports.enable()
    started: list[threading.Thread | None] = []
    askers = [threading.Thread(target=lambda: started.append(warm_imports.start_once())) for _ in range(8)]
    for asker in askers:
        asker.start()
    for asker in askers:
        asker.join()
    threads = [thread for thread in started if thread is not None]
    assert len(threads) == 1 and threads[0].name == warm_imports.THREAD_NAME and threads[0].daemon
    threads[0].join(timeout=10)
    assert imported == ["all"]


def test_a_module_that_fails_to_import_leaves_it_to_its_job_and_the_rest_are_imported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    monkeypatch.setattr(warm_imports, "stage_scripts", lambda: ["lemmata.scripts.no_such_stage", "colorsys"])
    warm_imports.import_stage_scripts()  # no exception: the job that needs the module reports the error
    assert "colorsys" in sys.modules


def test_a_job_starts_them_once_its_model_client_exists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After the client: its backend's SDK, which the first call needs, is imported without a rival."""
    order: list[str] = []
    import lemmata.agents.client as client_module

    monkeypatch.setattr(client_module, "make_client", lambda *_args: order.append("client") or "the client")
    monkeypatch.setattr(warm_imports, "start_once", lambda: order.append("warm imports"))
    monkeypatch.chdir(tmp_path)
    job = job_module.StageJob(SimpleNamespace(rule="survey", config={}))
    monkeypatch.setattr(job_module.StageJob, "settings", SimpleNamespace())
    assert job.client() == "the client"
    assert order == ["client", "warm imports"]
