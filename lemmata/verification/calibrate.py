"""`lemmata calibrate`: measure a checking model on the human-labelled proofs the package ships.

Each proof goes through the model checks a lemma's proof gets (verification/user_proof.py); what
the checks accepted, set against what humans judged, is the model's Calibration
(verification/calibration.py), stored where the checks of every later run and `lemmata check`
read it. Each proof's outcome is appended to a progress file as soon as it is known, so an
interrupted calibration goes on where it stopped; the model calls of a proof cut short are in the
call log and are given again to its second attempt (llm/interrupted_calls.py), so no question is
asked twice. A `--limit` sample is a quick estimate: printed, never stored, since its few proofs
cannot earn trust (calibration.MIN_INCORRECT_PROOFS) and must not replace a full measurement.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import date
from importlib.resources import files
from pathlib import Path
from typing import Literal

from lemmata.errors import UserError
from lemmata.home_layout import CALIBRATION
from lemmata.jsonl import append_line, read_json_lines
from lemmata.llm.prices import PriceTable, usd
from lemmata.verification.calibration import (
    BUNDLED_CALIBRATIONS,
    MAX_FALSE_ACCEPT_RATE,
    MIN_DISCRIMINATION,
    STACK_VERSION,
    Calibration,
    model_slug,
)
from lemmata.verification.checks import REFUTER_PROOF_CHARS, VERIFIER_EXCERPT_CHARS

Label = Literal["correct", "incorrect"]
DATASET_FILE = "open-proof-corpus-calibration.jsonl"
DATASET_NAME = "Open Proof Corpus calibration set"
#: The model checks of one proof: the verifier, then the refuter when the verifier passed it.
MOST_CALLS_PER_PROOF = 2  # the forecast's sum below counts one of each
#: A rough count of tokens in English and LaTeX text (a forecast, not a bill).
CHARS_PER_TOKEN = 4
#: The prompts' own text around the proof: the verifier's and refuter's instructions and schema.
PROMPT_OVERHEAD_TOKENS = 450


@dataclass(frozen=True)
class LabelledProof:
    id: str
    problem: str
    proof: str
    label: Label


@dataclass(frozen=True)
class ProofOutcome:
    """What the checks made of one labelled proof: one line of the progress file."""

    id: str
    label: Label
    accepted: bool
    unreadable: bool  # a check answered unreadably or could not run: it accepted nothing
    calls: int
    seconds: float
    cost_usd: float | None
    stack_version: int = STACK_VERSION
    dataset: str = ""


@dataclass(frozen=True)
class Forecast:
    proofs: int
    calls: int  # at most
    tokens_in: int
    tokens_out: int  # at most: every answer at its token cap
    cost_usd: float | None  # at most; None when the model has no price
    seconds: float | None  # None when nothing measured this model's pace yet


def bundled_proofs() -> tuple[list[LabelledProof], str]:
    """The shipped labelled proofs and the digest that names this version of them."""
    text = (files("lemmata.verification") / "data" / DATASET_FILE).read_text(encoding="utf-8")
    return parse_labelled(text, DATASET_FILE), hashlib.sha256(text.encode()).hexdigest()[:12]


def parse_labelled(text: str, where: str) -> list[LabelledProof]:
    proofs = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        row = json.loads(line)
        if not {"id", "problem", "proof", "label"} <= row.keys() or row["label"] not in ("correct", "incorrect"):
            raise UserError(f"{where}:{number}: a row needs id, problem, proof and a label correct|incorrect")
        proofs.append(LabelledProof(row["id"], row["problem"], row["proof"], row["label"]))
    return proofs


def interleaved(proofs: Sequence[LabelledProof]) -> list[LabelledProof]:
    """Incorrect and correct proofs alternating (file order within each), so that any first N of
    them, a --limit sample or an interrupted calibration, holds both kinds in the file's proportion."""
    incorrect = [proof for proof in proofs if proof.label == "incorrect"]
    correct = [proof for proof in proofs if proof.label == "correct"]
    ratio = len(incorrect) / max(1, len(proofs))
    mixed: list[LabelledProof] = []
    taken_incorrect = 0
    while incorrect or correct:
        take_incorrect = bool(incorrect) and (not correct or taken_incorrect <= ratio * len(mixed))
        mixed.append((incorrect if take_incorrect else correct).pop(0))
        taken_incorrect += take_incorrect
    return mixed


def progress_path(home: Path, model: str) -> Path:
    return Path(home) / CALIBRATION / f"{model_slug(model)}.progress.jsonl"


def calls_dir(home: Path, model: str) -> Path:
    """Where a calibration's model calls are logged (llm_calls.jsonl)."""
    return Path(home) / CALIBRATION / f"{model_slug(model)}-calls"


def read_progress(path: Path, dataset: str) -> dict[str, ProofOutcome]:
    """The outcomes measured earlier with these checks on this dataset, by proof id; others (older
    checks, another version of the proofs) describe something else and are measured again."""
    outcomes: dict[str, ProofOutcome] = {}
    if not path.is_file():
        return outcomes
    for _, raw in read_json_lines(path):
        try:
            outcome = ProofOutcome(**raw)
        except TypeError:
            continue
        if outcome.stack_version == STACK_VERSION and outcome.dataset == dataset:
            outcomes[outcome.id] = outcome
    return outcomes


def record_progress(path: Path, outcome: ProofOutcome) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    append_line(path, json.dumps(asdict(outcome), ensure_ascii=False))


def forecast(
    proofs: Sequence[LabelledProof],
    max_tokens_out: int,
    price: Callable[[int, int], float | None],
    seconds_per_proof: float | None,
) -> Forecast:
    """The most the checks of `proofs` will use: every proof checked by both checks, every
    answer as long as its cap allows. `price(tokens_in, tokens_out)` is the model's cost."""
    calls = MOST_CALLS_PER_PROOF * len(proofs)
    # The verifier reads the proof's head and tail, the refuter as much as it reads of the whole.
    tokens_in = sum(
        2 * (PROMPT_OVERHEAD_TOKENS + len(proof.problem) // CHARS_PER_TOKEN)
        + (min(len(proof.proof), VERIFIER_EXCERPT_CHARS) + min(len(proof.proof), REFUTER_PROOF_CHARS))
        // CHARS_PER_TOKEN
        for proof in proofs
    )
    tokens_out = calls * max_tokens_out
    return Forecast(
        proofs=len(proofs),
        calls=calls,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        cost_usd=price(tokens_in, tokens_out),
        seconds=None if seconds_per_proof is None else seconds_per_proof * len(proofs),
    )


def pace(outcomes: Iterable[ProofOutcome], model: str) -> float | None:
    """Seconds a proof: measured by this calibration so far, else by the developers' measurement
    of the same model (the bundled calibration), else unknown."""
    measured = [outcome.seconds for outcome in outcomes]
    if measured:
        return sum(measured) / len(measured)
    bundled = BUNDLED_CALIBRATIONS / f"{model_slug(model)}.json"
    if bundled.is_file():
        record = Calibration.model_validate_json(bundled.read_text(encoding="utf-8"))
        proofs = record.incorrect + record.correct
        return record.seconds / proofs if proofs and record.seconds else None
    return None


@dataclass(frozen=True)
class CalibrationPlan:
    """What `lemmata calibrate` will do for one model: the proofs chosen, those measured earlier
    (kept), and the most the others may use."""

    home: Path
    backend: str
    model: str
    dataset: str  # the digest of the shipped proofs
    total: int  # proofs shipped
    chosen: list[LabelledProof]
    earlier: dict[str, ProofOutcome]
    max_tokens_out: int
    prices: PriceTable

    @property
    def progress(self) -> Path:
        return progress_path(self.home, self.model)

    @property
    def todo(self) -> list[LabelledProof]:
        return [proof for proof in self.chosen if proof.id not in self.earlier]

    def price(self, tokens_in: int, tokens_out: int) -> float | None:
        return self.prices.cost(self.backend, self.model, tokens_in, tokens_out)

    def forecast(self) -> Forecast:
        return forecast(self.todo, self.max_tokens_out, self.price, pace(self.earlier.values(), self.model))

    def most_cost(self, proof: LabelledProof) -> float | None:
        """The most the checks of one proof may cost (None: the model has no price)."""
        return forecast([proof], self.max_tokens_out, self.price, None).cost_usd


def plan_calibration(
    home: Path, backend: str, model: str, max_tokens_out: int, prices: PriceTable, limit: int | None = None
) -> CalibrationPlan:
    proofs, dataset = bundled_proofs()
    return CalibrationPlan(
        home=Path(home),
        backend=backend,
        model=model,
        dataset=dataset,
        total=len(proofs),
        chosen=interleaved(proofs)[:limit],
        earlier=read_progress(progress_path(home, model), dataset),
        max_tokens_out=max_tokens_out,
        prices=prices,
    )


def calibration_of(outcomes: Sequence[ProofOutcome], backend: str, model: str) -> Calibration:
    incorrect = [outcome for outcome in outcomes if outcome.label == "incorrect"]
    correct = [outcome for outcome in outcomes if outcome.label == "correct"]
    return Calibration(
        backend=backend,
        model=model,
        stack_version=STACK_VERSION,
        dataset=f"{DATASET_NAME}, {len(outcomes)} human-labelled proofs",
        measured_at=date.today().isoformat(),
        incorrect=len(incorrect),
        correct=len(correct),
        false_accepts=sum(outcome.accepted for outcome in incorrect),
        correct_accepted=sum(outcome.accepted for outcome in correct),
        unreadable=sum(outcome.unreadable for outcome in outcomes),
        calls=sum(outcome.calls for outcome in outcomes),
        seconds=round(sum(outcome.seconds for outcome in outcomes), 1),
    )


def estimate_in_words(calibration: Calibration) -> str:
    """What a `--limit` sample's rates would mean over the whole set: too few proofs earn nothing,
    but a researcher deciding whether to spend on the full measurement wants to know which way it leans."""
    false_rate, correct_rate = calibration.false_accept_rate, calibration.correct_accept_rate
    if false_rate is None or correct_rate is None:
        return "the sample holds only one label: it says nothing yet of how the checks tell right from wrong"
    margin = correct_rate - false_rate
    leaning = false_rate <= MAX_FALSE_ACCEPT_RATE and margin >= MIN_DISCRIMINATION
    verdict = "would earn trust" if leaning else "would not earn trust"
    return (
        f"at these rates the checks {verdict}: {false_rate:.0%} of wrong proofs accepted "
        f"(at most {MAX_FALSE_ACCEPT_RATE:.0%} allowed), {margin * 100:+.0f} points more of the right ones "
        f"({MIN_DISCRIMINATION * 100:.0f} needed)"
    )


def spent(outcomes: Iterable[ProofOutcome]) -> float:
    return sum(outcome.cost_usd or 0.0 for outcome in outcomes)


def forecast_words(plan: Forecast) -> str:
    if not plan.proofs:
        return "nothing left to check"
    cost = (
        "free (this machine)"
        if plan.cost_usd == 0
        else (f"at most {usd(plan.cost_usd)}" if plan.cost_usd is not None else "cost unknown (the model has no price)")
    )
    time_words = (
        f"about {max(1, round(plan.seconds / 60))} min"
        if plan.seconds is not None
        else "time unknown until the first proofs"
    )
    return (
        f"{plan.proofs} proofs, at most {plan.calls} calls, about {plan.tokens_in:,} tokens in and at most "
        f"{plan.tokens_out:,} out; {cost}; {time_words}"
    )
