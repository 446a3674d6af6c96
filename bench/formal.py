"""How often lemmata's machine checks prove true statements, and whether they ever prove false ones.

The yardstick of issue 34: the 244 problems of miniF2F's validation split (default
../shared/data/minif2f-valid.jsonl, one object a line: `name`, `statement`, `proof`; MIT licence;
development data, never shipped in the package). Each statement is checked by the real
`lemmata check STATEMENT --json`, and so is its **false twin**: the same statement with its stated
answer changed to a wrong value, or its conclusion turned around (`false_twin`, rules below). The
table counts, for the true statements and for the twins: machine-checked (soundness: no twin may
be), refuted, tested (no counterexample, no proof), unverified, not formalized, failed to run, and
the seconds per check. Then it lists the cases a developer must look at: every false twin
machine-checked and every true statement refuted, with the formal statement and the
counterexample. Exit status 1 when a false twin was machine-checked, else 0.

The sample: the rows shuffled with `random.Random(--seed)` (default 34, the issue's number), the
first 100 of that order (`--limit N`: the first N; `--all`: all 244). A smaller sample is a prefix
of a larger one with the same seed, so their results are shared.

The false twin, derived mechanically (`false_twin`); each rule names itself in the results:
- "Show that it is X.": the answer X changes, the rest of the statement stays.
  - `answer +1`: the first number of X that is not an exponent or a subscript gets one more in
    magnitude, in X's own form: 898 -> 899, 005 -> 006, 099 -> 100, -9 -> -10 (the sign is kept),
    187.5 -> 188.5, 40,\\!000 -> 40,\\!001 (separators kept), \\frac{2}{3} -> \\frac{3}{3},
    \\frac19 -> \\frac29, 7/2 -> 8/2, 21y+14 -> 22y+14, 18x^8 -> 19x^8, (15,-11) -> (16,-11),
    x \\in [-2,7] -> x \\in [-3,7], -\\frac{2\\sqrt{3}}{3} -> -\\frac{3\\sqrt{3}}{3}. A multiple-choice
    answer keeps its letter and changes its value: \\textbf{(B) }-\\frac19 -> \\textbf{(B) }-\\frac29.
  - `next choice`: a multiple-choice answer with no number (a letter alone, or a word) names the
    next choice (A->B, ..., E->A) instead, with that choice's text when the answer had one:
    \\textbf{(B)} -> \\textbf{(C)}, \\mathrm{(E)}\\ \\text{prime} -> \\mathrm{(A)}\\ \\mathrm{even}.
    AMC choices are distinct values, so the twin's is wrong.
  - `answer + 1 appended`: an expression with no number outside exponents: a^3 + a^2 -> a^3 + a^2 + 1.
- A claim without a stated answer: its conclusion (after the last "show that", "prove that",
  "then" or "we have") is turned around, so that the twin states the opposite for every input:
  - `relation word`: the last of divides <-> does not divide, is divisible by -> is not divisible
    by, is prime -> is not prime, is the square of -> is not the square of, is congruent to -> is
    not congruent to, there is no -> there is a, there exists a -> there is no;
  - `relation turned`: else the last relation outside braces in the conclusion's last formula that
    has one: \\leq -> >, \\geq -> <, < -> \\geq, > -> \\leq, = -> \\neq, \\neq -> =, \\mid <-> \\nmid,
    \\equiv <-> \\not\\equiv (x^2 + 49 = (x+7i)(x-7i) -> x^2 + 49 \\neq (x+7i)(x-7i));
  - `it is false that`: else "it is false that" is put after the marker ("Show that it is false
    that x and y have the same denominator").
  Only the last relation of a conjunction or disjunction is turned, so such a twin is false when
  that part alone fails somewhere the rest holds (true of this split's rows; check a new one).
- `no claim`: a question without a stated answer ("Determine all ...", "Solve ...") has no
  conclusion to turn: "It is false that" is put before it. Neither it nor its twin is a claim;
  both are expected to be not formalized, and one machine-checked is listed like any other.

Speed: with `--backend embedded` the bench starts one shared model server for all its checks
(lemmata/run/model_service.py, as a run's driver does for its jobs; the checks reach it through
LEMMATA_MODEL_SOCKET), so the model loads once and keeps the formalizer's context: each check
reads only its own statement instead of the ~800-token prompt. `--no-shared-model` lets every
check load the model itself. Measured on 2 cores (2026-11-26, --limit 3, 6 checks):
without the server the 6 checks took 191 s (median 30 s a check; 892 prompt tokens
evaluated a check), with it 130 s and 1.7 s to start it (median 20.5 s; 216 tokens evaluated, the
first check the whole prompt): a third less. What is left is generation: each of these checks made
two formalizer calls (its first answer was refused) of 100-220 tokens at about 13 tokens a second.
9 of the 12 answers were the same both ways; the others differ as reusing a cache changes the
arithmetic of greedy decoding (as between a run's jobs). Measured with nothing else running:
another embedded model on the same 2 cores made every call ten times slower.

Results are kept per check in the output folder (items/<name>/<true|twin>/: the statement file,
the model calls, result.json), so an interrupted run goes on where it stopped. A kept result is
used again only when its statement and the fingerprint of lemmata's formal checks and formalizer
prompt (`checks_fingerprint`) are the same; `--fresh` forgets them all.

Usage: python bench/formal.py [--backend embedded] [--limit N | --all] [--seed 34] [--data FILE]
                              [--out DIR] [--fresh] [--no-shared-model] [--true-only]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "minif2f-valid.jsonl"
DEFAULT_SEED = 34
DEFAULT_COUNT = 100
KINDS = ("true", "twin")

# ---------------------------------------------------------------------------------------------
# The false twin


@dataclass(frozen=True)
class Twin:
    statement: str
    rule: str


class NoTwin(ValueError):
    """No rule changes the statement (never for this split's rows: the unit tests hold it)."""


#: The stated answer: what follows the last "Show that it is".
_ANSWER_MARK = re.compile(r"Show that it is\s*", re.IGNORECASE)
#: A choice's letter as the problems write it: \textbf{(B) }, \text {(D) }, \mathrm{(B) \ 2 } (the
#: value inside the braces), \textbf{C }, \mathbf{D}, (\text{E}), (\mathrm{A}), (B).
_CHOICE_MARKS = (
    r"\\(?:textbf|mathrm|mathbf|text)\s*\{\s*\(\s*(?P<a>[A-E])\s*\)\s*\}?",
    r"\\(?:textbf|mathrm|mathbf|text)\s*\{\s*(?P<b>[A-E])\s*\}",
    r"\(\s*\\(?:textbf|mathrm|mathbf|text)\s*\{?\s*(?P<c>[A-E])\s*\}?\s*\)",
    r"\(\s*(?P<d>[A-E])\s*\)",
)
_CHOICE = re.compile("|".join(_CHOICE_MARKS))
_BARE_LETTER = re.compile(r"^\s*\$?\s*([A-E])\s*\$?\s*\.*\s*$")
#: An exponent or subscript (skipped: 18x^8 changes its coefficient, not its power), a short
#: fraction (\frac19: one digit an argument), or a number (thousands separators, decimals).
_TOKEN = re.compile(
    r"(?P<skip>[\^_]\s*(?:\{(?:[^{}]|\{[^{}]*\})*\}|\\[A-Za-z]+|\w))"
    r"|(?P<short>\\[dtc]?frac\s*(?P<numerator>\d)\s*(?P<denominator>\d))"
    r"|(?P<number>\d+(?:(?:,\\!|\{,\}|,)\d{3}(?!\d))*(?:\.\d+)?)"
)
_SEPARATOR = re.compile(r",\\!|\{,\}|,")
#: Where the conclusion of a claim starts: after the last of these.
_CONCLUSION_MARK = re.compile(r"\b(?:show|prove)\s+that\b|\bthen\b|\bwe have\b:?", re.IGNORECASE)
#: Relations said in words, and what the twin says instead.
_RELATION_WORDS = (
    (r"\bdoes not divide\b", "divides"),
    (r"\bdivides\b", "does not divide"),
    (r"\bis not divisible\b", "is divisible"),
    (r"\bis divisible\b", "is not divisible"),
    (r"\bis prime\b", "is not prime"),
    (r"\bis the square of\b", "is not the square of"),
    (r"\bis congruent to\b", "is not congruent to"),
    (r"\bthere is no\b", "there is a"),
    (r"\bthere (?:is|exists) an?\b", "there is no"),
)
_RELATION_WORD = re.compile("|".join(f"(?P<w{i}>{pattern})" for i, (pattern, _) in enumerate(_RELATION_WORDS)))
#: Relations in formulas (longest spellings first), and their opposites.
_RELATIONS = {
    r"\not\equiv": r"\equiv",
    r"\equiv": r"\not\equiv",
    r"\nmid": r"\mid",
    r"\mid": r"\nmid",
    r"\leq": ">",
    r"\le": ">",
    r"\geq": "<",
    r"\ge": "<",
    r"\neq": "=",
    r"\ne": "=",
    r"\lt": r"\geq",
    r"\gt": r"\leq",
    "<": r"\geq",
    ">": r"\leq",
    "=": r"\neq",
}
_RELATION = re.compile(
    "|".join(re.escape(spelling) + (r"(?![A-Za-z])" if spelling[-1].isalpha() else "") for spelling in _RELATIONS)
)
_FORMULA = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\[(.+?)\\\]|\\\((.+?)\\\)", re.DOTALL)


def false_twin(statement: str) -> Twin:
    """The statement made false mechanically (the module's docstring gives the rules)."""
    marks = list(_ANSWER_MARK.finditer(statement))
    if marks:
        start = marks[-1].end()
        answer, rule = _wrong_answer(statement[start:], statement[: marks[-1].start()])
        twin = Twin(statement[:start] + answer, rule)
    else:
        twin = _opposite_claim(statement)
    if twin.statement == statement:
        raise NoTwin(f"no rule changes {statement[:80]!r}")
    return twin


def _wrong_answer(answer: str, before: str) -> tuple[str, str]:
    changed = _first_number_plus_one(answer)
    if changed is not None:
        return changed, "answer +1"
    bare = _BARE_LETTER.match(answer)
    if bare:
        letter = bare.group(1)
        return answer[: bare.start(1)] + _next_letter(letter) + answer[bare.end(1) :], "next choice"
    choice = _CHOICE.search(answer)
    if choice:
        return _next_choice(answer, choice, before), "next choice"
    stripped = answer.rstrip()
    body = stripped.rstrip(".")
    return body + " + 1" + stripped[len(body) :] + answer[len(stripped) :], "answer + 1 appended"


def _first_number_plus_one(text: str) -> str | None:
    for token in _TOKEN.finditer(text):
        if token.group("skip"):
            continue
        if token.group("short"):
            numerator = int(token.group("numerator")) + 1
            head = token.group("short")[: token.start("numerator") - token.start("short")]
            written = str(numerator) if numerator < 10 else "{" + str(numerator) + "}"
            tail = token.group("short")[token.end("numerator") - token.start("short") :]
            return text[: token.start()] + head + written + tail + text[token.end() :]
        return text[: token.start()] + _plus_one(token.group("number")) + text[token.end() :]
    return None


def _plus_one(number: str) -> str:
    """One more, written as `number` is: its width (leading zeros), separators and decimals kept."""
    whole, dot, decimals = number.partition(".")
    separator = _SEPARATOR.search(whole)
    digits = _SEPARATOR.sub("", whole)
    more = str(int(digits) + 1).zfill(len(digits))
    if separator:
        groups = []
        while len(more) > 3:
            groups.insert(0, more[-3:])
            more = more[:-3]
        more = separator.group(0).join([more, *groups])
    return more + dot + decimals


def _next_letter(letter: str) -> str:
    return "ABCDE"[("ABCDE".index(letter) + 1) % 5]


def _choice_letter(match: re.Match[str]) -> str:
    return next(group for group in match.groups() if group)


def _next_choice(answer: str, mark: re.Match[str], before: str) -> str:
    """The answer's choice mark moved to the next letter; a word after it becomes that choice's
    text as the problem lists it (or goes, when the list cannot be read)."""
    letter = _choice_letter(mark)
    following = _next_letter(letter)
    key = next(name for name, value in mark.groupdict().items() if value)
    new_mark = (
        mark.group(0)[: mark.start(key) - mark.start()] + following + mark.group(0)[mark.end(key) - mark.start() :]
    )
    rest = answer[mark.end() :]
    value = rest.rstrip().rstrip(".").strip()
    if not value.strip(" \\~;,}$"):
        return answer[: mark.start()] + new_mark + rest
    listed = _choices(before).get(following)
    ending = rest[len(rest.rstrip().rstrip(".")) :]
    return answer[: mark.start()] + new_mark + ("\\ " + listed if listed else "") + ending


def _choices(text: str) -> dict[str, str]:
    """The choices a problem lists, letter -> text (up to the next choice, \\qquad or $)."""
    marks = list(_CHOICE.finditer(text))
    found: dict[str, str] = {}
    for number, mark in enumerate(marks):
        end = marks[number + 1].start() if number + 1 < len(marks) else len(text)
        value = re.split(r"\\qquad|\$", text[mark.end() : end])[0]
        value = value.strip().removeprefix("\\ ").strip()
        if value:
            found.setdefault(_choice_letter(mark), value)
    return found


def _opposite_claim(statement: str) -> Twin:
    marks = list(_CONCLUSION_MARK.finditer(statement))
    if not marks:
        return Twin("It is false that " + statement[:1].lower() + statement[1:], "no claim")
    start = marks[-1].end()
    head, conclusion = statement[:start], statement[start:]
    words = list(_RELATION_WORD.finditer(conclusion))
    if words:
        word = words[-1]
        index = int(next(name for name, value in word.groupdict().items() if value)[1:])
        replaced = conclusion[: word.start()] + _RELATION_WORDS[index][1] + conclusion[word.end() :]
        return Twin(head + replaced, "relation word")
    for formula in reversed(list(_FORMULA.finditer(conclusion))):
        group = next(number for number in range(1, 5) if formula.group(number) is not None)
        turned = _turn_last_relation(formula.group(group))
        if turned is not None:
            replaced = conclusion[: formula.start(group)] + turned + conclusion[formula.end(group) :]
            return Twin(head + replaced, "relation turned")
    return Twin(head + " it is false that" + conclusion, "it is false that")


def _turn_last_relation(formula: str) -> str | None:
    """The formula with its last relation outside braces turned around; None when it has none."""
    depth, last = 0, None
    position = 0
    while position < len(formula):
        character = formula[position]
        if character == "{":
            depth += 1
        elif character == "}":
            depth -= 1
        elif depth == 0:
            relation = _RELATION.match(formula, position)
            if relation:
                last = relation
                position = relation.end()
                continue
        position += 1
    if last is None:
        return None
    opposite = _RELATIONS[last.group(0)]
    if opposite[-1].isalpha() and last.end() < len(formula) and formula[last.end()].isalpha():
        opposite += " "
    return formula[: last.start()] + opposite + formula[last.end() :]


# ---------------------------------------------------------------------------------------------
# The sample, the checks and the table


def load_rows(path: Path) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for number, row in enumerate(rows, start=1):
        if not {"name", "statement"} <= row.keys():
            sys.exit(f"{path}:{number}: a row needs a name and a statement")
    return rows


def sample(rows: list[dict], count: int | None, seed: int) -> list[dict]:
    """The rows in a seeded order, the first `count` of it (None: all)."""
    shuffled = list(rows)
    random.Random(seed).shuffle(shuffled)
    return shuffled[:count] if count is not None else shuffled


def checks_fingerprint() -> str:
    """What a kept result depends on in lemmata: its formal checks and the formalizer's prompt."""
    import lemmata

    package = Path(lemmata.__file__).resolve().parent
    files = [
        *sorted((package / "kernel").glob("*.py")),
        *sorted((package / "formal").glob("*.py")),
        *sorted((package / "stages" / "formal").glob("*.py")),
        package / "agents" / "answers.py",
        package / "agents" / "prompts" / "formalizer.md",
    ]
    digest = hashlib.sha256()
    for path in files:
        if path.is_file():
            digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def check_one(statement: str, case: Path, environ: dict[str, str]) -> dict:
    """One `lemmata check --json` of `statement` in the folder `case`: its answer, or why there is none."""
    if case.exists():
        shutil.rmtree(case)  # an unfinished or outdated check starts again from nothing
    case.mkdir(parents=True)
    (case / "statement.txt").write_text(statement, encoding="utf-8")
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "lemmata", "check", "--json", "--log-dir", str(case), str(case / "statement.txt")],
        capture_output=True,
        text=True,
        env=environ,
        stdin=subprocess.DEVNULL,
    )
    entry: dict = {"wall_seconds": round(time.monotonic() - started, 2), **_model_use(case)}
    lines = done.stdout.strip().splitlines()
    if done.returncode not in (0, 1) or not lines:
        return {**entry, "error": done.stderr.strip()[-500:] or f"exit {done.returncode}"}
    try:
        return {**entry, "result": json.loads(lines[-1])}
    except json.JSONDecodeError:
        return {**entry, "error": f"not JSON: {lines[-1][:200]}"}


def _model_use(case: Path) -> dict:
    """The check's model calls from its log: how many, their seconds, the prompt tokens evaluated."""
    calls, seconds, evaluated = 0, 0.0, None  # evaluated: only a local model says (the embedded one)
    log = case / "llm_calls.jsonl"
    if log.is_file():
        for line in log.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            calls += 1
            seconds += record.get("latency_s") or 0.0
            timings = record.get("timings") or {}
            if timings.get("prompt_tokens_evaluated") is not None:
                evaluated = (evaluated or 0) + timings["prompt_tokens_evaluated"]
    return {"model_calls": calls, "model_seconds": round(seconds, 2), "tokens_evaluated": evaluated}


def outcome(entry: dict) -> str:
    """machine_checked, refuted, tested, unverified, not_formalized or failed."""
    if "result" not in entry:
        return "failed"
    result = entry["result"]
    if (result.get("formal") or {}).get("not_formalized"):
        return "not_formalized"
    return result["status"] if result["status"] != "reviewed" else "unverified"


def exit_status(entries: list[dict]) -> int:
    """1 when a false twin was machine-checked (lemmata proved something false), else 0."""
    return int(any(entry["kind"] == "twin" and outcome(entry) == "machine_checked" for entry in entries))


ROWS = (
    ("machine_checked", "machine-checked", "true ≥ 20%; twins **0**"),
    ("refuted", "refuted", "true ≤ 2%; twins ≥ 20%"),
    ("tested", "tested (no counterexample, no proof)", ""),
    ("unverified", "unverified (formalized, nothing decided)", ""),
    ("not_formalized", "not formalized (none written, or refused)", ""),
    ("failed", "failed to run", "0"),
)


def table(entries: list[dict]) -> str:
    groups = {kind: [entry for entry in entries if entry["kind"] == kind] for kind in KINDS}

    def rate(part: int, whole: int) -> str:
        return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "-"

    def seconds(group: list[dict]) -> str:
        if not group:
            return "-"
        walls = [entry["wall_seconds"] for entry in group]
        return f"{statistics.median(walls):.0f} / {sum(walls):.0f}"

    lines = [
        "| | true statements | false twins | target |",
        "|---|---|---|---|",
        f"| checked | {len(groups['true'])} | {len(groups['twin'])} | |",
    ]
    for key, label, target in ROWS:
        counts = [sum(outcome(entry) == key for entry in groups[kind]) for kind in KINDS]
        lines.append(
            f"| {label} | {rate(counts[0], len(groups['true']))} | {rate(counts[1], len(groups['twin']))} | {target} |"
        )
    calls = [sum(entry.get("model_calls", 0) for entry in groups[kind]) for kind in KINDS]
    lines.append(f"| model calls | {calls[0]} | {calls[1]} | |")
    evaluated = [
        [entry["tokens_evaluated"] for entry in groups[kind] if entry.get("tokens_evaluated") is not None]
        for kind in KINDS
    ]
    lines.append(
        "| prompt tokens evaluated, median a check | "
        + " | ".join(f"{statistics.median(values):.0f}" if values else "-" for values in evaluated)
        + " | |"
    )
    lines.append(f"| seconds a check: median / total | {seconds(groups['true'])} | {seconds(groups['twin'])} | |")
    return "\n".join(lines)


def cases_to_look_at(entries: list[dict]) -> str:
    """Every false twin machine-checked and every true statement refuted, with what to see."""
    lines = []
    for kind, wanted, heading in (
        ("twin", "machine_checked", "False twin machine-checked (lemmata proved a false statement)"),
        ("true", "refuted", "True statement refuted"),
    ):
        for entry in entries:
            if entry["kind"] != kind or outcome(entry) != wanted:
                continue
            formal = entry["result"]["formal"]
            counterexample = formal.get("counterexample")
            values = ", ".join(f"{name} = {value}" for name, value in (counterexample or {}).items())
            lines += [
                f"- {heading}: {entry['name']}" + (f" (twin rule: {entry['rule']})" if kind == "twin" else ""),
                f"  statement: {' '.join(entry['statement'].split())[-300:]}",
                f"  formal: {formal.get('statement') or '(none)'}",
                f"  by: {formal.get('checker')} ({formal.get('method')})",
            ]
            if counterexample is not None:
                lines.append(f"  counterexample: {values or '(it computes to false)'}")
    return "\n".join(lines)


@contextmanager
def shared_model_server(folder: Path, environ: dict[str, str]) -> Iterator[dict[str, str]]:
    """One embedded model for all checks, as a run's driver starts it for its jobs: the
    environment that sends a `lemmata check` to it."""
    import yaml

    from lemmata import layout
    from lemmata.run.model_service import shared_model
    from lemmata.settings import Settings

    folder.mkdir(parents=True, exist_ok=True)
    config = Settings.from_environment(environ).workflow_config()
    (folder / layout.CONFIG).write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    started = time.monotonic()
    with shared_model(folder, "embedded", remote=False) as extra:
        print(f"shared model server ready in {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)
        yield extra


def kept_result(case: Path, statement: str, fingerprint: str) -> dict | None:
    try:
        entry = json.loads((case / "result.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if entry.get("statement") != statement or entry.get("fingerprint") != fingerprint or "result" not in entry:
        return None
    return entry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default=os.environ.get("LLM_BACKEND", "embedded"))
    parser.add_argument("--limit", type=int, default=None, help=f"check this many statements (default {DEFAULT_COUNT})")
    parser.add_argument("--all", action="store_true", help="check every statement of the file")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"the sample's seed (default {DEFAULT_SEED})")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=None, help="default: $LEMMATA_HOME/bench/formal-<backend>")
    parser.add_argument("--fresh", action="store_true", help="forget the results of earlier runs in --out")
    parser.add_argument("--no-shared-model", action="store_true", help="embedded: every check loads the model itself")
    parser.add_argument(
        "--true-only", action="store_true", help="no twins: the reach of a change, in half the time (not its soundness)"
    )
    args = parser.parse_args()
    if not args.data.is_file():
        sys.exit(f"no statements at {args.data}: pass --data FILE (JSONL: name, statement)")
    from lemmata.settings import lemmata_home

    count = args.limit if args.limit is not None else (None if args.all else DEFAULT_COUNT)
    rows = sample(load_rows(args.data), count, args.seed)
    folder = args.out or lemmata_home() / "bench" / f"formal-{args.backend}"
    items = folder / "items"
    if args.fresh and items.exists():
        shutil.rmtree(items)
    items.mkdir(parents=True, exist_ok=True)
    fingerprint = checks_fingerprint()
    environ = {**os.environ, "LLM_BACKEND": args.backend}
    environ.pop("LEMMATA_MODEL_SOCKET", None)
    cases = []
    for row in rows:
        twin = false_twin(row["statement"])
        cases.append((row, "true", row["statement"], ""))
        if not args.true_only:
            cases.append((row, "twin", twin.statement, twin.rule))
    todo = [
        case for case in cases if kept_result(items / _slug(case[0]["name"]) / case[1], case[2], fingerprint) is None
    ]
    shared = args.backend == "embedded" and not args.no_shared_model and bool(todo)
    started = time.monotonic()
    entries = []
    with shared_model_server(folder / "model", environ) if shared else nullcontext({}) as extra:
        for number, (row, kind, statement, rule) in enumerate(cases, start=1):
            case = items / _slug(row["name"]) / kind
            entry = kept_result(case, statement, fingerprint)
            if entry is None:
                entry = {
                    "name": row["name"],
                    "kind": kind,
                    "rule": rule,
                    "statement": statement,
                    "fingerprint": fingerprint,
                    **check_one(statement, case, {**environ, **extra}),
                }
                (case / "result.json").write_text(json.dumps(entry, indent=1) + "\n", encoding="utf-8")
            entries.append(entry)
            said = ("error: " + entry["error"][:80]) if "error" in entry else outcome(entry)
            print(
                f"[{number}/{len(cases)}] {kind:4} {said} ({entry['wall_seconds']:.0f} s) {row['name']}",
                file=sys.stderr,
                flush=True,
            )
    backend = next((entry["result"]["checker"] for entry in entries if "result" in entry), {})
    header = (
        f"backend {backend.get('backend', args.backend)}, model {backend.get('model', '?')}; "
        f"{len(rows)} statements of {args.data.name} (seed {args.seed}) and their false twins; "
        f"checks fingerprint {fingerprint}; this run {time.monotonic() - started:.0f} s"
        + (", one shared model server" if shared else "")
    )
    looks = cases_to_look_at(entries)
    text = f"{header}\n\n{table(entries)}\n" + (f"\n{looks}\n" if looks else "")
    (folder / "table.md").write_text(text, encoding="utf-8")
    print(text, end="")
    sys.exit(exit_status(entries))


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name)[:100] or "row"


if __name__ == "__main__":
    main()
