"""Experiment stage: numerical tests of low-confidence lemmas, run in the sandbox."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from lemmata.artifacts import Experiment, LemmaCheck, ProvedLemma, Theory
from lemmata.errors import ModelOutputError
from lemmata.llm.client import LLMClient
from lemmata.sandbox import SandboxResult, run_python
from lemmata.stages.answers import ExperimentAnswer
from lemmata.stages.parsing import parse_json_answer
from lemmata.stages.prompts import render_prompt

SUSPECT_RATE = 0.01
QUANTITATIVE_SIGNALS = re.compile(
    r"\d|[<>≤≥=]|\\(?:le|ge|leq|geq|sum|prod|int|lim|log|exp|frac|sqrt)\b|"
    r"\b(?:bound|integer|integers|real|prime|sum|product|rate|probability|expect\w*|converg\w*|"
    r"inequalit\w*|at most|at least|even|odd|divisible|number)\b",
    re.IGNORECASE,
)

Runner = Callable[[str], SandboxResult]


def experiment_decision(mode: str, theory: Theory) -> tuple[bool, str]:
    """Whether to run, and why: `auto` runs only on statements with quantitative signals."""
    if mode == "false":
        return False, "EXPERIMENT_MODE=false"
    if mode == "true":
        return True, "EXPERIMENT_MODE=true"
    text = " ".join([theory.theorem_statement, *(lemma.statement for lemma in theory.lemmas)])
    if QUANTITATIVE_SIGNALS.search(text):
        return True, "the statement has quantitative signals"
    return False, "EXPERIMENT_MODE=auto and the statement has no quantitative signals"


def run_experiment(client: LLMClient, theory: Theory, mode: str, runner: Runner = run_python) -> Experiment:
    run, reason = experiment_decision(mode, theory)
    if not run:
        return Experiment(skipped=True, skip_reason=reason)
    verified = [lemma.id for lemma in theory.lemmas if lemma.status == "proved"]
    tested = [lemma for lemma in theory.lemmas if lemma.status == "low_confidence"]
    checks = [check_lemma(client, lemma, runner) for lemma in tested]
    ran = [check for check in checks if check.outcome == "ran"]
    alignment = round(sum(not c.numerically_suspect for c in ran) / len(ran), 4) if ran else None
    return Experiment(
        skipped=False,
        skip_reason="" if tested else "no low-confidence lemma to test",
        verified_lemmas=verified,
        low_confidence_lemmas=[lemma.id for lemma in tested],
        checks=checks,
        alignment_score=alignment,
    )


def check_lemma(client: LLMClient, lemma: ProvedLemma, runner: Runner) -> LemmaCheck:
    prompt = render_prompt("experiment", lemma_id=lemma.id, statement=lemma.statement)
    text = client.complete("experiment", prompt.system, prompt.user, json_answer=True)
    base = {"lemma_id": lemma.id, "group": "low_confidence"}
    try:
        answer = parse_json_answer(text, ExperimentAnswer, "experiment")
        base["code"] = answer.code
        trials, violations = read_counts(runner(answer.code))
    except ModelOutputError as exc:  # a bad test is this lemma's result, not the stage's failure
        return LemmaCheck(**base, outcome="error", detail=str(exc))
    rate = violations / trials
    return LemmaCheck(**base, outcome="ran", trials=trials, violations=violations, violation_rate=round(rate, 6),
                      numerically_suspect=rate > SUSPECT_RATE, detail=answer.rationale)


def read_counts(result: SandboxResult) -> tuple[int, int]:
    """The test's last JSON line; anything else is the test's failure, reported as such."""
    if result.timed_out:
        raise ModelOutputError("the numerical test ran out of time")
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise ModelOutputError(f"the numerical test crashed: {last[:200]}")
    for line in reversed(result.stdout.strip().splitlines()):
        try:
            counts = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(counts, dict) and isinstance(counts.get("trials"), int) and isinstance(counts.get("violations"), int):
            if counts["trials"] > 0 and 0 <= counts["violations"] <= counts["trials"]:
                return counts["trials"], counts["violations"]
    raise ModelOutputError("the numerical test printed no valid {trials, violations} line")
