"""The CLI's edges (issue 35): values out of range, limits with names, a damaged run, a busy port,
an unreachable provider, a bug's traceback. Every error a user can cause is one line
`lemmata: error: ...` (or click's usage error) with exit 2; a bug keeps its traceback, redacted."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import TEST_API_TOKEN, cli_environment, make_run

from lemmata.cli.main import cli
from lemmata.run.create import MAX_TASK_CHARS
from support.fake_search_servers import unused_port


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model nobody answers, without retries: a run these tests refuse must not reach a model
    (nor, as the default, start the embedded one) if a refusal regressed."""
    monkeypatch.setenv("LLM_BACKEND", "local")
    monkeypatch.setenv("LOCAL_LLM_BASE_URL", f"http://127.0.0.1:{unused_port()}/v1")
    monkeypatch.setenv("LLM_RETRY_ATTEMPTS", "0")


def lemmata(args: list[str], home: Path, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The real CLI in a subprocess, with the test environment."""
    return subprocess.run(
        [sys.executable, "-m", "lemmata", *args],
        env=cli_environment(home, **env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("lemmata: error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


@pytest.mark.parametrize("budget", ["nan", "inf", "-1", "1e999", "0"])
def test_a_budget_that_is_no_finite_positive_amount_is_a_usage_error(data_home, budget):
    result = CliRunner().invoke(cli, ["prove", "x", f"--budget={budget}"])
    assert result.exit_code == 2 and "Invalid value for '--budget'" in result.output, result.output
    assert not (data_home.home / "runs").exists()


def test_a_token_limit_beyond_its_ceiling_in_dotenv_is_one_line_naming_it(tmp_path):
    """.env MAX_TOKENS_PROVER=99999999999999999999999 was taken, and sent with every call."""
    (tmp_path / ".env").write_text("MAX_TOKENS_PROVER=99999999999999999999999\n")
    result = lemmata(["roles"], tmp_path / "home", tmp_path)
    assert result.returncode == 2
    line = one_error_line(result.stderr)
    assert "MAX_TOKENS_PROVER" in line and "at most 1000000" in line


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_a_timeout_that_is_not_finite_is_refused(tmp_path, value):
    result = lemmata(["roles"], tmp_path / "home", tmp_path, LLM_TIMEOUT=value)
    assert result.returncode == 2 and "LLM_TIMEOUT" in one_error_line(result.stderr)


def test_from_papers_takes_1_to_20_ids_as_the_api_does(data_home):
    result = CliRunner().invoke(cli, ["from-papers", *[f"2101.{n:05d}" for n in range(21)]])
    assert result.exit_code == 2 and "1 to 20 paper ids" in result.output
    assert not (data_home.home / "runs").exists()


def test_an_invalid_session_id_of_5000_characters_is_not_echoed_whole(data_home):
    result = CliRunner().invoke(cli, ["status", "a" * 5000 + "!"])
    assert result.exit_code == 2
    assert len(result.output) < 300 and "5,001 characters" in result.output


def test_a_task_too_long_for_the_briefing_is_refused_with_the_reason(data_home):
    result = CliRunner().invoke(cli, ["prove", "x" * (MAX_TASK_CHARS + 1)])
    assert result.exit_code == 2
    assert f"more than the {MAX_TASK_CHARS:,}" in result.output and "embeds the whole task" in result.output
    assert not (data_home.home / "runs").exists()


@pytest.mark.parametrize("control", ["\x07", "\x08", "\x1b]0;owned\x07"])  # NUL cannot be in argv: the API test
def test_a_task_with_control_characters_is_refused_before_it_reaches_the_terminal(tmp_path, control):
    result = lemmata(
        ["prove", f"prove {control} this"],
        tmp_path / "home",
        tmp_path,
        LLM_BACKEND="local",
        LOCAL_LLM_BASE_URL=f"http://127.0.0.1:{unused_port()}/v1",
        LLM_RETRY_ATTEMPTS="0",
    )
    assert result.returncode == 2
    assert "control character" in one_error_line(result.stderr) and control not in result.stderr
    assert not (tmp_path / "home" / "runs").exists()


def test_a_task_that_is_not_utf8_is_refused_naming_the_byte_and_creates_no_run(tmp_path):
    """Issue 53, item 5: the byte 0xFF in argv (Python reads it as the lone surrogate U+DCFF) gave a
    traceback from the record's JSON and an orphan run folder."""
    result = lemmata(
        ["prove", "prove \udcff this"],  # passed to the process as the byte 0xFF
        tmp_path / "home",
        tmp_path,
        LLM_BACKEND="local",
        LOCAL_LLM_BASE_URL=f"http://127.0.0.1:{unused_port()}/v1",
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "is not UTF-8 text" in one_error_line(result.stderr) and "byte 0xFF at position 6" in result.stderr
    assert not (tmp_path / "home" / "runs").exists()


def test_status_lists_a_run_with_a_corrupt_record_as_damaged(data_home):
    make_run(data_home, "run-a")
    broken = make_run(data_home, "run-b") / "run.json"
    broken.write_text("{not json", encoding="utf-8")
    result = CliRunner().invoke(cli, ["status"])
    assert result.exit_code == 0
    assert "run-a" in result.output
    [damaged] = [line for line in result.output.splitlines() if line.startswith("run-b")]
    assert "damaged" in damaged and str(broken) in damaged


def test_serve_on_a_busy_port_prints_no_token_and_exits_2(tmp_path):
    """It printed a URL with a fresh token for a server that never started, then exited 3."""
    port = unused_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        result = lemmata(["serve", "--port", str(port)], tmp_path / "home", tmp_path, LEMMATA_API_TOKEN="")
    assert result.returncode == 2
    line = one_error_line(result.stderr)
    assert f"127.0.0.1:{port}" in line and "--port" in line
    assert "token=" not in result.stderr and TEST_API_TOKEN not in result.stderr


def test_check_with_an_unreachable_provider_says_what_it_does_and_exits_2_not_1(tmp_path):
    """1 means "not verified": a check that could not reach the model never ran."""
    (tmp_path / "s.txt").write_text("1 + 1 = 2")
    result = lemmata(
        ["check", "s.txt"],
        tmp_path / "home",
        tmp_path,
        LLM_BACKEND="local",
        LOCAL_LLM_BASE_URL=f"http://127.0.0.1:{unused_port()}/v1",
        LLM_RETRY_ATTEMPTS="1",
    )
    assert result.returncode == 2, result.stderr
    first, last = result.stderr.strip().splitlines()[0], result.stderr.strip().splitlines()[-1]
    assert first.startswith("lemmata check: model local-model (local)") and "LLM_RETRY_ATTEMPTS" in first
    assert last.startswith("lemmata: error: ") and "nothing was checked" in last


def test_a_bug_keeps_its_traceback_but_not_a_key(data_home, monkeypatch):
    """An unexpected exception is our bug: the traceback stays, redacted (it may quote a key)."""
    key = "sk-ant-api03-secret-value-0123456789"
    monkeypatch.setenv("VENDORA_API_KEY", key)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError(f"unexpected: {key}")

    monkeypatch.setattr("lemmata.cli.main.list_runs", broken)
    result = CliRunner().invoke(cli, ["status"])
    assert result.exit_code == 1
    assert "Traceback" in result.output and "RuntimeError: unexpected: [redacted]" in result.output
    assert key not in result.output and "this is a bug in lemmata" in result.output
