"""The run's shared embedded model on the real model: the driver's server process answers as the
in-process model does, and ends with its driver, however the driver ends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from conftest import cli_environment

from e2e.test_embedded_smoke import installed_model
from lemmata import layout
from lemmata.llm.base import ChatRequest, Message
from lemmata.llm.embedded_backend import EmbeddedBackend
from lemmata.llm.model_server import SOCKET_VARIABLE, SharedModelBackend
from lemmata.run.model_service import shared_model
from support.processes import processes_of, wait_until_none_left
from support.waiting import wait_until

# The real model's llama.cpp threads need both cores: beside another worker's tests this module
# took 115 s of a CI run (80 s for one test), alone 25 s. bin/test runs it after the others.
pytestmark = pytest.mark.alone

QUESTION = ChatRequest(
    role="analyst",
    model="embedded",
    system="You answer in one short sentence.",
    messages=(Message("user", "What is the sum of two even integers?"),),
    max_tokens=24,
)


def call(role: str, system: str, user: str) -> ChatRequest:
    return ChatRequest(role=role, model="embedded", system=system, messages=(Message("user", user),), max_tokens=16)


PROVER = "You are a careful prover. " + " ".join(f"Rule {i}: justify every step, cite lemmas by id." for i in range(20))
VERIFIER = "You check proofs. " + " ".join(f"Check {i}: is each step justified by what precedes it?" for i in range(20))


def test_a_roles_next_call_rereads_only_what_is_new_and_answers_as_without_the_call_between() -> None:
    """prover, verifier, prover: the second prover call finds the first one's system prompt in the
    context again (role_states.py), and answers exactly as a model that read the first prover call
    and then the second, with nothing between (the runtime's own prefix reuse): what was restored
    is what those tokens produced. (Any prefix reuse, the runtime's too, may round differently from
    reading the whole prompt in one batch.)"""
    first_call = call("prover", PROVER, "Prove: the sum of two even integers is even.")
    second_call = call("prover", PROVER, "Prove: the product of two odd integers is odd.")
    backend = EmbeddedBackend(installed_model(), 4096)
    first = backend.complete(first_call)
    between = backend.complete(call("verifier", VERIFIER, "Proof: 2a + 2b = 2(a + b)."))
    second = backend.complete(second_call)
    without_between = EmbeddedBackend(installed_model(), 4096)
    without_between.complete(first_call)
    expected = without_between.complete(second_call)
    assert between.cache_read_tokens is not None and between.cache_read_tokens < 20  # roles share little
    assert second.cache_read_tokens is not None and second.cache_read_tokens > first.tokens_in - 20
    assert second.cache_read_tokens == expected.cache_read_tokens
    assert second.text == expected.text and second.tokens_out == expected.tokens_out


def test_a_system_prompt_read_by_an_earlier_run_is_not_read_again_and_answers_do_not_change(tmp_path: Path) -> None:
    """prompt_states.py on the real model: the first backend reads the prover's system prompt and
    keeps its state on disk; a second backend (the next run's model server) takes it from there,
    reads only the user's part, and answers exactly as the first did."""
    first_run = EmbeddedBackend(installed_model(), 4096, prompt_states=tmp_path / "states")
    question = call("prover", PROVER, "Prove: the sum of two even integers is even.")
    first = first_run.complete(question)
    next_run = EmbeddedBackend(installed_model(), 4096, prompt_states=tmp_path / "states")
    again = next_run.complete(question)
    [kept] = (tmp_path / "states").glob("*/*.state")
    system_tokens = first.tokens_in - 40  # the prover's system prompt: all but the user's part and the tags
    assert first.cache_read_tokens is not None and first.cache_read_tokens < 20
    assert again.cache_read_tokens is not None and again.cache_read_tokens > system_tokens
    assert again.text == first.text and again.tokens_out == first.tokens_out
    assert kept.stat().st_size > 20_000 * system_tokens  # about 28 kB a token


@pytest.fixture
def run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run folder whose settings name the installed model, in a data directory of the test's own."""
    model = installed_model()
    home = tmp_path / "home"
    run = home / "runs" / "r1"
    run.mkdir(parents=True)
    settings = {"LLM_BACKEND": "embedded", "LEMMATA_EMBEDDED_MODEL": str(model), "LEMMATA_EMBEDDED_CONTEXT": 4096}
    (run / layout.CONFIG).write_text(yaml.safe_dump(settings))
    monkeypatch.setenv("LEMMATA_HOME", str(home))
    return run


def test_the_shared_model_answers_as_the_model_in_the_job_would(run_dir: Path) -> None:
    """Same prompt, same sampling: the same answer, whether a job loads the model or asks the server."""
    in_process = EmbeddedBackend(installed_model(), 4096).complete(QUESTION)
    with shared_model(run_dir, "embedded", remote=False) as environment:
        socket_path = Path(environment[SOCKET_VARIABLE])
        assert oct(socket_path.parent.stat().st_mode & 0o777) == "0o700"
        first = SharedModelBackend(socket_path).complete(QUESTION)
        again = SharedModelBackend(socket_path).complete(QUESTION)
        server = processes_of(run_dir.parent.parent)
        assert len(server) == 1 and "lemmata.run.model_service" in next(iter(server.values()))
    assert first.text == again.text == in_process.text and first.text.strip()
    assert again.cache_read_tokens == again.tokens_in - 1  # the second call re-read nothing but its last token
    assert not socket_path.parent.exists()
    assert not processes_of(run_dir.parent.parent)
    log = (run_dir / layout.MODEL_SERVER_LOG).read_text()
    assert "model loaded in" in log and "model server stopped" in log


def test_no_shared_model_for_a_provider_or_a_cluster(run_dir: Path) -> None:
    for backend, remote in (("local", False), ("embedded", True)):
        with shared_model(run_dir, backend, remote) as environment:
            assert environment == {} and not processes_of(run_dir.parent.parent)


def test_a_killed_driver_leaves_no_model_server(run_dir: Path) -> None:
    """SIGKILL runs no handler of the driver: the server sees its driver gone and no workflow
    process left on the run, and ends by itself, removing its socket and folder."""
    driver = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
                import time
                from pathlib import Path
                from lemmata.run.model_service import shared_model
                with shared_model(Path({str(run_dir)!r}), "embedded", remote=False) as environment:
                    print(environment["{SOCKET_VARIABLE}"], flush=True)
                    time.sleep(600)
            """),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ,
    )
    try:
        socket_path = Path(driver.stdout.readline().strip())
        assert socket_path.exists() and processes_of(run_dir.parent.parent).keys() - {driver.pid}
        driver.send_signal(signal.SIGKILL)
        driver.wait(10)
    finally:
        driver.kill()
        driver.stdout.close()
    wait_until_none_left(run_dir.parent.parent, 15)
    wait_until(lambda: not socket_path.parent.exists(), 5, message="the server left its socket folder behind")


def test_a_model_that_cannot_load_fails_the_run_with_the_reason_and_leaves_nothing_running(tmp_path: Path) -> None:
    installed_model()  # llama-cpp-python is there: the server gets as far as loading
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\0" * 64)  # passes the magic check, is no model
    home = tmp_path / "home"
    env = cli_environment(home, LLM_BACKEND="embedded", LEMMATA_EMBEDDED_MODEL=str(broken), SEARCH_TOOLS="false")
    result = subprocess.run(
        [sys.executable, "-m", "lemmata", "prove", "the sum of two even integers is even"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode != 0 and "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert "the embedded model server did not start (cannot serve the model: cannot load the embedded model" in last
    run_dir = next((home / "runs").iterdir())
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "failed" and f"lemmata resume {run_dir.name}" in record["message"]
    assert not list(run_dir.glob("survey*"))  # nothing ran
    wait_until_none_left(home, 15)
