"""pause.flag and checkpoint.json (in the session directory), read and written the way the
driver does; the file states `lemmata status ID` shows."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

import pytest

from lemmata.artifacts import Checkpoint, Direction, Directions, Survey, write_artifact
from lemmata.run.driver import resume_notice
from lemmata.run.gates import SURVEY_PAPERS, SURVEY_REVIEW, record_decision
from lemmata.run.pausing import (
    LAUNCHED_AT,
    checkpoint_file,
    clear_checkpoint,
    launch_time,
    load_checkpoint,
    pause_flag,
    pause_request,
    request_pause,
    save_checkpoint,
    withdraw_pause_requested_before,
)
from lemmata.run.pipeline import artifact_states, stage_states


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """runs/s1 of a data directory (its session directory is sessions/s1)."""
    return tmp_path / "runs" / "s1"


def finished_survey(run_dir: Path) -> None:
    """survey.json and both of the survey's gates decided."""
    write_artifact(run_dir / "survey.json", Survey())
    for gate in (SURVEY_PAPERS, SURVEY_REVIEW):
        record_decision(run_dir, gate, True, "", "automatic")


def test_a_checkpoint_before_any_direction_has_an_empty_brief(run_dir: Path) -> None:
    finished_survey(run_dir)
    request_pause(run_dir, "command")
    checkpoint = save_checkpoint(run_dir, "s1")
    assert (checkpoint.stage_name, checkpoint.completed_stages) == ("direction planning", ["survey"])
    assert checkpoint.research_brief_json == "{}" and checkpoint.requested_by == "command"
    assert not pause_flag(run_dir).exists() and load_checkpoint(run_dir) == checkpoint
    assert checkpoint_file(run_dir) == run_dir.parent.parent / "sessions/s1/checkpoint.json"  # the spec's place
    assert pause_flag(run_dir) == run_dir.parent.parent / "sessions/s1/pause.flag"


def test_a_stage_whose_review_waits_for_an_answer_is_where_the_run_continues(run_dir: Path) -> None:
    write_artifact(run_dir / "survey.json", Survey())
    record_decision(run_dir, SURVEY_PAPERS, True, "", "automatic")
    checkpoint = save_checkpoint(run_dir, "s1")  # paused at the survey review question
    assert (checkpoint.stage_name, checkpoint.completed_stages) == ("survey", [])
    record_decision(run_dir, SURVEY_REVIEW, True, "", "user")
    assert save_checkpoint(run_dir, "s1").stage_name == "direction planning"


def test_the_brief_is_the_chosen_direction_as_a_json_string(run_dir: Path) -> None:
    finished_survey(run_dir)
    write_artifact(
        run_dir / "directions.json",
        Directions(
            candidates=[Direction(title="A"), Direction(title="Modulo 4")],
            chosen=1,
            goal="G.",
            research_brief="Use Z/4Z.",
        ),
    )
    brief = json.loads(save_checkpoint(run_dir, "s1").research_brief_json)
    assert brief == {"direction": "Modulo 4", "goal": "G.", "research_brief": "Use Z/4Z."}


def test_a_hand_made_flag_still_asks_for_a_pause(run_dir: Path) -> None:
    assert pause_request(run_dir) is None
    pause_flag(run_dir).parent.mkdir(parents=True)
    pause_flag(run_dir).touch()
    assert pause_request(run_dir).by == "command"


def test_completion_clears_the_checkpoint_and_a_stale_flag(run_dir: Path) -> None:
    request_pause(run_dir, "ctrl-c")
    save_checkpoint(run_dir, "s1")
    request_pause(run_dir, "signal")
    clear_checkpoint(run_dir)
    assert not checkpoint_file(run_dir).exists() and not pause_flag(run_dir).exists()
    assert load_checkpoint(run_dir) is None


def test_status_lists_every_file_with_its_stage_and_marks_incomplete_and_pending_ones(tmp_path: Path) -> None:
    write_artifact(tmp_path / "survey.json", Survey())
    (tmp_path / "theory/lemmas").mkdir(parents=True)
    (tmp_path / "theory/lemmas/L1.json").write_text("{}")
    (tmp_path / "theory/lemmas/L2.json").write_text("{half")  # a job was writing it when the run died
    markers = tmp_path / ".snakemake/incomplete"
    markers.mkdir(parents=True)
    (markers / base64.urlsafe_b64encode(b"theory/lemmas/L2.json").decode()).touch()
    (markers / "migration_underway").touch()
    rows = artifact_states(tmp_path)
    assert ("survey", "survey.json", "done") in rows
    assert ("theory", "theory/lemmas/L1.json", "done") in rows
    assert ("theory", "theory/lemmas/L2.json", "incomplete") in rows
    assert ("theory", "theory.json", "pending") in rows and ("compile", "paper_v1.pdf", "pending") in rows


def mark_incomplete(run_dir: Path, output: str) -> None:
    """Snakemake's marker: a job was writing `output` when the run died."""
    markers = run_dir / ".snakemake/incomplete"
    markers.mkdir(parents=True, exist_ok=True)
    (markers / base64.urlsafe_b64encode(output.encode()).decode()).touch()


def test_the_files_of_an_unfinished_output_directory_are_incomplete(tmp_path: Path) -> None:
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures/L4.pdf").write_bytes(b"%PDF-")  # drawn before experiment.json, then the kill
    mark_incomplete(tmp_path, "figures")
    assert ("experiment", "figures/L4.pdf", "incomplete") in artifact_states(tmp_path)


def test_a_stage_whose_artifact_was_being_written_is_not_done(tmp_path: Path) -> None:
    finished_survey(tmp_path)
    mark_incomplete(tmp_path, "survey.json")
    assert dict((stage.name, state) for stage, state in stage_states(tmp_path, set(), None))["survey"] == "pending"


@pytest.mark.parametrize(
    "stored, brief",
    [
        pytest.param(
            '{"direction": "Parity by ideals", "goal": "g"}',
            {"direction": "Parity by ideals", "goal": "g"},
            id="a-chosen-direction",
        ),
        pytest.param("{}", {}, id="before-a-direction"),
        pytest.param("", {}, id="empty-string"),
        pytest.param("not json at all", {}, id="not-json"),
        pytest.param('["a", "list"]', {}, id="not-an-object"),
    ],
)
def test_the_research_brief_is_read_back_from_the_checkpoint(stored: str, brief: dict) -> None:
    """The spec's resume rule: the brief is read from research_brief_json, a JSON string whose
    default is the empty object (issue 23: it was written and never read)."""
    checkpoint = Checkpoint(session_id="s1", stage_name="theory", paused_at=0.0, research_brief_json=stored)
    assert checkpoint.research_brief() == brief
    notice = resume_notice(checkpoint)
    assert notice.startswith("resuming from the theory stage (paused ")
    assert notice.endswith(", on the direction: Parity by ideals") == bool(brief)


def test_a_flag_from_before_the_driver_was_launched_is_stale_and_one_since_is_kept(run_dir: Path) -> None:
    """Issue 53, item 3: only the flag of a run that died before it paused is removed."""
    request = request_pause(run_dir, "browser")
    withdraw_pause_requested_before(run_dir, request.requested_at + 1)  # launched after it: stale
    assert pause_request(run_dir) is None
    request = request_pause(run_dir, "browser")
    withdraw_pause_requested_before(run_dir, request.requested_at - 1)  # sent after the launch: kept
    assert pause_request(run_dir) == request
    assert [path.name for path in pause_flag(run_dir).parent.iterdir()] == [pause_flag(run_dir).name]
    withdraw_pause_requested_before(run_dir / "elsewhere", 0.0)  # no flag: nothing to do


def test_a_hand_made_flag_is_judged_by_its_files_time(run_dir: Path) -> None:
    pause_flag(run_dir).parent.mkdir(parents=True)
    pause_flag(run_dir).touch()
    withdraw_pause_requested_before(run_dir, pause_flag(run_dir).stat().st_mtime - 1)
    assert pause_request(run_dir) is not None
    withdraw_pause_requested_before(run_dir, pause_flag(run_dir).stat().st_mtime + 1)
    assert pause_request(run_dir) is None


def test_the_launch_time_is_the_servers_word_or_the_process_start() -> None:
    now = time.time()
    earlier = now - 10**5  # the server started the process before it began: its word is the earlier
    assert launch_time({LAUNCHED_AT: repr(earlier)}) == earlier
    started = launch_time({})
    assert now - 3600 < started <= time.time()  # this test process started before the test
    assert launch_time({LAUNCHED_AT: "garbage"}) <= time.time()
