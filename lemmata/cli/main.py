"""`lemmata`: run the research pipeline, inspect runs, list agent roles."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

import click

from lemmata import __version__
from lemmata.agents.roles import ROLES
from lemmata.cli.calibrate_cmd import calibrate
from lemmata.cli.check_cmd import check
from lemmata.cli.driving import drive
from lemmata.cli.errors import reports_errors
from lemmata.cli.model_cmd import model
from lemmata.cli.options import budget_options, profile_option
from lemmata.cli.paper_cmd import ask, review, rewrite
from lemmata.cli.plugins_cmd import plugins
from lemmata.cli.skills_cmd import install_skills
from lemmata.errors import LemmataError, UserError
from lemmata.home_layout import RUNS
from lemmata.llm.prices import usd
from lemmata.private_files import make_data_home_private, make_files_private
from lemmata.profiles import DEFAULT_PROFILE
from lemmata.run.create import MAX_PAPERS, PAPERS_TASK, create_new_run
from lemmata.run.finished import damage_advice, damaged_files
from lemmata.run.gates import waiting_gate
from lemmata.run.outcome import outcome_of
from lemmata.run.pausing import request_pause
from lemmata.run.pipeline import artifact_states, stage_states
from lemmata.run.record import DataHome, is_run_active, live_status, load_record, validate_session_id
from lemmata.run.spending.budget import Budget, change_budget
from lemmata.run.spending.costs import run_costs
from lemmata.run.spending.forecast import actual_by_stage, forecast_against_actual, read_forecasts
from lemmata.run.versions import paper_versions
from lemmata.settings import Settings, lemmata_home, load_environment, working_directory_dotenv


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="lemmata")
def cli() -> None:
    """lemmata turns a research task into a LaTeX paper with checked proofs.

    Settings come from environment variables and .env files (see the README).
    The model backend is LLM_BACKEND; unset, it is the Anthropic API when VENDORA_API_KEY
    (or ANTHROPIC_API_KEY, or a login of Anthropic's CLI) exists, else the embedded offline
    model (`lemmata model status`).
    """
    # Before anything is written: the data home is for this user alone (lemmata/private_files.py).
    make_files_private()
    with suppress(OSError, ValueError, LemmataError):  # an unreadable .env or home: the command reports it
        home = lemmata_home()
        working_directory_dotenv(home)  # names, once, what ./.env may not set (every command, `status` too)
        make_data_home_private(home)


def run_options(command: Callable[..., Any]) -> Callable[..., Any]:
    command = click.option(
        "--output",
        "-o",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="the folder the paper, its PDF and references.bib are copied to (default: "
        "results/<run id>); made when missing, refused before any model call when it is not yours "
        "or writable by others; when another run's, or holding a paper, the run's go to DIR/<run id>/",
    )(command)
    command = click.option(
        "--gate",
        type=click.Choice(["none", "auto", "human"]),
        default=None,
        help="which reviews ask in this run: none, auto (once a lemma is not verified), human "
        "(after every stage); the theory review always asks (default: GATE_MODE)",
    )(command)
    command = click.option(
        "--jobs",
        "-j",
        type=click.IntRange(1, 64),
        default=None,
        help="parallel jobs, e.g. lemmas proved at once (default: 10, or the cores if more; "
        "2 on the embedded model; on a cluster, the profile's)",
    )(command)
    return budget_options(profile_option(command))


def domain_option(command: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--domain",
        "-d",
        default="",
        metavar="DOMAIN",
        help="the research domain, e.g. 'multi-armed bandits': picks the domain plugin "
        "(`lemmata plugins`), its skills, and the memories of earlier runs in it",
    )(command)


@cli.command()
@click.argument("task")
@domain_option
@run_options
@reports_errors
def prove(task: str, domain: str, output: Path | None, gate: str | None, jobs: int | None, **choices: Any) -> None:
    """Prove TASK, a statement in words or LaTeX, and write the paper."""
    start_run("prove", task, output, gate, jobs, choices, {"domain": domain.strip()} if domain.strip() else {})


@cli.command()
@click.argument("domain")
@run_options
@reports_errors
def explore(domain: str, output: Path | None, gate: str | None, jobs: int | None, **choices: Any) -> None:
    """Explore DOMAIN: find a direction worth proving, prove it, write the paper.
    DOMAIN is also the run's research domain (plugin, skills, memories)."""
    start_run("explore", domain, output, gate, jobs, choices, {"domain": domain})


@cli.command("from-papers")
@click.argument("paper_ids", nargs=-1, required=True)
@domain_option
@run_options
@reports_errors
def from_papers(
    paper_ids: tuple[str, ...], domain: str, output: Path | None, gate: str | None, jobs: int | None, **choices: Any
) -> None:
    """Start from PAPER_IDS (1 to 20 arXiv ids, DOIs or titles) and build on them."""
    if len(paper_ids) > MAX_PAPERS:
        raise click.UsageError(f"from-papers takes 1 to {MAX_PAPERS} paper ids, not {len(paper_ids)}")
    if not all(paper_id.strip() for paper_id in paper_ids):
        raise click.UsageError("a paper id is empty: give arXiv ids, DOIs or titles")
    start_run(
        "from-papers",
        PAPERS_TASK + ", ".join(paper_ids),
        output,
        gate,
        jobs,
        choices,
        {"paper_ids": list(paper_ids), **({"domain": domain.strip()} if domain.strip() else {})},
    )


def start_run(
    mode: str,
    task: str,
    output: Path | None,
    gate: str | None,
    jobs: int | None,
    choices: dict[str, Any],
    task_fields: dict[str, Any],
) -> None:
    """A new run, driven here; `choices` are the options --profile, --budget and --budget-tokens."""
    profile = choices["profile"]
    if not task.strip():
        raise click.UsageError("the task is empty: say what to prove or explore")
    new = create_new_run(
        DataHome.from_environment(),
        mode,
        task,
        output,
        gate,
        load_environment(),
        announced_embedded_model,
        profile=profile,
        budget=Budget(choices["budget_usd"], choices["budget_tokens"]),
        results=Path("results"),
        **task_fields,
    )
    where = f"; jobs under the {profile} profile" if profile and profile != DEFAULT_PROFILE else ""
    click.echo(
        f"lemmata {__version__}: run {new.run_dir.name} with backend {new.backend} "
        f"(model {new.model}); run directory {new.run_dir}{where}",
        err=True,
    )
    if new.output_note:
        click.echo(f"lemmata: {new.output_note}", err=True)
    drive(new.run_dir, jobs)


def announced_embedded_model(settings: Settings) -> Path:
    """The embedded model, said first (so nobody mistakes the small offline model's paper for a
    provider's), assembled on first use with a progress bar."""
    from lemmata.cli.model_cmd import installed_model_with_progress

    why = "" if settings.LLM_BACKEND else "no provider credential found: "
    click.echo(
        f"lemmata: {why}using the embedded offline model, small and slow: its papers are demos "
        "(set LLM_BACKEND, or VENDORA_API_KEY, to use a provider)",
        err=True,
    )
    return installed_model_with_progress(settings)


@cli.command()
@click.argument("session_id")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=None, help="parallel jobs")
@profile_option
@click.option(
    "--wait-at-gates",
    is_flag=True,
    help="stop at a gate with status waiting instead of asking here; the decision comes from "
    "the browser (what `lemmata serve` starts runs with)",
)
@budget_options
@reports_errors
def resume(
    session_id: str,
    jobs: int | None,
    profile: str | None,
    wait_at_gates: bool,
    budget_usd: float | None,
    budget_tokens: int | None,
) -> None:
    """Continue run SESSION_ID (or its unfinished rewrite); finished stages are not recomputed.
    --budget and --budget-tokens replace the run's budget (one paused by its budget goes on).
    A completed run is finished: resume delivers its paper when that failed, else changes nothing."""
    from lemmata.run.finished import resume_completed
    from lemmata.run.rewrite import pending_rewrite

    Settings.from_environment()
    data_home = DataHome.from_environment()
    run_dir = data_home.existing_run_dir(session_id)
    if load_record(run_dir).status == "completed" and pending_rewrite(run_dir) is None:
        click.echo(resume_completed(run_dir))  # the delivered paper's path; UserError when nothing to do
        return
    if budget_usd is not None or budget_tokens is not None:
        change_budget(run_dir, data_home.home, Budget(budget_usd, budget_tokens))
    drive(run_dir, jobs, rewrite=pending_rewrite(run_dir) is not None, wait_at_gates=wait_at_gates, profile=profile)


@cli.command()
@click.argument("session_id")
@reports_errors
def pause(session_id: str) -> None:
    """Pause run SESSION_ID at its next stage boundary (running jobs finish first)."""
    run_dir = DataHome.from_environment().existing_run_dir(validate_session_id(session_id))
    if not is_run_active(run_dir):
        record = load_record(run_dir)
        raise UserError(f"run {session_id} is not running (status {live_status(run_dir, record)}): nothing to pause")
    request_pause(run_dir, "command")
    click.echo(
        f"pause requested: run {session_id} stops once its running jobs finish; "
        f"continue it with `lemmata resume {session_id}`"
    )


@cli.command()
@click.argument("session_id", required=False)
@reports_errors
def status(session_id: str | None) -> None:
    """List runs and their cost, or show each stage, every file and the cost of run SESSION_ID."""
    data_home = DataHome.from_environment()
    if session_id is None:
        list_runs(data_home)
    else:
        show_run(data_home.existing_run_dir(validate_session_id(session_id)))


def list_runs(data_home: DataHome) -> None:
    records, damaged = data_home.run_records(), data_home.damaged_runs()
    for run in damaged:
        click.echo(f"{run.session_id:<24} damaged: {run.advice}")
    if not records:
        if not damaged:
            click.echo(f"no runs yet in {data_home.home / RUNS}")
        return
    states = [outcome_of(data_home.run_dir(record.session_id), record).text for record in records]
    costs = [run_costs(data_home.run_dir(record.session_id)).text for record in records]
    width = max(10, *map(len, states))  # the outcome can be longer than a status: the columns stay aligned
    cost_width = max(map(len, costs))
    for record, state, cost in zip(records, states, costs):
        created = time.strftime("%Y-%m-%d %H:%M", time.localtime(record.created))
        click.echo(
            f"{record.session_id:<24} {state:<{width}} {record.mode:<11} {created}  {cost:<{cost_width}}  "
            f"{record.task[:60]}"
        )


def show_run(run_dir: Path) -> None:
    record = load_record(run_dir)
    outcome = outcome_of(run_dir, record)
    click.echo(f"run {record.session_id}: {outcome.text}" + (f" — {record.message}" if record.message else ""))
    if outcome.issues and not all(issue in record.message for issue in outcome.issues):  # older runs' messages
        click.echo(outcome.why)
    if outcome.statuses:
        click.echo(f"statuses: {outcome.statuses}" + (f" ({outcome.evidence})" if outcome.established else ""))
    if record.status == "completed" and (problems := damaged_files(run_dir)):
        click.echo(damage_advice(run_dir, problems))
    click.echo(f"task ({record.mode}): {record.task}")
    failed_rule = record.message.split(":", 1)[0] if record.status == "failed" else None
    if record.status in ("stopped", "paused"):  # a gate question may be what the run waits on
        failed_rule = waiting_gate(run_dir) or None
    for stage, state in stage_states(run_dir, set(), failed_rule):
        click.echo(f"  {stage.name:<20} {state:<8} {stage.artifact}")
    versions = paper_versions(run_dir)
    if versions:
        click.echo("paper versions: " + ", ".join(f"v{n}" for n in versions) + f" (current: v{versions[-1]})")
    click.echo("files:")
    for stage_name, name, state in artifact_states(run_dir):
        click.echo(f"  {name:<34} {state:<10} ({stage_name})")
    costs = run_costs(run_dir)
    click.echo(f"model calls: {costs.calls}, cost {costs.text}")
    for label, parts in (("by stage", costs.by_stage), ("by role", costs.by_role)):
        if parts:
            click.echo(f"  {label}: " + ", ".join(f"{name} {usd(amount)}" for name, amount in parts.items()))
    budget = Budget(record.budget_usd, record.budget_tokens)
    if budget:
        click.echo(f"budget: {budget.text} (`{budget.resume_command(record.session_id)}` changes it)")
    forecasts, actual = read_forecasts(run_dir), actual_by_stage(run_dir)
    if forecasts:
        click.echo("forecasts, made before each stage, and what it used:")
    for name, forecast in forecasts.items():
        click.echo(f"  {name:<20} {forecast_against_actual(forecast, actual.get(name))}")


@cli.command()
@click.argument("session_id")
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="where to write the report (default: report.html in the run directory)",
)
@reports_errors
def report(session_id: str, output: Path | None) -> None:
    """Write Snakemake's self-contained HTML report of run SESSION_ID: its jobs, their times, the rules."""
    from lemmata.run.workflow import report_command, workflow_environment

    run_dir = DataHome.from_environment().existing_run_dir(validate_session_id(session_id))
    target = (output or run_dir / "report.html").resolve()
    done = subprocess.run(
        report_command(run_dir, target),
        cwd=run_dir,
        env=workflow_environment(run_dir),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0 or not target.is_file():
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise LemmataError(f"the report of run {session_id} could not be written: {last}")
    click.echo(str(target))


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="also give each JSON-answering role's answer schema")
@reports_errors
def roles(as_json: bool) -> None:
    """The agent roles: token-limit setting, model tier, and resolved limits."""
    settings = Settings.from_environment()
    if as_json:
        table = [
            {
                "role": r.name,
                "max_tokens_setting": r.max_tokens_setting,
                "max_tokens": r.max_tokens(settings),
                "model_tier": r.tier,
                "purpose": r.purpose,
                "called": not r.not_called,
                **({"not_called": r.not_called} if r.not_called else {}),
                "answer_schema": r.json_schema(),
            }
            for r in ROLES.values()
        ]
        click.echo(json.dumps(table, indent=2))
        return
    click.echo(f"{'role':<15} {'setting':<24} {'tokens':>6}  tier    purpose")
    for r in ROLES.values():
        json_note = " (JSON answer)" if r.answer else ""
        unused = " (no call: see `lemmata roles --json`)" if r.not_called else ""
        click.echo(
            f"{r.name:<15} {r.max_tokens_setting:<24} {r.max_tokens(settings):>6}  {r.tier:<7} "
            f"{r.purpose}{json_note}{unused}"
        )


@cli.command()
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="bind address; anything but loopback reaches the API from other machines",
)
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535))
@click.option(
    "--no-token",
    is_flag=True,
    help="no API token (loopback only): every process and user of this machine can then call the API",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="another name the server answers to (repeatable), e.g. this machine's name when bound to "
    "0.0.0.0; requests for any name but these, loopback and the bound address are refused",
)
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning"]),
    default="info",
    show_default=True,
    help="what the server logs; successful status polls (every open page polls its run) only at debug",
)
@reports_errors
def serve(host: str, port: int, no_token: bool, allow_hosts: tuple[str, ...], log_level: str) -> None:
    """Serve the browser UI (Paper, Live, Settings) and the HTTP API on HOST:PORT.

    Every API call needs `Authorization: Bearer <token>`: a token made at each start (printed
    in the URL to open, http://127.0.0.1:8765/?token=...; the page keeps it), or
    $LEMMATA_API_TOKEN when set. Requests for another Host name (DNS rebinding), from a page
    of another site (Origin, Sec-Fetch-Site) and JSON bodies without `Content-Type:
    application/json` are refused."""
    from lemmata.server.serving import serve as serve_api

    serve_api(host, port, no_token, allow_hosts, log_level)


cli.add_command(check)
cli.add_command(calibrate)
cli.add_command(model)
cli.add_command(ask)
cli.add_command(rewrite)
cli.add_command(review)
cli.add_command(install_skills)
cli.add_command(plugins)


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
