"""What the researcher said that a job's agent should hear, from the job's named inputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lemmata.artifacts import GateDecision, RevisionRequest, feedback_of, read_artifact

#: The gate decisions a job may wait for, by the name its rule gives them.
REVIEW_INPUTS = ("review", "experiment_review")


def revision_feedback(request: RevisionRequest) -> str:
    """How every agent of the rewrite receives the instructions."""
    context = (
        f" The conversation about version {request.base_version}: {request.qa_summary}" if request.qa_summary else ""
    )
    return (
        f"Revision instructions from the researcher for version {request.version} of the paper: "
        f"{request.instructions.strip().rstrip('.')}.{context}"
    )


def job_feedback(inputs: Any) -> str:
    """A rewrite's revision instructions (named input `revision`); else the feedback of the
    reviews the job waited for, never a gate's own reason ("GATE_MODE none: no review asked")."""
    if hasattr(inputs, "revision"):
        return revision_feedback(read_artifact(Path(inputs.revision), RevisionRequest))
    reviews = [
        read_artifact(Path(getattr(inputs, name)), GateDecision) for name in REVIEW_INPUTS if hasattr(inputs, name)
    ]
    return " ".join(filter(None, (feedback_of(review) for review in reviews)))
