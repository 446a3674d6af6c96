"""Rewrites of a run's paper, the same from the terminal and (later) the browser: the request,
the workflow drive that makes the next version, and its record in the chat history.

A request is refused while a run or another rewrite works on the run directory, and when the
artifacts a rewrite starts from are missing or corrupt (an `error` marker in the chat, the
paper unchanged). It is written as `revisions/v<n>.json`, n the next version; the workflow then
makes `paper_v<n>.tex`/`.pdf` and `rewrite_context_v<n>.json`. A failure keeps the latest
version current: `rewrite_failed` in the chat, the request set aside, no `paper_v<n>` left. A
paused (or killed) rewrite is continued by `lemmata resume`.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from pydantic import BaseModel

from lemmata import layout
from lemmata.artifacts import (
    ArtifactError,
    Directions,
    FormalStatement,
    RevisionRequest,
    Survey,
    TaskInput,
    Theory,
    read_artifact,
    write_artifact,
)
from lemmata.errors import LemmataError, UserError, check_utf8_text
from lemmata.memory.knowledge_graph import build_graph, record_graph
from lemmata.run.driver import Driver
from lemmata.run.qa_history import ChatRecord, append_record, read_history
from lemmata.run.record import RunRecord, load_record, save_record
from lemmata.run.versions import paper_versions
from lemmata.settings import data_home_of
from lemmata.stages.rewrite import qa_summary

log = logging.getLogger(__name__)

MAX_INSTRUCTION_CHARS = 20_000
#: What every rewrite reads besides the latest paper: the run's task, survey, direction, formal
#: statement and first theory, and the bibliography the new version shares.
REWRITE_INPUTS: tuple[tuple[str, type[BaseModel] | None], ...] = (
    (layout.INPUT, TaskInput),
    (layout.SURVEY, Survey),
    (layout.DIRECTIONS, Directions),
    (layout.FORMAL, FormalStatement),
    (layout.THEORY, Theory),
    (layout.REFERENCES, None),
)


def check_rewritable(run_dir: Path) -> int:
    """The current version, once every input of a rewrite is there and readable."""
    run_dir = Path(run_dir)
    versions = paper_versions(run_dir)
    if not versions:
        raise UserError(f"run {run_dir.name} has no paper to rewrite yet (paper_v1.tex is missing)")
    for name, model in REWRITE_INPUTS:
        try:
            if model is None:
                if not (run_dir / name).is_file():
                    raise ArtifactError(f"{run_dir / name} is missing")
            else:
                read_artifact(run_dir / name, model)
        except ArtifactError as error:
            raise UserError(f"run {run_dir.name} cannot be rewritten: {error}") from None
    return versions[-1]


def request_rewrite(run_dir: Path, instructions: str) -> RevisionRequest:
    """Write the request for the next version; the caller holds the run's lock."""
    run_dir = Path(run_dir)
    instructions = instructions.strip()
    if not instructions:
        raise UserError("the revision instructions are empty: say what the new version should change")
    check_utf8_text("the revision instructions", instructions, plural=True)
    if len(instructions) > MAX_INSTRUCTION_CHARS:
        raise UserError(
            f"the revision instructions have {len(instructions)} characters; at most "
            f"{MAX_INSTRUCTION_CHARS} are accepted"
        )
    try:
        base = check_rewritable(run_dir)
    except UserError as error:
        versions = paper_versions(run_dir)
        append_record(
            run_dir,
            ChatRecord(
                role="event",
                marker="error",
                content=f"rewrite refused: {error}",
                paper_version=versions[-1] if versions else 1,
            ),
        )
        raise
    request = RevisionRequest(
        version=base + 1,
        base_version=base,
        instructions=instructions,
        qa_summary=qa_summary(read_history(run_dir), base),
        requested_at=time.time(),
    )
    write_artifact(run_dir / layout.revision(request.version), request)
    append_record(
        run_dir, ChatRecord(role="event", marker="rewrite_requested", content=instructions, paper_version=base)
    )
    return request


def pending_rewrite(run_dir: Path) -> RevisionRequest | None:
    """A rewrite asked for and not finished (paused, or its driver killed), if any."""
    revisions = Path(run_dir) / layout.REVISIONS
    for path in sorted(revisions.glob("v*.json"), key=lambda p: p.stat().st_mtime):
        version = layout.version_of_revision(path.name)
        if version and not (Path(run_dir) / layout.rewrite_context(version)).exists():
            return read_artifact(path, RevisionRequest)
    return None


def rewrite_unsettled(run_dir: Path) -> bool:
    """A rewrite was asked for and the chat has no outcome of it yet (saved or failed): while a
    process works on the run, that rewrite is in progress, to its last step."""
    markers = [record.marker for record in read_history(run_dir) if record.marker.startswith("rewrite_")]
    return bool(markers) and markers[-1] == "rewrite_requested"


def record_success(run_dir: Path, request: RevisionRequest) -> None:
    append_record(
        run_dir,
        ChatRecord(
            role="event",
            marker="rewrite_saved",
            paper_version=request.version,
            content=f"version {request.version} saved: {layout.paper_tex(request.version)}",
        ),
    )


def record_failure(run_dir: Path, request: RevisionRequest, error: LemmataError) -> str:
    """The earlier version stays current: the chat says why, the request is set aside, no file
    of the failed version is left as a version (a written .tex goes to logs/), and the run is
    again what its earlier version made it."""
    run_dir = Path(run_dir)
    message = f"rewrite to version {request.version} failed: {error}; version {request.base_version} stays current"
    path = run_dir / layout.revision(request.version)
    path.rename(path.with_name(f"v{request.version}.failed-{int(time.time())}.json"))
    for leftover in (layout.paper_tex(request.version), layout.paper_meta(request.version)):  # e.g. the compile failed
        if (run_dir / leftover).exists():  # kept for a look, but not as a version
            (run_dir / leftover).rename(run_dir / layout.LOGS / leftover.replace(".", ".failed.", 1))
    append_record(
        run_dir, ChatRecord(role="event", marker="rewrite_failed", content=message, paper_version=request.base_version)
    )
    restore_knowledge_graph(run_dir, request.base_version)
    status = "completed" if (run_dir / layout.paper_pdf(request.base_version)).exists() else "failed"
    save_record(run_dir, load_record(run_dir), status=status, message=message)
    return message


def restore_knowledge_graph(run_dir: Path, version: int) -> None:
    """The session's knowledge graph as the version that stays current made it: a failed
    rewrite's theory (written before its writer failed, or its lemmas before its assembly) must
    not stay remembered as the session's."""
    try:
        theory = read_artifact(run_dir / layout.theory_of(version), Theory)
    except ArtifactError as error:  # the version's own theory is gone: nothing to restore from
        log.warning("the knowledge graph keeps the failed rewrite's lemmas: %s", error)
        return
    session_id = load_record(run_dir).session_id
    record_graph(data_home_of(run_dir), build_graph(session_id, theory.goal, theory.lemmas, theory))


def drive_rewrite(driver: Driver, instructions: str | None = None) -> RunRecord:
    """Make the next version (`instructions`), or continue the pending rewrite (None), and
    record the outcome in the chat. Raises LemmataError when the rewrite failed."""
    requests: list[RevisionRequest] = []

    def prepare() -> None:  # under the run's lock: no other run or rewrite is in progress
        request = (
            request_rewrite(driver.run_dir, instructions)
            if instructions is not None
            else pending_rewrite(driver.run_dir)
        )
        if request is None:
            raise UserError(f"run {driver.run_dir.name} has no unfinished rewrite")
        requests.append(request)
        driver.version = request.version

    try:
        record = driver.drive(prepare)
    except LemmataError as error:
        if not requests or isinstance(error, UserError):
            raise
        raise LemmataError(record_failure(driver.run_dir, requests[0], error)) from None
    if record.status == "completed":
        record_success(driver.run_dir, requests[0])
    return record
