"""Run-directory artifacts: pydantic models, written atomically, validated on read.

The run directory is the state of a run. Each stage reads artifacts and writes new ones;
a file either holds a complete, valid artifact or does not exist.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lemmata.errors import ArtifactError


class Artifact(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TaskInput(Artifact):
    """What the researcher asked for: the input of the whole pipeline."""

    session_id: str
    mode: Literal["prove", "explore", "from-papers"]
    task: str
    domain: str = ""
    paper_ids: list[str] = Field(default_factory=list)


class PaperRecord(Artifact):
    """A paper exactly as a search tool returned it; the model cannot invent one."""

    id: str
    title: str
    authors: list[str] = Field(default_factory=list)
    year: int | None = None
    url: str = ""
    abstract: str = ""
    venue: str = ""
    source: str = Field("", description="the tool that retrieved it")


class Survey(Artifact):
    papers: list[PaperRecord] = Field(default_factory=list)
    open_problems: list[str] = Field(default_factory=list)
    key_objects: list[str] = Field(default_factory=list)
    summary: str = ""
    tools_available: list[str] = Field(default_factory=list)


class Direction(Artifact):
    title: str
    summary: str = ""
    rationale: str = ""


class Directions(Artifact):
    candidates: list[Direction]
    chosen: int = Field(ge=0)
    goal: str = Field(description="the precise statement the theory stage sets out to prove")
    research_brief: str = ""


class Lemma(Artifact):
    id: str
    statement: str
    depends_on: list[str] = Field(default_factory=list)
    source: str = ""


class TheoryPlan(Artifact):
    goal: str
    level: Literal["full", "simplified", "single_goal"]
    lemmas: list[Lemma] = Field(min_length=1)

    def lemma(self, lemma_id: str) -> Lemma:
        for lemma in self.lemmas:
            if lemma.id == lemma_id:
                return lemma
        raise ArtifactError(f"theory/plan.json has no lemma {lemma_id!r}")


class SelfAssessment(Artifact):
    confidence: float = Field(ge=0.0, le=1.0)
    completeness: Literal["complete", "partial", "sketch"] = "partial"
    gaps: list[str] = Field(default_factory=list)
    weakest_step: str = ""
    techniques_used: list[str] = Field(default_factory=list)


class ProvedLemma(Artifact):
    """One lemma after the prover and the verifier. `verified` is never true by default."""

    id: str
    statement: str
    depends_on: list[str] = Field(default_factory=list)
    source: str = ""
    proof_text: str
    confidence: float = Field(ge=0.0, le=1.0)
    verified: bool
    status: Literal["proved", "low_confidence", "failed"]
    gaps: list[str] = Field(default_factory=list)
    assessment: SelfAssessment | None = None
    verification: str = Field("", description="how `verified` was decided")
    lean_sketch: str = ""


class ConsistencyCheck(Artifact):
    passed: bool
    uncited_lemmas: list[str] = Field(default_factory=list)
    issues: list[str] = Field(default_factory=list)


class Theory(Artifact):
    goal: str
    theorem_statement: str
    lemmas: list[ProvedLemma]
    assembled_proof: str
    consistency: ConsistencyCheck
    proof_status: Literal["proved", "partial", "failed"]

    @property
    def proven_count(self) -> int:
        return sum(1 for lemma in self.lemmas if lemma.status != "failed")


class GateDecision(Artifact):
    gate: str
    approved: bool
    feedback: str = ""
    decided_by: Literal["user", "default"]


class LemmaCheck(Artifact):
    lemma_id: str
    group: Literal["verified", "low_confidence"]
    outcome: Literal["ran", "error"]
    trials: int = 0
    violations: int = 0
    violation_rate: float | None = None
    numerically_suspect: bool = False
    code: str = ""
    detail: str = ""


class Experiment(Artifact):
    skipped: bool
    skip_reason: str = ""
    verified_lemmas: list[str] = Field(default_factory=list)
    low_confidence_lemmas: list[str] = Field(default_factory=list)
    checks: list[LemmaCheck] = Field(default_factory=list)
    alignment_score: float | None = None


class PaperMeta(Artifact):
    version: int = Field(ge=1)
    title: str
    tex_file: str
    bib_entries: int
    cited_keys: list[str] = Field(default_factory=list)
    removed_citations: list[str] = Field(default_factory=list)


class CompileReport(Artifact):
    pdf_file: str
    passes: list[str]
    seconds: float
    warnings: list[str] = Field(default_factory=list)


A = TypeVar("A", bound=BaseModel)


def atomic_write_text(path: Path, text: str) -> None:
    """Write via a temporary file in the same directory and `os.replace`: never half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_artifact(path: Path, artifact: BaseModel) -> None:
    atomic_write_text(Path(path), artifact.model_dump_json(indent=2) + "\n")


def read_artifact(path: Path, model: type[A]) -> A:
    """Read and validate; a missing or corrupt file is an ArtifactError naming it."""
    path = Path(path)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ArtifactError(f"{path} is missing") from None
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise ArtifactError(f"{path} is corrupt: {where}: {first['msg']}") from None

