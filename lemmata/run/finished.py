"""A completed run is finished: `lemmata resume` changes nothing of it (as `POST .../resume`
answers 409), except delivering the current paper version when its delivery failed. Finished
files the workflow needs that are missing or unreadable are named, with what the user can do."""

from __future__ import annotations

import json
from pathlib import Path

from lemmata import layout
from lemmata.errors import UserError
from lemmata.run.delivery import deliver, paper_path
from lemmata.run.pipeline import STAGES
from lemmata.run.record import RunLock, load_record, save_record
from lemmata.run.versions import paper_versions


def damaged_files(run_dir: Path) -> list[str]:
    """What is wrong with a completed run's files: a stage's artifact missing, or a JSON artifact
    (a stage's, a lemma's) that does not parse. Empty for an intact run."""
    run_dir = Path(run_dir)
    problems = []
    for stage in STAGES:
        path = run_dir / stage.artifact
        if not path.is_file():
            problems.append(f"{stage.artifact} is missing")
        elif path.suffix == ".json" and not _parses(path):
            problems.append(f"{stage.artifact} is corrupt")
    for lemma in sorted(run_dir.glob(layout.lemma("*"))):
        if not _parses(lemma):
            problems.append(f"{lemma.relative_to(run_dir).as_posix()} is corrupt")
    return problems


def damage_advice(run_dir: Path, problems: list[str]) -> str:
    """One sentence: what is damaged, and what the user can do."""
    return (
        f"run {Path(run_dir).name} is damaged: {'; '.join(problems)} (in {run_dir}); its paper stays in "
        f"{current_paper_path(run_dir)}; no command makes a finished stage again: restore the file from a "
        "backup of the run directory to rewrite the paper, or start a new run"
    )


def _parses(path: Path) -> bool:
    try:
        json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return True


def current_paper_path(run_dir: Path) -> Path:
    """Where the current version's PDF is: in the output folder once delivered, else in the run."""
    record = load_record(run_dir)
    versions = paper_versions(run_dir) or [1]
    where = Path(record.output_dir) if record.undelivered is None else Path(run_dir)
    return paper_path(where, versions[-1])


def resume_completed(run_dir: Path) -> str:
    """Deliver the current paper version when its delivery failed, and return its path; else a
    UserError saying that there is nothing to resume, where the paper is, and any damage."""
    run_dir = Path(run_dir)
    with RunLock(run_dir):
        record = load_record(run_dir)
        versions = paper_versions(run_dir)
        if record.undelivered is not None and versions:
            version = versions[-1]  # what `lemmata status` calls current, also after a rewrite
            try:
                deliver(run_dir, version, Path(record.output_dir))
            except UserError as error:
                raise UserError(
                    f"{error}; the paper is in {paper_path(run_dir, version)}: `lemmata resume "
                    f"{record.session_id}` delivers it once the folder can take it"
                ) from None
            where = (
                f"paper in {record.output_dir}" if version == 1 else f"paper version {version} in {record.output_dir}"
            )
            save_record(run_dir, record, undelivered=None, message=where)
            return str(paper_path(Path(record.output_dir), version))
    problems = damaged_files(run_dir)
    if problems:
        raise UserError(f"nothing to resume: {damage_advice(run_dir, problems)}")
    raise UserError(
        f"run {record.session_id} is completed: nothing to resume; its paper is {current_paper_path(run_dir)} "
        f"(`lemmata rewrite {record.session_id} INSTRUCTIONS` makes a new version)"
    )
