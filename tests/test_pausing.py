"""pause.flag and checkpoint.json, read and written the way the driver does; the file states
`lemmata status ID` shows."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from lemmata.artifacts import Direction, Directions, Survey, write_artifact
from lemmata.gates import SURVEY_PAPERS, SURVEY_REVIEW, record_decision
from lemmata.pausing import (
    CHECKPOINT, PAUSE_FLAG, clear_checkpoint, load_checkpoint, pause_request, request_pause, save_checkpoint,
)
from lemmata.pipeline import artifact_states


def finished_survey(run_dir: Path) -> None:
    """survey.json and both of the survey's gates decided."""
    write_artifact(run_dir / "survey.json", Survey())
    for gate in (SURVEY_PAPERS, SURVEY_REVIEW):
        record_decision(run_dir, gate, True, "", "automatic")


def test_a_checkpoint_before_any_direction_has_an_empty_brief(tmp_path: Path) -> None:
    finished_survey(tmp_path)
    request_pause(tmp_path, "command")
    checkpoint = save_checkpoint(tmp_path, "s1")
    assert (checkpoint.stage_name, checkpoint.completed_stages) == ("direction planning", ["survey"])
    assert checkpoint.research_brief_json == "{}" and checkpoint.requested_by == "command"
    assert not (tmp_path / PAUSE_FLAG).exists() and load_checkpoint(tmp_path) == checkpoint


def test_a_stage_whose_review_waits_for_an_answer_is_where_the_run_continues(tmp_path: Path) -> None:
    write_artifact(tmp_path / "survey.json", Survey())
    record_decision(tmp_path, SURVEY_PAPERS, True, "", "automatic")
    checkpoint = save_checkpoint(tmp_path, "s1")  # paused at the survey review question
    assert (checkpoint.stage_name, checkpoint.completed_stages) == ("survey", [])
    record_decision(tmp_path, SURVEY_REVIEW, True, "", "user")
    assert save_checkpoint(tmp_path, "s1").stage_name == "direction planning"


def test_the_brief_is_the_chosen_direction_as_a_json_string(tmp_path: Path) -> None:
    finished_survey(tmp_path)
    write_artifact(tmp_path / "directions.json", Directions(
        candidates=[Direction(title="A"), Direction(title="Modulo 4")], chosen=1, goal="G.", research_brief="Use Z/4Z."))
    brief = json.loads(save_checkpoint(tmp_path, "s1").research_brief_json)
    assert brief == {"direction": "Modulo 4", "goal": "G.", "research_brief": "Use Z/4Z."}


def test_a_hand_made_flag_still_asks_for_a_pause(tmp_path: Path) -> None:
    assert pause_request(tmp_path) is None
    (tmp_path / PAUSE_FLAG).touch()
    assert pause_request(tmp_path).by == "command"


def test_completion_clears_the_checkpoint_and_a_stale_flag(tmp_path: Path) -> None:
    request_pause(tmp_path, "ctrl-c")
    save_checkpoint(tmp_path, "s1")
    request_pause(tmp_path, "signal")
    clear_checkpoint(tmp_path)
    assert not (tmp_path / CHECKPOINT).exists() and not (tmp_path / PAUSE_FLAG).exists()
    assert load_checkpoint(tmp_path) is None


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
