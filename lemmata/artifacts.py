"""Run-directory artifacts: pydantic models, written atomically, validated on read.

The run directory is the state of a run. Each stage reads artifacts and writes new ones;
a file either holds a complete, valid artifact or does not exist.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, model_validator

from lemmata.errors import ArtifactError
from lemmata.files import write_text_atomically
from lemmata.kernel import verdict as kernel_verdict
from lemmata.kernel.statement import Domain
from lemmata.kernel.verdict import VERIFIED_STATUSES, LemmaStatus, Verdict
from lemmata.redaction import redact_known

#: Passed when an artifact is read back from disk (read_artifact): statuses recorded by an
#: earlier version are derived again from their evidence by today's kernel, not refused.
STORED = {"stored": True}


class Artifact(BaseModel):
    model_config = ConfigDict(extra="forbid")


#: How a run starts: a statement to prove, a domain to explore, or papers to build on.
Mode = Literal["prove", "explore", "from-papers"]


class TaskInput(Artifact):
    """What the researcher asked for: the input of the whole pipeline."""

    session_id: str
    mode: Mode
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


class ToolCallRecord(Artifact):
    """One tool call of an agent: what it asked, whether it worked, which records it returned."""

    turn: int
    tool: str
    argument: str
    ok: bool
    error: str = ""
    paper_ids: list[str] = Field(default_factory=list)


#: error: a question got no answer; rewrite_requested / rewrite_saved / rewrite_failed: a rewrite's
#: instructions, the version it saved, or why it failed (the earlier version stays current).
Marker = Literal["", "error", "rewrite_requested", "rewrite_saved", "rewrite_failed"]


class ChatRecord(Artifact):
    role: Literal["user", "assistant", "event"]  # event: a marker, not part of the conversation
    content: str
    timestamp: float = Field(default_factory=time.time)
    paper_version: int = Field(ge=1)
    marker: Marker = ""
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)


class PaperNote(Artifact):
    """What the paper reader took from one paper: from its PDF's theorem blocks or its abstract."""

    paper_id: str
    source: Literal["pdf", "abstract"]
    results: list[str] = Field(default_factory=list)
    techniques: list[str] = Field(default_factory=list)


class Survey(Artifact):
    papers: list[PaperRecord] = Field(default_factory=list, description="records a tool returned, chosen by the agent")
    open_problems: list[str] = Field(default_factory=list)
    key_objects: list[str] = Field(default_factory=list)
    summary: str = ""
    tools_available: list[str] = Field(default_factory=list)
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    retrieved: int = Field(0, description="distinct records the tools returned")
    turns: int = 0
    user_papers: list[str] = Field(default_factory=list, description="identifiers or titles the researcher supplied")
    paper_notes: list[PaperNote] = Field(default_factory=list, description="what the paper reader extracted")
    note: str = ""


class Direction(Artifact):
    title: str
    summary: str = ""
    rationale: str = ""


class DirectionIdeas(Artifact):
    """The divergent step: candidate directions, or why there are none (the direction gate asks)."""

    candidates: list[Direction] = Field(default_factory=list)
    error: str = ""
    turns: int = 0
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)


class Directions(Artifact):
    candidates: list[Direction]
    chosen: int = Field(ge=0)
    goal: str = Field(description="the precise statement the theory stage sets out to prove")
    research_brief: str = ""


#: The domains of a formal statement's variables (lemmata/kernel/statement.py).
FormalDomain = Domain


class FormalVariable(Artifact):
    name: str
    type: FormalDomain


class FormalSpec(Artifact):
    """A statement in lemmata's formal language (lemmata/kernel/tree.py, read from text by lemmata/formal/reading.py): its variables, each
    universally quantified over its domain, hypotheses and conclusion, as expressions. Every
    checker's input is derived from it."""

    variables: list[FormalVariable] = Field(default_factory=list)
    hypotheses: list[str] = Field(default_factory=list)
    conclusion: str


#: What one checker found. proved: the solver found no counterexample where one would have to be
#: (unsat), or the kernel accepted a proof; refuted: a counterexample, confirmed by exact
#: evaluation; no_counterexample: sampling found none in `instances` inputs (evidence, not proof);
#: inconclusive: the checker ran and decided nothing (a timeout, a failed proof search);
#: not_applicable: the statement uses what this checker cannot state; unavailable: the checker is
#: not installed or cannot run here.
MachineOutcome = Literal["proved", "refuted", "no_counterexample", "inconclusive", "not_applicable", "unavailable"]
MachineMethod = Literal["sampling", "solver", "kernel proof"]


class MachineCheck(Artifact):
    checker: str = Field(description="sampling (lemmata's exact evaluator), z3, coq")
    method: MachineMethod
    outcome: MachineOutcome
    detail: str = ""
    instances: int = Field(
        0, ge=0, description="sampling: inputs where the hypotheses held and the conclusion was decided"
    )
    counterexample: dict[str, str] | None = Field(None, description="refuted: each variable's value")
    seconds: float = 0.0
    proof: str = Field("", description="kernel proof: the proof script the kernel accepted")
    proof_source: str = Field("", description="kernel proof: 'model script' or 'automation: <tactic>'")
    certificate: str = Field(
        "", description="proved: the kernel's certificate of what was proved (lemmata/kernel/certificate.py)"
    )

    @model_validator(mode="after")
    def _consistent(self) -> MachineCheck:
        if self.outcome == "proved" and self.method == "sampling":
            raise ValueError("sampling proves nothing: it can only find a counterexample or none")
        if (self.outcome == "refuted") != (self.counterexample is not None):
            raise ValueError("a refutation has a counterexample, and only a refutation")
        return self


class FormalCheck(Artifact):
    """A statement's formal form and what the machines found about it. `verdict` says it in one
    word — machine_checked, refuted, tested or unverified — as the kernel derives it from the text
    shown, the checks' certificates and the witness (lemmata/kernel/verdict.py)."""

    prose: str
    spec: FormalSpec | None = None
    text: str = Field("", description="the formal statement as checked, in one line of plain text")
    latex: str = Field("", description="the same in LaTeX, for the paper")
    coq: str = Field("", description="the Coq proposition; empty when it cannot be stated in Coq")
    not_formalized: str = Field(
        "", description="why there is no formal statement to check: none could be written, or it was refused"
    )
    checks: list[MachineCheck] = Field(default_factory=list)
    witness: dict[str, str] | None = Field(
        None, description="an input at which every premise holds (domains, hypotheses, definedness); None: none found"
    )

    @model_validator(mode="after")
    def _formal_or_why_not(self) -> FormalCheck:
        # A refused formalization keeps the model's attempt (spec) beside the reason it was refused.
        if self.spec is None and not self.not_formalized:
            raise ValueError("a formal check has a formal statement, or says why it has none")
        if self.not_formalized and self.checks:
            raise ValueError("no machine checks of a statement that was not formalized")
        return self

    @property
    def judged(self) -> Verdict:
        """The kernel's verdict, with why a check on record does not count and the witness."""
        return kernel_verdict.formal_verdict(self)

    @property
    def proofs(self) -> list[MachineCheck]:
        """The proofs that count: the kernel's, of the statement shown, with a witness."""
        return [self.checks[index] for index in self.judged.proofs]

    @property
    def refutation(self) -> MachineCheck | None:
        """The counterexample that counts: confirmed by exact evaluation."""
        index = self.judged.refutation
        return self.checks[index] if index is not None else None

    @property
    def conflict(self) -> str:
        """A checker proved what another refuted: a defect of one of them, never a verdict."""
        judged = self.judged
        return judged.why if judged.conflict else ""

    @property
    def instances(self) -> int:
        return max((check.instances for check in self.checks if check.method == "sampling"), default=0)

    @property
    def verdict(self) -> Literal["machine_checked", "refuted", "tested", "unverified"]:
        return self.judged.word


class Formalization(Artifact):
    """`theory/.formalizer/<hash>.json`: the formalizer's statement for one input, kept so that it is
    asked again only when the input changed."""

    input_sha256: str
    statement: str = Field(description="the prose statement formalized")
    restatement: str = Field("", description="the statement in words, every quantifier explicit")
    spec: FormalSpec | None = None
    not_formalized: str = Field("", description="why there is no usable formal statement")
    attempts: int = Field(1, ge=1)

    @property
    def note(self) -> str:
        return f"not formalized: {self.not_formalized}" if self.not_formalized else ""


class FormalStatement(Artifact):
    """The goal restated with every quantifier, domain and hypothesis explicit, and in lemmata's
    formal language with what the machines found (`check`; None in runs made before machine checks)."""

    goal: str
    formal_statement: str
    assumptions: list[str] = Field(default_factory=list)
    input_sha256: str = Field(description="hash of the formalizer's input: same input, same statement, no call")
    note: str = ""
    check: FormalCheck | None = None


class Lemma(Artifact):
    id: str
    statement: str
    depends_on: list[str] = Field(default_factory=list)
    source: str = ""
    approach: str = Field("", description="the proof architect's suggested route, given to the prover")
    formal: FormalCheck | None = Field(None, description="its formal statement and what sampling and the solver found")


class RefutedLemma(Artifact):
    """A statement of the plan that a counterexample refuted before any proof: never proved,
    never printed as a step. `replaced_by`: the statement that took its place ("" when removed)."""

    id: str
    statement: str
    formal: FormalCheck
    replaced_by: str = ""

    @model_validator(mode="after")
    def _refuted(self) -> RefutedLemma:
        if self.formal.verdict != "refuted":
            raise ValueError(f"lemma {self.id} is recorded as refuted without a counterexample")
        return self


def removed_lemmas(refuted: Sequence[RefutedLemma], kept: set[str]) -> list[RefutedLemma]:
    """Each lemma's last refutation, for the lemmas no longer in the plan."""
    last = {attempt.id: attempt for attempt in refuted if attempt.id not in kept}
    return list(last.values())


class TheoryRework(Artifact):
    """`gates/theory_rework.json`: the reviewer said `n` at the theory review; the theory runs once more."""

    step: str = Field(description="the most problematic step: a lemma identifier or its number in the chain")
    issue: str


class TheoryPlan(Artifact):
    goal: str
    level: Literal["full", "simplified", "single_goal"]
    lemmas: list[Lemma] = Field(min_length=1)
    formal_statement: str = ""
    architect_note: str = Field("", description="what the proof architect changed, or why its answer was not used")
    dedup_note: str = Field("", description="lemmas merged as copies or dropped as restating the goal, per plan")
    size_note: str = Field("", description="how the decomposer's answer departed from the simplified plan's 3 lemmas")
    rework: TheoryRework | None = Field(None, description="the reviewer's objection this plan answers")
    refuted: list[RefutedLemma] = Field(
        default_factory=list, description="statements refuted by a counterexample before any proof, in order"
    )
    goal_check: FormalCheck | None = Field(None, description="the goal's formal statement and its machine checks")
    repair_note: str = Field("", description="which lemmas were repaired or removed after a counterexample")

    @property
    def removed(self) -> list[RefutedLemma]:
        """The refuted statements that nothing replaced (each lemma's last refutation)."""
        return removed_lemmas(self.refuted, {lemma.id for lemma in self.lemmas})

    def reworked(self, lemma_id: str) -> bool:
        """Whether the reviewer's objection is about this lemma (or names no lemma of the plan)."""
        if self.rework is None:
            return False
        return self.rework.step == lemma_id or self.rework.step not in {lemma.id for lemma in self.lemmas}

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


#: How the checks ended for the kept attempt. auto_accepted: confidence >= AUTO_VERIFY_CONFIDENCE with no
#: gap, accepted without a call (the spec's rule); verifier_pass: the verifier said valid naming no flaw
#: and the refuter, asked for the first error, found none; flagged: a gap, or a check named a flaw
#: without calling the proof wrong; failed: the verifier called it invalid, or there was no proof;
#: not_checked: a check could not run or answered unreadably. The first two accept the proof (its
#: turns end); only a proof that passed the checks (verifier_pass), by a trusted checker, is `verified`:
#: an auto-accepted proof was checked by nobody but its prover.
VerificationMethod = Literal["auto_accepted", "verifier_pass", "flagged", "failed", "not_checked"]
ACCEPTING_METHODS = ("auto_accepted", "verifier_pass")
CHECKED_METHOD = "verifier_pass"
#: Below this confidence the prover itself calls the proof incomplete or possibly wrong (the spec's
#: calibration table): no check makes such a proof verified.
VERIFIED_MIN_CONFIDENCE = 0.40

CheckerTrust = Literal["calibrated", "not_discriminating", "uncalibrated"]


class Checker(Artifact):
    """The model that checked a proof and how far its checks are trusted, as measured on
    human-labelled proofs (verification/calibration.py). Only a `calibrated` checker can make a
    proof verified; the others can only fail one or leave it unchecked."""

    backend: str
    model: str
    trust: CheckerTrust
    false_accept_rate: float | None = Field(None, description="accepted among proofs humans judged incorrect")
    correct_accept_rate: float | None = Field(None, description="accepted among proofs humans judged correct")
    measured_on: str = Field("", description="what the rates were measured on, and when")

    @property
    def can_verify(self) -> bool:
        return self.trust == "calibrated"


#: A lemma id that carries its own number: L1, L2, ...
NUMBERED_ID = re.compile(r"^L([1-9][0-9]*)$")


def chain_numbers(lemma_ids: Sequence[str]) -> list[int]:
    """The number each lemma of a chain goes by, the same at the gate, in the paper ("Lemma 3") and
    in `status`: its own when every id is L<n> in increasing order (so a chain L2, L3, L4 left by a
    refuted L1 stays L2, L3, L4, never a second numbering 1, 2, 3), else its place in the chain."""
    own = [int(match.group(1)) if (match := NUMBERED_ID.match(lemma_id)) else 0 for lemma_id in lemma_ids]
    if all(own) and all(a < b for a, b in zip(own, own[1:])):
        return own
    return list(range(1, len(lemma_ids) + 1))


def calibrate_command(backend: str, model: str) -> str:
    """The command that measures a checker, named wherever lemmata says one is unmeasured."""
    return f"`lemmata calibrate --backend {shlex.quote(backend)} --model {shlex.quote(model)}`"


class CheckStep(Artifact):
    """One check of a proof attempt, in the order they ran."""

    check: Literal["structure", "auto_accept", "verifier", "refuter"]
    outcome: Literal["passed", "objected", "rejected", "could_not_run", "skipped"]
    detail: str = ""


#: How records written before the ladder said it (proved: verified by the model checks).
_OLDER_STATUSES = {"proved": "reviewed", "low_confidence": "unverified", "failed": "unverified"}


def lemma_status(formal: FormalCheck | None, reviewed: bool) -> LemmaStatus:
    """The status the evidence supports (the kernel's rule): the machines' verdict first, then the
    calibrated review."""
    return kernel_verdict.lemma_status(formal.verdict if formal is not None else "unverified", reviewed)


class ProvedLemma(Artifact):
    """One lemma after the prover and the checks. Its `status` is derived from the evidence and
    checked against it: no artifact can call a lemma more than what was checked."""

    id: str
    statement: str
    depends_on: list[str] = Field(default_factory=list)
    source: str = ""
    proof_text: str
    confidence: float = Field(ge=0.0, le=1.0)
    verified: bool
    status: LemmaStatus
    gaps: list[str] = Field(default_factory=list)
    assessment: SelfAssessment | None = None
    verification_method: VerificationMethod
    verification: str = Field("", description="what the model checks said of the proof, in words")
    checks: list[CheckStep] = Field(default_factory=list, description="the model checks of the kept attempt, in order")
    checked_by: Checker | None = Field(None, description="who checked it; None only in runs recorded before checkers")
    formal: FormalCheck | None = Field(None, description="its formal statement and the machine checks; None: none made")
    lean_sketch: str = ""
    attempts: int = Field(
        1,
        ge=0,
        description="prover turns spent on this lemma; 0: a machine proved its formal statement before any was "
        "needed, and the proof text is lemmata's account of that proof (machine_proof_in_words)",
    )
    refinements: list[str] = Field(default_factory=list, description="strategies the refiner proposed after stagnation")

    @model_validator(mode="before")
    @classmethod
    def _older_status(cls, value: Any) -> Any:
        if isinstance(value, dict) and value.get("status") in _OLDER_STATUSES:
            return {**value, "status": _OLDER_STATUSES[value["status"]]}
        return value

    @property
    def accepted(self) -> bool:
        """The model checks accepted the proof (whether or not its checker is trusted)."""
        return self.verification_method in ACCEPTING_METHODS

    @property
    def proof_failed(self) -> bool:
        """The model checks rejected the proof, or there was none."""
        return self.verification_method == "failed"

    @property
    def machine_checked(self) -> bool:
        return self.status == "machine_checked"

    @property
    def proved_by_machine_alone(self) -> bool:
        """A machine proved it before any model wrote a proof: its proof is the machine's."""
        return self.machine_checked and self.attempts == 0

    @property
    def reviewed_by_model(self) -> bool:
        """The model checks passed the proof and the checker's verdicts count (its calibration)."""
        if self.checked_by is None:  # runs recorded before checkers: no trust, floor, gap or check rule
            return self.accepted
        refuted_in_vain = any(step.check == "refuter" and step.outcome == "passed" for step in self.checks)
        return (
            self.verification_method == CHECKED_METHOD
            and refuted_in_vain
            and self.checked_by.can_verify
            and not self.gaps
            and self.confidence >= VERIFIED_MIN_CONFIDENCE
        )

    def derived_status(self) -> LemmaStatus:
        return lemma_status(self.formal, self.reviewed_by_model)

    @model_validator(mode="after")
    def _status_from_the_evidence(self, info: ValidationInfo) -> ProvedLemma:
        # Honesty is structural: no artifact can call an unchecked, flawed or refuted lemma verified.
        expected = self.derived_status()
        if info.context == STORED and (self.status != expected or self.verified != (expected in VERIFIED_STATUSES)):
            # Recorded by an earlier version: today's kernel says what its evidence supports.
            self.status, self.verified = expected, expected in VERIFIED_STATUSES
        if self.status != expected or self.verified != (self.status in VERIFIED_STATUSES):
            raise ValueError(
                f"lemma {self.id}: verified={self.verified}, status={self.status} contradict the evidence "
                f"(machine checks: {self.formal.verdict if self.formal else 'none'}; model checks: "
                f"{self.verification_method} by a checker {self.checked_by.trust if self.checked_by else 'none'}, "
                f"confidence={self.confidence}, gaps={len(self.gaps)}): it is {expected}"
            )
        return self


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
    formal_statement: str = ""
    crystallization_error: str = Field("", description="why the theorem statement fell back to the goal")
    sketch: str = Field("", description="the model's sketch of the argument, for the theory review (never the paper)")
    sketch_note: str = Field("", description="why there is no sketch")
    goal_check: FormalCheck | None = Field(None, description="the goal's formal statement and its machine checks")
    refuted: list[RefutedLemma] = Field(
        default_factory=list, description="the plan's statements refuted before any proof"
    )

    @property
    def proven_count(self) -> int:
        return proven_count(self.lemmas)

    @property
    def removed(self) -> list[RefutedLemma]:
        """The refuted statements nothing replaced: the argument that used them is incomplete."""
        return removed_lemmas(self.refuted, {lemma.id for lemma in self.lemmas})

    @property
    def main_result_status(self) -> LemmaStatus:
        """machine_checked: the goal's own formal statement was proved by a machine; reviewed: every
        lemma it rests on is verified, the assembled proof consistent and the theorem stated from it."""
        verdict = self.goal_check.verdict if self.goal_check is not None else "unverified"
        return kernel_verdict.main_result_status(verdict, not self._argument_issues())

    @property
    def main_result_established(self) -> bool:
        return self.main_result_status in VERIFIED_STATUSES

    def main_result_issues(self) -> list[str]:
        """Why the main result is not established, in the words the paper, the cards and the
        status use; empty when it is."""
        if self.main_result_established:
            return []
        issues = []
        if self.goal_check is not None and self.goal_check.verdict == "refuted":
            issues.append(f"the goal as formalized is refuted: {refutation_in_words(self.goal_check)}")
        elif self.goal_check is not None and self.goal_check.not_formalized:
            issues.append("the goal has no formal statement a machine could check")
        elif self.goal_check is not None:
            issues.append("no machine proved the goal's formal statement")
        return issues + self._argument_issues()

    def _argument_issues(self) -> list[str]:
        """What keeps the lemma chain from establishing the main result; empty when nothing does."""
        issues = []
        failed = [lemma.id for lemma in self.lemmas if lemma.proof_failed and not lemma.verified]
        unverified = [lemma.id for lemma in self.lemmas if not lemma.verified and lemma.id not in failed]
        removed = [attempt.id for attempt in self.removed]
        if removed:
            verb = "was" if len(removed) == 1 else "were"
            issues.append(f"{_listed(removed)} {verb} refuted and removed: the argument that used it is incomplete")
        if failed:
            issues.append(f"the proof of {_listed(failed)} failed")
        if unverified:
            issues.append(f"{_listed(unverified)} {'is' if len(unverified) == 1 else 'are'} not verified")
            unmeasured = {
                (lemma.checked_by.backend, lemma.checked_by.model)
                for lemma in self.lemmas
                if lemma.id in unverified and lemma.checked_by is not None and lemma.checked_by.trust == "uncalibrated"
            }
            issues += [
                f"the checks of {model} were never measured on human-labelled proofs, so they verify nothing "
                f"({calibrate_command(backend, model)} measures them)"
                for backend, model in sorted(unmeasured)
            ]
        if not self.assembled_proof.strip():
            issues.append("no proof of the main result was assembled")
        elif not self.consistency.passed:
            issues.append(
                "the assembled proof failed its consistency check"
                + (f" ({'; '.join(self.consistency.issues)})" if self.consistency.issues else "")
            )
        if self.crystallization_error:
            issues.append("the theorem could not be stated from the assembled proof, so the goal is stated instead")
        return issues


def refutation_in_words(check: FormalCheck) -> str:
    """`counterexample a = 0, b = 1, found by sampling`."""
    refutation = check.refutation
    if refutation is None or refutation.counterexample is None:
        return "no counterexample"
    values = ", ".join(f"{name} = {value}" for name, value in refutation.counterexample.items())
    if not values:
        return f"it computes to false, found by {refutation.checker}"
    return f"counterexample {values}, found by {refutation.checker}"


def _listed(ids: list[str]) -> str:
    return ("lemma " if len(ids) == 1 else "lemmas ") + ", ".join(ids)


def proven_count(lemmas: Sequence[ProvedLemma]) -> int:
    """Lemmas with a proof (verified or not): what the spec's `proven_count` counts."""
    return sum(1 for lemma in lemmas if not lemma.proof_failed or lemma.verified)


class PauseRequest(Artifact):
    """`pause.flag`: a pause was asked for; the driver stops the run at the next rule boundary."""

    requested_at: float
    by: Literal["command", "ctrl-c", "signal", "browser", "budget"]
    reason: str = Field("", description="why, when the run asked itself (its budget would be passed)")


class Checkpoint(Artifact):
    """`checkpoint.json`, written when a run pauses and removed when it completes."""

    session_id: str
    stage_name: str = Field(description="the stage the run continues from on resume")
    completed_stages: list[str] = Field(default_factory=list)
    paused_at: float
    requested_by: str = ""
    research_brief_json: str = Field("{}", description="the chosen direction as a JSON object string; {} before one")

    def research_brief(self) -> dict[str, Any]:
        """The brief read back (the spec's resume rule): {} when absent, not JSON or not an object."""
        try:
            brief = json.loads(self.research_brief_json or "{}")
        except json.JSONDecodeError:
            return {}
        return brief if isinstance(brief, dict) else {}


class GateDecision(Artifact):
    gate: str
    approved: bool
    feedback: str = ""
    decided_by: Literal["user", "default", "automatic"]  # automatic: the gate's condition did not hold


def feedback_of(decision: GateDecision) -> str:
    """What a decision says to the next agent: the researcher's words, never a gate's own reason."""
    return "" if decision.decided_by == "automatic" else decision.feedback.strip()


class SeriesPoint(Artifact):
    """One point of a numerical test's series: the instances whose parameter was `x`."""

    x: float
    trials: int = Field(ge=1)
    violations: int = Field(ge=0)


class LemmaCheck(Artifact):
    lemma_id: str
    group: Literal["verified", "low_confidence"]
    outcome: Literal["ran", "error", "not_run"]
    trials: int = 0
    violations: int = 0
    violation_rate: float | None = None
    numerically_suspect: bool = False
    code: str = Field("", description="the test that ran (ran), or the last one written (error)")
    author: Literal["model", "lemmata"] = Field(
        "model", description="lemmata: the lemma's formal statement run as a predicate; model: a test the model wrote"
    )
    detail: str = Field(
        "",
        description="ran: the model's rationale; error: why the last attempt failed; not_run: why no test was written",
    )
    attempts: int = Field(0, description="experiment turns spent: tests written, including the failed ones")
    failures: list[str] = Field(default_factory=list, description="why each failed attempt failed, in order")
    series: list[SeriesPoint] = Field(default_factory=list, description="the test's optional split by a parameter")
    x_label: str = ""
    notes: list[str] = Field(default_factory=list, description="e.g. why a printed series was not used")
    plot: str = Field("", description="the plot of the check, relative to the run directory; empty: none")
    sandbox: list[str] = Field(default_factory=list, description="protections active in the last run")
    network_isolated: bool = False
    cpu_seconds: float | None = None


class Experiment(Artifact):
    skipped: bool
    skip_reason: str = ""
    verified_lemmas: list[str] = Field(default_factory=list)
    low_confidence_lemmas: list[str] = Field(default_factory=list)
    checks: list[LemmaCheck] = Field(default_factory=list)
    alignment_score: float | None = None


class BriefedMemory(Artifact):
    """A memory of an earlier run, as given to this run's agents."""

    file: str
    title: str
    kind: Literal["strategy", "failure"]
    session_id: str = Field(description="the run it was learned from")
    similarity: float | None = Field(None, description="cosine similarity to this run's task; None: unranked")


class Briefing(Artifact):
    """`briefing.json`: what this run's agents are told beyond their prompts, decided once at the
    start: memories of earlier runs in its domain, skills, and its domain plugin's guidance."""

    domain: str = Field(description="the input's domain, as the researcher wrote it")
    memory_domain: str = Field(description="where this run's memories are read and written")
    plugin: str = Field("", description="the domain plugin serving the run; empty: none")
    memories: list[BriefedMemory] = Field(default_factory=list)
    skills: dict[str, list[str]] = Field(default_factory=dict, description="skill names by agent role")
    by_role: dict[str, str] = Field(default_factory=dict, description="the text added to each role's system prompt")
    notes: list[str] = Field(default_factory=list, description="what was left out, and why")


class LearnedMemory(Artifact):
    file: str
    title: str
    kind: Literal["strategy", "failure"]


class Learned(Artifact):
    """`learned.json`: what this run added to its domain's memories."""

    memory_domain: str
    memories: list[LearnedMemory] = Field(default_factory=list)
    note: str = ""


class PaperMeta(Artifact):
    version: int = Field(ge=1)
    title: str
    tex_file: str
    bib_entries: int
    cited_keys: list[str] = Field(default_factory=list)
    removed_citations: list[str] = Field(default_factory=list)
    lemmas_stated: int = Field(
        0, ge=0, description="lemmas of the theory the paper states (all of them, by construction)"
    )
    writer_turns: int = Field(1, ge=1, description="model calls the writer made (at most WRITER_MAX_TURNS)")
    turn_reasons: list[str] = Field(
        default_factory=list, description="why each turn after the first was needed, in order"
    )
    missing_parts: list[str] = Field(
        default_factory=list, description="parts the model never wrote; lemmata's own text stands in where it has one"
    )
    plain_text_fragments: list[str] = Field(
        default_factory=list, description="proofs or statements printed as plain text, their LaTeX broke the compile"
    )
    echoed_lines: int = Field(0, ge=0, description="lines of the kept parts dropped for repeating the prompt")
    prose_repairs: dict[str, int] = Field(
        default_factory=dict,
        description="what lemmata removed from the writer model's parts before delivery, by kind (prompt lines, "
        "repeated paragraphs, unfounded claims, refuted claims, unretrieved authors, unfinished sentences, "
        "unknown citations)",
    )
    prose_claims_checked: int = Field(
        0, ge=0, description="sentences of the prose stating a general claim, sent to the machine checks"
    )
    refuted_prose_claims: list[str] = Field(
        default_factory=list,
        description="sentences of the prose the machine checks refuted: removed, and listed in Limitations",
    )
    compile_errors: list[str] = Field(
        default_factory=list, description="what still broke the writer's trial compile when its turns ran out"
    )


class RevisionRequest(Artifact):
    """`revisions/v<n>.json`: a rewrite asked for, the input of version n's jobs. Written before
    any work; a failed rewrite's request is set aside (`revisions/v<n>.failed-<time>.json`)."""

    version: int = Field(ge=2)
    base_version: int = Field(ge=1)  # the version the instructions were written against
    instructions: str = Field(min_length=1)
    qa_summary: str = ""  # the conversation about the base version, for the agents' context
    requested_at: float


class RewriteContext(Artifact):
    """`rewrite_context_v<n>.json`, written once version n exists: what produced it."""

    version: int = Field(ge=2)
    base_version: int = Field(ge=1)
    revision_prompt: str  # the researcher's instructions, as the agents received them
    qa_summary: str = ""
    requested_at: float
    completed_at: float
    paper: str  # paper_v<n>.tex


class CompileReport(Artifact):
    """What pdflatex and bibtex said about one paper: written beside the PDF when the compile
    succeeds, and to `logs/` when it fails (the failed job's outputs are removed)."""

    tex_file: str
    ok: bool
    pdf_file: str = Field("", description="empty when the compile failed")
    passes: list[str] = Field(default_factory=list, description="the passes that ran")
    seconds: float = 0.0
    errors: list[str] = Field(default_factory=list, description="'file:line: message', first error first")
    warnings: list[str] = Field(default_factory=list, description="of the final pdflatex pass")
    undefined_citations: list[str] = Field(default_factory=list)
    undefined_references: list[str] = Field(default_factory=list)
    audit_findings: list[str] = Field(
        default_factory=list,
        description="what the audit of the delivered PDF against the run's record found (stages/paper/audit.py)",
    )


class ChainEntry(Artifact):
    id: str
    statement: str
    status: str = Field(
        description="machine_checked, refuted, tested, reviewed or unverified (older records: proved, ...)"
    )
    verified: bool
    verification_method: str
    confidence: float
    verification: str = Field("", description="what the model checks said of the proof, in words")
    checked_by: Checker | None = Field(None, description="who checked it; None in runs recorded before checkers")
    checks: list[CheckStep] = Field(default_factory=list, description="the model checks of the kept attempt, in order")
    formal: FormalCheck | None = Field(None, description="its formal statement and the machine checks")


class PaperVersion(Artifact):
    version: int = Field(ge=1)
    title: str
    tex_file: str
    pdf_file: str


class StageForecast(Artifact):
    """One line of `forecasts.jsonl`: what a stage was expected to use, made before its first job
    (issue 26; run/spending/forecast.py). `runs` counts the earlier runs it learned from; 0: the prior."""

    stage: str
    made_at: float
    calls: int
    tokens_in: int
    tokens_out: int
    cost_usd: float | None = Field(description="None when a model of the run has no price")
    lemmas: int | None = Field(None, description="the lemma count it scaled by (theory, experiment)")
    runs: int = 0
    basis: str = Field(description="what it stands on, in words")

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out


class ModelCosts(Artifact):
    """What a run's model calls cost (issue 26; run/spending/costs.py): in USD, the calls of known cost
    only; `unknown_calls` counts the others (a model without a price, a failed call)."""

    calls: int
    usd: float
    unknown_calls: int
    by_role: dict[str, float] = Field(default_factory=dict)
    by_stage: dict[str, float] = Field(default_factory=dict)


class ResearchOutput(Artifact):
    """The run's result in one record: theorem, lemma chain, paper versions, bibliography."""

    session_id: str
    goal: str
    theorem_statement: str
    proof_status: str
    lemma_chain: list[ChainEntry]
    main_result_established: bool = Field(
        False,
        description="every lemma verified, the proof assembled and "
        "consistent; False in records written before it was recorded",
    )
    main_result_issues: list[str] = Field(default_factory=list, description="why the main result is not established")
    main_result_status: str = Field(
        "", description="machine_checked, refuted, tested, reviewed or unverified; empty in older records"
    )
    goal_check: FormalCheck | None = Field(None, description="the goal's formal statement and the machine checks")
    refuted: list[RefutedLemma] = Field(
        default_factory=list, description="statements of the plan refuted by a counterexample before any proof"
    )
    papers: list[PaperVersion]
    bibliography_json: str = Field(
        "[]",
        description="JSON list of the bibliography's entries: key, id, title, "
        "authors, year, url, source (the tool that retrieved it)",
    )
    model_costs: ModelCosts | None = Field(
        None, description="what the model calls cost when the record was written; None in older records"
    )


A = TypeVar("A", bound=BaseModel)


def atomic_write_text(path: Path, text: str) -> None:
    """Write atomically (never half a file), every secret lemmata knows replaced first:
    artifacts, papers and failure notes carry model and sandbox output, which may repeat a key."""
    write_text_atomically(Path(path), redact_known(text))


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
        return model.model_validate_json(raw, context=STORED)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise ArtifactError(f"{path} is corrupt: {where}: {first['msg']}") from None
