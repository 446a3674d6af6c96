"""What a run established, in the same words wherever a user reads about it: `lemmata status`,
the line a run ends with, the run record's message, the HTTP status poll and the browser.

"completed" says only that the workflow finished: with checks nobody trusts, or a lemma that
failed, the paper exists but its main result is not established. The outcome of a completed
run is read from the theory of its latest paper version (Theory.main_result_issues).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lemmata import layout
from lemmata.artifacts import Theory, read_artifact
from lemmata.errors import ArtifactError
from lemmata.run.record import RunRecord, live_status
from lemmata.run.versions import paper_versions
from lemmata.verification.ladder import evidence_in_words, label

COMPLETED = "completed"
NOT_ESTABLISHED = "main result not established"
UNKNOWN = "main result unknown"


@dataclass(frozen=True)
class RunOutcome:
    """A run's status with what its result is worth. `established` is None when the run is not
    completed, or completed but its theory could not be read (then `issues` says why).
    `main_status` is the main result's status (verification/ladder.py), `evidence` what it rests on."""

    status: str
    established: bool | None = None
    issues: tuple[str, ...] = ()
    main_status: str = ""
    evidence: str = ""
    lemmas: tuple[tuple[str, str], ...] = ()  # (id, status) of each lemma of the theory
    refuted: tuple[str, ...] = ()  # statements of the plan refuted before any proof

    @property
    def statuses(self) -> str:
        """`main result machine-checked; lemmas: L1 unverified, L3 machine-checked; refuted: L2`."""
        if not self.main_status:
            return ""
        parts = [f"main result {label(self.main_status)}"]
        if self.lemmas:
            parts.append("lemmas: " + ", ".join(f"{lemma_id} {label(status)}" for lemma_id, status in self.lemmas))
        if self.refuted:
            parts.append("refuted before any proof: " + ", ".join(self.refuted))
        return "; ".join(parts)

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
    return RunOutcome(
        status,
        not issues,
        issues,
        theory.main_result_status,
        main_result_evidence(theory),
        tuple((lemma.id, lemma.status) for lemma in theory.lemmas),
        tuple(dict.fromkeys(attempt.id for attempt in theory.refuted)),
    )


def latest_theory_file(run_dir: Path) -> Path:
    """The theory the current paper stands on: the first run's, or the latest rewrite's."""
    versions = paper_versions(run_dir)
    latest = versions[-1] if versions else 1
    return run_dir / layout.theory_of(latest)


def main_result_line(theory: Theory) -> str:
    """The main result in one line, as the cards and the theory review show it."""
    issues = theory.main_result_issues()
    if issues:
        return "Main result: NOT established: " + "; ".join(issues)
    return f"Main result: established ({main_result_evidence(theory)})"


def main_result_evidence(theory: Theory) -> str:
    """What the main result's status rests on: the machine that proved the goal's formal statement,
    or the verified lemma chain."""
    status = theory.main_result_status
    if status == "machine_checked":
        return f"{label(status)}: {evidence_in_words(theory.goal_check).removeprefix('machine-checked by ')}"
    if status == "reviewed":
        return f"{label(status)}: every lemma verified and the assembled proof consistent"
    return label(status)
