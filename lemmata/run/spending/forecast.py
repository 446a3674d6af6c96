"""What a stage will use before it starts: calls, tokens and cost (issue 26).

A forecast learns from this machine's newest earlier runs (their `llm_calls.jsonl`), newer runs
weighing more: what each role used in each stage. The proofs and the experiment grow with the
lemmas, so those calls are counted per lemma and scaled by this run's lemma count (the plan's, once
there is one; before it, the middle count of the earlier runs; for the experiment, the lemmas it
will test). No role is expected to make more calls than this run allows it turns. A machine with
no earlier run uses a bundled prior, measured on lemmata's recorded runs (forecast_prior.yaml),
and says so. The tokens are priced at this run's models (llm/prices.py); cache reads are priced as
fresh input, so a cached provider run costs at most the forecast on that account.

Each stage's forecast is written once, before its first job, to `forecasts.jsonl`
(run/spending/stage_boundary.py); the driver, the cards, `lemmata status` and the Live tab read it from there.
"""

from __future__ import annotations

import copy
import logging
import statistics
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sized
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from lemmata import layout
from lemmata.artifacts import Experiment, StageForecast, Theory, TheoryPlan, read_artifact
from lemmata.errors import ArtifactError
from lemmata.home_layout import RUNS
from lemmata.jsonl import read_json_lines
from lemmata.llm.calllog import call_tokens, read_call_records
from lemmata.llm.prices import usd
from lemmata.run.events import TailReader
from lemmata.run.pipeline import STAGES
from lemmata.run.spending.costs import REWRITE_STAGE, CostSummary, stage_of_scope

log = logging.getLogger(__name__)

#: An artifact kind read for a count.
A = TypeVar("A", bound=BaseModel)

#: The stages a forecast is made for: those whose jobs may call the model.
FORECAST_STAGES = tuple(stage.name for stage in STAGES if stage.name != "theory_review_gate")
#: The stages whose calls grow with the lemmas: the proofs, and the experiment's checks.
PER_LEMMA_STAGES = frozenset({"theory", "experiment"})
#: How many earlier runs a forecast reads at most (the newest).
HISTORY_RUNS = 20
#: Each earlier run weighs this much less than the next newer one. Measured (bench/forecast_error.py):
#: on the recorded runs, where what a stage calls changed between lemmata versions, it took the
#: experiment's cost error from 101% (an equal mean) to 64%; a smaller weight did better there, but
#: would let one odd run set the forecast nearly alone.
RECENCY_WEIGHT = 0.5
PROVE_SCOPE = "prove_lemma:"
#: The roles whose turns are allowed per lemma (the others' per stage).
PER_LEMMA_ROLES = frozenset({"prover", "verifier", "refuter", "experiment"})

#: A role's tokens in USD (None: its model has no price).
Pricing = Callable[[str, int, int], float | None]


@dataclass
class Usage:
    calls: float = 0.0
    tokens_in: float = 0.0
    tokens_out: float = 0.0

    def add(self, other: Usage, scale: float = 1.0) -> None:
        self.calls += other.calls * scale
        self.tokens_in += other.tokens_in * scale
        self.tokens_out += other.tokens_out * scale


#: stage -> role -> usage
StageUsage = dict[str, dict[str, Usage]]


def _usage_table() -> StageUsage:
    return defaultdict(lambda: defaultdict(Usage))


@dataclass
class RecordedRun:
    """What one earlier run used, per stage and role: `fixed` does not grow with the lemmas,
    `per_lemma` does (its totals, for `lemmas` lemmas)."""

    model: str  # "backend/model" of its calls
    lemmas: int
    stages: frozenset[str]  # the stages it finished: only those are learned from
    fixed: StageUsage = field(default_factory=_usage_table)
    per_lemma: StageUsage = field(default_factory=_usage_table)
    tested: int | None = None  # the lemmas its experiment tested (None: not known, as many as it had)

    def usage(self, stage: str, lemmas: int) -> dict[str, Usage]:
        """Its usage of `stage` had it had `lemmas` lemmas (to test, for the experiment), by role."""
        divisor = self.tested if stage == "experiment" and self.tested is not None else self.lemmas
        roles: dict[str, Usage] = defaultdict(Usage)
        for role, used in self.fixed.get(stage, {}).items():
            roles[role].add(used)
        for role, used in self.per_lemma.get(stage, {}).items():
            roles[role].add(used, lemmas / max(1, divisor))
        return roles


def recorded_run(
    records: Iterable[Mapping[str, Any]],
    finished: Iterable[str] | None = None,
    tested: int | None = None,
    proved: int | None = None,
) -> RecordedRun:
    """A run from its call records; `finished` names its finished stages (None: every stage with
    a call, for a bare recorded log), `tested` how many lemmas its experiment tested, `proved` how
    many its theory proved (None: not known; then the lemmas with a prover call, which leaves out
    those a machine proved with no call). A rewrite's and the questions' calls are left out."""
    fixed, per_lemma = _usage_table(), _usage_table()
    lemma_ids: set[str] = set()
    models: dict[str, int] = defaultdict(int)
    for record in records:
        scope = str(record.get("scope", ""))
        stage = stage_of_scope(scope)
        if stage == REWRITE_STAGE:
            continue
        if scope.startswith(PROVE_SCOPE):
            lemma_ids.add(scope[len(PROVE_SCOPE) :].split(":", 1)[0])
        models[f"{record.get('backend', '?')}/{record.get('model', '?')}"] += 1
        table = (
            per_lemma if stage in PER_LEMMA_STAGES and (scope.startswith(PROVE_SCOPE) or stage != "theory") else fixed
        )
        table[stage][str(record.get("role", "?"))].add(Usage(1, *call_tokens(record)))
    lemmas = max(len(lemma_ids), proved or 0)
    if lemmas == 0:  # nothing to scale by: what it used is all fixed
        for stage, roles in per_lemma.items():
            for role, used in roles.items():
                fixed[stage][role].add(used)
        per_lemma = _usage_table()
    done = frozenset(finished) if finished is not None else frozenset(fixed) | frozenset(per_lemma)
    model = max(models, key=models.__getitem__) if models else "?"
    return RecordedRun(model, lemmas, done, fixed, per_lemma, tested)


def run_history(home: Path, exclude: Path | None = None, limit: int = HISTORY_RUNS) -> list[RecordedRun]:
    """The newest earlier runs of the data directory `home`, each with the stages it finished."""
    logs = [
        path
        for path in (Path(home) / RUNS).glob(f"*/{layout.LLM_CALLS}")
        if exclude is None or path.parent.resolve() != Path(exclude).resolve()
    ]
    logs.sort(key=_modified, reverse=True)
    history = []
    for path in logs[:limit]:
        finished = [stage.name for stage in STAGES if (path.parent / stage.artifact).exists()]
        try:
            history.append(
                recorded_run(read_call_records(path), finished, tested_lemmas(path.parent), proved_lemmas(path.parent))
            )
        except OSError as error:  # a run being deleted, a file not ours to read: the others still teach
            log.warning("%s: not read for the forecast: %s", path, error)
    return history


def proved_lemmas(run_dir: Path) -> int | None:
    """How many lemmas a finished run's theory holds; None when it has no readable theory."""
    return _count(run_dir / layout.THEORY, Theory, lambda theory: theory.lemmas)


def tested_lemmas(run_dir: Path) -> int | None:
    """How many lemmas a finished run's experiment tested; None when it has no readable record."""
    return _count(run_dir / layout.EXPERIMENT, Experiment, lambda experiment: experiment.checks)


def _count(path: Path, kind: type[A], items: Callable[[A], Sized]) -> int | None:
    try:
        return len(items(read_artifact(path, kind)))
    except (OSError, ArtifactError):
        return None


def _modified(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # gone since it was listed
        return 0.0


@dataclass(frozen=True)
class Prior:
    """The bundled prior: per stage and role, the calls and tokens of a run and of each lemma."""

    lemmas: int
    run: RecordedRun


@lru_cache(maxsize=1)
def bundled_prior() -> Prior:
    """Read once per process (it is package data); its tables are only read."""
    raw = yaml.safe_load((files("lemmata.run.spending") / "forecast_prior.yaml").read_text(encoding="utf-8"))
    run = RecordedRun(str(raw["measured_on"]), int(raw["lemmas"]), frozenset(FORECAST_STAGES))
    for part, table in (("fixed", run.fixed), ("per_lemma", run.per_lemma)):
        for stage, roles in (raw.get(part) or {}).items():
            for role, (calls, tokens_in, tokens_out) in roles.items():
                table[stage][role] = Usage(calls, tokens_in, tokens_out)
    return Prior(int(raw["lemmas"]), run)


def forecast_stage(
    stage: str,
    history: list[RecordedRun],
    model: str,
    pricing: Pricing,
    lemmas: int | None = None,
    prior: Prior | None = None,
    turns: Mapping[str, int] | None = None,
) -> StageForecast:
    """The forecast of `stage` for a run on `model` ("backend/model") with `lemmas` lemmas (None:
    not known yet), from the earlier runs (`history`, newest first) that finished the stage: those
    on the same model when there are any, else all of them, else the prior. Newer runs weigh more.
    `turns` caps a role's calls (per lemma for PER_LEMMA_ROLES) at the turns this run allows."""
    learned = [run for run in history if stage in run.stages]
    same_model = [run for run in learned if run.model == model]
    runs = same_model or learned
    from_prior = not runs
    if not from_prior:
        basis = f"{plural(len(runs), 'earlier run')} on this machine" + (
            "" if same_model else ", of other models, whose token counts may differ"
        )
    else:
        prior = prior or bundled_prior()
        runs, basis = [prior.run], "lemmata's bundled prior, as no run on this machine came before"
    scaled = stage in PER_LEMMA_STAGES
    count = lemmas if lemmas is not None else int(statistics.median_low([run.lemmas for run in runs]))
    if scaled:
        basis += f"; {plural(count, 'lemma')}" + ("" if lemmas is not None else ", as no plan is made yet")
    weights = [RECENCY_WEIGHT**age for age in range(len(runs))]
    roles: dict[str, Usage] = defaultdict(Usage)
    for run, weight in zip(runs, weights, strict=True):
        for role, used in run.usage(stage, count).items():
            roles[role].add(used, weight / sum(weights))
    if cap_at_turns(roles, turns or {}, count):
        basis += "; capped at the turns this run allows"
    costs = [pricing(role, round(used.tokens_in), round(used.tokens_out)) for role, used in roles.items()]
    return StageForecast(
        stage=stage,
        made_at=time.time(),
        calls=round(sum(used.calls for used in roles.values())),
        tokens_in=round(sum(used.tokens_in for used in roles.values())),
        tokens_out=round(sum(used.tokens_out for used in roles.values())),
        cost_usd=None if None in costs else round(sum(c for c in costs if c is not None), 6),
        lemmas=count if scaled else None,
        runs=0 if from_prior else len(runs),
        basis=basis,
    )


def cap_at_turns(roles: dict[str, Usage], turns: Mapping[str, int], lemmas: int) -> bool:
    """Each role's calls at most its turns allowed (times the lemmas for PER_LEMMA_ROLES), its
    tokens cut in proportion: earlier runs may have allowed more. Whether any was capped."""
    capped = False
    for role, used in roles.items():
        if role not in turns:
            continue
        most = turns[role] * (lemmas if role in PER_LEMMA_ROLES else 1)
        if used.calls > most:
            share = most / used.calls
            roles[role] = Usage(most, used.tokens_in * share, used.tokens_out * share)
            capped = True
    return capped


def planned_lemmas(run_dir: Path) -> int | None:
    """This run's lemma count: its theory's, else its plan's; None before the plan."""
    theory, plan = Path(run_dir) / layout.THEORY, Path(run_dir) / layout.PLAN
    if theory.exists():
        return len(read_artifact(theory, Theory).lemmas)
    if plan.exists():
        return len(read_artifact(plan, TheoryPlan).lemmas)
    return None


def read_forecasts(run_dir: Path) -> dict[str, StageForecast]:
    """The forecast of each stage that has one; the first, should two jobs have raced to write it."""
    path = Path(run_dir) / layout.FORECASTS
    forecasts: dict[str, StageForecast] = {}
    for _, raw in read_json_lines(path) if path.is_file() else []:
        forecast = parse_forecast(raw, path)
        if forecast is not None:
            forecasts.setdefault(forecast.stage, forecast)
    return forecasts


def parse_forecast(raw: Mapping[str, Any], path: Path) -> StageForecast | None:
    """A line of `forecasts.jsonl`; None (logged) for one that is not a forecast (a hand edit)."""
    try:
        return StageForecast.model_validate(raw)
    except ValidationError:
        log.warning("%s: a line that is not a forecast, skipped: %.200s", path, raw)
        return None


@dataclass
class StageActual:
    """What a stage's calls used so far."""

    calls: int = 0
    tokens: int = 0
    cost: CostSummary = field(default_factory=CostSummary)


def actual_by_stage(run_dir: Path) -> dict[str, StageActual]:
    """The run's calls by first-run stage (a rewrite's and the questions' left out). Each call log
    is read once, then only what was appended since (`_StageTally`): a status poll asks for this
    once per stage card, and parsing a 10 MB log took 136-224 ms each time (issue 53)."""
    path = (Path(run_dir) / layout.LLM_CALLS).resolve()
    with _TALLIES_LOCK:
        tally = _TALLIES.get(path)
        if tally is None:
            tally = _TALLIES[path] = _StageTally(path)
        return tally.read()


class _StageTally:
    """actual_by_stage of one call log, brought up to date from where it last stopped. A log that
    is not the one read before (another file, shorter, or other bytes where its read part ended:
    rewritten, not appended to) is read again from its start."""

    #: Bytes before the offset compared at each read: a log rewritten in place differs there.
    SEAM = 64

    def __init__(self, path: Path) -> None:
        self.path = path
        self._reset(None)

    def _reset(self, identity: tuple[int, int] | None) -> None:
        self.identity = identity
        self.reader = TailReader(self.path)
        self.seam = b""
        self.actual: dict[str, StageActual] = defaultdict(StageActual)

    def _seam_now(self) -> bytes:
        with open(self.path, "rb") as handle:
            handle.seek(max(0, self.reader.offset - self.SEAM))
            return handle.read(min(self.SEAM, self.reader.offset))

    def read(self) -> dict[str, StageActual]:
        try:
            stat = self.path.stat()
            identity = (stat.st_dev, stat.st_ino)
            if identity != self.identity or stat.st_size < self.reader.offset or self._seam_now() != self.seam:
                self._reset(identity)
            records = self.reader.read_new()
            self.seam = self._seam_now()
        except FileNotFoundError:
            self._reset(None)
            return {}
        for record in records:
            stage = stage_of_scope(str(record.get("scope", "")))
            if stage != REWRITE_STAGE:
                used = self.actual[stage]
                used.calls += 1
                used.tokens += sum(call_tokens(record))
                used.cost.add_record(record)
        return copy.deepcopy(dict(self.actual))  # the callers' to change, not the tally's


_TALLIES: dict[Path, _StageTally] = {}
_TALLIES_LOCK = threading.Lock()


def forecast_text(forecast: StageForecast) -> str:
    """ "20 calls, 35,120 tokens, $0.0490 (from 3 earlier runs on this machine; 4 lemmas)"."""
    cost = "cost unknown (a model without a price)" if forecast.cost_usd is None else usd(forecast.cost_usd)
    return f"{plural(forecast.calls, 'call')}, {forecast.tokens:,} tokens, {cost} (from {forecast.basis})"


def forecast_against_actual(forecast: StageForecast, actual: StageActual | None) -> str:
    """ "forecast 20 calls, 35,120 tokens, $0.0490; used 19 calls, 33,002 tokens, $0.0461"."""
    cost = "unknown" if forecast.cost_usd is None else usd(forecast.cost_usd)
    used = actual or StageActual()
    return (
        f"forecast {plural(forecast.calls, 'call')}, {forecast.tokens:,} tokens, {cost}; "
        f"used {plural(used.calls, 'call')}, {used.tokens:,} tokens, {used.cost.text if used.calls else '$0'}"
    )


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' * (count != 1)}"
