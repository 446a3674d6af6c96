"""`lemmata serve` as a subprocess for tests: started on a free loopback port with the given
environment and options, its base URL once it answers, the lines it printed, stopped at the end."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from support.fake_search_servers import unused_port
from support.waiting import wait_until


@dataclass
class Served:
    base_url: str
    port: int
    process: subprocess.Popen
    log: Path

    def printed(self) -> str:
        """What the server wrote to stdout and stderr so far (its URL line, uvicorn's log)."""
        return self.log.read_text(errors="replace")


@contextmanager
def lemmata_serve(env: dict[str, str], workdir: Path, *options: str, seconds: float = 30) -> Iterator[Served]:
    """`lemmata serve --port <free> OPTIONS` with `env`, in `workdir` (its log goes there too).
    Ready once the page answers: the page needs no token, so this works whatever the options."""
    port = unused_port()
    log = workdir / f"server-{port}.log"
    with open(log, "wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "lemmata", "serve", "--port", str(port), *options],
            env=env,
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    served = Served(f"http://127.0.0.1:{port}", port, process, log)
    try:
        _wait_until_serving(served, seconds)
        yield served
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_serving(served: Served, seconds: float) -> None:
    def answers() -> bool:
        assert served.process.poll() is None, f"lemmata serve exited:\n{served.printed()}"
        try:
            httpx.get(f"{served.base_url}/", timeout=1, trust_env=False).raise_for_status()
            return True
        except httpx.HTTPError:
            return False

    wait_until(
        answers, seconds, 0.2, message=lambda: f"lemmata serve did not answer within {seconds} s:\n{served.printed()}"
    )
