"""Files of a data home are private (issue 35, finding 8): with the researcher's umask 022, a whole
run on the fake model, by the real CLI and by the real server, leaves nothing in $LEMMATA_HOME that
another user of the machine could read or enter: every prompt and answer (llm_calls.jsonl), the
logs, forecasts, figures, Snakemake's metadata, the compiled PDF, the saved settings."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import TEST_API_TOKEN, cli_environment

from support import even_sum_session
from support.served import lemmata_serve


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The common umask: what it lets through (group and others may read) is what lemmata must not."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def paths_under(home: Path) -> set[Path]:
    return {home, *home.rglob("*")}


def readable_by_others(paths: set[Path]) -> list[str]:
    """Each path group or others may read, write or enter, with its mode."""
    loose = []
    for path in sorted(paths):
        mode = stat.S_IMODE(path.lstat().st_mode)
        if mode & 0o077 and not path.is_symlink():
            loose.append(f"{mode:04o} {path}")
    return loose


def test_a_cli_run_with_umask_022_writes_nothing_others_can_read(services, tmp_path, umask_022):
    llm, search = services
    home = tmp_path / "home"
    env = cli_environment(home, LLM_BACKEND="local", LOCAL_LLM_BASE_URL=llm.openai_base_url, **search.settings_values())
    home.chmod(0o755)  # as an older lemmata left it
    before = paths_under(home)  # the test's own calibration files, made with the test's umask
    result = subprocess.run(
        [sys.executable, "-m", "lemmata", "prove", even_sum_session.TASK, "-o", str(tmp_path / "out")],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr
    written = paths_under(home) - before
    (run_dir,) = (home / "runs").iterdir()
    for name in ("llm_calls.jsonl", "forecasts.jsonl", "logs/snakemake.log", "logs/events.jsonl", "paper_v1.pdf"):
        assert run_dir / name in written
    assert any(p.parent.name == "figures" for p in written) and any(".snakemake" in p.parts for p in written)
    assert readable_by_others(written | {home}) == []
    assert f"made the data directory {home} private (mode 755 -> 700)" in result.stderr


def test_the_server_and_the_runs_it_starts_write_nothing_others_can_read(services, tmp_path, umask_022):
    llm, search = services
    home = tmp_path / "home"
    env = cli_environment(home, LLM_BACKEND="local", LOCAL_LLM_BASE_URL=llm.openai_base_url, **search.settings_values())
    before = paths_under(home)
    headers = {"Authorization": f"Bearer {TEST_API_TOKEN}"}
    with lemmata_serve(env, tmp_path) as served:
        saved = httpx.put(f"{served.base_url}/api/settings", json={"prover": 1234}, headers=headers, trust_env=False)
        assert saved.status_code == 200, saved.text
        started = httpx.post(
            f"{served.base_url}/api/runs",
            json={"task": even_sum_session.TASK, "gate": "none"},
            headers=headers,
            trust_env=False,
        )
        assert started.status_code == 202, started.text
        url = f"{served.base_url}/api/runs/{started.json()['id']}"

        def status_once_it_stops() -> dict:
            """The run's status once no process works on it (its live event stream then ends)."""
            httpx.get(f"{url}/events", headers=headers, timeout=120, trust_env=False).raise_for_status()
            return httpx.get(url, headers=headers, trust_env=False).json()

        status = status_once_it_stops()
        assert status["status"] == "waiting" and status["gate"]["gate"] == "theory_review", status  # it always asks
        decided = httpx.post(f"{url}/gates/theory_review", json={"approved": True, "feedback": ""}, headers=headers)
        assert decided.status_code == 202, decided.text
        assert status_once_it_stops()["status"] == "completed"
    written = paths_under(home) - before
    assert home / "settings.json" in written and any(p.name == "llm_calls.jsonl" for p in written)
    # The papers the server delivers (to results/<id>/ in the home) keep the modes delivery gives
    # them (run/delivery.py); the home, 0700, keeps others out of them as of everything else.
    delivered = {p for p in written if (home / "results") in p.parents}
    assert delivered and readable_by_others(written - delivered | {home}) == []
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
