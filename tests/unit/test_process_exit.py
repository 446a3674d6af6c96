"""Waiting for a child process (lemmata/process_exit.py `wait_for_exit`, and its copy in the TeX
box's driver, latex/tex_driver.py): True and reaped when it ends within the timeout, False and
still running when it does not, on kernels with and without pidfd_open."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable

import pytest

from lemmata import process_exit
from lemmata.latex import tex_driver

Wait = Callable[[subprocess.Popen[bytes], float], bool]


@pytest.fixture(params=["lemmata", "tex box driver"])
def wait_for_exit(request: pytest.FixtureRequest) -> Wait:
    return process_exit.wait_for_exit if request.param == "lemmata" else tex_driver.wait_for_exit


@pytest.fixture(params=["pidfd", "no pidfd"])
def kernel(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "no pidfd":

        def not_on_this_kernel(pid: int, flags: int = 0) -> int:
            raise OSError(38, "Function not implemented")

        monkeypatch.setattr(os, "pidfd_open", not_on_this_kernel)
    return str(request.param)


def _python(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code])


def test_a_process_that_ends_is_reaped_with_its_status(wait_for_exit: Wait, kernel: str) -> None:
    process = _python("raise SystemExit(3)")
    assert wait_for_exit(process, 30)
    assert process.returncode == 3


def test_a_process_still_running_at_the_timeout_is_left_running(wait_for_exit: Wait, kernel: str) -> None:
    process = _python("import time; time.sleep(30)")
    try:
        assert not wait_for_exit(process, 0.2)
        assert process.poll() is None  # not reaped, not killed: the caller decides
    finally:
        process.kill()
        process.wait()


def test_a_process_that_ended_before_the_wait_began(wait_for_exit: Wait, kernel: str) -> None:
    process = _python("pass")
    while _state(process.pid) != "Z":  # a zombie: ended, not yet reaped
        time.sleep(0.01)
    assert wait_for_exit(process, 30)
    assert process.returncode == 0


def test_a_timeout_already_past_looks_once(wait_for_exit: Wait, kernel: str) -> None:
    process = _python("import time; time.sleep(30)")
    try:
        assert not wait_for_exit(process, -1.0)
    finally:
        process.kill()
        process.wait()


def test_the_two_copies_are_the_same_code() -> None:
    import inspect

    lemmata_copy = inspect.getsource(process_exit.wait_for_exit)
    driver_copy = inspect.getsource(tex_driver.wait_for_exit)
    assert _code(lemmata_copy) == _code(driver_copy)


def _code(source: str) -> str:
    """The function without its docstring."""
    head, _, rest = source.partition('"""')
    _, _, body = rest.partition('"""')
    return head + body


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0]
