"""Test support shared by the test suite and the benchmarks: fake model and search servers, scripted
sessions and backends, a SLURM cluster, `lemmata serve` as a subprocess, paper audits.

Not part of lemmata (the wheel does not ship it): imported as `support.…` with tests/ on sys.path,
never the checkout's root, so that the tests and benchmarks run whichever lemmata is installed.
pytest puts tests/ there (pyproject.toml: pythonpath), the benchmarks and examples insert it, and a
subprocess that imports the support gets it through PYTHONPATH (`TESTS`)."""

from __future__ import annotations

from pathlib import Path

#: tests/: the directory on sys.path from which `support` is imported.
TESTS = Path(__file__).resolve().parent.parent
#: The checkout's root.
REPO = TESTS.parent
#: tests/data: fixtures read by the tests.
DATA = TESTS / "data"
