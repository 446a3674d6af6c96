"""The README's main command on the embedded model, timed end to end, with where the time went.

Runs `lemmata prove` on examples/even-sum (LLM_BACKEND=embedded, SEARCH_TOOLS=false) --runs times,
each in a fresh data directory that uses the installed model, or reads run folders already made
(--runs-from DIR ...). For each run it prints the wall time, the outcome, the calls, the tokens
in and out, and how many prompt tokens the model evaluated and how many it took from its prompt
cache; then a table per stage (seconds from its first job's start to its last job's end, calls,
tokens, evaluated, reused), a table per role (calls, tokens in evaluated / reused, tokens out,
how many of them were copied verbatim from the prompt, model seconds), and the median of the runs.

The runs share the installed model's prompt states (`models/prompt-states/` of the data
directory, as a researcher's runs do: only the first run after a prompt changed reads the system
prompts); --cold-prompts gives each run an empty store instead, as after `lemmata model install`.

Usage: python bench/embedded_run.py [--runs 3] [--runs-from RUN_DIR ...] [--keep DIR] [--cold-prompts]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from lemmata import layout
from lemmata.artifacts import Theory, read_artifact
from lemmata.errors import ArtifactError
from lemmata.home_layout import MODELS, PROMPT_STATES
from lemmata.llm.calllog import read_call_records
from lemmata.llm.embedded_model import default_model_path
from lemmata.run.outcome import outcome_of
from lemmata.run.pipeline import STAGES
from lemmata.run.record import load_record
from lemmata.settings import lemmata_home

REPO = Path(__file__).resolve().parents[1]
TASK = (REPO / "examples" / "even-sum" / "task.txt").read_text(encoding="utf-8")
STARTED = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) .*: started$")
ENDED = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) (done in|failed after|stopped after|crashed after) ")
#: The rule of a call's scope ("prove_lemma:L2", "writer:v2"): the part before the colon.
STAGE_OF_RULE = {rule: stage.name for stage in STAGES for rule in stage.rules}
#: An answer token counts as copied when it lies in a run of at least this many tokens that the
#: prompt holds verbatim: shorter runs are common phrases ("of the", "\\( a \\)"), longer ones
#: restate what the model was given (a proof, a statement, a line of the request).
COPY_RUN = 8
Tokenize = Callable[[str], Sequence[int | str]]


def run_once(keep: Path | None, cold_prompts: bool = False) -> tuple[Path, float, str]:
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="lemmata-bench-home-", dir=keep))
    if not cold_prompts:
        installed = lemmata_home() / MODELS / PROMPT_STATES
        installed.mkdir(parents=True, exist_ok=True)
        (home / MODELS).mkdir()
        (home / MODELS / PROMPT_STATES).symlink_to(installed)
    env = {
        **os.environ,
        "LEMMATA_HOME": str(home),
        "LLM_BACKEND": "embedded",
        "SEARCH_TOOLS": "false",
        "LEMMATA_EMBEDDED_MODEL": str(default_model_path(lemmata_home())),
    }
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "lemmata", "prove", TASK, "--output", str(home / "out")],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    wall = time.monotonic() - started
    return next((home / "runs").iterdir()), wall, result.stderr.strip().splitlines()[-1] if result.stderr else ""


def _stamp(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S").timestamp()


def stage_spans(run_dir: Path) -> dict[str, float]:
    """Seconds from a stage's first job start to its last job end, from the rules' logs."""
    spans: dict[str, list[float]] = defaultdict(list)
    for log in (run_dir / layout.LOGS).rglob("*.log"):
        rule = log.relative_to(run_dir / layout.LOGS).parts[0].removesuffix(".log")
        stage = STAGE_OF_RULE.get(rule)
        if stage is None:
            continue
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            for pattern in (STARTED, ENDED):
                match = pattern.match(line)
                if match:
                    spans[stage].append(_stamp(match.group(1)))
    return {stage: max(times) - min(times) for stage, times in spans.items()}


def copied_tokens(prompt: Sequence[int | str], answer: Sequence[int | str], run: int = COPY_RUN) -> int:
    """How many tokens of `answer` lie in a stretch of at least `run` tokens found verbatim in `prompt`."""
    if len(answer) < run:
        return 0
    seen = {tuple(prompt[i : i + run]) for i in range(len(prompt) - run + 1)}
    copied = [False] * len(answer)
    for start in range(len(answer) - run + 1):
        if tuple(answer[start : start + run]) in seen:
            copied[start : start + run] = [True] * run
    return sum(copied)


def word_tokens(text: str) -> list[str]:
    """Words and single punctuation marks: the fallback tokens when the model's tokenizer is absent."""
    return re.findall(r"\w+|[^\w\s]", text)


def model_tokenizer() -> Tokenize:
    """The embedded model's own tokens (its vocabulary only, read in a second), else words."""
    try:
        from llama_cpp import Llama

        vocabulary = Llama(model_path=str(default_model_path(lemmata_home())), vocab_only=True, verbose=False)
    except (ImportError, ValueError, OSError):
        return word_tokens
    return lambda text: vocabulary.tokenize(text.encode("utf-8"), add_bos=False, special=False)


def add_call(totals: dict[str, float], record: dict) -> None:
    """One logged call added to a stage's or a role's totals: calls, tokens in / out, the prompt
    tokens evaluated (all of them when the backend did not say) and reused, the model's seconds."""
    evaluated = (record.get("timings") or {}).get("prompt_tokens_evaluated")
    totals["calls"] += 1
    totals["in"] += record.get("tokens_in") or 0
    totals["out"] += record.get("tokens_out") or 0
    totals["evaluated"] += evaluated if evaluated is not None else record.get("tokens_in") or 0
    totals["reused"] += record.get("cache_read_tokens") or 0
    totals["model s"] += record.get("latency_s") or 0.0


def per_role(records: Sequence[dict], tokenize: Tokenize) -> dict[str, dict[str, float]]:
    """Per agent role: calls, tokens in (evaluated / reused from the cache), tokens out, the tokens
    out copied verbatim from the call's prompt, and the model's seconds."""
    roles: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for record in records:
        prompt = "\n".join(message.get("content") or "" for message in record.get("messages") or [])
        add_call(roles[record["role"]], record)
        roles[record["role"]]["copied"] += copied_tokens(tokenize(prompt), tokenize(record.get("response") or ""))
    return roles


def print_roles(roles: dict[str, dict[str, float]]) -> None:
    print(f"  {'role':<14}{'calls':>6}{'evaluated':>11}{'reused':>8}{'out':>7}{'copied':>14}{'model s':>9}")
    for role, s in sorted(roles.items(), key=lambda item: -item[1]["model s"]):
        copied = f"{s['copied']:.0f} ({100 * s['copied'] / s['out']:.0f}%)" if s["out"] else "0"
        print(
            f"  {role:<14}{s['calls']:>6.0f}{s['evaluated']:>11.0f}{s['reused']:>8.0f}{s['out']:>7.0f}"
            f"{copied:>14}{s['model s']:>9.0f}"
        )


def summarize(run_dir: Path, tokenize: Tokenize = word_tokens) -> dict:
    records = list(read_call_records(run_dir / layout.LLM_CALLS))
    per_stage: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for record in records:
        stage = STAGE_OF_RULE.get(record["scope"].split(":", 1)[0], "other")
        add_call(per_stage[stage], record)
    for stage, seconds in stage_spans(run_dir).items():
        per_stage[stage]["seconds"] = seconds
    run = json.loads((run_dir / layout.RUN_RECORD).read_text())
    return {
        "status": f"{run.get('status')} ({run.get('message') or run.get('outcome') or ''})",
        "statuses": outcome_of(run_dir, load_record(run_dir)).statuses,
        "checks seconds": machine_check_seconds(run_dir),
        "stages": per_stage,
        "roles": per_role(records, tokenize),
    }


def machine_check_seconds(run_dir: Path) -> float:
    """The seconds the machine checks reported (sampling, Z3, Coq) over the goal and every lemma
    formalized, the statements refuted before any proof included; their processes' start aside."""
    try:
        theory = read_artifact(run_dir / layout.THEORY, Theory)
    except ArtifactError:
        return 0.0
    checks = [theory.goal_check, *(lemma.formal for lemma in theory.lemmas), *(a.formal for a in theory.refuted)]
    return sum(check.seconds for formal in checks if formal is not None for check in formal.checks)


def print_run(name: str, wall: float | None, summary: dict) -> None:
    stages = summary["stages"]
    total = {key: sum(s.get(key, 0) for s in stages.values()) for key in ("calls", "in", "out", "evaluated", "reused")}
    wall_text = f"{wall:.0f} s" if wall is not None else "(not timed here)"
    print(f"\n{name}: wall {wall_text}, {summary['status']}")
    if summary.get("statuses"):
        print(f"  statuses: {summary['statuses']}")
    print(f"  machine checks: {summary.get('checks seconds', 0):.1f} s reported by the checkers")
    print(
        f"  {total['calls']:.0f} calls, {total['in']:.0f} tokens in, {total['out']:.0f} out; "
        f"prompt tokens evaluated {total['evaluated']:.0f}, reused from the cache {total['reused']:.0f}"
    )
    print(f"  {'stage':<20}{'seconds':>9}{'model s':>9}{'calls':>7}{'in':>8}{'out':>7}{'evaluated':>11}{'reused':>8}")
    order = [stage.name for stage in STAGES] + ["other"]
    for stage in order:
        if stage in stages:
            s = stages[stage]
            print(
                f"  {stage:<20}{s.get('seconds', 0):>9.0f}{s.get('model s', 0):>9.0f}{s.get('calls', 0):>7.0f}"
                f"{s.get('in', 0):>8.0f}{s.get('out', 0):>7.0f}{s.get('evaluated', 0):>11.0f}{s.get('reused', 0):>8.0f}"
            )
    print_roles(summary["roles"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs to make (ignored with --runs-from)")
    parser.add_argument("--runs-from", type=Path, nargs="*", default=[], help="run folders to read instead")
    parser.add_argument("--keep", type=Path, help="make the runs' data directories here (default: a temp dir)")
    parser.add_argument("--cold-prompts", action="store_true", help="each run with an empty store of prompt states")
    args = parser.parse_args()
    walls: list[float] = []
    tokenize = model_tokenizer()
    if args.runs_from:
        for run_dir in args.runs_from:
            print_run(str(run_dir), None, summarize(run_dir, tokenize))
        return
    for index in range(1, args.runs + 1):
        run_dir, wall, last_line = run_once(args.keep, args.cold_prompts)
        walls.append(wall)
        print_run(f"run {index} ({run_dir}; {last_line})", wall, summarize(run_dir, tokenize))
    print(
        f"\nmedian wall of {len(walls)} runs: {statistics.median(walls):.0f} s ({', '.join(f'{w:.0f}' for w in walls)})"
    )


if __name__ == "__main__":
    main()
