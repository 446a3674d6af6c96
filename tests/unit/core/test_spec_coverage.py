"""docs/spec-coverage.md points at real things: every test it names exists (a file of tests/ and,
after `::`, a test function in it), and every file, folder or symbol of its "where" column exists
in the repository. A renamed test, a moved function or a deleted module fails here with the row."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from support import REPO

TABLE = REPO / "docs" / "spec-coverage.md"
#: A backticked span that names a file or folder: it ends in a known suffix or a slash.
PATH_SHAPE = re.compile(r"^[\w./*-]+(\.(py|md|js|smk|yaml|sty|tex|css|html|json|toml|txt)|/)$")
#: Where a "where" path may start: the repository, or the package (the table's convention).
ROOTS = (REPO, REPO / "lemmata")


def table_rows(text: str) -> Iterator[tuple[str, str, str]]:
    """(rule, where, tests) of each row of the page's tables but their headers."""
    for line in text.splitlines():
        if not line.startswith("|") or line.startswith("|---"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and not cells[1].lower().startswith("where"):
            yield cells[0], cells[1], cells[2]


def defines(path: Path, symbol: str) -> bool:
    """Whether the file defines `symbol`: a Python def/class/constant, a Snakemake rule or
    checkpoint, a JavaScript function or constant."""
    pattern = (
        rf"^\s*(?:async\s+)?(?:def|class)\s+{symbol}\b|^\s*{symbol}\s*[:=]|^(?:rule|checkpoint)\s+{symbol}\s*:"
        rf"|\bfunction\*?\s+{symbol}\b|\b(?:const|let)\s+{symbol}\s*="
    )
    return re.search(pattern, path.read_text(encoding="utf-8"), re.MULTILINE) is not None


def resolved(path: str) -> list[Path]:
    for root in ROOTS:
        found = sorted(root.glob(path.rstrip("/"))) if "*" in path else [root / path.rstrip("/")]
        found = [item for item in found if item.exists()]
        if found:
            return found
    return []


def problems_of_where(where: str) -> list[str]:
    problems = []
    for span in re.findall(r"`([^`]+)`", where):
        path, _, symbol = span.partition("::")
        if not PATH_SHAPE.match(path):
            continue
        found = resolved(path)
        if not found:
            problems.append(f"`{span}`: no such file or folder under the repository or lemmata/")
            continue
        name = re.match(r"\w*", symbol).group(0)  # `resume --wait-at-gates`: the command resume
        if name and not any(item.is_file() and defines(item, name) for item in found):
            problems.append(f"`{span}`: {path} defines no {name}")
    return problems


def problems_of_tests(tests: str, test_files: dict[str, list[Path]]) -> list[str]:
    problems, current = [], []
    for span in re.findall(r"`([^`]+)`", tests):
        match = re.match(r"^(?:tests/[\w/]*/)?(test_\w+\.py)?(?:::(\w+))?", span)
        name, function = match.groups() if match else (None, None)
        if name:
            current = test_files.get(name, [])
            if not current:
                problems.append(f"`{span}`: no test file {name} under tests/")
                continue
        if function and current and not any(defines(path, function) for path in current):
            problems.append(f"`{span}`: {current[0].relative_to(REPO)} has no test {function}")
    return problems


def coverage_problems(text: str, test_files: dict[str, list[Path]]) -> list[str]:
    problems = []
    for rule, where, tests in table_rows(text):
        for problem in problems_of_where(where) + problems_of_tests(tests, test_files):
            problems.append(f"{rule[:60]}…: {problem}")
    return problems


def all_test_files() -> dict[str, list[Path]]:
    files: dict[str, list[Path]] = {}
    for path in sorted((REPO / "tests").rglob("test_*.py")):
        files.setdefault(path.name, []).append(path)
    return files


def test_every_test_and_module_the_coverage_table_names_exists() -> None:
    assert coverage_problems(TABLE.read_text(encoding="utf-8"), all_test_files()) == []


def test_the_check_fails_on_a_renamed_test_and_a_moved_function() -> None:
    this = Path(__file__)
    row = (
        "| rule | `tests/unit/core/test_spec_coverage.py::defines`, `run/gates.py::no_such_function` "
        "| `test_spec_coverage.py::test_the_check_fails_on_a_renamed_test_and_a_moved_function`, "
        "`::test_a_name_that_was_renamed`, `test_gone.py` |"
    )
    assert coverage_problems(row, {this.name: [this]}) == [
        "rule…: `run/gates.py::no_such_function`: run/gates.py defines no no_such_function",
        "rule…: `::test_a_name_that_was_renamed`: tests/unit/core/test_spec_coverage.py has no test "
        "test_a_name_that_was_renamed",
        "rule…: `test_gone.py`: no test file test_gone.py under tests/",
    ]
