"""`lemmata calibrate`: measure how often a checking model accepts proofs humans judged wrong,
and store the trust its checks earn (verification/calibrate.py)."""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from lemmata import layout
from lemmata.cli.errors import reports_errors
from lemmata.cli.options import Dollars
from lemmata.errors import LemmataError, ProviderError, UserError
from lemmata.settings import Settings, lemmata_home, load_environment

if TYPE_CHECKING:
    from lemmata.agents.client import LLMClient
    from lemmata.verification.calibrate import CalibrationPlan, LabelledProof, ProofOutcome


class CalibrationStopped(LemmataError):
    """Stopped before every proof was checked (Ctrl+C, the budget, the provider): what was measured is kept."""

    exit_code = 1


@click.command()
@click.option(
    "--backend", default=None, metavar="NAME", help="the backend to measure (default: LLM_BACKEND, as a run picks it)"
)
@click.option(
    "--model", default=None, metavar="MODEL", help="the model to measure (default: the backend's active model)"
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="check only the first N proofs (both labels mixed): a quick estimate, printed and not stored",
)
@click.option("--yes", "-y", is_flag=True, help="start without asking after the forecast")
@click.option(
    "--budget",
    "budget_usd",
    type=Dollars(),
    default=None,
    metavar="USD",
    help="start without asking, and stop before a proof whose checks could pass this many dollars",
)
@click.option("--again", is_flag=True, help="forget the proofs measured earlier and check them all anew")
@reports_errors
def calibrate(
    backend: str | None, model: str | None, limit: int | None, yes: bool, budget_usd: float | None, again: bool
) -> None:
    """Measure the checking model on 120 human-labelled proofs and store the trust it earns.

    The proofs (Open Proof Corpus, 60 judged correct and 60 incorrect by human graders) ship
    with lemmata. Each goes through the model checks a lemma's proof gets; the model is
    `calibrated`, and its checks can make a lemma `reviewed`, when they accepted at most 10% of
    the incorrect proofs and at least 20 points more of the correct ones; otherwise its checks
    verify nothing (docs/verification.md#trust). The forecast (calls, tokens, cost, time) is
    printed first. Each proof's outcome is kept as it comes: after Ctrl+C or a stop, the same
    command goes on where it stopped, asking no proof again. Exit status: 0 measured (whatever
    the trust), 1 stopped before the end, 2 an error.
    """
    from lemmata.agents.client import make_client
    from lemmata.llm.interrupted_calls import VARIABLE as INTERRUPTED_CALLS
    from lemmata.llm.prices import load_prices
    from lemmata.llm.resolve import choose_backend
    from lemmata.verification.calibrate import DATASET_NAME, calls_dir, forecast_words, plan_calibration, progress_path

    environ = load_environment()
    if backend:
        environ["LLM_BACKEND"] = backend
    if model:
        environ["LEMMATA_ACTIVE_MODEL"] = model
    settings = Settings.from_environment(environ)
    choice = choose_backend(settings, environ)
    model_name = choice.models.active
    home = lemmata_home(environ)
    log_dir = calls_dir(home, model_name)
    if again:
        progress_path(home, model_name).unlink(missing_ok=True)
        (log_dir / layout.LLM_CALLS).unlink(missing_ok=True)
    prices = load_prices(home)
    if budget_usd is not None:
        from lemmata.run.spending.budget import Budget, check_priced

        check_priced(Budget(budget_usd, None), choice.name, (model_name,), prices, home)
    plan = plan_calibration(home, choice.name, model_name, settings.MAX_TOKENS_VERIFIER, prices, limit)
    chosen, todo = plan.chosen, plan.todo
    kind = "a quick estimate on" if limit else "calibrating on"
    click.echo(
        f"lemmata calibrate: model {model_name} ({choice.name}), {kind} {len(chosen)} of the {plan.total} "
        f"human-labelled proofs of the {DATASET_NAME}"
        + (f"; {len(chosen) - len(todo)} measured earlier, kept" if len(todo) < len(chosen) else ""),
        err=True,
    )
    click.echo(f"forecast: {forecast_words(plan.forecast())}", err=True)
    if limit:
        click.echo("a --limit sample is too small to earn trust: its figures are printed, not stored", err=True)
    if todo and not yes and budget_usd is None:
        if not sys.stdin.isatty():
            raise UserError("no terminal to ask whether to start: pass --yes (or --budget USD)")
        if not click.confirm("Start?", default=True):
            click.echo("nothing measured", err=True)
            sys.exit(1)
    if choice.name == "embedded":
        from lemmata.cli.main import announced_embedded_model

        announced_embedded_model(settings)
    log_dir.mkdir(parents=True, exist_ok=True)
    calls = log_dir / layout.LLM_CALLS
    if calls.is_file():  # the answers of a proof cut short: given again, not asked again
        environ[INTERRUPTED_CALLS] = str(calls)
    client = make_client(settings, environ, log_dir)
    outcomes = dict(plan.earlier)
    try:
        with _signals_stop_the_calibration():
            measure(client, settings, plan, outcomes, budget_usd)
    except KeyboardInterrupt:
        raise CalibrationStopped(stopped_words(outcomes, chosen, "interrupted")) from None
    except ProviderError as exc:
        raise CalibrationStopped(stopped_words(outcomes, chosen, str(exc).rstrip("."))) from None
    report(choice.name, model_name, [outcomes[proof.id] for proof in chosen], stored=limit is None, home=home)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def _signals_stop_the_calibration() -> Iterator[None]:
    """Ctrl+C and a plain `kill` stop the calibration, keeping what it measured. Installed, not
    inherited: a process started in the background of a script inherits an ignored SIGINT, and
    Python then never raises KeyboardInterrupt (the server's stop and a user's `kill -INT` were lost)."""
    previous = {signum: signal.signal(signum, _stop) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _stop(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def measure(
    client: LLMClient,
    settings: Settings,
    plan: CalibrationPlan,
    outcomes: dict[str, ProofOutcome],
    budget_usd: float | None,
) -> None:
    """Check each proof of `plan.todo`, keeping its outcome at once (a progress line each); with a
    budget, stop before a proof whose checks could pass it."""
    from lemmata.artifacts import Checker
    from lemmata.llm.calllog import read_call_records
    from lemmata.verification.calibrate import (
        MOST_CALLS_PER_PROOF,
        ProofOutcome,
        record_progress,
        spent,
    )
    from lemmata.verification.user_proof import check_scope, check_user_proof

    # The trust is what is being measured: the checks run as those of an unmeasured model.
    checker = Checker(backend=plan.backend, model=plan.model, trust="uncalibrated")
    calls_log = client.call_log.path if client.call_log is not None else None
    for proof in plan.todo:
        if budget_usd is not None and spent(outcomes.values()) + (plan.most_cost(proof) or 0.0) > budget_usd:
            raise CalibrationStopped(
                stopped_words(outcomes, plan.chosen, f"the next proof could pass the budget of ${budget_usd:g}")
                + " with a larger --budget"
            )
        scope = check_scope(proof.problem, proof.proof)
        client.scope = scope  # one client (one loaded model) for all proofs; each its own scope in the log
        started_wall, started = time.time(), time.monotonic()
        result = check_user_proof(client, proof.problem, proof.proof, settings, checker)
        costs: list[float | None] = [
            record.get("cost_usd")
            for record in (read_call_records(calls_log) if calls_log is not None else ())
            if record.get("scope") == scope and record.get("timestamp", 0) >= started_wall
        ]
        outcome = ProofOutcome(
            id=proof.id,
            label=proof.label,
            accepted=result.accepted,
            unreadable=any(step.outcome == "could_not_run" for step in result.checks),
            calls=min(result.calls, MOST_CALLS_PER_PROOF),
            seconds=round(time.monotonic() - started, 1),
            cost_usd=None if None in costs else sum(cost or 0.0 for cost in costs),
            dataset=plan.dataset,
        )
        record_progress(plan.progress, outcome)
        outcomes[proof.id] = outcome
        done = sum(1 for item in plan.chosen if item.id in outcomes)
        verdict = "accepted" if outcome.accepted else ("unreadable" if outcome.unreadable else "rejected")
        click.echo(f"[{done}/{len(plan.chosen)}] {proof.label:9} proof {verdict} ({outcome.seconds:.0f} s)", err=True)


def stopped_words(outcomes: dict[str, ProofOutcome], chosen: list[LabelledProof], why: str) -> str:
    done = sum(1 for proof in chosen if proof.id in outcomes)
    return (
        f"calibration stopped after {done} of {len(chosen)} proofs ({why}); what was measured is kept: "
        "run the same command to go on"
    )


def report(backend: str, model: str, outcomes: list[ProofOutcome], *, stored: bool, home: Path) -> None:
    from lemmata.verification.calibrate import calibration_of, estimate_in_words
    from lemmata.verification.calibration import MAX_FALSE_ACCEPT_RATE, MIN_DISCRIMINATION, save_calibration

    calibration = calibration_of(outcomes, backend, model)
    false_rate, correct_rate = calibration.false_accept_rate, calibration.correct_accept_rate
    click.echo(
        f"accepted {calibration.false_accepts} of {calibration.incorrect} proofs humans judged incorrect"
        f" ({_percent(false_rate)}) and {calibration.correct_accepted} of {calibration.correct} correct ones"
        f" ({_percent(correct_rate)}); {calibration.unreadable} unreadable answers; "
        f"{calibration.calls} calls in {calibration.seconds:.0f} s"
    )
    if not stored:
        click.echo(estimate_in_words(calibration))
        click.echo(
            "a quick estimate, not stored: run `lemmata calibrate` without --limit to measure all proofs "
            "(those checked now are kept)"
        )
        return
    path = save_calibration(home, calibration)
    trust = calibration.trust()
    if trust == "calibrated":
        meaning = (
            f"calibrated: the checks of {model} can make a lemma `reviewed` (they accepted at most "
            f"{MAX_FALSE_ACCEPT_RATE:.0%} of the wrong proofs and told right from wrong by at least "
            f"{MIN_DISCRIMINATION:.0%})"
        )
    else:
        meaning = (
            f"not discriminating: the checks of {model} do not tell wrong proofs from right ones well enough "
            f"(at most {MAX_FALSE_ACCEPT_RATE:.0%} of wrong proofs accepted and at least "
            f"{MIN_DISCRIMINATION:.0%} more of the right ones are needed), so they verify nothing; they can "
            "only reject a proof, and only machine checks verify"
        )
    click.echo(f"trust: {meaning}; stored in {path}")


def _percent(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.0f}%"
