"""`lemmata check`: verify a proof the user brings, with the theory stage's checks."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import click

from lemmata import layout
from lemmata.cli.errors import reports_errors
from lemmata.errors import UserError
from lemmata.settings import Settings, lemmata_home, load_environment

CHECKS_DIR = "checks"  # under $LEMMATA_HOME: one folder per check, with its model calls


@click.command()
@click.argument("statement_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("proof_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="print one JSON object: verified, accepted, confidence, "
    "method, issues, checks, checker, trust, calls, seconds",
)
@click.option(
    "--log-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="where the model calls are logged (llm_calls.jsonl); default: a new folder under "
    "$LEMMATA_HOME/checks. Checks that share one folder can be replayed together.",
)
@reports_errors
def check(statement_file: Path, proof_file: Path, as_json: bool, log_dir: Path | None) -> None:
    """Check PROOF_FILE as a proof of the statement in STATEMENT_FILE.

    The same checks as a lemma's proof in a run: open [GAP: ...] tags, the verifier (head and tail
    of the proof), then a referee asked for the first error of the whole proof. A proof the checks
    accept is verified only when the model was measured to tell wrong proofs from right ones
    (bench/verification.py); otherwise the answer says so. Exit status: 0 verified, 1 not verified.
    """
    from lemmata.agents.client import make_client
    from lemmata.llm.resolve import choose_backend
    from lemmata.verification.calibration import checker_for
    from lemmata.verification.user_proof import check_scope, check_user_proof

    statement, proof = read_text(statement_file, "STATEMENT_FILE"), read_text(proof_file, "PROOF_FILE")
    environ = load_environment()
    settings = Settings.from_environment(environ)
    choice = choose_backend(settings, environ)
    if choice.name == "embedded":
        from lemmata.cli.main import announced_embedded_model

        announced_embedded_model(settings)
    log_dir = log_dir or new_check_dir(statement, proof)
    client = make_client(settings, environ, log_dir, scope=check_scope(statement, proof))
    result = check_user_proof(
        client, statement, proof, settings, checker_for(choice.name, client.models.active, lemmata_home(environ))
    )
    if as_json:
        click.echo(result.model_dump_json())
    else:
        click.echo(report(result, log_dir))
    sys.exit(0 if result.verified else 1)


def read_text(path: Path, name: str) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{name} {path} is not UTF-8 text") from None
    except OSError as exc:
        raise UserError(f"cannot read {name} {path}: {exc.strerror}") from None
    if not text.strip():
        raise UserError(f"{name} {path} is empty")
    return text


def new_check_dir(statement: str, proof: str) -> Path:
    from lemmata.verification.user_proof import check_scope

    folder = lemmata_home() / CHECKS_DIR / f"{time.strftime('%Y%m%d-%H%M%S')}-{check_scope(statement, proof)[6:]}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def report(result: object, log_dir: Path) -> str:
    from lemmata.verification.user_proof import ProofCheck

    assert isinstance(result, ProofCheck)
    headline = (
        "VERIFIED"
        if result.verified
        else ("accepted by the checks, NOT verified" if result.accepted else "NOT verified")
    )
    lines = [f"{headline} (method {result.method}, confidence {result.confidence:.2f})"]
    lines += [
        f"  {step.check}: {step.outcome}" + (f" - {step.detail}" if step.detail else "") for step in result.checks
    ]
    lines += [f"issue: {issue}" for issue in result.issues]
    lines.append(f"checker: {result.checker.model} ({result.checker.backend}), {result.checker.trust}. {result.trust}")
    calls = os.path.join(str(log_dir), layout.LLM_CALLS)
    lines.append(f"{result.calls} model call{'s' * (result.calls != 1)} in {result.seconds:.1f} s; log: {calls}")
    return "\n".join(lines)
