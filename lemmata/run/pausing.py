"""Pause and resume: `pause.flag` asks for a pause, `checkpoint.json` records where a run stopped.

Both live in the session directory `sessions/<id>/` beside the run directory `runs/<id>/` (the
spec's place for them), so nothing of the pause machinery sits among the workflow's files.
`lemmata pause ID` (or Ctrl+C during `prove`) writes the flag; the driver sees it, lets the
running jobs finish and starts no new one, so the run stops at a rule boundary with every
finished artifact intact. It then saves the checkpoint and removes the flag. `lemmata resume`
reads the checkpoint and continues from its stage (Snakemake redoes nothing that is complete);
a completed run clears the checkpoint.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Literal

from lemmata import home_layout, layout
from lemmata.artifacts import ArtifactError, Checkpoint, Directions, PauseRequest, read_artifact, write_artifact
from lemmata.home_layout import session_dir
from lemmata.run.pipeline import stage_states


def pause_flag(run_dir: Path) -> Path:
    return session_dir(run_dir) / home_layout.PAUSE_FLAG


def checkpoint_file(run_dir: Path) -> Path:
    return session_dir(run_dir) / home_layout.CHECKPOINT


def request_pause(
    run_dir: Path, by: Literal["command", "ctrl-c", "signal", "browser", "budget"], reason: str = ""
) -> PauseRequest:
    request = PauseRequest(requested_at=time.time(), by=by, reason=reason)
    write_artifact(pause_flag(run_dir), request)
    return request


def withdraw_pause_request(run_dir: Path) -> None:
    pause_flag(run_dir).unlink(missing_ok=True)


def pause_request(run_dir: Path) -> PauseRequest | None:
    flag = pause_flag(run_dir)
    if not flag.exists():
        return None
    try:
        return read_artifact(flag, PauseRequest)
    except ArtifactError:  # a hand-made flag (`touch pause.flag`) asks for a pause all the same
        return PauseRequest(requested_at=flag.stat().st_mtime, by="command")


def save_checkpoint(run_dir: Path, session_id: str, stage_name: str = "") -> Checkpoint:
    """Where the run stands: the first stage not done (or `stage_name`, e.g. a rewrite's), the
    done ones, the chosen direction."""
    run_dir = Path(run_dir)
    states = stage_states(run_dir, set(), None)
    request = pause_request(run_dir)
    checkpoint = Checkpoint(
        session_id=session_id,
        stage_name=stage_name or next((stage.name for stage, state in states if state != "done"), "complete"),
        completed_stages=[stage.name for stage, state in states if state == "done"],
        paused_at=time.time(),
        requested_by=request.by if request else "",
        research_brief_json=research_brief_json(run_dir),
    )
    write_artifact(checkpoint_file(run_dir), checkpoint)
    withdraw_pause_request(run_dir)
    return checkpoint


def research_brief_json(run_dir: Path) -> str:
    directions_file = Path(run_dir) / layout.DIRECTIONS
    if not directions_file.exists():
        return "{}"
    directions = read_artifact(directions_file, Directions)
    chosen = directions.candidates[directions.chosen]
    return json.dumps(
        {"direction": chosen.title, "goal": directions.goal, "research_brief": directions.research_brief},
        ensure_ascii=False,
    )


def load_checkpoint(run_dir: Path) -> Checkpoint | None:
    path = checkpoint_file(run_dir)
    return read_artifact(path, Checkpoint) if path.exists() else None


def clear_checkpoint(run_dir: Path) -> None:
    """A completed run: no checkpoint, no stale flag."""
    checkpoint_file(run_dir).unlink(missing_ok=True)
    withdraw_pause_request(run_dir)
