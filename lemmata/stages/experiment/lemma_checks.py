"""Experiment stage: numerical tests of the lemmas not verified, run in the sandbox.

A lemma with a formal statement is tested by lemmata itself: the statement's own predicate
(formal/predicate.py) runs on thousands of inputs in the sandbox, with no model call, so the test
tests exactly the statement the paper shows, and cannot crash on a model's typo. Every other
lemma gets its own test, written by the experiment agent. A test that is
stopped, denied, crashes or prints no valid counts line goes back to the agent with the reason
and the end of its output, for a corrected one: up to EXPERIMENT_MAX_TURNS tests per lemma, and
no more once the agent writes again a test that failed (it would fail again, and a model that
repeats itself does so to the last turn). A lemma whose turns all fail is recorded as an `error`
with the reasons; the stage goes on.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import partial

from lemmata.agents.answers import ExperimentAnswer
from lemmata.agents.client import LLMClient
from lemmata.agents.history import AgentHistory
from lemmata.agents.parsing import parse_json_answer
from lemmata.agents.prompts import render_prompt
from lemmata.artifacts import Experiment, FormalSpec, LemmaCheck, ProvedLemma, Theory
from lemmata.errors import ModelOutputError
from lemmata.formal.faithfulness import CIRCULAR
from lemmata.formal.predicate import program as predicate_program
from lemmata.isolation.box import BoxUnavailable
from lemmata.isolation.sandbox import SandboxResult, run_python, sandbox_problem
from lemmata.plugins import DomainPlugin
from lemmata.redaction import Redactor, known_secrets
from lemmata.stages.experiment.counts import Counts, read_counts
from lemmata.stages.experiment.signals import quantitative_signals

SUSPECT_RATE = 0.01
#: Lemmas checked at once (each turns of a model call, then a box): a plan has up to 10 lemmas,
#: and a provider answers calls in parallel; the boxes, one per check, share the machine's cores.
CHECKS_AT_ONCE = 4
# What of a failed attempt goes back to the model: enough to see the cause, not a flood.
CODE_SHOWN = 4000
STDERR_LINES_SHOWN = 12
STDOUT_LINES_SHOWN = 3
LINE_WIDTH_SHOWN = 300

#: Why a lemma read as circular gets no test. The embedded model's test of "an integer is even if
#: it can be written as 2k for some integer k" sampled every integer and counted the odd ones as
#: violations (5006 of 10000), and the paper warned against a true lemma (the README's main
#: command, 2026-11-29).
TRUE_BY_ITS_FORM = (
    "not tested: as lemmata reads it, its conclusion is one of its hypotheses, which no input can "
    "violate, so a numerical test could find only its own mistakes"
)

Runner = Callable[[str], SandboxResult]
NO_SANDBOX = "no numerical test was run, since the sandbox cannot run on this machine"
#: lemmata's own test of a formal statement runs in the box without the audit hook, whose messages
#: are for a model's code (the box holds alone: isolation/sandbox.py).
LEMMATA_RUNNER: Runner = partial(run_python, guard=False)


@dataclass(frozen=True)
class AgentLimits:
    max_turns: int = 5  # EXPERIMENT_MAX_TURNS
    compress_every: int = 6  # CONTEXT_COMPRESS_AFTER_TURNS


def domain_tools(plugin: DomainPlugin | None) -> tuple[Runner, str]:
    """The sandbox runner with the domain plugin's modules importable, and how to call them."""
    if plugin is None or not plugin.sandbox_modules:
        return run_python, ""
    return partial(run_python, modules=plugin.sandbox_modules), plugin.tools_guide


def experiment_decision(mode: str, theory: Theory) -> tuple[bool, str]:
    """Whether to run, and why: `auto` runs only when the formal statement (the goal, for a
    theory written before it was kept) has quantitative signals (`signals.py`)."""
    if mode == "false":
        return False, "EXPERIMENT_MODE=false"
    if mode == "true":
        return True, "EXPERIMENT_MODE=true"
    signals = quantitative_signals(theory.formal_statement or theory.goal)
    if signals:
        return True, f"the formal statement has quantitative signals: {', '.join(signals)}"
    return False, "EXPERIMENT_MODE=auto and the formal statement has no quantitative signals"


def run_experiment(
    client: LLMClient,
    theory: Theory,
    mode: str,
    runner: Runner = run_python,
    predicate_runner: Runner = LEMMATA_RUNNER,
    limits: AgentLimits = AgentLimits(),
    feedback: str = "",
    tools_guide: str = "",
    preflight: Callable[[], str] = sandbox_problem,
    on_check: Callable[[LemmaCheck], None] = lambda _check: None,
) -> Experiment:
    """`feedback`: the reviewer's words at the theory review, for the agent that comes next.
    `tools_guide`: how to call the domain plugin's modules, which `runner` makes importable.
    `predicate_runner` runs lemmata's own test of a formal statement (LEMMATA_RUNNER).
    `preflight`: why the sandbox cannot run here ("" when it can): then no test is written, and
    the experiment is skipped with that reason, never run in a weaker box.
    `on_check`: told each lemma's check once it and those before it are done, in order (its plot
    is drawn then)."""
    run, reason = experiment_decision(mode, theory)
    if not run:
        return Experiment(skipped=True, skip_reason=reason)
    verified = [lemma.id for lemma in theory.lemmas if lemma.verified]
    tested = lemmas_to_test(theory)
    refusal = preflight() if tested else ""
    if refusal:
        return Experiment(
            skipped=True,
            skip_reason=f"{NO_SANDBOX}: {refusal}",
            verified_lemmas=verified,
            low_confidence_lemmas=[lemma.id for lemma in tested],
        )

    def check(lemma: ProvedLemma) -> LemmaCheck:
        predicate = executable_spec(lemma)
        if predicate is not None:
            return predicate_check(lemma, predicate, predicate_runner)
        if read_as_circular(lemma):
            return LemmaCheck(
                lemma_id=lemma.id, group="low_confidence", outcome="not_run", author="lemmata", detail=TRUE_BY_ITS_FORM
            )
        # Each lemma's calls under a scope of their own: the call log, and a replay of it, tell
        # the lemmas apart however their calls interleave.
        return check_lemma(client.scoped(lemma.id), lemma, runner, limits, feedback, tools_guide)

    # The lemmas are checked at once (checks_at_once), each with its own turns and history: one
    # lemma's test runs in its box while the model writes another's (a box took 0.05-0.08 s
    # between two calls of a fake-model run, 2 cores, 2026-11-29). The checks are kept, and told
    # to `on_check` (which draws their plots), in the lemmas' order, each once it and those
    # before it are done.
    pool = ThreadPoolExecutor(max_workers=checks_at_once(client), thread_name_prefix="lemma-check")
    try:
        checks = []
        for future in [pool.submit(check, lemma) for lemma in tested]:
            checks.append(future.result())
            on_check(checks[-1])
    except BoxUnavailable as error:  # the box failed to start after the preflight said it could
        return Experiment(
            skipped=True,
            skip_reason=f"{NO_SANDBOX}: {error}",
            verified_lemmas=verified,
            low_confidence_lemmas=[lemma.id for lemma in tested],
        )
    finally:
        pool.shutdown(cancel_futures=True)  # after a failure: the lemmas not begun are not begun
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


def checks_at_once(client: LLMClient) -> int:
    """How many lemmas are checked at once: one on the embedded model, which answers one call at a
    time and keeps one context per role. Lemmas checked at once would take turns in that context,
    and a lemma's later turn, whose prompt extends its earlier one, would be read anew."""
    return 1 if client.backend.name == "embedded" else CHECKS_AT_ONCE


def lemmas_to_test(theory: Theory) -> list[ProvedLemma]:
    """The lemmas not verified (the spec's low-confidence group): those with a proof, and those
    whose formal statement lemmata can run whatever became of their proof. A refuted statement
    has its counterexample already."""
    return [
        lemma
        for lemma in theory.lemmas
        if not lemma.verified
        and lemma.status != "refuted"
        and (not lemma.proof_failed or executable_spec(lemma) is not None)
    ]


def model_tested(theory: Theory) -> list[ProvedLemma]:
    """The lemmas whose test the experiment agent writes: no formal statement lemmata can run,
    and not read as circular."""
    return [lemma for lemma in lemmas_to_test(theory) if executable_spec(lemma) is None and not read_as_circular(lemma)]


def read_as_circular(lemma: ProvedLemma) -> bool:
    """Whether the lemma's formal statement was refused because its conclusion is one of its
    hypotheses: "if P then P", which no input violates, so a test of it could only find its own
    mistakes."""
    return lemma.formal is not None and lemma.formal.not_formalized.endswith(CIRCULAR)


def executable_spec(lemma: ProvedLemma) -> FormalSpec | None:
    """The lemma's formal statement when lemmata can run it as a predicate; None otherwise."""
    formal = lemma.formal
    if formal is None or formal.spec is None or formal.not_formalized:
        return None
    return formal.spec


def predicate_check(lemma: ProvedLemma, spec: FormalSpec, runner: Runner) -> LemmaCheck:
    """The lemma's formal statement run by lemmata on sampled inputs in the sandbox: no model call."""
    code = predicate_program(spec)
    result = without_secrets(runner(code))
    try:
        counts = read_counts(result)
    except ModelOutputError as exc:
        return LemmaCheck(
            lemma_id=lemma.id,
            group="low_confidence",
            outcome="error",
            author="lemmata",
            code=code,
            detail=str(exc),
            failures=[str(exc)],
            **_sandbox_fields(result),
        )
    rate = counts.violations / counts.trials
    return LemmaCheck(
        lemma_id=lemma.id,
        group="low_confidence",
        outcome="ran",
        author="lemmata",
        trials=counts.trials,
        violations=counts.violations,
        violation_rate=round(rate, 6),
        numerically_suspect=rate > SUSPECT_RATE,
        code=code,
        detail="the lemma's formal statement, run by lemmata on small, edge and random inputs",
        series=counts.series,
        x_label=counts.x_label,
        notes=counts.notes,
        **_sandbox_fields(result),
    )


def check_lemma(
    client: LLMClient,
    lemma: ProvedLemma,
    runner: Runner,
    limits: AgentLimits,
    feedback: str = "",
    tools_guide: str = "",
) -> LemmaCheck:
    """Turns of write, run, read the counts; the first test with valid counts ends them."""
    history = AgentHistory(client, every=limits.compress_every)
    failures: list[str] = []
    last_code, last_result = "", None  # of the last test written, for the error record
    failed_tests: dict[str, int] = {}  # a failed test's code -> the turn that wrote it
    turn = 0
    for turn in range(1, limits.max_turns + 1):
        prompt = render_prompt(
            "experiment",
            lemma_id=lemma.id,
            statement=lemma.statement,
            feedback=f"Reviewer feedback to take into account: {feedback}" if feedback else "",
            domain_tools=f"Domain tools in the sandbox: {tools_guide}" if tools_guide else "",
            attempts=history.render(empty="(none: this is the first attempt)"),
        )
        text = client.complete("experiment", prompt.system, prompt.user, json_answer=True)
        code, result = "", None
        try:
            answer = parse_json_answer(text, ExperimentAnswer, "experiment")
            code = answer.code
            if _same_test(code) in failed_tests:
                # The model wrote again the test that failed, feedback notwithstanding: running it
                # would fail the same way, and the small model, once repeating, repeats to the last turn.
                failures.append(f"attempt {turn} repeated the failed test of attempt {failed_tests[_same_test(code)]}")
                break
            result = without_secrets(runner(code))
            counts = read_counts(result)
        except ModelOutputError as exc:  # a bad answer or a failed test: this turn's failure
            failures.append(str(exc))
            history.add(attempt_feedback(turn, code, str(exc), result))
            last_code, last_result = (code, result) if code else (last_code, last_result)
            if code:
                failed_tests.setdefault(_same_test(code), turn)
            continue
        return _ran(lemma, answer, counts, result, turn, failures)
    return LemmaCheck(
        lemma_id=lemma.id,
        group="low_confidence",
        outcome="error",
        code=last_code,
        detail=_why_it_failed(failures),
        attempts=turn,
        failures=failures,
        **_sandbox_fields(last_result),
    )


def _why_it_failed(failures: list[str]) -> str:
    """The last failure; when the turns ended on a test written again, why that test failed."""
    if not failures:
        return "no turns"
    repeated = re.match(r"attempt (\d+) repeated the failed test of attempt (\d+)$", failures[-1])
    if repeated and int(repeated.group(2)) <= len(failures) - 1:
        first = int(repeated.group(2))
        return f"{failures[first - 1]} (the same test again in attempt {repeated.group(1)})"
    return failures[-1]


def _same_test(code: str) -> str:
    """A test as compared with earlier ones: lines stripped, blank lines and comments dropped."""
    lines = (line.strip() for line in code.splitlines())
    return "\n".join(line for line in lines if line and not line.startswith("#"))


def without_secrets(result: SandboxResult) -> SandboxResult:
    """The test's output with every secret lemmata knows replaced. Its environment has none, but
    the code may print one it was given (a task that quotes a key) or found: the output goes into
    the model's next prompt, the call log and the experiment artifact."""
    redact = Redactor(known_secrets())
    return replace(result, stdout=redact(result.stdout), stderr=redact(result.stderr), stopped=redact(result.stopped))


def _ran(
    lemma: ProvedLemma, answer: ExperimentAnswer, counts: Counts, result: SandboxResult, turn: int, failures: list[str]
) -> LemmaCheck:
    rate = counts.violations / counts.trials
    return LemmaCheck(
        lemma_id=lemma.id,
        group="low_confidence",
        outcome="ran",
        trials=counts.trials,
        violations=counts.violations,
        violation_rate=round(rate, 6),
        numerically_suspect=rate > SUSPECT_RATE,
        code=answer.code,
        detail=answer.rationale,
        attempts=turn,
        failures=failures,
        series=counts.series,
        x_label=counts.x_label,
        notes=counts.notes,
        **_sandbox_fields(result),
    )


def _sandbox_fields(result: SandboxResult | None) -> dict:
    if result is None:
        return {}
    return {
        "sandbox": list(result.protections),
        "network_isolated": result.network_isolated,
        "cpu_seconds": result.cpu_seconds,
    }


def attempt_feedback(turn: int, code: str, failure: str, result: SandboxResult | None) -> str:
    """One history entry: the failed attempt's code, why it failed, and the end of its output."""
    parts = [f"Attempt {turn} failed: {failure}"]
    if code:
        shown = code if len(code) <= CODE_SHOWN else code[:CODE_SHOWN] + "\n# ... (cut)"
        parts.append(f"Its code:\n```python\n{shown}\n```")
    if result is not None:
        for name, text, count in (
            ("stderr", result.stderr, STDERR_LINES_SHOWN),
            ("stdout", result.stdout, STDOUT_LINES_SHOWN),
        ):
            tail = [line[:LINE_WIDTH_SHOWN] for line in text.strip().splitlines()[-count:]]
            if tail:
                parts.append(f"The last lines of its {name}:\n" + "\n".join(tail))
    return "\n".join(parts)
