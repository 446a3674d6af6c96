"""The questions a closed gate asks the researcher, and the decisions they write: which papers to
start from, which direction, the theory review (with its one rework), the reviews after a stage.
The driver decides what a question's end means for the run (go on, pause, wait, stop)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lemmata import layout
from lemmata.artifacts import DirectionIdeas, Survey, Theory, TheoryRework, read_artifact, write_artifact
from lemmata.run.display import RunConsole
from lemmata.run.gates import (
    DIRECTION,
    GATE_RULES,
    STAGE_REVIEWS,
    SURVEY_PAPERS,
    THEORY_REVIEW,
    THEORY_REWORK,
    effective_gate_mode,
    gate_path,
    lemma_named,
    record_decision,
)
from lemmata.run.record import RunRecord, save_record


@dataclass
class GateDialog:
    run_dir: Path
    console: RunConsole

    def closed_gate(self, failed_rules: list[str]) -> str:
        """The gate that stopped the workflow (its rule alone failed, its sentinel missing), or ""."""
        failed = set(failed_rules)
        if len(failed) != 1:
            return ""
        gate = GATE_RULES.get(failed.pop(), "")
        return gate if gate and not gate_path(self.run_dir, gate).exists() else ""

    def ask(self, gate: str, record: RunRecord) -> RunRecord | None:
        """Ask the researcher and write the gate's sentinel; a record when the run stops here."""
        decided_by = "user" if self.console.interactive else "default"
        ask = {SURVEY_PAPERS: self._survey_papers, DIRECTION: self._direction, THEORY_REVIEW: self._theory_review}.get(
            gate, self._stage_review
        )
        return ask(gate, record, decided_by)

    def _survey_papers(self, gate: str, record: RunRecord, decided_by: str) -> None:
        papers = self.console.survey_papers(read_artifact(self.run_dir / layout.SURVEY_FIRST, Survey))
        record_decision(self.run_dir, gate, True, papers, decided_by)

    def _direction(self, gate: str, record: RunRecord, decided_by: str) -> None:
        survey = read_artifact(self.run_dir / layout.SURVEY, Survey)
        ideas = read_artifact(self.run_dir / layout.IDEAS, DirectionIdeas)
        record_decision(self.run_dir, gate, True, self.console.research_direction(survey, ideas.error), "user")

    def _theory_review(self, gate: str, record: RunRecord, decided_by: str) -> RunRecord | None:
        """Approve (with feedback), or `n`: the theory runs once more with the objection; `n`
        again stops the run."""
        theory = read_artifact(self.run_dir / layout.THEORY, Theory)
        rework_file = gate_path(self.run_dir, THEORY_REWORK)
        escalated = record.gate_mode == "auto" and effective_gate_mode("auto", theory) == "human"
        review = self.console.review_theory(theory, second_look=rework_file.exists(), escalated=escalated)
        if review.approved:
            record_decision(self.run_dir, gate, True, review.feedback, decided_by)
            return None
        if not rework_file.exists():  # the spec's one re-run of the theory, with the objection
            write_artifact(rework_file, TheoryRework(step=lemma_named(theory, review.step), issue=review.issue))
            self.console.info("re-running the theory once with your objection")
            return None
        return save_record(
            self.run_dir,
            record,
            status="stopped",
            message=f"stopped at the theory review after its re-run: {review.feedback or 'rejected'}; "
            f"`lemmata resume {record.session_id}` shows the lemma chain again",
        )

    def _stage_review(self, gate: str, record: RunRecord, decided_by: str) -> RunRecord | None:
        """A review after a stage (GATE_MODE human): go on with optional feedback, or stop."""
        review = self.console.review_stage(STAGE_REVIEWS[gate])
        if review.approved:
            record_decision(self.run_dir, gate, True, review.feedback, decided_by)
            return None
        return save_record(
            self.run_dir,
            record,
            status="stopped",
            message=f"stopped at the {gate.replace('_', ' ')}: {review.feedback or 'rejected'}; "
            f"`lemmata resume {record.session_id}` asks again",
        )
