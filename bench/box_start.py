"""What a box costs to start: the experiment sandbox and the TeX box against what they replace.

Each row runs a trivial job N times (default 10) and prints the median and the spread:
- python, bare: `python -I -c pass` as a plain subprocess (the floor);
- unshare (before issue 22): `unshare --net --pid --fork --mount-proc --kill-child python -I -c pass`;
- bubblewrap alone: the box's bwrap command around `python -I -S -c pass`, no cgroup;
- experiment sandbox: `run_python("pass")`, the whole thing: inputs written, cgroup made and
  removed, bwrap, setpriv, supervisor, worker, audit hook;
- experiment sandbox with numpy: `run_python("import numpy")`, what a real test pays;
- pdflatex, bare: one pass over a one-line document in a temporary directory;
- TeX box: the same pass through `trial_compile` (staging, box, driver, reading the log).

Usage: python bench/box_start.py [--repeat 10]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from lemmata.isolation.box import box_identity, python_paths
from lemmata.isolation.bubblewrap import SETPRIV, Layout, bwrap_command, system_library_paths
from lemmata.isolation.sandbox import run_python
from lemmata.latex.trial import trial_compile

DOCUMENT = "\\documentclass{article}\\begin{document}Hello.\\end{document}\n"


def timed(job: Callable[[], object], repeat: int) -> list[float]:
    job()  # warm the page cache
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        job()
        times.append(time.perf_counter() - started)
    return times


def run(command: list[str]) -> None:
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def bare_pdflatex() -> None:
    with tempfile.TemporaryDirectory() as directory:
        (Path(directory) / "a.tex").write_text(DOCUMENT)
        subprocess.run(
            ["pdflatex", "-draftmode", "-interaction=nonstopmode", "a.tex"],
            cwd=directory,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )


def checked(result_ok: bool, what: str) -> None:
    if not result_ok:
        raise SystemExit(f"box_start: {what} failed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    repeat = parser.parse_args().repeat
    python = [sys.executable, "-I", "-c", "pass"]
    layout = Layout((*python_paths(), *system_library_paths(), SETPRIV), "/box/work", 1 << 20)
    bwrap = bwrap_command(layout, box_identity(), {"PATH": "/usr/bin"}, [sys.executable, "-I", "-S", "-c", "pass"])
    rows: list[tuple[str, Callable[[], object]]] = [
        ("python, bare", lambda: run(python)),
        (
            "unshare (before issue 22)",
            lambda: run(["unshare", "--net", "--pid", "--fork", "--mount-proc", "--kill-child", *python]),
        ),
        ("bubblewrap alone", lambda: run(bwrap)),
        ("experiment sandbox", lambda: checked(run_python("pass").returncode == 0, "the sandbox")),
        ("experiment sandbox, import numpy", lambda: checked(run_python("import numpy").returncode == 0, "numpy")),
    ]
    if shutil.which("pdflatex"):
        rows += [
            ("pdflatex, bare", bare_pdflatex),
            ("TeX box (trial compile)", lambda: checked(trial_compile(DOCUMENT, timeout=30) == [], "TeX")),
        ]
    print(f"{repeat} runs each, seconds\n")
    print("| job | median | min | max |")
    print("|---|---|---|---|")
    for name, job in rows:
        times = timed(job, repeat)
        print(f"| {name} | {statistics.median(times):.3f} | {min(times):.3f} | {max(times):.3f} |")


if __name__ == "__main__":
    main()
