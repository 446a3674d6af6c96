"""`lemmata check`: the machine checks of a statement the user brings, and the theory stage's
model checks of a proof of it when one is brought."""

from __future__ import annotations

import os
import stat
import sys
import tempfile
import time
from pathlib import Path

import click

from lemmata import layout
from lemmata.cli.errors import reports_errors
from lemmata.errors import LemmataError, ProviderError, UserError
from lemmata.home_layout import CHECKS
from lemmata.settings import Settings, lemmata_home, load_environment

#: The largest statement or proof file `check` reads (1 MB): a proof of many pages is ~100 kB, and
#: the whole text goes to the model; /dev/zero or a 50 MB file must not be read into memory.
MAX_CHECK_FILE_BYTES = 1_000_000
#: Backends that connect to nothing: no line about connecting and retrying.
OFFLINE_BACKENDS = ("embedded", "replay")


@click.command()
@click.argument("statement_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("proof_file", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=False)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="print one JSON object: status, verified, formal (statement, checker, method, counterexample, "
    "instances, ...), accepted, confidence, method, issues, checks, checker, trust, calls, seconds",
)
@click.option(
    "--no-machine-checks",
    "model_only",
    is_flag=True,
    help="skip the formalization and the machine checks: only the model checks of PROOF_FILE (what "
    "`lemmata calibrate` measures)",
)
@click.option(
    "--log-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="where the model calls are logged (llm_calls.jsonl); default: a new folder under "
    "$LEMMATA_HOME/checks. Checks that share one folder can be replayed together.",
)
@reports_errors
def check(statement_file: Path, proof_file: Path | None, as_json: bool, model_only: bool, log_dir: Path | None) -> None:
    """Check the statement in STATEMENT_FILE, and PROOF_FILE as a proof of it when given.

    The statement is checked as a lemma of a run is: written in lemmata's formal language (one
    model call), then falsified by sampling and the SMT solver Z3, and proved in Coq where
    automation (or the proof's own ```coq block) can. A proof is checked by the same model checks
    as a lemma's proof: open [GAP: ...] tags, the verifier, then a referee asked for the first
    error. The status is one of machine_checked, refuted, tested, reviewed, unverified
    (docs/verification.md); a model's checks count (reviewed) only when the model was measured to
    tell wrong proofs from right ones. Exit status: 0 verified (machine_checked or reviewed), 1 not,
    2 an error (a file too large or not text, the model provider unreachable: nothing checked).
    """
    from lemmata.agents.client import make_client
    from lemmata.llm.base import answering_backend
    from lemmata.llm.resolve import choose_backend
    from lemmata.stages.formal.statement_check import check_statement
    from lemmata.verification.calibration import checker_for
    from lemmata.verification.user_proof import check_scope, check_user_proof

    statement = read_text(statement_file, "STATEMENT_FILE")
    proof = read_text(proof_file, "PROOF_FILE") if proof_file is not None else None
    if model_only and proof is None:
        raise UserError("--no-machine-checks leaves only the model checks of a proof: give PROOF_FILE too")
    environ = load_environment()
    settings = Settings.from_environment(environ)
    choice = choose_backend(settings, environ)
    if choice.name == "embedded":
        from lemmata.cli.main import announced_embedded_model

        announced_embedded_model(settings)
    log_dir = usable_log_dir(log_dir) if log_dir is not None else new_check_dir(statement, proof or "")
    client = make_client(settings, environ, log_dir, scope=check_scope(statement, proof or ""))
    checker = checker_for(answering_backend(client.backend), client.models.active, lemmata_home(environ))
    if choice.name not in OFFLINE_BACKENDS:  # a provider that cannot be reached is retried silently for minutes
        click.echo(
            f"lemmata check: model {client.models.active} ({choice.name}); a call that fails to connect is "
            f"retried {settings.LLM_RETRY_ATTEMPTS} times (LLM_RETRY_ATTEMPTS, waits up to "
            f"{settings.LLM_RETRY_WAIT_MAX:g} s) before the check gives up",
            err=True,
        )
    try:
        if model_only:
            assert proof is not None
            result = check_user_proof(client, statement, proof, settings, checker)
        else:
            result = check_statement(client, statement, proof, settings, checker, log_dir / layout.FORMALIZER_CACHE)
    except ProviderError as exc:  # exit 1 means "not verified": a check that never ran is an error
        raise CheckNotRun(f"{str(exc).rstrip('.')}; nothing was checked (log: {log_dir / layout.LLM_CALLS})") from None
    if as_json:
        click.echo(result.model_dump_json())
    else:
        click.echo(report(result, log_dir))
    sys.exit(0 if result.verified else 1)


class CheckNotRun(LemmataError):
    """The model could not be reached: exit 2, since 1 would say the statement is not verified."""

    exit_code = 2


def read_text(path: Path, name: str) -> str:
    """The file's text: a regular file (not /dev/zero, a pipe or a folder) of at most
    MAX_CHECK_FILE_BYTES, refused by its size before it is read; at most that much is read
    whatever the size claims (a file that grows meanwhile)."""
    too_big = (
        f"{name} {path} is larger than {MAX_CHECK_FILE_BYTES:,} bytes, the most `lemmata check` reads: "
        "a statement or a proof is text of a few pages; give only that"
    )
    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise UserError(f"{name} {path} is not a regular file: give a text file")
            if info.st_size > MAX_CHECK_FILE_BYTES:
                raise UserError(too_big)
            raw = handle.read(MAX_CHECK_FILE_BYTES + 1)
    except OSError as exc:
        raise UserError(f"cannot read {name} {path}: {exc.strerror}") from None
    if len(raw) > MAX_CHECK_FILE_BYTES:
        raise UserError(too_big)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{name} {path} is not UTF-8 text") from None
    if not text.strip():
        raise UserError(f"{name} {path} is empty")
    return text


def usable_log_dir(log_dir: Path) -> Path:
    """--log-dir, made if need be and written to once before any model call."""
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=log_dir):
            pass
    except OSError as exc:
        raise UserError(
            f"--log-dir {log_dir} cannot be written ({exc.strerror}): give a folder you can write to"
        ) from None
    return log_dir


def new_check_dir(statement: str, proof: str) -> Path:
    from lemmata.verification.user_proof import check_scope

    folder = lemmata_home() / CHECKS / f"{time.strftime('%Y%m%d-%H%M%S')}-{check_scope(statement, proof)[6:]}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def report(result: object, log_dir: Path) -> str:
    from lemmata.stages.formal.statement_check import NO_PROOF
    from lemmata.verification.ladder import PROMISES, label
    from lemmata.verification.user_proof import ProofCheck

    assert isinstance(result, ProofCheck)
    verdict = "VERIFIED" if result.verified else "NOT verified"
    lines = [f"{label(result.status).upper()} ({verdict}): {PROMISES[result.status]}"]
    formal = result.formal
    if formal is not None:
        if formal.not_formalized:
            lines.append(f"formal statement: none ({formal.not_formalized})")
        else:
            lines.append(f"formal statement: {formal.statement}")
        lines += [
            f"  {check.checker} ({check.method}): {check.outcome.replace('_', ' ')}"
            + (f" - {check.detail}" if check.detail else "")
            + (f"; counterexample {_values(check.counterexample)}" if check.counterexample else "")
            for check in formal.checks
        ]
    if result.verification == NO_PROOF or result.method == "not_checked" and not result.checks:
        lines.append(f"proof: {NO_PROOF}")
    else:
        accepted = "accepted by the model checks" if result.accepted else "not accepted by the model checks"
        lines.append(f"proof: {accepted} (method {result.method}, confidence {result.confidence:.2f})")
        lines += [
            f"  {step.check}: {step.outcome}" + (f" - {step.detail}" if step.detail else "") for step in result.checks
        ]
        lines += [f"issue: {issue}" for issue in result.issues]
        lines.append(
            f"checker: {result.checker.model} ({result.checker.backend}), {result.checker.trust}. {result.trust}"
        )
    calls = os.path.join(str(log_dir), layout.LLM_CALLS)
    lines.append(f"{result.calls} model call{'s' * (result.calls != 1)} in {result.seconds:.1f} s; log: {calls}")
    return "\n".join(lines)


def _values(values: dict[str, str]) -> str:
    return ", ".join(f"{name} = {value}" for name, value in values.items()) or "(it computes to false)"
