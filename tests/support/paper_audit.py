"""What a researcher checks when reading a lemmata paper, as code: the invariants of issues 21
and 34 (the machine checks: each lemma's status line, no refuted statement printed as a step, no
machine-checked lemma called numerically suspect, the main result saying by what it stands).

`audit_paper` reads a run's theory and its PDF and returns the problems found (empty: none): the
product's own audit (lemmata/stages/paper/audit.py), which every compile runs. `audit_run` adds
what needs the experiment's record.
Used on recorded real-model runs (test_embedded_replays.py) and the embedded smoke test.
"""

from __future__ import annotations

from pathlib import Path

from lemmata import layout
from lemmata.artifacts import Experiment, Theory, read_artifact
from lemmata.errors import ArtifactError
from lemmata.stages.paper.audit import MARKDOWN, PROMPT_MATERIAL, paper_findings, pdf_text

__all__ = ["MARKDOWN", "PROMPT_MATERIAL", "audit_paper", "audit_run", "pdf_text"]


def audit_paper(theory: Theory, pdf: Path) -> list[str]:
    """The problems of the paper `pdf` as an account of `theory` (the product's audit)."""
    return paper_findings(theory, pdf_text(pdf))


def audit_run(run_dir: Path, pdf: Path) -> list[str]:
    theory = read_artifact(run_dir / layout.THEORY, Theory)
    problems = audit_paper(theory, pdf)
    try:
        experiment = read_artifact(run_dir / layout.EXPERIMENT, Experiment)
    except ArtifactError:
        return problems
    checked = {lemma.id for lemma in theory.lemmas if lemma.machine_checked}
    return problems + [
        f"lemma {check.lemma_id} is machine-checked, yet called numerically suspect"
        for check in experiment.checks
        if check.numerically_suspect and check.lemma_id in checked
    ]
