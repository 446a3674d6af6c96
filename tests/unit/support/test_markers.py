"""The `e2e` mark comes from where a test is (tests/conftest.py), not from each file remembering it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2]


def collected(*args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q", *args],
        cwd=TESTS.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 5), done.stdout + done.stderr
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_the_e2e_mark_follows_the_folder():
    # test_tex_attacks.py carries no mark of its own; test_redaction.py is a unit test.
    files = ("tests/e2e/test_tex_attacks.py", "tests/faults/test_error_path.py", "tests/unit/core/test_redaction.py")
    marked = collected("-m", "e2e", *files)
    unmarked = collected("-m", "not e2e", *files)
    assert marked and all(item.startswith(("tests/e2e/", "tests/faults/")) for item in marked)
    assert {item.split("::")[0] for item in marked} == {
        "tests/e2e/test_tex_attacks.py",
        "tests/faults/test_error_path.py",
    }
    assert unmarked and all(item.startswith("tests/unit/") for item in unmarked)


def test_the_long_tests_are_collected_first_and_each_module_stays_together():
    items = collected(
        "tests/e2e/test_tex_attacks.py", "tests/e2e/test_embedded_smoke.py", "tests/e2e/test_honest_papers.py"
    )
    files = [item.split("::")[0] for item in items]
    assert files[0] == "tests/e2e/test_embedded_smoke.py"
    assert files == sorted(files, key=lambda name: (name != files[0], files.index(name)))  # no module split up
