"""A completed run says whether its main result is established, wherever a user reads its status:
`lemmata status` (the list and one run), the line a run ends with, the run record's message, the
HTTP status poll and the theory review (issue 21). The theory read is that of the latest paper version."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import api_client, make_run

from lemmata.artifacts import Theory
from lemmata.cli.console import TerminalConsole
from lemmata.cli.main import cli, drive
from lemmata.run.driver import Driver
from lemmata.run.gate_answers import waiting_question
from lemmata.run.outcome import outcome_of, run_outcome
from lemmata.run.record import RunRecord, load_record, save_record
from lemmata.verification.calibration import trust_in_words
from unit.run.test_cards import PARTLY_VERIFIED_THEORY, UNCALIBRATED, UNTRUSTED_THEORY, VERIFIED_THEORY
from unit.server.test_server_api import AT_THEORY_REVIEW

NOT_ESTABLISHED = "completed (main result not established)"


def completed_run(data_home, session_id: str, theory: Theory, **files: str) -> Path:
    return make_run(data_home, session_id, **{"theory.json": theory.model_dump_json(), "paper_v1.tex": "%", **files})


def test_status_lists_a_completed_run_with_an_unverified_lemma_as_not_established(data_home):
    completed_run(data_home, "run-a", PARTLY_VERIFIED_THEORY)
    completed_run(data_home, "run-b", VERIFIED_THEORY)
    result = CliRunner().invoke(cli, ["status"])
    assert result.exit_code == 0, result.output
    run_a, run_b = result.output.splitlines()
    assert run_a.startswith(f"run-a{' ' * 20}{NOT_ESTABLISHED} prove")
    assert run_b.split()[:3] == ["run-b", "completed", "prove"]
    assert run_a.index("prove") == run_b.index("prove")  # the columns stay aligned


def test_status_of_one_run_says_its_main_result_is_not_established_and_why(data_home):
    completed_run(data_home, "run-a", PARTLY_VERIFIED_THEORY)
    result = CliRunner().invoke(cli, ["status", "run-a"])
    assert result.exit_code == 0, result.output
    first, second = result.output.splitlines()[:2]
    assert first == f"run run-a: {NOT_ESTABLISHED}"
    assert second == "main result not established: lemma L2 is not verified"


def test_status_of_a_fully_verified_run_is_plain_completed(data_home):
    completed_run(data_home, "run-b", VERIFIED_THEORY)
    result = CliRunner().invoke(cli, ["status", "run-b"])
    assert result.exit_code == 0 and result.output.splitlines()[0] == "run run-b: completed"
    assert "not established" not in result.output
    assert result.output.splitlines()[1].startswith("statuses: main result reviewed; lemmas: L1 reviewed, L2 reviewed")


@pytest.mark.parametrize("theory_text", [pytest.param(None, id="missing"), pytest.param("{not json", id="corrupt")])
def test_a_missing_or_corrupt_theory_does_not_break_status(data_home, theory_text):
    make_run(data_home, "run-c", **({"theory.json": theory_text} if theory_text else {}))
    make_run(data_home, "run-d", status="failed")
    listed = CliRunner().invoke(cli, ["status"])
    assert listed.exit_code == 0 and listed.output.split()[:2] == ["run-c", "completed"]
    assert "(main result unknown)" in listed.output.splitlines()[0]
    assert listed.output.splitlines()[1].split()[:2] == ["run-d", "failed"]
    shown = CliRunner().invoke(cli, ["status", "run-c"])
    assert shown.exit_code == 0 and "main result unknown: its theory could not be read" in shown.output


def test_after_a_rewrite_the_outcome_is_that_of_the_latest_version(data_home):
    run_dir = completed_run(
        data_home,
        "run-r",
        PARTLY_VERIFIED_THEORY,
        **{"paper_v2.tex": "%", "versions__v2__theory.json": VERIFIED_THEORY.model_dump_json()},
    )
    assert run_outcome(run_dir, "completed").text == "completed"
    (run_dir / "versions" / "v2" / "theory.json").write_text(PARTLY_VERIFIED_THEORY.model_dump_json())
    assert run_outcome(run_dir, "completed").text == NOT_ESTABLISHED


def test_only_a_completed_run_has_an_outcome_beyond_its_status(data_home):
    run_dir = completed_run(data_home, "run-p", PARTLY_VERIFIED_THEORY)
    outcome = run_outcome(run_dir, "paused")
    assert (outcome.text, outcome.established, outcome.why) == ("paused", None, "")


def test_the_status_poll_and_the_run_list_say_whether_the_main_result_is_established(data_home):
    completed_run(data_home, "run-a", PARTLY_VERIFIED_THEORY)
    completed_run(data_home, "run-b", VERIFIED_THEORY)
    with api_client(data_home) as client:
        poll = client.get("/api/runs/run-a").json()
        listed = {run["id"]: run for run in client.get("/api/runs").json()["runs"]}
        verified = client.get("/api/runs/run-b").json()
    assert (poll["status"], poll["outcome"]) == ("completed", NOT_ESTABLISHED)
    assert (poll["main_result_established"], poll["main_result_issues"]) == (False, ["lemma L2 is not verified"])
    assert listed["run-a"]["outcome"] == NOT_ESTABLISHED and listed["run-b"]["outcome"] == "completed"
    assert (verified["outcome"], verified["main_result_established"], verified["main_result_issues"]) == (
        "completed",
        True,
        [],
    )


class SilentConsole:
    interactive = False

    def card(self, text: str) -> None: ...
    def info(self, text: str) -> None: ...


def test_the_runners_completion_message_keeps_the_status_and_says_why_the_main_result_is_not_established(
    data_home, tmp_path
):
    run_dir = completed_run(
        data_home,
        "run-a",
        PARTLY_VERIFIED_THEORY,
        **{"paper_v2.tex": "%", "versions__v2__theory.json": PARTLY_VERIFIED_THEORY.model_dump_json()},
    )
    output = tmp_path / "out"
    running = save_record(run_dir, load_record(run_dir), status="running", output_dir=str(output))
    record = Driver(run_dir, SilentConsole(), version=2)._complete(running)  # noqa: SLF001
    assert record.status == "completed"  # other code (resume, rewrites, the server) relies on the literal
    assert record.message == f"paper version 2 in {output}; lemma L2 is not verified"
    assert load_record(run_dir).message == record.message


@dataclass
class FinishedDriver:
    """A driver whose run has just completed: what `drive` reports it with."""

    run_dir: Path
    console: object
    jobs: int | None = None
    profile: str | None = None
    version: int = 1

    def drive(self) -> RunRecord:
        return load_record(self.run_dir)


def test_the_line_a_run_ends_with_says_its_main_result_is_not_established(data_home, monkeypatch, capsys):
    run_dir = completed_run(data_home, "run-a", PARTLY_VERIFIED_THEORY)
    monkeypatch.setattr("lemmata.run.driver.Driver", FinishedDriver)
    drive(run_dir, None, offer_review=False)
    assert f"run run-a: {NOT_ESTABLISHED}" in capsys.readouterr().err
    assert outcome_of(run_dir, load_record(run_dir)).established is False


def test_the_theory_review_shows_the_same_main_result_checker_and_tags_in_the_terminal_and_the_browser(
    data_home, capsys
):
    run_dir = make_run(
        data_home, "run-g", status="waiting", **{**AT_THEORY_REVIEW, "theory.json": UNTRUSTED_THEORY.model_dump_json()}
    )
    TerminalConsole(interactive=False).review_theory(UNTRUSTED_THEORY)
    terminal = " ".join(capsys.readouterr().out.split())
    browser = " ".join(waiting_question(run_dir)["card"].split())
    for shown in (terminal, browser):
        assert "Main result: NOT established: lemmas L1, L2 are not verified" in shown
        assert f"Checked by: qwen-small (embedded), trust: uncalibrated. {trust_in_words(UNCALIBRATED)}" in shown
        assert "L1 low confidence: unverified (verifier pass)" in shown
        assert "L2 low confidence: unverified (flagged by a check)" in shown
