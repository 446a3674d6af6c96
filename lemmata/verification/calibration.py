"""How far a model's checks are trusted: measured on human-labelled proofs, stored per model.

`lemmata calibrate` (verification/calibrate.py) runs the model checks over the labelled proofs the
package ships and stores what it measured in `$LEMMATA_HOME/calibration/<model>.json` (so does
`bench/verification.py --save-calibration` on other labelled proofs); records measured by the lemmata
developers ship in `calibrations/` beside this module (a user's own record wins). A model whose
checks accepted at most MAX_FALSE_ACCEPT_RATE of the proofs humans judged incorrect, and at least
MIN_DISCRIMINATION more of the correct ones, measured on enough of both with the current checks, is
`calibrated` and can verify. Any other measured model is `not_discriminating`, one never measured
(or measured with older checks) `uncalibrated`: their checks can only fail a proof or leave it
unchecked.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import Field

from lemmata.artifacts import Artifact, Checker, CheckerTrust, calibrate_command, read_artifact, write_artifact
from lemmata.errors import ArtifactError
from lemmata.home_layout import CALIBRATION

#: Raised whenever the checks change (prompts, order, acceptance rules): older measurements then
#: describe other checks, and their models are uncalibrated until measured again.
STACK_VERSION = 1
MAX_FALSE_ACCEPT_RATE = 0.10
#: Correct proofs must be accepted this much more often than incorrect ones: a checker that rejects
#: everything has no false accepts, yet its acceptance says nothing about a proof.
MIN_DISCRIMINATION = 0.20
MIN_INCORRECT_PROOFS = 20
MIN_CORRECT_PROOFS = 10
BUNDLED_CALIBRATIONS = Path(__file__).parent / "calibrations"


class Calibration(Artifact):
    """What `lemmata check` did on labelled proofs with one model: the rates behind its trust."""

    backend: str
    model: str
    stack_version: int = Field(description="the version of the checks measured (STACK_VERSION then)")
    dataset: str = Field(description="the labelled proofs, e.g. 'Open Proof Corpus, 120 proofs'")
    measured_at: str = Field(description="date of the measurement, YYYY-MM-DD")
    incorrect: int = Field(ge=0, description="proofs humans judged incorrect")
    correct: int = Field(ge=0, description="proofs humans judged correct")
    false_accepts: int = Field(ge=0, description="incorrect proofs the checks accepted")
    correct_accepted: int = Field(ge=0, description="correct proofs the checks accepted")
    unreadable: int = Field(0, ge=0, description="checks that answered unreadably or could not run")
    calls: int = Field(0, ge=0)
    seconds: float = Field(0.0, ge=0)

    @property
    def false_accept_rate(self) -> float | None:
        return self.false_accepts / self.incorrect if self.incorrect else None

    @property
    def correct_accept_rate(self) -> float | None:
        return self.correct_accepted / self.correct if self.correct else None

    def trust(self) -> CheckerTrust:
        if self.stack_version != STACK_VERSION:
            return "uncalibrated"
        false_rate, correct_rate = self.false_accept_rate, self.correct_accept_rate
        if (
            self.incorrect >= MIN_INCORRECT_PROOFS
            and self.correct >= MIN_CORRECT_PROOFS
            and false_rate is not None
            and correct_rate is not None
            and false_rate <= MAX_FALSE_ACCEPT_RATE
            and correct_rate - false_rate >= MIN_DISCRIMINATION
        ):
            return "calibrated"
        return "not_discriminating"


def model_slug(model: str) -> str:
    """A file name for a model name ('anthropic/claude-sonnet-4.5' -> 'anthropic-claude-sonnet-4.5')."""
    return re.sub(r"[^a-z0-9._-]+", "-", model.lower()).strip("-.") or "model"


def calibration_path(home: Path, model: str) -> Path:
    return Path(home) / CALIBRATION / f"{model_slug(model)}.json"


def load_calibration(home: Path, model: str) -> Calibration | None:
    """The user's record for `model`, else the bundled one, else None. A corrupt user record is an
    error naming the file: silently falling back could change what counts as verified."""
    for path in (calibration_path(home, model), BUNDLED_CALIBRATIONS / f"{model_slug(model)}.json"):
        if path.is_file():
            return read_artifact(path, Calibration)
    return None


def save_calibration(home: Path, calibration: Calibration) -> Path:
    path = calibration_path(home, calibration.model)
    write_artifact(path, calibration)
    return path


def checker_for(backend: str, model: str, home: Path) -> Checker:
    """The checker a run's checks are made by, with the trust its measurement gives it."""
    try:
        calibration = load_calibration(home, model)
    except ArtifactError as exc:
        raise ArtifactError(f"{exc}; remove it or measure again with {calibrate_command(backend, model)}") from None
    if calibration is None:
        return Checker(backend=backend, model=model, trust="uncalibrated")
    return Checker(
        backend=backend,
        model=model,
        trust=calibration.trust(),
        false_accept_rate=calibration.false_accept_rate,
        correct_accept_rate=calibration.correct_accept_rate,
        measured_on=f"{calibration.dataset}, {calibration.measured_at}"
        + (
            ""
            if calibration.stack_version == STACK_VERSION
            else f" (with checks of version {calibration.stack_version}; these are version {STACK_VERSION})"
        ),
    )


def trust_in_words(checker: Checker, *, how_to_measure: bool = True) -> str:
    """One sentence on what the checker's verdicts are worth, for the paper, cards and `lemmata check`;
    for an unmeasured checker, the command that measures it (unless `how_to_measure` is False:
    the Settings tab shows it beside its own button)."""
    if checker.trust == "calibrated":
        return (
            f"Checked by {checker.model}, whose checks accepted {_percent(checker.false_accept_rate)} of the "
            f"proofs humans judged incorrect ({checker.measured_on})."
        )
    if checker.trust == "not_discriminating":
        return (
            f"The checks of {checker.model} accepted {_percent(checker.false_accept_rate)} of the proofs humans "
            f"judged incorrect and {_percent(checker.correct_accept_rate)} of the correct ones "
            f"({checker.measured_on}): they do not tell wrong proofs from right ones, so they verify nothing; "
            "they can only reject a proof."
        )
    measured = f" (measured only {checker.measured_on})" if checker.measured_on else ""
    how = f" Measure them with {calibrate_command(checker.backend, checker.model)}." if how_to_measure else ""
    return (
        f"The checks of {checker.model} have not been measured on human-labelled proofs{measured}, so they "
        f"verify nothing; they can only reject a proof.{how}"
    )


def without_trust(words: str, checker: Checker, instead: str) -> str:
    """`words` (a lemma's verification) with the sentence on its checker's trust replaced by
    `instead`: the paper and the cards say it once for all lemmas. verification_in_words joins its
    parts without their final period, so the sentence is looked for without it."""
    return words.replace(trust_in_words(checker).rstrip(". "), instead)


def _percent(rate: float | None) -> str:
    return "an unknown share" if rate is None else f"{100 * rate:.0f}%"
