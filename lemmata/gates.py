"""Human gates as sentinel files: `gates/<name>.json` holds the decision and any feedback."""

from __future__ import annotations

from pathlib import Path

from lemmata.artifacts import GateDecision, write_artifact

GATE_CLOSED = "GATE CLOSED"
THEORY_REVIEW = "theory_review"


def gate_path(run_dir: Path, gate: str) -> Path:
    return Path(run_dir) / "gates" / f"{gate}.json"


def gate_closed_message(sentinel: str) -> str:
    gate = Path(sentinel).stem
    return (f"{GATE_CLOSED}: {gate} is waiting for a decision; write {sentinel} "
            '(e.g. {"gate": "' + gate + '", "approved": true, "decided_by": "user"}) and run again')


def record_decision(run_dir: Path, gate: str, approved: bool, feedback: str, decided_by: str) -> GateDecision:
    decision = GateDecision(gate=gate, approved=approved, feedback=feedback.strip(), decided_by=decided_by)
    write_artifact(gate_path(run_dir, gate), decision)
    return decision
