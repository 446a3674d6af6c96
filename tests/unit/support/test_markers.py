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


class Item:
    """What the collection hook reads of a test: its path and its marks."""

    def __init__(self, path: str, *marks: str) -> None:
        self.path, self.marks = TESTS.parent / path, set(marks)

    def add_marker(self, mark) -> None:
        self.marks.add(mark.name)

    def get_closest_marker(self, name: str):
        return name if name in self.marks else None


def test_the_long_tests_come_first_and_each_module_stays_together():
    from conftest import pytest_collection_modifyitems

    items = [
        Item("tests/e2e/test_tex_attacks.py"),
        Item("tests/e2e/test_browser_ui.py", "long"),
        Item("tests/e2e/test_browser_ui.py", "long"),
        Item("tests/unit/core/test_redaction.py"),
        Item("tests/e2e/test_slurm_e2e.py", "long"),
    ]
    order = list(items)
    pytest_collection_modifyitems(items)
    assert items == [order[1], order[2], order[4], order[0], order[3]]
    assert [sorted(item.marks) for item in items] == [["e2e", "long"], ["e2e", "long"], ["e2e", "long"], ["e2e"], []]
