"""SIGKILL of the workflow process (what the out-of-memory killer does) during a fake-model run, at
seeded random points (issue 35, finding 10). Each kill is recorded `stopped` with the advice to
resume, not `failed`; the cgroups of the boxes its jobs had open are removed; `lemmata resume`
goes on to completion; and the model is asked nothing twice: the answers of a killed job's calls
are given again to its rerun, so the call log holds exactly the calls of an uninterrupted run
(a call on its way at the kill is asked again: its answer never reached the log).
The same when the driver is killed too (a crash). A job whose box is killed records that, and the
run goes on. What was lost: nothing."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from conftest import cli_environment

from lemmata.isolation import staging
from lemmata.isolation.cgroups import _box_parents
from lemmata.llm.calllog import read_call_records
from lemmata.run.record import load_record
from lemmata.run.workflow import workflow_processes
from support import even_sum_session
from support.waiting import wait_until

SEEDS = (1, 2)
KILLS_PER_RUN = 3


def start(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "lemmata", *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def call_multiset(run_dir: Path) -> Counter:
    return Counter(
        (r["role"], r["scope"], json.dumps(r["messages"])) for r in read_call_records(run_dir / "llm_calls.jsonl")
    )


def logged_calls(run_dir: Path) -> int:
    path = run_dir / "llm_calls.jsonl"
    return path.read_bytes().count(b"\n") if path.exists() else 0


def the_run_dir(home: Path) -> Path:
    return wait_until(lambda: next((home / "runs").glob("*/run.json"), None), 60).parent


def kill_the_workflow(run_dir: Path, when, driver: subprocess.Popen[str], crash: bool = False) -> int | None:
    """SIGKILL the Snakemake process once `when()` holds, and with `crash` its driver just before
    (a driver that saw its workflow die would record it); None when the run ended first."""

    def ready() -> int | bool:
        if driver.poll() is not None:
            return True
        pids = workflow_processes(run_dir)
        return pids[0] if pids and when() else False

    pid = wait_until(ready, 120, 0.02)
    if pid is True:
        return None
    if crash:
        os.kill(driver.pid, signal.SIGKILL)
        driver.communicate(timeout=60)
    os.kill(pid, signal.SIGKILL)
    return pid


def assert_stopped_with_advice(driver: subprocess.Popen[str], run_dir: Path) -> None:
    _, stderr = driver.communicate(timeout=120)
    record = load_record(run_dir)
    assert driver.returncode == 1 and "Traceback" not in stderr, stderr
    assert record.status == "stopped", record.message
    assert "killed (SIGKILL" in record.message and f"`lemmata resume {run_dir.name}`" in record.message


def box_cgroups_of(pid: int) -> list[Path]:
    return [d for _, parent in _box_parents() for d in parent.glob(f"lemmata-box-{pid}-*")]


@pytest.mark.parametrize(
    "seed, crash",
    [
        pytest.param(1, False, id="seed-1-snakemake"),
        pytest.param(2, False, id="seed-2-snakemake"),
        pytest.param(3, True, id="seed-3-driver-and-snakemake"),
    ],
)
def test_seeded_kills_of_snakemake_are_stops_and_resume_completes_with_no_call_twice(
    services, completed_home, tmp_path, seed, crash
):
    """`crash`: the driver is killed too, as in a power loss; nobody records the stop then, and the
    resume finds what the dead driver left (run/driver.py, _repair)."""
    llm, search = services
    clean_run = next((completed_home / "runs").iterdir())
    total = logged_calls(clean_run)
    kill_points = sorted(random.Random(seed).sample(range(1, total - 2), KILLS_PER_RUN))
    home = tmp_path / "home"
    env = cli_environment(home, LLM_BACKEND="local", LOCAL_LLM_BASE_URL=llm.openai_base_url, **search.settings_values())

    driver = start(["prove", even_sum_session.TASK, "-o", str(tmp_path / "out")], env, tmp_path)
    run_dir = the_run_dir(home)
    killed: list[int] = []
    for point in kill_points:
        pid = kill_the_workflow(run_dir, lambda point=point: logged_calls(run_dir) >= point, driver, crash)
        if pid is None:
            break  # the run got past this point while we waited: the remaining kills have no target
        killed.append(pid)
        if crash:
            wait_until(lambda: not workflow_processes(run_dir), 30)
        else:
            assert_stopped_with_advice(driver, run_dir)
        driver = start(["resume", run_dir.name], env, tmp_path)
    _, stderr = driver.communicate(timeout=180)

    assert driver.returncode == 0 and load_record(run_dir).status == "completed", stderr
    assert len(killed) >= 2, f"the kills at {kill_points} calls did not happen"
    assert [box for pid in killed for box in box_cgroups_of(pid)] == []
    assert call_multiset(run_dir) == call_multiset(clean_run)  # every call of a clean run, each once
    assert (tmp_path / "out" / "paper_v1.pdf").is_file()


@pytest.fixture
def slow_experiment(services):
    """(model, search): the experiment's numerical test sleeps 2 s first, so that its box is there
    to be killed (the tests look for it every 20 ms); the session's own answer again afterwards
    (the server is the module's). Every box of the run sleeps so: the lemmas' and the retries'."""
    llm, search = services
    slow = "import time\ntime.sleep(2)\n" + even_sum_session.EXPERIMENT_CODE
    llm.set_default("experiment", json.dumps({"code": slow, "rationale": "random even pairs; parity of the sum"}))
    try:
        yield llm, search
    finally:
        even_sum_session.install(llm)


def open_boxes(run_dir: Path, boxes: list[Path], logged_asks: int = 0):
    """A condition: a box cgroup of the run's Snakemake process exists (left in `boxes`), and the
    call log holds `logged_asks` experiment calls. The lemmas are checked at once, so a box can open
    while another lemma's call is on its way: a kill then loses that answer, and it is asked again."""

    def condition() -> bool:
        pids = workflow_processes(run_dir)
        boxes[:] = box_cgroups_of(pids[0]) if pids else []
        return bool(boxes) and logged_experiment_calls(run_dir) >= logged_asks

    return condition


def logged_experiment_calls(run_dir: Path) -> int:
    path = run_dir / "llm_calls.jsonl"
    return sum(r["role"] == "experiment" for r in read_call_records(path)) if path.exists() else 0


needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="the experiment box's cgroup needs root (or a delegated subtree)"
)


@needs_root
@pytest.mark.parametrize("crash", [pytest.param(False, id="snakemake"), pytest.param(True, id="driver-and-snakemake")])
def test_a_kill_while_an_experiment_box_runs_removes_its_cgroups(slow_experiment, tmp_path, crash):
    """`crash`: the driver dies too; the resume removes the cgroups the dead workflow left."""
    llm, search = slow_experiment
    asked_before = len(llm.requests)  # the module's server: earlier tests asked it too
    home = tmp_path / "home"
    env = cli_environment(home, LLM_BACKEND="local", LOCAL_LLM_BASE_URL=llm.openai_base_url, **search.settings_values())
    driver = start(["prove", even_sum_session.TASK, "-o", str(tmp_path / "out")], env, tmp_path)
    run_dir = the_run_dir(home)
    boxes: list[Path] = []
    pid = kill_the_workflow(run_dir, open_boxes(run_dir, boxes, logged_asks=2), driver, crash)
    assert pid is not None and boxes, "the run ended before an experiment box opened"
    if not crash:
        assert_stopped_with_advice(driver, run_dir)
        assert box_cgroups_of(pid) == [] and not any(box.exists() for box in boxes)
    wait_until(lambda: not workflow_processes(run_dir), 30)

    resumed = start(["resume", run_dir.name], env, tmp_path)
    _, stderr = resumed.communicate(timeout=180)
    assert resumed.returncode == 0 and load_record(run_dir).status == "completed", stderr
    assert box_cgroups_of(pid) == [] and not any(box.exists() for box in boxes)
    # the inputs of the boxes it had open (the model's tests), which no handler of the killed process
    # removed: the resumed workflow's process did
    assert list(Path(tempfile.gettempdir()).glob(f"{staging.PREFIX}{pid}@*")) == []
    experiment_asks = [r for r in llm.requests[asked_before:] if r.role == "experiment"]
    assert len(experiment_asks) == 2  # its two turns, each asked once: the killed job's answer was given again
    assert len({json.dumps(r.body["messages"]) for r in experiment_asks}) == 2


@needs_root
def test_a_job_whose_box_is_killed_says_so_and_the_run_completes(slow_experiment, tmp_path):
    """SIGKILL of the processes of a job's box (what the out-of-memory killer does to a test that
    takes too much): the job records that test as killed, tries again, and the run goes on."""
    llm, search = slow_experiment
    home = tmp_path / "home"
    env = cli_environment(home, LLM_BACKEND="local", LOCAL_LLM_BASE_URL=llm.openai_base_url, **search.settings_values())
    driver = start(["prove", even_sum_session.TASK, "-o", str(tmp_path / "out")], env, tmp_path)
    run_dir = the_run_dir(home)
    boxes: list[Path] = []
    a_box_is_open = open_boxes(run_dir, boxes)

    def box_processes() -> list[int]:
        if not a_box_is_open():
            return []
        return [int(pid) for box in boxes for pid in _read(box / "cgroup.procs").split()]

    processes = wait_until(lambda: box_processes() or driver.poll() is not None, 120, 0.02)
    assert processes is not True, "the run ended before an experiment box opened"
    for pid in processes:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    _, stderr = driver.communicate(timeout=180)

    assert driver.returncode == 0 and load_record(run_dir).status == "completed", stderr
    checks = json.loads((run_dir / "experiment.json").read_text())["checks"]
    assert any("killed by the system (SIGKILL)" in failure for check in checks for failure in check["failures"])
    assert max(call_multiset(run_dir).values()) == 1  # nothing asked twice


def _read(path: Path) -> str:
    with contextlib.suppress(OSError):
        return path.read_text()
    return ""
