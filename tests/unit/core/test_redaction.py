"""Attack tests: no secret lemmata knows reaches a file it writes or a message it shows.

Each secret variable (model, search and API keys) and the provider CLI's login tokens get a
distinctive value; the code paths that store or show model output, sandbox output or errors are
driven with that value in them; then the run directory is scanned byte for byte.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import click
import pytest
from click.testing import CliRunner
from conftest import write_cli_login
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient

from lemmata.agents.client import make_client
from lemmata.artifacts import Experiment, LemmaCheck, atomic_write_text, write_artifact
from lemmata.cli.errors import reports_errors
from lemmata.errors import UserError
from lemmata.isolation.sandbox import Limits, run_python
from lemmata.redaction import REDACTED, Redactor
from lemmata.run.job import JobFailed, StageJob
from lemmata.run.qa_history import ChatRecord, append_record
from lemmata.server.http import ERROR_HANDLERS
from lemmata.settings import CREDENTIAL_VARIABLES, Settings
from lemmata.stages.experiment.lemma_checks import run_experiment
from support import REPO
from support.scripted_backend import scripted_client
from unit.stages.experiment.test_stage_experiment import lemma, theory

#: What must never be written or shown, named here rather than read from the code under test.
SECRET_VARIABLES = (
    "VENDORA_API_KEY",
    "ANTHROPIC_API_KEY",
    "COMPAT_API_KEY",
    "VENDORX_API_KEY",
    "BRAVE_SEARCH_API_KEY",
    "SEMANTIC_SCHOLAR_API_KEY",
    "LEMMATA_API_TOKEN",
)
LOGIN_ACCESS_TOKEN = "sk-ant-oat01-login-access-4f2c9e"
LOGIN_REFRESH_TOKEN = "sk-ant-ort01-login-refresh-7b1d0a"
SECRET_NAMES = [*SECRET_VARIABLES, "CLI login access token", "CLI login refresh token"]


def distinctive(name: str) -> str:
    return f"zz-{name.lower().replace(' ', '-')}-93f1c7"


@pytest.fixture
def secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Every secret set, in the environment and in a CLI login, with its distinctive value."""
    values = {name: distinctive(name) for name in SECRET_VARIABLES}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    login = write_cli_login(
        tmp_path / "cli-credentials.json", token=LOGIN_ACCESS_TOKEN, refreshToken=LOGIN_REFRESH_TOKEN
    )
    monkeypatch.setenv("VENDORA_CREDENTIALS_FILE", str(login))
    return {**values, "CLI login access token": LOGIN_ACCESS_TOKEN, "CLI login refresh token": LOGIN_REFRESH_TOKEN}


def assert_nowhere(secret: str, directory: Path, *shown: str) -> None:
    written = [path for path in directory.rglob("*") if path.is_file()]
    assert written, "the code path wrote nothing: the scan would prove nothing"
    leaked = [str(path) for path in written if secret.encode() in path.read_bytes()]
    assert not leaked and not [text for text in shown if secret in text]


# ----------------------------------------------------------------------------- call log


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_a_secret_in_a_model_call_never_reaches_the_call_log(
    name: str, secrets: dict[str, str], tmp_path: Path
) -> None:
    secret = secrets[name]
    recording = tmp_path / "recording.jsonl"  # outside the run directory: it holds the secret
    recording.write_text(json.dumps({"role": "prover", "response": f"the key is {secret}"}) + "\n")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    settings = Settings(LLM_BACKEND="replay", LEMMATA_REPLAY=str(recording))
    client = make_client(settings, {"LLM_BACKEND": "replay"}, run_dir, scope="prove_lemma:L1")
    client.complete("prover", f"system prompt quoting {secret}", f"a task pasting {secret}")
    assert_nowhere(secret, run_dir)
    assert REDACTED in (run_dir / "llm_calls.jsonl").read_text()


# ----------------------------------------------------------------------------- written files


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_a_secret_in_model_output_never_reaches_an_artifact_a_paper_or_the_history(
    name: str, secrets: dict[str, str], tmp_path: Path
) -> None:
    secret, run_dir = secrets[name], tmp_path / "run"
    check = LemmaCheck(
        lemma_id="L1",
        group="low_confidence",
        outcome="error",
        code=f"KEY = {secret!r}",
        detail=f"it printed {secret}",
        failures=[f"crashed: {secret}"],
    )
    write_artifact(run_dir / "experiment.json", Experiment(skipped=False, checks=[check]))
    atomic_write_text(run_dir / "paper.tex", f"\\section{{Keys}} {secret}\n")
    append_record(run_dir, ChatRecord(role="assistant", content=f"your key: {secret}", paper_version=1))
    assert_nowhere(secret, run_dir)


# ----------------------------------------------------------------------------- sandbox output


def printing(secrets: list[str], then: str) -> str:
    """Test code that prints the secrets without containing them (reversed in the source), as
    code that found or decoded a key would."""
    return f"import json, sys\nfor s in {[s[::-1] for s in secrets]!r}:\n    print(s[::-1], file=sys.{then})\n"


def test_secrets_printed_by_a_sandboxed_test_reach_neither_the_model_nor_the_artifact(
    secrets: dict[str, str], tmp_path: Path
) -> None:
    values = list(secrets.values())
    crash = printing(values, "stderr") + "sys.exit(1)\n"  # the end of stderr is the failure's reason
    bad_counts = printing(values, "stdout")  # the last stdout line is shown as 'not the counts'
    good = printing(values, "stdout") + "print(json.dumps({'trials': 5, 'violations': 0}))\n"
    answers = [json.dumps({"code": code, "rationale": "r"}) for code in (crash, bad_counts, good)]
    client, backend = scripted_client({"experiment": answers})
    quick = Limits(wall_seconds=20, cpu_seconds=10)
    experiment = run_experiment(
        client, theory(lemma("L1", "low_confidence")), "true", runner=lambda code: run_python(code, quick)
    )
    [check] = experiment.checks
    assert (check.outcome, check.attempts) == ("ran", 3) and REDACTED in check.failures[0]
    prompts = [request.messages[-1].content for request in backend.calls("experiment")]
    write_artifact(tmp_path / "run" / "experiment.json", experiment)
    for secret in values:
        assert_nowhere(secret, tmp_path / "run", *check.failures, *prompts)


# ----------------------------------------------------------------------------- messages


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_a_secret_in_an_error_is_not_shown_by_the_cli_a_job_or_the_api(
    name: str, secrets: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    secret = secrets[name]
    failing = UserError(f"the provider said: invalid key {secret}")

    @click.command()
    @reports_errors
    def command() -> None:
        raise failing

    cli = CliRunner().invoke(command)
    assert "invalid key" in cli.output and secret not in cli.output

    job = StageJob(SimpleNamespace(rule="experiment", config={}))  # runs in the cwd, a tmp dir
    with pytest.raises(JobFailed), job.reporting():
        raise failing
    assert secret not in capsys.readouterr().err
    assert_nowhere(secret, job.run_dir / "logs")

    async def endpoint(request):  # noqa: ANN001, ANN202
        raise failing

    app = Starlette(routes=[Route("/x", endpoint)], exception_handlers=ERROR_HANDLERS)
    app.state.environ = None
    answer = TestClient(app).get("/x").json()["error"]
    assert "invalid key" in answer and secret not in answer


def test_the_api_hides_the_secrets_of_the_runs_it_starts(tmp_path: Path) -> None:
    runs_key = "zz-runs-only-key-5e0a"  # in the runs' environment, not the server's

    async def endpoint(request):  # noqa: ANN001, ANN202
        raise UserError(f"invalid key {runs_key}")

    app = Starlette(routes=[Route("/x", endpoint)], exception_handlers=ERROR_HANDLERS)
    app.state.environ = {"COMPAT_API_KEY": runs_key}
    assert runs_key not in TestClient(app).get("/x").json()["error"]


# ----------------------------------------------------------------------------- the list


def test_every_credential_variable_the_code_names_is_redacted() -> None:
    """A new key read from the environment must join settings.CREDENTIAL_VARIABLES, or it would
    be written in clear: any credential-like name in the code that is missing fails here."""
    pattern = re.compile(r"[\"']([A-Z][A-Z0-9_]*(?:API_KEY|_TOKEN|_SECRET|PASSWORD))[\"']")
    named = set()
    for root in ("lemmata", "snakemake_logger_plugin_lemmata"):
        for path in (REPO / root).rglob("*.py"):
            named |= set(pattern.findall(path.read_text(encoding="utf-8")))
    assert set(SECRET_VARIABLES) <= named  # the scan finds the known ones: it can find a new one
    assert named <= set(CREDENTIAL_VARIABLES)


def test_a_secret_is_redacted_in_its_json_escaped_form_too() -> None:
    secret = 'k"ey\\with-quote-é'
    line = json.dumps({"text": f"a {secret} b"})
    assert json.loads(Redactor([secret])(line)) == {"text": f"a {REDACTED} b"}
    assert Redactor([secret])(f"a {secret} b") == f"a {REDACTED} b"


def test_short_values_are_not_secrets() -> None:
    assert Redactor(["abc1234"])("abc1234 stays") == "abc1234 stays"
