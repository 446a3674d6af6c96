"""The job adapter every workflow script goes through: it writes the rule's log (when the job
started and how it ended), turns our errors into one line, and says which paper version a
rewrite's job works for."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from lemmata import layout
from lemmata.errors import GateClosed, ModelOutputError
from lemmata.run.job import JobFailed, RuleJob, StageJob, run_script
from lemmata.run.record import RunRecord, save_record


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


def test_a_failure_quoting_hostile_model_text_is_logged_shown_not_raw(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 53: a refused answer is quoted in the job's failure, which the rule's log and
    last_failure.txt keep and a researcher reads with `cat` or `tail`; its escapes are text there,
    and half an emoji cannot make the log's write fail."""
    job = job_in(tmp_path, monkeypatch)
    with pytest.raises(JobFailed) as failure, job.reporting():
        raise ModelOutputError("the survey answer is not JSON: \x1b]0;pwned\x07\r\x1b[Kdone \ud83d")
    shown = "the survey answer is not JSON: \\u001b]0;pwned\\u0007\\r\\u001b[Kdone \ufffd"
    assert str(failure.value) == f"survey: {shown}"
    log = (tmp_path / layout.rule_log("survey")).read_text(encoding="utf-8")
    assert shown in log and "\x1b" not in log
    assert (tmp_path / layout.LAST_FAILURE).read_text(encoding="utf-8").strip() == f"survey: {shown}"


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


def test_a_job_whose_stage_cannot_be_forecast_fails_with_one_line_before_its_body(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The price table was broken after the run started: the survey's first job cannot price its
    forecast, so it ends as our errors end, with the line the driver reports, and runs nothing."""
    run_dir = tmp_path / "home" / "runs" / "s1"
    record = RunRecord(session_id="s1", mode="prove", task="t", output_dir="o", gate_mode="auto", backend="local")
    save_record(run_dir, record)
    (tmp_path / "home" / "prices.yaml").write_text("models: [not, a, table]\n")
    monkeypatch.chdir(run_dir)
    rule_job = RuleJob("survey", None, None, None, None, [layout.rule_log("survey")], {"LLM_BACKEND": "local"})
    with pytest.raises(JobFailed, match="^survey: .*prices.yaml: models"):
        run_script("survey", rule_job)
    assert "prices.yaml" in (run_dir / layout.LAST_FAILURE).read_text(encoding="utf-8")
    assert not (run_dir / layout.FORECASTS).exists()
