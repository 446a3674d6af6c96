"""The job adapter every workflow script goes through: it writes the rule's log (when the job
started and how it ended), turns our errors into one line, and says which paper version a
rewrite's job works for."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from lemmata import layout
from lemmata.errors import GateClosed, ModelOutputError
from lemmata.run.job import JobFailed, StageJob


def job_in(run_dir: Path, monkeypatch: pytest.MonkeyPatch, rule: str = "survey", **smk: object) -> StageJob:
    monkeypatch.chdir(run_dir)  # Snakemake runs scripts in the run directory
    return StageJob(SimpleNamespace(rule=rule, config={}, log=[layout.rule_log(rule)], **smk))


def test_a_finished_job_logs_its_start_and_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job = job_in(tmp_path, monkeypatch)
    with job.reporting():
        pass
    lines = (tmp_path / layout.rule_log("survey")).read_text(encoding="utf-8").splitlines()
    assert [line.split(" ", 2)[2] for line in lines][0] == "survey: started"
    assert lines[1].split(" ", 2)[2].startswith("done in ")


def test_a_failed_job_logs_the_one_line_the_driver_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job = job_in(tmp_path, monkeypatch)
    with pytest.raises(JobFailed) as failure, job.reporting():
        raise ModelOutputError("the survey answer is not JSON")
    assert str(failure.value) == "survey: the survey answer is not JSON"
    log = (tmp_path / layout.rule_log("survey")).read_text(encoding="utf-8")
    assert "failed after" in log and "survey: the survey answer is not JSON" in log
    assert (tmp_path / layout.LAST_FAILURE).read_text(
        encoding="utf-8"
    ).strip() == "survey: the survey answer is not JSON"


def test_a_gate_closing_on_purpose_is_logged_as_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job = job_in(tmp_path, monkeypatch, rule="theory_review_gate")
    with pytest.raises(GateClosed), job.reporting():
        raise GateClosed("GATE CLOSED: theory_review is waiting for a decision")
    assert "stopped after" in (tmp_path / layout.rule_log("theory_review_gate")).read_text(encoding="utf-8")


def test_a_system_exit_becomes_a_job_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Jobs run on Snakemake's worker threads: a SystemExit escaping there would leave the job
    neither finished nor failed, and Snakemake waiting for it forever."""
    job = job_in(tmp_path, monkeypatch)
    with pytest.raises(JobFailed, match="survey: exited with status 3"), job.reporting():
        raise SystemExit(3)
    assert "failed after" in (tmp_path / layout.rule_log("survey")).read_text(encoding="utf-8")


def test_a_bug_keeps_its_traceback_and_is_logged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job = job_in(tmp_path, monkeypatch)
    with pytest.raises(KeyError), job.reporting():
        raise KeyError("papers")
    assert "crashed after" in (tmp_path / layout.rule_log("survey")).read_text(encoding="utf-8")
    assert not (tmp_path / layout.LAST_FAILURE).exists()


def test_a_rewrites_job_knows_its_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = job_in(tmp_path, monkeypatch, rule="writer")
    rewrite = job_in(tmp_path, monkeypatch, rule="rewrite_writer", wildcards=SimpleNamespace(n="3"))
    assert (first.version, rewrite.version) == (1, 3)
