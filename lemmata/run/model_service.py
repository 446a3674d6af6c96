"""The run's shared embedded model: started by the driver before Snakemake, stopped after it.

The model server (llm/model_server.py) is a process of its own session, so a Ctrl+C meant for
the driver does not kill it under a job that is finishing its call. It ends:
- when the driver's drive ends (completed, paused, stopped at a gate, failed): the driver stops it;
- when the driver was killed: once no workflow process works on the run any more (Snakemake,
  told by the kernel that its parent died, finishes its running jobs and exits).
A resume starts a new one. Its log is logs/model_server.log in the run folder.

`python -m lemmata.run.model_service RUN_DIR SOCKET DRIVER_PID` is the server process itself.
"""

from __future__ import annotations

import faulthandler
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from lemmata import layout
from lemmata.errors import LemmataError, ProviderError
from lemmata.llm.model_server import SOCKET_NAME, SOCKET_VARIABLE, serve
from lemmata.run.workflow import workflow_processes

#: How long the model may take to load (1-3 s on a laptop, longer from a cold disk).
READY_SECONDS = 300.0
#: How long a stopped server may take to finish the call it is answering (none: the drive is over).
STOP_SECONDS = 10.0


class ModelServerFailed(ProviderError):
    """The run's model server did not start (its log says why)."""


@contextmanager
def shared_model(run_dir: Path, backend: str, remote: bool) -> Iterator[dict[str, str]]:
    """The environment the run's jobs need to reach its shared model: empty unless the run uses
    the embedded model on this machine (a cluster's jobs run elsewhere and load it themselves)."""
    if backend != "embedded" or remote:
        yield {}
        return
    directory = Path(tempfile.mkdtemp(prefix="lemmata-model-"))  # mode 0700: our user only
    socket_path = directory / SOCKET_NAME
    log_path = Path(run_dir) / layout.MODEL_SERVER_LOG
    log_path.parent.mkdir(parents=True, exist_ok=True)
    environment = {key: value for key, value in os.environ.items() if key != SOCKET_VARIABLE}
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "lemmata.run.model_service", str(run_dir), str(socket_path), str(os.getpid())],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=environment,
            start_new_session=True,
        )
    try:
        _wait_until_ready(process, socket_path, log_path)
        yield {SOCKET_VARIABLE: str(socket_path)}
    finally:
        _stop(process)
        shutil.rmtree(directory, ignore_errors=True)


def _wait_until_ready(process: subprocess.Popen[bytes], socket_path: Path, log_path: Path) -> None:
    """The server binds its socket once the model is loaded."""
    deadline = time.monotonic() + READY_SECONDS
    while not socket_path.exists():
        if process.poll() is not None:
            tail = log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:]
            raise ModelServerFailed(
                f"the embedded model server did not start ({tail[0] if tail else f'exit {process.returncode}'}); "
                f"see {log_path}"
            )
        if time.monotonic() > deadline:
            _stop(process)
            raise ModelServerFailed(f"the embedded model did not load within {READY_SECONDS:.0f} s; see {log_path}")
        time.sleep(0.05)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _serve_run(run_dir: Path, socket_path: Path, driver_pid: int) -> None:
    from lemmata.llm.registry import in_process_embedded
    from lemmata.run.record import run_settings

    # A crash inside the model library (a SIGSEGV in llama.cpp) kills the server in the middle of a
    # call; the jobs only see a closed connection. The fault handler leaves the signal and the
    # Python stack in the log, which their error names.
    faulthandler.enable()
    try:
        backend = in_process_embedded(run_settings(run_dir))
        load = getattr(backend, "load", None)
        if load is not None:
            started = time.monotonic()
            load()  # before the socket exists: a bound socket means a loaded model
            print(f"model loaded in {time.monotonic() - started:.1f} s", flush=True)
    except LemmataError as error:  # its last line is what the driver reports
        print(f"cannot serve the model: {error}", flush=True)
        raise SystemExit(1) from None

    def needed() -> bool:
        """The driver lives (we are still its child), or its orphaned workflow finishes its jobs."""
        return os.getppid() == driver_pid or bool(workflow_processes(run_dir))

    # SIGTERM (the driver's stop) ends serve_forever through SystemExit; the socket is removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        serve(backend, socket_path, needed)
    finally:
        with suppress(OSError):  # the folder the driver made for the socket, when no driver is left to remove it
            socket_path.parent.rmdir()
        print("model server stopped", flush=True)


if __name__ == "__main__":
    _serve_run(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]))
