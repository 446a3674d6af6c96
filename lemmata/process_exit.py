"""Waiting for a child process to end, woken by the kernel the moment it does.

`Popen.wait(timeout)` and a loop of `poll()` and `sleep()` both look at the process now and then:
Popen sleeps up to 50 ms between looks. A run waits for many short processes on its critical
path (each numerical check's box, the workflow process at the end), and each such wait ended on
average half a look late. A pidfd (Linux 5.3+) becomes readable when its process ends; without
one (an older kernel, a seccomp filter that refuses the call) this falls back to Popen's wait.

The TeX box's driver (latex/tex_driver.py) has its own copy: it runs inside the box, which
shows it the standard library and none of lemmata.
"""

from __future__ import annotations

import os
import select
import subprocess


def wait_for_exit(process: subprocess.Popen[bytes], timeout: float) -> bool:
    """Whether `process` ended within `timeout` seconds (then it is reaped: its returncode set)."""
    if process.poll() is not None:
        return True
    try:
        pidfd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        ended, _, _ = select.select([pidfd], [], [], max(0.0, timeout))
    finally:
        os.close(pidfd)
    return bool(ended) and process.poll() is not None
