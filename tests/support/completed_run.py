"""One completed run of the even-sum task, made once per test session and shared by copy.

A whole `lemmata prove` (real CLI, workflow, pdflatex, Coq) costs seconds of both cores; tests
that only read a finished run or extend it (resume, rewrite, serve, kill) start from a copy of
this one instead of making their own. The xdist workers share it too: the first to need it makes
it under a lock, in the folder all workers' temporary folders sit in.

A run calls the services named in its own settings (config.yaml), and the server that made the
shared run is gone when a test copies it: `copy_completed_home` points the copy at the test's
own fake model and search services, so that what a test asserts about its server's requests
(no call made, the rewrite's calls) is about the run it looks at.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import yaml

from lemmata import layout
from lemmata.run.record import load_record, save_record
from support import even_sum_session
from support.fake_llm_server import FakeLLMServer
from support.fake_search_servers import FakeSearchServers

FOLDER = "completed-even-sum"


def shared_folder(basetemp: Path) -> Path:
    """Where every worker of this session finds the shared run (pytest's basetemp of the session:
    under xdist each worker has its own, beside the others)."""
    return basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp


def completed_home_in(
    folder: Path, environment: Callable[[Path, FakeLLMServer, FakeSearchServers], dict[str, str]]
) -> Path:
    """The data directory holding the completed run, made on first use (`environment(home, llm,
    search)` gives the CLI's environment)."""
    home = folder / FOLDER / "home"
    with open(folder / f"{FOLDER}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other workers wait here while one makes it
        if not (folder / FOLDER / "made").exists():
            shutil.rmtree(folder / FOLDER, ignore_errors=True)  # a half-made one (an interrupted session)
            _make(home, environment)
            (folder / FOLDER / "made").touch()
    return home


def _make(home: Path, environment: Callable[[Path, FakeLLMServer, FakeSearchServers], dict[str, str]]) -> None:
    with FakeLLMServer() as llm, FakeSearchServers() as search:
        even_sum_session.install(llm)
        result = subprocess.run(
            [sys.executable, "-m", "lemmata", "prove", even_sum_session.TASK, "-o", str(home / "out")],
            env=environment(home, llm, search),
            cwd=home.parent,
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )
    assert result.returncode == 0, result.stderr


def copy_completed_home(source: Path, home: Path, env: Mapping[str, str]) -> Path:
    """A copy of the completed data directory at `home` (modification times kept, so Snakemake
    finds every output up to date), its run pointed at the services `env` names and delivering to
    the copy's own `out/` (the delivered paper is copied with it); the copy's run directory."""
    shutil.copytree(source, home, symlinks=True, dirs_exist_ok=True)  # the environment may have made it
    (run_dir,) = (home / "runs").iterdir()
    config_file = run_dir / layout.CONFIG
    config = yaml.safe_load(config_file.read_text(encoding="utf-8"))
    retargeted = {key: env.get(key, value) if key.endswith("_BASE_URL") else value for key, value in config.items()}
    stat = config_file.stat()
    config_file.write_text(yaml.safe_dump(retargeted, sort_keys=False), encoding="utf-8")
    os.utime(config_file, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    save_record(run_dir, load_record(run_dir), output_dir=str(home / "out"))
    return run_dir
