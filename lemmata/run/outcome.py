"""What a run established, in the same words wherever a user reads about it: `lemmata status`,
the line a run ends with, the run record's message, the HTTP status poll and the browser.

"completed" says only that the workflow finished: with checks nobody trusts, or a lemma that
failed, the paper exists but its main result is not established. The outcome of a completed
run is read from the theory of its latest paper version (Theory.main_result_issues).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lemmata import layout
from lemmata.artifacts import Theory, read_artifact
from lemmata.errors import ArtifactError
from lemmata.run.record import RunRecord, live_status
from lemmata.run.versions import paper_versions

COMPLETED = "completed"
NOT_ESTABLISHED = "main result not established"
UNKNOWN = "main result unknown"


@dataclass(frozen=True)
class RunOutcome:
    """A run's status with what its result is worth. `established` is None when the run is not
    completed, or completed but its theory could not be read (then `issues` says why)."""

    status: str
    established: bool | None = None
    issues: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """The status as shown: `completed`, `completed (main result not established)`, …"""
        if self.status != COMPLETED or self.established:
            return self.status
        return f"{COMPLETED} ({NOT_ESTABLISHED if self.established is False else UNKNOWN})"

    @property
    def why(self) -> str:
        """Why a completed run's main result is not established, in one phrase; "" when it is (or
        the run is not completed)."""
        if self.status != COMPLETED or self.established:
            return ""
        return f"{NOT_ESTABLISHED if self.established is False else UNKNOWN}: {'; '.join(self.issues)}"


def outcome_of(run_dir: Path, record: RunRecord) -> RunOutcome:
    """The outcome of a run as it stands now (a "running" run nobody drives is "interrupted")."""
    return run_outcome(run_dir, live_status(run_dir, record))


def run_outcome(run_dir: Path, status: str) -> RunOutcome:
    """The outcome of a run whose (live) status is `status`. A missing or corrupt theory does not
    raise: a status listing must show the other runs, so the outcome says it is unknown."""
    if status != COMPLETED:
        return RunOutcome(status)
    try:
        theory = read_artifact(latest_theory_file(Path(run_dir)), Theory)
    except ArtifactError as error:
        return RunOutcome(status, None, (f"its theory could not be read ({error})",))
    issues = tuple(theory.main_result_issues())
    return RunOutcome(status, not issues, issues)


def latest_theory_file(run_dir: Path) -> Path:
    """The theory the current paper stands on: the first run's, or the latest rewrite's."""
    versions = paper_versions(run_dir)
    latest = versions[-1] if versions else 1
    return run_dir / layout.theory_of(latest)


def main_result_line(issues: Sequence[str]) -> str:
    """The main result in one line, as the cards and the theory review show it."""
    return "Main result: established" if not issues else "Main result: NOT established: " + "; ".join(issues)
