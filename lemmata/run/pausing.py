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
import os
import time
from collections.abc import Mapping
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


#: When the process that drives a run was started, set by `lemmata serve` for the drivers it
#: starts (a pause may arrive before that process has even begun).
LAUNCHED_AT = "LEMMATA_LAUNCHED_AT"


def withdraw_pause_requested_before(run_dir: Path, moment: float) -> None:
    """The flag of a run that died before it paused, written before `moment` (when this driver was
    launched): removed. A flag written since is a pause for this driver: one sent from the browser
    the second a run started, resumed or passed a gate was acknowledged and then removed here
    (issue 53). The flag is moved aside before it is read, so that one written meanwhile is
    never the one removed."""
    flag = pause_flag(run_dir)
    aside = flag.with_name(f"{flag.name}.{os.getpid()}.read")
    try:
        os.rename(flag, aside)
    except FileNotFoundError:
        return
    try:
        request = read_artifact(aside, PauseRequest)
        requested_at = request.requested_at
    except ArtifactError:  # a hand-made flag: its time is its file's
        requested_at = aside.stat().st_mtime
    if requested_at >= moment and not flag.exists():
        os.rename(aside, flag)  # this driver's pause: it stays
    else:
        aside.unlink(missing_ok=True)  # stale, or a newer request stands in its place


def launch_time(environ: Mapping[str, str]) -> float:
    """When this driver was launched: the server's word for a process it started, else this
    process's start (from /proc), else now."""
    moments = [_process_start_time(), time.time()]
    try:
        moments.append(float(environ.get(LAUNCHED_AT, "")))
    except ValueError:
        pass
    return min(moment for moment in moments if moment is not None)


def _process_start_time() -> float | None:
    """This process's start on the wall clock: its start in clock ticks since boot (/proc/self/stat,
    field 22) against the time since boot now."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        since_boot = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        return time.time() - (time.clock_gettime(time.CLOCK_BOOTTIME) - since_boot)
    except (OSError, ValueError, IndexError, AttributeError):
        return None


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
