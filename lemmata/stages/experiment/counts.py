"""The fixed form a numerical test reports its counts in, read strictly.

The last non-empty line of the test's stdout is one JSON object:

    {"trials": N, "violations": V}                                required: integers, N >= 1, 0 <= V <= N
    "series": [{"x": X, "trials": n, "violations": v}, ...]       optional: the same N instances split by
                                                                  a parameter X (a size n, a batch number)
    "x_label": "n"                                                optional: what X is, for the plot's axis

Other keys are ignored. A malformed counts line fails the attempt (the model gets the reason
and another turn); a malformed series only loses the series: the plot is drawn from the counts.
A Python dict literal (`print(counts)` instead of `print(json.dumps(counts))`: the embedded model
wrote it five times over, feedback notwithstanding) is the same object: it is read, with a note.
"""

from __future__ import annotations

import ast
import json
import math
import re
import signal
from dataclasses import dataclass, field

from lemmata.artifacts import SeriesPoint
from lemmata.errors import ModelOutputError
from lemmata.isolation.sandbox import SandboxResult

MAX_SERIES_POINTS = 200
X_LABEL = re.compile(r"[ -~]{1,40}")  # printable ASCII: it goes into a LaTeX plot


class TestFailure(ModelOutputError):
    """The test did not end with valid counts; the message says why, for the record and the model."""

    __test__ = False  # not a pytest class, despite the name


@dataclass(frozen=True)
class Counts:
    trials: int
    violations: int
    series: list[SeriesPoint] = field(default_factory=list)
    x_label: str = ""
    notes: list[str] = field(default_factory=list)


def read_counts(result: SandboxResult) -> Counts:
    """The counts of a finished test; TestFailure when it was stopped, crashed or printed none."""
    if result.stopped or result.timed_out:
        raise TestFailure(result.stopped or "stopped: ran out of time")
    if result.returncode != 0:
        raise TestFailure(f"crashed ({exit_description(result.returncode)}): {last_line(result.stderr)}")
    return parse_counts(result.stdout)


def exit_description(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


def last_line(text: str, width: int = 200) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:width] if lines else "no output"


def parse_counts(stdout: str) -> Counts:
    lines = [line.strip() for line in stdout.splitlines() if line.strip()]
    if not lines:
        raise TestFailure("printed nothing: the last line of stdout must be the counts line")
    counts, read_as = _counts_object(lines[-1])
    trials = _count(counts, "trials", minimum=1)
    violations = _count(counts, "violations", minimum=0)
    if violations > trials:
        raise TestFailure(f"the counts line has more violations ({violations}) than trials ({trials})")
    series, x_label, notes = _optional_series(counts, trials, violations)
    return Counts(trials, violations, series, x_label, [*read_as, *notes])


def _counts_object(line: str) -> tuple[dict, list[str]]:
    """The counts line's object, and a note when it was read as a Python dict rather than JSON."""
    shown = line if len(line) <= 120 else line[:117] + "..."
    try:
        value = json.loads(line, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as error:
        literal = _python_dict(line)
        if literal is None:
            raise TestFailure(f"the last line of stdout is not the JSON counts object ({error}): {shown}") from None
        return literal, ["the counts line was printed as a Python dict, not JSON; read as the same object"]
    except ValueError as error:  # duplicate keys
        raise TestFailure(f"the last line of stdout is not the JSON counts object ({error}): {shown}") from None
    if not isinstance(value, dict):
        raise TestFailure(f"the last line of stdout is not the JSON counts object: {shown}")
    return value, []


def _python_dict(line: str) -> dict | None:
    """A dict literal of distinct string keys (literal_eval: literals only, no code runs), else None."""
    if not line.startswith("{"):
        return None
    try:
        node = ast.parse(line, mode="eval").body
        if not isinstance(node, ast.Dict):
            return None
        keys = [key.value if isinstance(key, ast.Constant) else None for key in node.keys]
        if not all(isinstance(key, str) for key in keys) or len(set(keys)) != len(keys):
            return None
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict:
    keys = [key for key, _ in pairs]
    duplicated = sorted({key for key in keys if keys.count(key) > 1})
    if duplicated:
        raise ValueError(f"duplicate keys {duplicated}")
    return dict(pairs)


def _count(counts: dict, key: str, minimum: int) -> int:
    value = counts.get(key)
    if key not in counts:
        raise TestFailure(f"the counts line has no {key!r}")
    if isinstance(value, bool) or not isinstance(value, int):
        raise TestFailure(f"{key!r} must be an integer, got {json.dumps(value)}")
    if value < minimum:
        raise TestFailure(f"{key!r} must be at least {minimum}, got {value}")
    return value


def _optional_series(counts: dict, trials: int, violations: int) -> tuple[list[SeriesPoint], str, list[str]]:
    if "series" not in counts:
        return [], "", []
    try:
        series = parse_series(counts["series"], trials, violations)
    except ValueError as error:
        return [], "", [f"series ignored: {error}"]
    label = counts.get("x_label", "")
    if isinstance(label, str) and X_LABEL.fullmatch(label):
        return series, label.strip(), []
    return series, "", [] if label == "" else ["x_label ignored: it must be up to 40 printable ASCII characters"]


def parse_series(value: object, trials: int, violations: int) -> list[SeriesPoint]:
    """The series sorted by x; ValueError saying what is wrong with it."""
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_SERIES_POINTS:
        raise ValueError(f"it must be a list of 1 to {MAX_SERIES_POINTS} points")
    points = [_point(entry, index) for index, entry in enumerate(value)]
    xs = [point.x for point in points]
    if len(set(xs)) != len(xs):
        raise ValueError("two points have the same x")
    if sum(p.trials for p in points) != trials or sum(p.violations for p in points) != violations:
        raise ValueError("its trials and violations do not add up to the totals")
    return sorted(points, key=lambda point: point.x)


def _point(entry: object, index: int) -> SeriesPoint:
    if not isinstance(entry, dict) or set(entry) != {"x", "trials", "violations"}:
        raise ValueError(f"point {index} must be an object with exactly x, trials and violations")
    x, point_trials, point_violations = entry["x"], entry["trials"], entry["violations"]
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise ValueError(f"point {index}: x must be a finite number")
    if any(isinstance(v, bool) or not isinstance(v, int) for v in (point_trials, point_violations)):
        raise ValueError(f"point {index}: trials and violations must be integers")
    if point_trials < 1 or not 0 <= point_violations <= point_trials:
        raise ValueError(f"point {index}: needs trials >= 1 and 0 <= violations <= trials")
    return SeriesPoint(x=x, trials=point_trials, violations=point_violations)
