"""The real `lemmata` command line as a test runs it: a subprocess of this interpreter (the
installed lemmata), no standard input, its output captured as text."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def run_lemmata(
    args: list[str], env: Mapping[str, str], cwd: Path, timeout: float = 300, **options: Any
) -> subprocess.CompletedProcess[str]:
    """`lemmata ARGS` to its end; `timeout` is a ceiling against a hang, not a speed check."""
    return subprocess.run(
        [sys.executable, "-m", "lemmata", *args],
        env=dict(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        **options,
    )
