"""`lemmata calibrate` through the real CLI (and the server's API) against a fake OpenAI-compatible model on 127.0.0.1:
a model whose checks tell wrong proofs from right ones earns `calibrated` and its checks make a
proof `reviewed`; one that accepts everything does not, and says why; an interrupted calibration
goes on where it stopped without any question asked twice; it runs from an installed wheel."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest
from conftest import api_client, cli_environment

from lemmata.run.record import DataHome
from lemmata.verification.calibrate import bundled_proofs
from lemmata.verification.calibration import calibration_path, load_calibration
from support import REPO
from support.cli import run_lemmata
from support.fake_llm_server import FakeLLMServer, RecordedRequest, prompt_text
from support.waiting import wait_until

JUDGE = "judge-model"  # not the model conftest's data directory trusts
VALID = json.dumps({"verdict": "valid", "issues": []})
INVALID = json.dumps({"verdict": "invalid", "issues": ["Step 2 does not follow from step 1."]})
NO_ERROR = json.dumps({"error_found": False, "first_error": ""})
FOUND = json.dumps({"error_found": True, "first_error": "Step 2 does not follow from step 1."})
PROOFS, _ = bundled_proofs()


def proof_in(request: RecordedRequest) -> str:
    """The id of the bundled proof the request asks about."""
    text = prompt_text(request.body)
    found = [proof.id for proof in PROOFS if proof.proof.strip()[:300] in text]
    assert len(found) == 1, text[:500]
    return found[0]


def discerning(request: RecordedRequest) -> str:
    """A checker that knows the human label: it accepts exactly the correct proofs."""
    correct = next(proof.label == "correct" for proof in PROOFS if proof.id == proof_in(request))
    if request.role == "verifier":
        return VALID if correct else INVALID
    return NO_ERROR if correct else FOUND


def credulous(request: RecordedRequest) -> str:
    return VALID if request.role == "verifier" else NO_ERROR


def environment(home: Path, llm: FakeLLMServer) -> dict[str, str]:
    return cli_environment(home, LLM_BACKEND="local", LOCAL_LLM_BASE_URL=llm.openai_base_url)


def checked_status(home: Path, env: dict[str, str], cwd: Path) -> dict:
    """`lemmata check --json` of a brought proof by the judge, model checks only."""
    (cwd / "statement.txt").write_text("The sum of two even integers is even.")
    (cwd / "proof.txt").write_text("Let a = 2m and b = 2n. Then a + b = 2(m + n), which is even.")
    done = run_lemmata(
        ["check", "--json", "--no-machine-checks", "statement.txt", "proof.txt"],
        {**env, "LEMMATA_ACTIVE_MODEL": JUDGE},
        cwd,
    )
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_discerning_model_is_calibrated_and_its_checks_then_review_a_proof(tmp_path):
    with FakeLLMServer(models=[JUDGE]) as llm:
        llm.set_default(None, discerning)
        env = environment(tmp_path / "home", llm)
        before = checked_status(tmp_path / "home", env, tmp_path)
        assert before["status"] == "unverified"
        assert f"lemmata calibrate --backend local --model {JUDGE}" in before["trust"]

        llm.set_default(None, discerning)
        done = run_lemmata(["calibrate", "--backend", "local", "--model", JUDGE, "--yes"], env, tmp_path)
        assert done.returncode == 0, done.stderr
        assert "forecast: 120 proofs, at most 240 calls" in done.stderr
        assert "[120/120]" in done.stderr
        # One correct proof is longer than the refuter reads (REFUTER_PROOF_CHARS): not accepted, rightly.
        assert "accepted 0 of 60 proofs humans judged incorrect (0%) and 59 of 60 correct ones (98%)" in done.stdout
        assert "trust: calibrated" in done.stdout
        record = load_calibration(tmp_path / "home", JUDGE)
        assert record is not None and record.trust() == "calibrated" and record.backend == "local"

        llm.set_default(None, credulous)  # the brought proof is not one of the labelled ones
        after = checked_status(tmp_path / "home", env, tmp_path)
    assert after["status"] == "reviewed" and after["verified"] is True
    assert after["checker"]["trust"] == "calibrated"


def test_a_model_that_accepts_everything_is_not_trusted_and_says_why(tmp_path):
    with FakeLLMServer(models=[JUDGE]) as llm:
        llm.set_default(None, credulous)
        env = environment(tmp_path / "home", llm)
        done = run_lemmata(["calibrate", "--backend", "local", "--model", JUDGE, "--yes"], env, tmp_path)
        assert done.returncode == 0, done.stderr
        # Four proofs are longer than the refuter reads (REFUTER_PROOF_CHARS): those are not accepted.
        assert "accepted 57 of 60 proofs humans judged incorrect (95%) and 59 of 60 correct" in done.stdout
        assert "trust: not discriminating" in done.stdout
        after = checked_status(tmp_path / "home", env, tmp_path)
    assert after["status"] == "unverified" and after["verified"] is False
    assert after["checker"]["trust"] == "not_discriminating"
    assert "accepted 95% of the proofs humans judged incorrect and 98% of the correct ones" in after["trust"]


@pytest.mark.parametrize(
    ("signum", "inherited_sigint"),
    [
        pytest.param(signal.SIGINT, signal.SIG_DFL, id="ctrl-c"),
        # A script's background job inherits an ignored SIGINT; Python then raises no
        # KeyboardInterrupt, and CI run that way saw the calibration go on to the end.
        pytest.param(signal.SIGINT, signal.SIG_IGN, id="ctrl-c-started-in-the-background"),
        pytest.param(signal.SIGTERM, signal.SIG_DFL, id="plain-kill"),
    ],
)
def test_an_interrupted_calibration_goes_on_without_asking_any_question_twice(tmp_path, signum, inherited_sigint):
    with FakeLLMServer(models=[JUDGE]) as llm:
        llm.set_default(None, discerning)
        env = environment(tmp_path / "home", llm)
        command = [sys.executable, "-m", "lemmata", "calibrate", "--backend", "local", "--model", JUDGE, "--yes"]
        interrupted: list[int] = []

        def interrupt_at_the_fifth_refuter(request: RecordedRequest) -> None:
            if request.role == "refuter" and len(llm.calls("refuter")) == 5:
                os.kill(process.pid, signum)  # the verifier of this proof was answered
                interrupted.append(len(llm.calls("verifier")))

        # Set before the process starts: ten proofs take it well under a second, and a busy test
        # worker set the hook after the fifth refuter call had come (the calibration then ran on).
        llm.before_answer = interrupt_at_the_fifth_refuter
        ours = signal.signal(signal.SIGINT, inherited_sigint)  # what the child inherits, whatever ran pytest
        try:
            process = subprocess.Popen(
                command,
                env=env,
                cwd=tmp_path,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        finally:
            signal.signal(signal.SIGINT, ours)
        out, err = process.communicate(timeout=600)
        llm.before_answer = None
        assert interrupted, f"no fifth refuter call: {len(llm.calls('refuter'))} refuter calls"
        assert process.returncode == 1, f"interrupted at verifier call {interrupted[0]}; {err[-2000:]}"
        assert "calibration stopped after" in err and "run the same command to go on" in err
        assert "Traceback" not in err
        assert load_calibration(tmp_path / "home", JUDGE) is None  # nothing stored from a part

        again = run_lemmata(["calibrate", "--backend", "local", "--model", JUDGE, "--yes"], env, tmp_path)
        assert again.returncode == 0, again.stderr
        assert "measured earlier, kept" in again.stderr
        assert "trust: calibrated" in again.stdout
        answered = Counter(
            (request.role, proof_in(request)) for request in llm.requests if request.answered_status == 200
        )
    assert answered and max(answered.values()) == 1, [key for key, count in answered.items() if count > 1]
    assert sum(role == "verifier" for role, _ in answered) == 120


def test_without_a_terminal_or_yes_it_asks_for_yes_and_measures_nothing(tmp_path):
    with FakeLLMServer(models=[JUDGE]) as llm:
        env = environment(tmp_path / "home", llm)
        done = run_lemmata(["calibrate", "--backend", "local", "--model", JUDGE, "--limit", "4"], env, tmp_path)
        assert not llm.requests
    assert done.returncode == 2
    assert "pass --yes" in done.stderr and "forecast: 4 proofs, at most 8 calls" in done.stderr
    assert not calibration_path(tmp_path / "home", JUDGE).exists()


def test_a_limited_sample_is_a_quick_estimate_never_stored(tmp_path):
    with FakeLLMServer(models=[JUDGE]) as llm:
        llm.set_default(None, discerning)
        env = environment(tmp_path / "home", llm)
        done = run_lemmata(
            ["calibrate", "--backend", "local", "--model", JUDGE, "--limit", "6", "--yes"], env, tmp_path
        )
    assert done.returncode == 0, done.stderr
    assert "a quick estimate on 6 of the 120" in done.stderr
    assert "accepted 0 of 3 proofs humans judged incorrect" in done.stdout
    assert "at these rates the checks would earn trust" in done.stdout
    assert "a quick estimate, not stored" in done.stdout
    assert load_calibration(tmp_path / "home", JUDGE) is None


def test_calibrate_runs_from_an_installed_wheel_without_the_checkout(tmp_path):
    wheels, site, source = tmp_path / "wheels", tmp_path / "site", tmp_path / "source"
    # Built from a copy: setuptools leaves ./build behind in the folder it builds.
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    for name in ("lemmata", "snakemake_logger_plugin_lemmata"):
        shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(wheels),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (wheel,) = wheels.glob("lemmata-*.whl")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    with FakeLLMServer(models=[JUDGE]) as llm:
        llm.set_default(None, discerning)
        env = {**environment(tmp_path / "home", llm), "PYTHONPATH": str(site)}
        located = subprocess.run(
            [sys.executable, "-c", "import lemmata; print(lemmata.__file__)"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert located.stdout.startswith(str(site)), located.stdout + located.stderr
        done = run_lemmata(["calibrate", "--backend", "local", "--model", JUDGE, "--yes"], env, tmp_path)
        assert done.returncode == 0, done.stderr
        assert "trust: calibrated" in done.stdout
        llm.set_default(None, credulous)
        reviewed = checked_status(tmp_path / "home", env, tmp_path)
    assert reviewed["status"] == "reviewed"  # a proof checked by the model the wheel calibrated


def test_the_api_runs_one_calibration_at_a_time_and_reports_its_progress(tmp_path):
    release = threading.Event()
    with FakeLLMServer(models=[JUDGE]) as llm:
        llm.set_default(None, discerning)
        llm.before_answer = lambda request: release.wait(60)
        env = {**environment(tmp_path / "home", llm), "LOCAL_LLM_MODEL": JUDGE}
        with api_client(DataHome(tmp_path / "home"), env) as client:
            started = client.post("/api/calibrations", json={"backend": "local"})
            assert started.status_code == 202 and started.json()["running"] is True
            again = client.post("/api/calibrations", json={"backend": "local"})
            assert again.status_code == 409 and f"a calibration of {JUDGE} (local) runs" in again.json()["error"]
            release.set()
            wait_until(lambda: not client.get("/api/calibrations").json()["running"], 300, 0.5)
            local = next(row for row in client.get("/api/calibrations").json()["models"] if row["backend"] == "local")
    assert local["trust"] == "calibrated" and local["measured"] == 120
    assert "trust: calibrated" in local["output"]
