"""The TeX box driver's wait for a command (latex/tex_driver.py `wait`): the command's status
when it ends within the timeout, TimeoutExpired when it does not, on kernels with and without
pidfd_open."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from lemmata.latex import tex_driver


def _python(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code])


@pytest.fixture(params=["pidfd", "no pidfd"])
def kernel(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "no pidfd":

        def not_on_this_kernel(pid: int, flags: int = 0) -> int:
            raise OSError(38, "Function not implemented")

        monkeypatch.setattr(os, "pidfd_open", not_on_this_kernel)
    return str(request.param)


def test_the_status_of_a_command_that_ends(kernel: str) -> None:
    assert tex_driver.wait(_python("raise SystemExit(3)"), timeout=30) == 3


def test_a_command_still_running_at_the_timeout_raises(kernel: str) -> None:
    process = _python("import time; time.sleep(30)")
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            tex_driver.wait(process, timeout=0.2)
        assert process.poll() is None  # not reaped, not killed: the caller kills its session
    finally:
        process.kill()
        process.wait()


def test_a_command_that_ended_before_the_wait_began(kernel: str) -> None:
    process = _python("pass")
    while _state(process.pid) != "Z":  # a zombie: ended, not yet reaped
        time.sleep(0.01)
    assert tex_driver.wait(process, timeout=30) == 0


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0]
