"""Experiment stage: numerical tests of low-confidence lemmas in the sandbox.

Spec: low-confidence lemmas get a numerical test computing violation_rate; > 1% means
numerically_suspect; EXPERIMENT_MODE auto skips without quantitative signals, true always
runs, false always skips; the experiment agent has at most 5 turns. A test that is stopped,
crashes or prints no valid counts line goes back to the agent with the reason; a lemma whose
turns all fail is an `error` outcome, never a crash of the stage. Each check that ran gets a
plot, which the writer includes as a figure.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from pypdf import PdfReader

from lemmata.agents.answers import ExperimentAnswer
from lemmata.agents.parsing import parse_json_answer
from lemmata.artifacts import ConsistencyCheck, Experiment, LemmaCheck, ProvedLemma, SeriesPoint, Theory
from lemmata.errors import ProviderError
from lemmata.formal.faithfulness import CIRCULAR
from lemmata.isolation.sandbox import Limits, SandboxResult, run_python
from lemmata.llm.base import ChatRequest
from lemmata.stages.experiment import job as experiment_stage_module
from lemmata.stages.experiment import plot as experiment_plot
from lemmata.stages.experiment.counts import TestFailure, parse_counts, read_counts
from lemmata.stages.experiment.figures import add_experiment_figures, experiment_figure
from lemmata.stages.experiment.job import experiment_stage
from lemmata.stages.experiment.lemma_checks import (
    SUSPECT_RATE,
    TRUE_BY_ITS_FORM,
    AgentLimits,
    attempt_feedback,
    domain_tools,
    experiment_decision,
    model_tested,
    run_experiment,
)
from lemmata.stages.experiment.plot import PlotDrawer, add_plots, draw_plot, plot_document, plot_file_name
from lemmata.stages.experiment.signals import quantitative_signals
from lemmata.stages.paper.writer import experiment_summary
from support import DATA
from support import formal as formal_checks
from support.scripted_backend import scripted_client

needs_tex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")

QUANTITATIVE = "For every integer $n \\ge 2$, the sum of the first n odd numbers is n^2."
QUALITATIVE = "Every compact Hausdorff space is normal."


def user_text(request: ChatRequest) -> str:
    return request.messages[-1].content


def lemma(id_: str, status: str, statement: str = QUANTITATIVE) -> ProvedLemma:
    return ProvedLemma(
        id=id_,
        statement=statement,
        proof_text="proof",
        confidence={"proved": 0.9, "low_confidence": 0.5, "failed": 0.0}[status],
        verified=status == "proved",
        status=status,  # type: ignore[arg-type]
        verification_method={"proved": "auto_accepted", "low_confidence": "flagged", "failed": "failed"}[status],  # type: ignore[arg-type]
    )


def theory(*lemmas: ProvedLemma, statement: str = QUANTITATIVE) -> Theory:
    return Theory(
        goal=statement,
        theorem_statement=statement,
        lemmas=list(lemmas),
        assembled_proof="...",
        consistency=ConsistencyCheck(passed=True),
        proof_status="partial",
    )


def experiment_answer(code: str = "print('x')", rationale: str = "sample n uniformly") -> str:
    return json.dumps({"code": code, "rationale": rationale})


def ok(stdout: str) -> SandboxResult:
    return SandboxResult(returncode=0, stdout=stdout, stderr="", timed_out=False, network_isolated=True)


def counts_line(trials: int, violations: int) -> str:
    return json.dumps({"trials": trials, "violations": violations}) + "\n"


def failed(
    stderr: str = "Traceback (most recent call last):\nZeroDivisionError: division by zero\n",
    returncode: int = 1,
    stopped: str = "",
) -> SandboxResult:
    return SandboxResult(returncode, "", stderr, False, True, stopped=stopped)


class FakeRunner:
    """Records the code it was given and answers with its results in turn (the last one repeats)."""

    def __init__(self, *results: SandboxResult) -> None:
        self.results = list(results)
        self.codes: list[str] = []

    def __call__(self, code: str) -> SandboxResult:
        self.codes.append(code)
        return self.results[min(len(self.codes), len(self.results)) - 1]


# =========================================================================== decision


@pytest.mark.parametrize(
    "mode, statement, run",
    [
        pytest.param("true", QUALITATIVE, True, id="true-runs-without-signals"),
        pytest.param("true", QUANTITATIVE, True, id="true-runs-with-signals"),
        pytest.param("false", QUANTITATIVE, False, id="false-skips-with-signals"),
        pytest.param("false", QUALITATIVE, False, id="false-skips-without-signals"),
        pytest.param("auto", QUANTITATIVE, True, id="auto-runs-with-signals"),
        pytest.param("auto", QUALITATIVE, False, id="auto-skips-without-signals"),
    ],
)
def test_experiment_decision(mode: str, statement: str, run: bool) -> None:
    decided, reason = experiment_decision(mode, theory(lemma("L1", "low_confidence", statement), statement=statement))
    assert decided is run
    assert reason


@pytest.mark.parametrize(
    "statement, signals",
    [
        pytest.param(
            QUANTITATIVE,
            ["an inequality", "a sum, product, integral or limit", "arithmetic on whole numbers"],
            id="latex-inequality-and-odd-numbers",
        ),
        pytest.param(
            "The sum of two even integers is even.",
            ["a sum, product, integral or limit", "arithmetic on whole numbers"],
            id="parity-of-a-sum",
        ),
        pytest.param("For all real a and b, a^2 + b^2 >= 2ab.", ["an inequality"], id="ascii-inequality"),
        pytest.param("Every prime above two is odd.", ["arithmetic on whole numbers"], id="primes-and-parity"),
        pytest.param(
            "The series $\\sum_n a_n$ converges.",
            ["a sum, product, integral or limit", "a growth rate or convergence"],
            id="latex-sum",
        ),
        pytest.param("The error is at most the step size.", ["an inequality"], id="at-most-a-quantity"),
        pytest.param(
            "The expected regret of UCB is $O(\\sqrt{T \\log T})$.",
            ["a growth rate or convergence", "a probability or expectation", "a numerical function"],
            id="regret-bound",
        ),
        pytest.param(
            "For every prime p and integer a, $a^p \\equiv a \\pmod p$.",
            ["a congruence", "arithmetic on whole numbers"],
            id="fermat",
        ),
        pytest.param(
            "A random graph on n vertices is connected with probability tending to one.",
            ["a probability or expectation"],
            id="random-graph",
        ),
    ],
)
def test_quantitative_statements_name_their_signals(statement: str, signals: list[str]) -> None:
    assert quantitative_signals(statement) == signals


@pytest.mark.parametrize(
    "statement",
    [
        pytest.param(QUALITATIVE, id="topology"),
        pytest.param("A group of prime order is cyclic.", id="prime-order-is-no-arithmetic"),
        pytest.param("Every finite integral domain is a field.", id="integral-domain-is-no-integral"),
        pytest.param("Every group action on a tree has a fixed point or an invariant end.", id="group-action"),
        pytest.param("The composition of two injective functions is injective.", id="a-number-word-alone"),
        pytest.param("Every nonempty set has at least one element.", id="at-least-one-is-existence"),
        pytest.param("If $x = 2k$ for some $k$, then $x \\in 2K$.", id="a-digit-and-an-equals-sign-alone"),
        pytest.param("Every real vector space has a basis.", id="real-alone"),
    ],
)
def test_qualitative_statements_have_no_signal(statement: str) -> None:
    """Each of these made the old rule (any digit, `=`, "real", "integral", "prime") run a test."""
    assert quantitative_signals(statement) == []


def test_auto_reads_the_formal_statement_not_the_lemmas() -> None:
    """The spec: auto skips when the formal statement has no quantitative signals. A lemma's
    "bounded by 10" made every run test before (issue 23)."""
    qualitative_goal = theory(lemma("L1", "low_confidence", "The sum is bounded by 10."), statement=QUALITATIVE)
    assert experiment_decision("auto", qualitative_goal) == (
        False,
        "EXPERIMENT_MODE=auto and the formal statement has no quantitative signals",
    )
    formal = qualitative_goal.model_copy(update={"formal_statement": "For all x in [0, 1], f(x) \\le 1."})
    assert experiment_decision("auto", formal) == (True, "the formal statement has quantitative signals: an inequality")


@pytest.mark.parametrize("mode", ["false", "auto"])
def test_skipped_experiment_makes_no_call(mode: str) -> None:
    client, backend = scripted_client()
    runner = FakeRunner(ok(counts_line(10, 0)))
    t = theory(lemma("L1", "low_confidence", QUALITATIVE), statement=QUALITATIVE)
    experiment = run_experiment(client, t, mode, runner=runner)
    assert experiment.skipped is True
    assert experiment.skip_reason
    assert backend.requests == [] and runner.codes == []


def test_without_a_sandbox_no_test_is_written_and_the_reason_is_recorded() -> None:
    """Where the OS cannot make the box, tests are refused, never run in a weaker one."""
    client, backend = scripted_client()
    runner = FakeRunner(ok(counts_line(10, 0)))
    refusal = "the sandbox needs bubblewrap (bwrap), which is not installed: install bubblewrap 0.8 or newer"
    experiment = run_experiment(
        client, theory(lemma("L1", "low_confidence")), "true", runner=runner, preflight=lambda: refusal
    )
    assert experiment.skipped is True and experiment.checks == []
    assert (
        experiment.skip_reason == f"no numerical test was run, since the sandbox cannot run on this machine: {refusal}"
    )
    assert experiment.low_confidence_lemmas == ["L1"]
    assert backend.requests == [] and runner.codes == []


# =========================================================================== run_experiment


def run_one(*results: SandboxResult, answers: list[str] | None = None, max_turns: int = 5) -> tuple[LemmaCheck, list]:
    """One low-confidence lemma through the stage; its check and the experiment calls."""
    answers = answers or [experiment_answer(f"code {turn}") for turn in range(1, max_turns + 1)]
    client, backend = scripted_client({"experiment": answers})
    experiment = run_experiment(
        client,
        theory(lemma("L1", "low_confidence")),
        "true",
        runner=FakeRunner(*results),
        limits=AgentLimits(max_turns=max_turns),
    )
    [check] = experiment.checks
    return check, backend.calls("experiment")


def test_clean_pass() -> None:
    result = SandboxResult(
        0,
        "sampling...\n" + counts_line(1000, 0),
        "",
        False,
        True,
        cpu_seconds=0.2,
        protections=("resource limits", "audit hook"),
    )
    check, calls = run_one(result)
    assert len(calls) == 1 and "(none: this is the first attempt)" in user_text(calls[0])
    assert (check.lemma_id, check.group, check.outcome) == ("L1", "low_confidence", "ran")
    assert (check.trials, check.violations, check.violation_rate, check.numerically_suspect) == (1000, 0, 0.0, False)
    assert (check.code, check.detail, check.attempts, check.failures) == ("code 1", "sample n uniformly", 1, [])
    assert (check.sandbox, check.network_isolated, check.cpu_seconds) == (["resource limits", "audit hook"], True, 0.2)


@pytest.mark.parametrize(
    "trials, violations, rate, suspect",
    [
        pytest.param(1000, 20, 0.02, True, id="two-percent-suspect"),
        pytest.param(1000, 10, 0.01, False, id="exactly-one-percent-not-suspect"),
        pytest.param(1000, 11, 0.011, True, id="just-above-one-percent"),
        pytest.param(3, 3, 1.0, True, id="all-violated"),
    ],
)
def test_violation_rate_threshold(trials: int, violations: int, rate: float, suspect: bool) -> None:
    assert SUSPECT_RATE == 0.01
    client, _ = scripted_client({"experiment": [experiment_answer()]})
    experiment = run_experiment(
        client, theory(lemma("L1", "low_confidence")), "true", runner=FakeRunner(ok(counts_line(trials, violations)))
    )
    [check] = experiment.checks
    assert check.outcome == "ran"
    assert check.violation_rate == pytest.approx(rate)
    assert check.numerically_suspect is suspect
    assert experiment.alignment_score == (0.0 if suspect else 1.0)


# =========================================================================== turns


def test_a_failed_test_goes_back_to_the_agent_with_its_reason_and_output() -> None:
    check, calls = run_one(failed(), ok(counts_line(500, 0)))
    assert len(calls) == 2
    second = user_text(calls[1])
    assert "Attempt 1 failed: crashed (exit status 1): ZeroDivisionError: division by zero" in second
    assert "```python\ncode 1\n```" in second and "The last lines of its stderr:" in second
    assert (check.outcome, check.attempts, check.code, check.trials) == ("ran", 2, "code 2", 500)
    assert check.failures == ["crashed (exit status 1): ZeroDivisionError: division by zero"]


def test_five_failed_turns_make_an_error_with_every_reason_and_the_stage_goes_on() -> None:
    l1_turns = iter(range(1, 6))

    def answer(request: ChatRequest) -> str:
        return experiment_answer("good" if "Lemma [L2]" in user_text(request) else f"bad {next(l1_turns)}")

    client, backend = scripted_client({"experiment": [answer] * 6})
    stopped = failed(stopped="stopped: exceeded the 20 s CPU-time limit", returncode=-24)
    runner = RunnerByCode({**{f"bad {n}": stopped for n in range(1, 6)}, "good": ok(counts_line(9, 0))})
    experiment = run_experiment(
        client, theory(lemma("L1", "low_confidence"), lemma("L2", "low_confidence")), "true", runner=runner
    )
    first, second = experiment.checks
    assert (first.outcome, first.attempts, first.code) == ("error", 5, "bad 5")
    assert first.failures == ["stopped: exceeded the 20 s CPU-time limit"] * 5
    assert first.detail == "stopped: exceeded the 20 s CPU-time limit"
    assert first.violation_rate is None and first.numerically_suspect is False
    assert (second.outcome, second.attempts, second.trials) == ("ran", 1, 9)
    assert experiment.alignment_score == 1.0 and backend.pending() == 0
    l1_calls = [call for call in backend.calls("experiment") if "Lemma [L1]" in user_text(call)]
    assert len(backend.calls("experiment")) == 6 and len(l1_calls) == 5
    assert "Attempt 4 failed" in user_text(l1_calls[4])


def test_the_turn_limit_is_a_setting() -> None:
    check, calls = run_one(failed(), answers=[experiment_answer("a"), experiment_answer("b")], max_turns=2)
    assert (check.outcome, check.attempts, len(calls)) == ("error", 2, 2)


#: A real answer of the embedded model (the README's main command, 2026-11-25): the script with
#: raw line breaks inside the JSON string, between a "```python" first line and a "```python" last one.
FENCED_RAW_ANSWER = (DATA / "embedded_outputs" / "experiment-fenced-code-raw-newlines.txt").read_text(encoding="utf-8")
#: Another of that model's answers (the same command, run again): the script escaped twice, one line
#: of literal backslash-n.
ESCAPED_TWICE_ANSWER = (DATA / "embedded_outputs" / "experiment-code-escaped-twice.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "answer, first_line, last_line",
    [
        pytest.param(FENCED_RAW_ANSWER, "import numpy as np", "print(counts)", id="embedded-fenced-code-raw-newlines"),
        pytest.param(
            ESCAPED_TWICE_ANSWER,
            "import numpy as np",
            "    return trials, violations",
            id="embedded-code-escaped-twice",
        ),
        pytest.param(
            r'{"code": "print(\"a\\nb\")"}',
            r'print("a\nb")',
            r'print("a\nb")',
            id="one-line-with-one-newline-escape-stays",
        ),
        pytest.param('{"code": "```\nprint(1)\n```"}', "print(1)", "print(1)", id="bare-fence-escaped-newlines"),
        pytest.param(
            '{"code": "import json\nprint(json.dumps({}))"}', "import json", "print(json.dumps({}))", id="no-fence"
        ),
        pytest.param(r'{"code": "x = \"```\"\nprint(x)"}', 'x = "```"', "print(x)", id="a-fence-inside-the-code-stays"),
    ],
)
def test_an_experiment_answer_is_read_as_the_script_it_carries(answer: str, first_line: str, last_line: str) -> None:
    """Each run of the embedded model lost most of its 20 experiment calls to these: JSON the
    strict parser refused (line breaks written raw) and scripts starting with a fence line
    (a SyntaxError in the sandbox)."""
    code = parse_json_answer(answer, ExperimentAnswer, "experiment").code
    lines = code.split("\n")
    assert (lines[0], lines[-1]) == (first_line, last_line)
    compile(code, "check.py", "exec")


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param("Sure! Here is a test: print(1)", id="prose-not-json"),
        pytest.param('{"rationale": "forgot the code"}', id="json-without-code"),
    ],
)
def test_an_unusable_answer_is_a_failed_turn(answer: str) -> None:
    runner = FakeRunner(ok(counts_line(10, 0)))
    client, _ = scripted_client({"experiment": [answer, experiment_answer("fixed")]})
    experiment = run_experiment(client, theory(lemma("L1", "low_confidence")), "true", runner=runner)
    [check] = experiment.checks
    assert (check.outcome, check.attempts, runner.codes) == ("ran", 2, ["fixed"])
    assert "the experiment answer is not the JSON asked for" in check.failures[0]


def test_an_answer_that_is_never_usable_is_an_error_without_code() -> None:
    check, _ = run_one(answers=["no json"] * 5)
    assert (check.outcome, check.code, len(check.failures)) == ("error", "", 5)


def test_a_denied_test_is_fed_back_as_denied() -> None:
    denied = failed(
        stderr="SandboxDenied: lemmata sandbox: network access (socket.connect)\n",
        returncode=112,
        stopped="denied: network access (socket.connect)",
    )
    check, calls = run_one(denied, ok(counts_line(10, 0)))
    assert "Attempt 1 failed: denied: network access (socket.connect)" in user_text(calls[1])
    assert check.failures == ["denied: network access (socket.connect)"]


def test_a_long_history_is_compressed() -> None:
    client, backend = scripted_client(
        {
            "experiment": [experiment_answer(f"c{n}") for n in range(1, 4)],
            "compress": ["summary: two crashes by division by zero"],
        }
    )
    experiment = run_experiment(
        client,
        theory(lemma("L1", "low_confidence")),
        "true",
        runner=FakeRunner(failed(), failed(), ok(counts_line(5, 0))),
        limits=AgentLimits(max_turns=3, compress_every=2),
    )
    assert experiment.checks[0].attempts == 3
    assert "Summary of earlier turns: summary: two crashes" in user_text(backend.calls("experiment")[2])
    assert backend.pending() == 0


def test_attempt_feedback_cuts_long_code_and_output() -> None:
    result = SandboxResult(
        1, "\n".join(f"out {n}" for n in range(50)), "\n".join(f"err {n}" for n in range(50)), False, True
    )
    text = attempt_feedback(3, "x = 1\n" * 2000, "crashed", result)
    assert text.startswith("Attempt 3 failed: crashed") and "# ... (cut)" in text
    assert "err 49" in text and "err 37" not in text and "out 49" in text and "out 46" not in text


def answer_for_its_lemma(code: str = "code for {lemma}") -> Callable[[ChatRequest], str]:
    """An experiment answer naming the lemma its request asks about: the lemmas are checked at
    once, so their requests come in any order."""

    def answer(request: ChatRequest) -> str:
        [lemma_id] = re.findall(r"Lemma \[(\w+)\]", user_text(request))
        return experiment_answer(code.format(lemma=lemma_id))

    return answer


class RunnerByCode:
    """Answers each test with the result given for its code (tests of several lemmas run at once)."""

    def __init__(self, results: dict[str, SandboxResult]) -> None:
        self.results = results
        self.codes: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, code: str) -> SandboxResult:
        with self._lock:
            self.codes.append(code)
        return self.results[code]


def test_only_low_confidence_lemmas_are_tested() -> None:
    client, backend = scripted_client({"experiment": [answer_for_its_lemma()] * 2})
    runner = FakeRunner(ok(counts_line(100, 0)))
    t = theory(
        lemma("L1", "proved"), lemma("L2", "low_confidence"), lemma("L3", "failed"), lemma("L4", "low_confidence")
    )
    experiment = run_experiment(client, t, "true", runner=runner)
    calls = backend.calls("experiment")
    assert sorted(re.findall(r"Lemma \[(\w+)\]", user_text(call))[0] for call in calls) == ["L2", "L4"]
    assert sorted(request.scope for request in calls) == [":L2", ":L4"]  # each lemma's calls its own
    assert sorted(runner.codes) == ["code for L2", "code for L4"]
    assert [c.lemma_id for c in experiment.checks] == ["L2", "L4"]
    assert experiment.verified_lemmas == ["L1"]
    assert experiment.low_confidence_lemmas == ["L2", "L4"]
    assert backend.pending() == 0


def test_alignment_is_over_the_checks_that_ran() -> None:
    runner = RunnerByCode(
        {
            "code for L1": ok(counts_line(100, 0)),
            "code for L2": ok(counts_line(100, 50)),
            "code for L3": ok("garbage"),
            "code for L4": ok(counts_line(100, 1)),
        }
    )
    client, _ = scripted_client({"experiment": [answer_for_its_lemma()] * 4})
    t = theory(*(lemma(f"L{i}", "low_confidence") for i in range(1, 5)))
    experiment = run_experiment(client, t, "true", runner=runner, limits=AgentLimits(max_turns=1))
    assert [c.outcome for c in experiment.checks] == ["ran", "ran", "error", "ran"]
    assert experiment.alignment_score == pytest.approx(2 / 3, abs=1e-4)


def test_no_low_confidence_lemma_means_no_test() -> None:
    client, backend = scripted_client()
    runner = FakeRunner(ok(counts_line(1, 0)))
    experiment = run_experiment(client, theory(lemma("L1", "proved"), lemma("L2", "failed")), "true", runner=runner)
    assert experiment.skipped is False
    assert experiment.skip_reason == "no low-confidence lemma to test"
    assert experiment.checks == [] and experiment.alignment_score is None
    assert experiment.verified_lemmas == ["L1"]
    assert backend.requests == [] and runner.codes == []


# =========================================================================== the counts line


@pytest.mark.parametrize(
    "stdout, trials, violations",
    [
        pytest.param(counts_line(1000, 3), 1000, 3, id="plain"),
        pytest.param("progress 50%\n" + counts_line(200, 0) + "\n\n", 200, 0, id="progress-then-counts-then-blank"),
        pytest.param(counts_line(10, 10) + counts_line(200, 1), 200, 1, id="the-last-of-two"),
        pytest.param(
            '{"trials": 5, "violations": 0, "rate": 0.0, "note": "extra keys are ignored"}', 5, 0, id="extra-keys"
        ),
        pytest.param('  {"violations": 2, "trials": 7}  ', 7, 2, id="whitespace-and-key-order"),
    ],
)
def test_valid_counts(stdout: str, trials: int, violations: int) -> None:
    counts = parse_counts(stdout)
    assert (counts.trials, counts.violations, counts.series, counts.notes) == (trials, violations, [], [])


@pytest.mark.parametrize(
    "stdout, reason",
    [
        pytest.param("", "printed nothing", id="no-output"),
        pytest.param("\n  \n", "printed nothing", id="blank-lines-only"),
        pytest.param("hello world\n42\n", "not the JSON counts object", id="no-counts-line"),
        pytest.param(counts_line(10, 0) + "done\n", "not the JSON counts object", id="counts-followed-by-junk"),
        pytest.param('{"trials": 10, "violations": 0} extra', "not the JSON counts object", id="junk-on-the-same-line"),
        pytest.param("[10, 0]", "not the JSON counts object: [10, 0]", id="json-array"),
        pytest.param('{"n": 10, "bad": 0}', "has no 'trials'", id="wrong-keys"),
        pytest.param('{"trials": 10}', "has no 'violations'", id="violations-missing"),
        pytest.param(counts_line(0, 0), "'trials' must be at least 1, got 0", id="trials-zero"),
        pytest.param(counts_line(10, -1), "'violations' must be at least 0, got -1", id="negative-violations"),
        pytest.param(counts_line(-5, 0), "'trials' must be at least 1", id="negative-trials"),
        pytest.param(counts_line(10, 11), "more violations (11) than trials (10)", id="more-violations-than-trials"),
        pytest.param('{"trials": 10.5, "violations": 0}', "'trials' must be an integer, got 10.5", id="float-trials"),
        pytest.param('{"trials": 10.0, "violations": 0}', "'trials' must be an integer, got 10.0", id="integral-float"),
        pytest.param('{"trials": "10", "violations": "0"}', "'trials' must be an integer", id="string-counts"),
        pytest.param('{"trials": true, "violations": false}', "'trials' must be an integer, got true", id="booleans"),
        pytest.param('{"trials": NaN, "violations": 0}', "'trials' must be an integer, got NaN", id="nan"),
        pytest.param('{"trials": null, "violations": 0}', "got null", id="null"),
        pytest.param('{"trials": 10, "violations": 0, "trials": 20}', "duplicate keys ['trials']", id="duplicate-key"),
    ],
)
def test_malformed_counts_fail_the_attempt(stdout: str, reason: str) -> None:
    with pytest.raises(TestFailure) as failure:
        parse_counts(stdout)
    assert reason in str(failure.value)


SERIES = [{"x": 100, "trials": 50, "violations": 1}, {"x": 10, "trials": 50, "violations": 0}]


def with_series(series: object, trials: int = 100, violations: int = 1, **extra: object) -> str:
    return json.dumps({"trials": trials, "violations": violations, "series": series, **extra})


def test_a_valid_series_is_kept_sorted_by_x_with_its_label() -> None:
    counts = parse_counts(with_series(SERIES, x_label="n"))
    assert counts.series == [SeriesPoint(x=10, trials=50, violations=0), SeriesPoint(x=100, trials=50, violations=1)]
    assert (counts.x_label, counts.notes) == ("n", [])


@pytest.mark.parametrize(
    "line, note",
    [
        pytest.param(with_series("10,100"), "it must be a list", id="not-a-list"),
        pytest.param(with_series([]), "it must be a list of 1 to 200 points", id="empty"),
        pytest.param(
            with_series([{"x": n, "trials": 1, "violations": 0} for n in range(201)], trials=201, violations=0),
            "1 to 200 points",
            id="too-many-points",
        ),
        pytest.param(with_series([{"x": 1, "trials": 100}]), "exactly x, trials and violations", id="missing-key"),
        pytest.param(
            with_series([{"x": 1, "trials": 100, "violations": 1, "rate": 0.01}]),
            "exactly x, trials and violations",
            id="extra-key",
        ),
        pytest.param(with_series([[1, 100, 1]]), "exactly x, trials and violations", id="point-not-an-object"),
        pytest.param(
            with_series([{"x": "n=1", "trials": 100, "violations": 1}]), "x must be a finite number", id="string-x"
        ),
        pytest.param(
            with_series([{"x": True, "trials": 100, "violations": 1}]), "x must be a finite number", id="bool-x"
        ),
        pytest.param(with_series([{"x": float("inf"), "trials": 100, "violations": 1}]), "finite", id="infinite-x"),
        pytest.param(with_series([{"x": 1, "trials": 100.0, "violations": 1}]), "must be integers", id="float-trials"),
        pytest.param(
            with_series([{"x": 1, "trials": 50, "violations": 51}, {"x": 2, "trials": 50, "violations": -50}]),
            "0 <= violations <= trials",
            id="point-violations-out-of-range",
        ),
        pytest.param(
            with_series([{"x": 1, "trials": 50, "violations": 0}, {"x": 1, "trials": 50, "violations": 1}]),
            "same x",
            id="duplicate-x",
        ),
        pytest.param(with_series([{"x": 1, "trials": 50, "violations": 1}]), "do not add up", id="sums-differ"),
    ],
)
def test_a_malformed_series_is_dropped_and_the_counts_stand(line: str, note: str) -> None:
    counts = parse_counts(line)
    assert counts.trials >= 1 and counts.series == [] and counts.x_label == ""
    assert len(counts.notes) == 1 and counts.notes[0].startswith("series ignored: ") and note in counts.notes[0]


@pytest.mark.parametrize("label", ["n \u2264 10", "x" * 41, 7])
def test_an_unusable_x_label_is_dropped(label: object) -> None:
    counts = parse_counts(with_series(SERIES, x_label=label))
    assert counts.series and counts.x_label == "" and counts.notes[0].startswith("x_label ignored")


@pytest.mark.parametrize(
    "result, reason",
    [
        pytest.param(
            SandboxResult(
                1, "", "Traceback (most recent call last):\nZeroDivisionError: division by zero\n", False, True
            ),
            "crashed (exit status 1): ZeroDivisionError: division by zero",
            id="crash",
        ),
        pytest.param(SandboxResult(-11, "", "", False, True), "crashed (killed by SIGSEGV): no output", id="segfault"),
        pytest.param(
            SandboxResult(-9, counts_line(5, 0), "", True, True),
            "stopped: ran out of time",
            id="timed-out-counts-do-not-count",
        ),
        pytest.param(
            SandboxResult(-24, "", "", False, True, stopped="stopped: exceeded the 20 s CPU-time limit"),
            "stopped: exceeded the 20 s CPU-time limit",
            id="cpu-limit",
        ),
        pytest.param(
            SandboxResult(112, counts_line(5, 0), "", False, True, stopped="denied: network access (socket.connect)"),
            "denied: network access (socket.connect)",
            id="denied-counts-do-not-count",
        ),
    ],
)
def test_a_stopped_or_crashed_test_has_no_counts(result: SandboxResult, reason: str) -> None:
    with pytest.raises(TestFailure) as failure:
        read_counts(result)
    assert str(failure.value) == reason


# =========================================================================== plots and figures


def ran_check(lemma_id: str = "L4", trials: int = 3000, violations: int = 45, **fields: object) -> LemmaCheck:
    rate = violations / trials
    return LemmaCheck(
        lemma_id=lemma_id,
        group="low_confidence",
        outcome="ran",
        trials=trials,
        violations=violations,
        violation_rate=rate,
        numerically_suspect=rate > SUSPECT_RATE,
        attempts=1,
        **fields,
    )


SERIES_CHECK = ran_check(
    series=[
        SeriesPoint(x=10, trials=1000, violations=0),
        SeriesPoint(x=100, trials=1000, violations=5),
        SeriesPoint(x=100000, trials=1000, violations=40),
    ],
    x_label="n & 50%_x",
)


def test_the_plot_shows_the_rate_by_x_the_threshold_and_the_lemma() -> None:
    document = plot_document(SERIES_CHECK)
    assert "title={Lemma L4: 45 of 3000 trials violate it (1.5\\%)}" in document
    assert "coordinates {(10,0) (100,0.5) (100000,4)}" in document
    assert "xmode=log" in document  # x spans four orders of magnitude
    assert "xlabel={n \\& 50\\%\\_x}" in document and "1\\% threshold" in document
    assert "\\pdfinfoomitdate=1" in document and "\\pdftrailerid{}" in document


def test_without_a_series_the_plot_is_the_overall_rate_at_its_trials() -> None:
    document = plot_document(ran_check(trials=2000, violations=0))
    assert "coordinates {(2000,0)}" in document and "xlabel={trials}" in document and "xmode" not in document


def test_plot_file_names_are_safe_and_distinct() -> None:
    taken = {"L_1.pdf"}
    assert plot_file_name("L_1", taken) == "L_1-2.pdf"
    assert plot_file_name("L 1/../x", set()) == "L-1----x.pdf"


@needs_tex
def test_plots_are_drawn_for_the_checks_that_ran_and_are_reproducible(tmp_path: Path) -> None:
    error = LemmaCheck(lemma_id="L5", group="low_confidence", outcome="error", detail="crashed", attempts=5)
    experiment = Experiment(skipped=False, checks=[SERIES_CHECK, error, ran_check("main_result", 2000, 0)])
    plotted = add_plots(experiment, tmp_path / "run")
    assert [c.plot for c in plotted.checks] == ["figures/L4.pdf", "", "figures/main_result.pdf"]
    pdf = tmp_path / "run" / "figures" / "L4.pdf"
    text = PdfReader(pdf).pages[0].extract_text()
    assert "Lemma L4" in text and "threshold" in text
    draw_plot(SERIES_CHECK, tmp_path / "again.pdf")
    assert hashlib.sha256(pdf.read_bytes()).digest() == hashlib.sha256((tmp_path / "again.pdf").read_bytes()).digest()


def test_a_plot_that_cannot_be_drawn_is_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(experiment_plot, "plot_document", lambda check: "\\documentclass{article}\\broken")
    plotted = add_plots(Experiment(skipped=False, checks=[ran_check()]), tmp_path / "run")
    [check] = plotted.checks
    assert (
        check.plot == "" and check.notes[0].startswith("no plot: ") and "Undefined control sequence" in check.notes[0]
    )
    assert (tmp_path / "run" / "figures").is_dir()  # the rule's directory output exists anyway


def test_a_skipped_experiment_still_makes_the_figures_directory(tmp_path: Path) -> None:
    plotted = add_plots(Experiment(skipped=True, skip_reason="EXPERIMENT_MODE=false"), tmp_path)
    assert plotted.checks == [] and (tmp_path / "figures").is_dir()


@needs_tex
def test_a_plot_is_drawn_as_soon_as_its_check_has_run(tmp_path: Path) -> None:
    """The drawer starts each plot on submission (the experiment agent meanwhile asks the model
    about the next lemma), and `finish` puts each plot on its own check, in order."""
    error = LemmaCheck(lemma_id="L5", group="low_confidence", outcome="error", detail="crashed", attempts=5)
    with PlotDrawer(tmp_path, version=2) as drawer:
        drawer.submit(SERIES_CHECK)
        drawer.submit(error)
        drawer.submit(ran_check("L4", 2000, 0))  # the same lemma again: a name of its own
        plotted = drawer.finish(Experiment(skipped=False, checks=[SERIES_CHECK, error, ran_check("L4", 2000, 0)]))
    assert [c.plot for c in plotted.checks] == ["figures/L4-v2.pdf", "", "figures/L4-v2-2.pdf"]
    assert sorted(p.name for p in (tmp_path / "figures").iterdir()) == ["L4-v2-2.pdf", "L4-v2.pdf"]


@needs_tex
def test_plots_of_checks_the_experiment_did_not_keep_are_removed(tmp_path: Path) -> None:
    """The box failed after a check had run: the experiment is skipped, no plot of it stays."""
    with PlotDrawer(tmp_path) as drawer:
        drawer.submit(ran_check())
        plotted = drawer.finish(Experiment(skipped=True, skip_reason="the sandbox cannot run here"))
    assert plotted.checks == [] and list((tmp_path / "figures").iterdir()) == []


@needs_tex
def test_a_rewrites_experiment_that_fails_midway_leaves_no_plot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first lemma's check ran (its plot was being drawn), then the model failed for good: the
    rewrite's experiment is skipped, and no plot of it stays among the version's figures."""
    monkeypatch.setattr(
        experiment_stage_module, "domain_tools", lambda plugin: (FakeRunner(ok(counts_line(100, 0))), "")
    )
    client, _ = scripted_client(
        {"experiment": [experiment_answer(), ProviderError("the provider is gone")]}, LLM_RETRY_ATTEMPTS=0
    )
    t = theory(lemma("L1", "low_confidence"), lemma("L2", "low_confidence"))
    result = experiment_stage(client, t, client.settings, None, "", figures_home=tmp_path, version=2)
    assert result.skipped and "the experiment agent failed during this rewrite" in result.skip_reason
    assert list((tmp_path / "figures").iterdir()) == []


def test_one_lemma_s_test_runs_while_the_model_writes_another_s() -> None:
    """L1's test waits in its box until the model has been asked about L2: checked one lemma
    after another, it would wait in vain."""
    l2_asked = threading.Event()

    def answer(request: ChatRequest) -> str:
        if "Lemma [L2]" in user_text(request):
            l2_asked.set()
        return answer_for_its_lemma()(request)

    def runner(code: str) -> SandboxResult:
        if code == "code for L1":
            assert l2_asked.wait(timeout=10), "L2 was not asked while L1's test ran"
        return ok(counts_line(100, 0))

    client, _ = scripted_client({"experiment": [answer, answer]})
    t = theory(lemma("L1", "low_confidence"), lemma("L2", "low_confidence"))
    experiment = run_experiment(client, t, "true", runner=runner)
    assert [(c.lemma_id, c.outcome) for c in experiment.checks] == [("L1", "ran"), ("L2", "ran")]


def test_on_the_embedded_model_one_lemma_is_checked_after_another() -> None:
    """It keeps one context per role: L1's turns are not to take turns with L2's in it."""
    asked: list[str] = []

    def answer(request: ChatRequest) -> str:
        asked.append(re.findall(r"Lemma \[(\w+)\]", user_text(request))[0])
        return experiment_answer("code" if len(asked) > 1 else "crashes")

    runner = RunnerByCode({"crashes": failed(), "code": ok(counts_line(100, 0))})
    client, backend = scripted_client({"experiment": [answer] * 3})
    backend.name = "embedded"
    t = theory(lemma("L1", "low_confidence"), lemma("L2", "low_confidence"))
    experiment = run_experiment(client, t, "true", runner=runner)
    assert asked == ["L1", "L1", "L2"]  # L1's second turn before L2's first
    assert [(c.lemma_id, c.outcome, c.attempts) for c in experiment.checks] == [("L1", "ran", 2), ("L2", "ran", 1)]


def test_each_check_is_told_in_the_lemmas_order_once_it_is_done() -> None:
    """L2's test ends first; L1's check is still told first, and each check only once it is done."""
    told: list[str] = []
    l2_done = threading.Event()

    def runner(code: str) -> SandboxResult:
        if code == "code for L2":
            l2_done.set()
        else:
            l2_done.wait(timeout=10)
        return ok(counts_line(100, 0))

    client, _ = scripted_client({"experiment": [answer_for_its_lemma()] * 2})
    run_experiment(
        client,
        theory(lemma("L1", "low_confidence"), lemma("L2", "low_confidence")),
        "true",
        runner=runner,
        on_check=lambda check: told.append(check.lemma_id),
    )
    assert told == ["L1", "L2"]


def plotted(check: LemmaCheck) -> LemmaCheck:
    return check.model_copy(update={"plot": f"figures/{check.lemma_id}.pdf"})


def test_the_figure_caption_gives_the_numbers_and_the_verdict() -> None:
    figure = experiment_figure(plotted(SERIES_CHECK))
    assert "\\includegraphics[width=0.8\\linewidth]{figures/L4.pdf}" in figure
    assert (
        "Numerical check of Lemma L4: violation rate over 3000 random trials, by n \\& 50\\%\\_x. "
        "45 violations, rate 1.50\\%, above the 1\\% threshold (dashed): the lemma is numerically suspect."
    ) in figure
    assert "\\label{fig:check-L4}" in figure
    assert "within the 1\\% threshold" in experiment_figure(plotted(ran_check("L2", 100, 0)))


def test_a_caption_says_who_wrote_the_test_and_what_a_clean_count_is_worth() -> None:
    """The embedded main command, 2026-11-26: the model's test of a false lemma ("the sum of two
    integers is even if one of them is even") found 0 violations in 10000 trials."""
    by_model = experiment_figure(plotted(ran_check("L2", 10000, 0, author="model")))
    assert "code the model wrote from the prose statement, not checked" in by_model
    assert "few violations are weak evidence" in by_model
    by_lemmata = experiment_figure(plotted(ran_check("L2", 10000, 0, author="lemmata")))
    assert "the lemma's formal statement, evaluated exactly by lemmata" in by_lemmata and "weak" not in by_lemmata


BODY = "\\section{Introduction}\nWe prove it.\n\n\\section{Limitations}\nL4 is unverified.\n"


@pytest.mark.parametrize(
    "body, before, after, ours",
    [
        pytest.param(
            "\\section{Intro}\nx\n\\section{Numerical experiments}\nWe sampled.\n\\section{Conclusion}\ny\n",
            "We sampled.",
            "\\section{Conclusion}",
            False,
            id="into-the-models-experiments-section",
        ),
        pytest.param(
            "\\section{Intro}\nx\n\\section*{Experimental evidence}\nWe sampled.\n",
            "We sampled.",
            None,
            False,
            id="its-section-is-the-last",
        ),
        pytest.param(BODY, "We prove it.", "\\section{Limitations}", True, id="ours-before-limitations"),
        pytest.param("\\section{Introduction}\nWe prove it.\n", "We prove it.", None, True, id="ours-at-the-end"),
    ],
)
def test_figures_go_into_the_experiments_section(body: str, before: str, after: str | None, ours: bool) -> None:
    experiment = Experiment(skipped=False, checks=[plotted(SERIES_CHECK)])
    result = add_experiment_figures(body, experiment)
    figure = result.index("\\begin{figure}")
    assert result.index(before) < figure
    if after is not None:
        assert figure < result.index(after)
    assert result.count("\\begin{figure}") == 1
    heading = "\\section{Numerical experiments}"
    assert result.count(heading) - body.count(heading) == int(ours)


def test_no_figure_without_a_plot_or_with_a_foreign_path() -> None:
    foreign = SERIES_CHECK.model_copy(update={"plot": "../secrets.pdf"})
    experiment = Experiment(skipped=False, checks=[SERIES_CHECK, foreign])
    assert add_experiment_figures(BODY, experiment) == BODY


def test_the_writer_is_told_the_figure_label() -> None:
    summary = experiment_summary(Experiment(skipped=False, checks=[plotted(SERIES_CHECK), ran_check("L2", 10, 0)]))
    assert "[L4] violation rate 0.0150 over 3000 trials -- NUMERICALLY SUSPECT" in summary
    assert "lemmata adds its plot as Figure \\ref{fig:check-L4}" in summary
    assert summary.count("Figure") == 1  # L2 has no plot


# =========================================================================== the real sandbox

REAL_TEST = """
import json, random
random.seed(3)
series = []
for n in (10, 100, 1000):
    trials = violations = 0
    for _ in range(300):
        k = random.randint(1, n)
        trials += 1
        violations += sum(range(1, 2 * k, 2)) != k * k
    series.append({"x": n, "trials": trials, "violations": violations})
print(json.dumps({"trials": 900, "violations": 0, "series": series, "x_label": "n"}))
"""


def test_a_real_test_runs_in_the_sandbox_after_a_denied_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VENDORA_API_KEY", "sk-fake-test-0123456789")
    snooping = "import os, json\nprint(json.dumps({'trials': 1, 'violations': 0, 'k': os.environ['VENDORA_API_KEY']}))"
    client, backend = scripted_client({"experiment": [experiment_answer(snooping), experiment_answer(REAL_TEST)]})
    quick = Limits(wall_seconds=20, cpu_seconds=10)
    experiment = run_experiment(
        client, theory(lemma("L1", "low_confidence")), "true", runner=lambda code: run_python(code, quick)
    )
    [check] = experiment.checks
    assert check.failures[0].startswith("crashed (exit status 1): KeyError: 'VENDORA_API_KEY'")
    assert (check.outcome, check.attempts, check.trials, check.violations) == ("ran", 2, 900, 0)
    assert [p.x for p in check.series] == [10, 100, 1000] and check.x_label == "n"
    assert "bubblewrap box" in check.sandbox and "sk-fake" not in user_text(backend.calls("experiment")[1])


# =========================================================================== domain tools


def test_a_domain_plugins_tool_is_offered_in_the_prompt_and_importable_by_the_code_that_runs() -> None:
    from lemmata.plugins.bandits import plugin

    runner, guide = domain_tools(plugin)
    code = (
        "import json\nfrom bandit_regret import simulate, ucb1_bound\n"
        "curve = simulate('ucb1', [0.7, 0.5], horizon=400, runs=20, seed=3)\n"
        "print(json.dumps({'trials': 1, 'violations': int(curve.at(400) > ucb1_bound([0.7, 0.5], 400))}))\n"
    )
    client, backend = scripted_client({"experiment": [experiment_answer(code)]})
    experiment = run_experiment(client, theory(lemma("L1", "low_confidence")), "true", runner=runner, tools_guide=guide)
    [call] = backend.calls("experiment")
    assert "Domain tools in the sandbox: The module `bandit_regret` is importable" in user_text(call)
    [check] = experiment.checks
    assert (check.outcome, check.trials, check.violations) == ("ran", 1, 0)


def test_without_a_plugin_the_plain_sandbox_runs_and_the_prompt_names_no_tools() -> None:
    runner, guide = domain_tools(None)
    assert (runner, guide) == (run_python, "")
    client, backend = scripted_client({"experiment": [experiment_answer()]})
    run_experiment(client, theory(lemma("L1", "low_confidence")), "true", runner=FakeRunner(ok(counts_line(10, 0))))
    assert "Domain tools" not in user_text(backend.calls("experiment")[0])


#: Real answers of the embedded model (the README's main command, 2026-11-26): a test that crashed,
#: then, told why, the same test again (with a markdown fence around it this time).
WRITTEN_AGAIN = [
    (DATA / "embedded_outputs" / f"experiment-test-written-again-{n}.txt").read_text(encoding="utf-8") for n in (1, 2)
]


def test_a_failed_test_written_again_ends_the_lemmas_turns_without_running_it() -> None:
    """The run above spent five turns on L2 and three on L3 on one test each (issue 25): the
    repeat would fail the same way, so it is not run and no further turn is asked for."""
    runner = FakeRunner(failed(stderr="SyntaxError: '{' was never closed\n"))
    client, backend = scripted_client({"experiment": [*WRITTEN_AGAIN, experiment_answer("never asked for")]})
    experiment = run_experiment(client, theory(lemma("L3", "low_confidence")), "true", runner=runner)
    [check] = experiment.checks
    assert len(backend.calls("experiment")) == 2 and len(runner.codes) == 1
    assert (check.outcome, check.attempts) == ("error", 2)
    assert check.failures == [
        "crashed (exit status 1): SyntaxError: '{' was never closed",
        "attempt 2 repeated the failed test of attempt 1",
    ]
    assert check.code == runner.codes[0]  # the test that ran, for the record
    # what the card and the paper say: why the test failed, not only that it came again
    assert (
        check.detail == "crashed (exit status 1): SyntaxError: '{' was never closed (the same test again in attempt 2)"
    )


def test_a_test_that_differs_only_in_comments_and_blank_lines_is_the_same_test() -> None:
    answers = [experiment_answer("x = 1\nprint(x)"), experiment_answer("# try again\nx = 1\n\n  print(x)  ")]
    check, calls = run_one(failed(), answers=answers + [experiment_answer("unused")])
    assert (len(calls), check.attempts, check.failures[-1]) == (2, 2, "attempt 2 repeated the failed test of attempt 1")


def test_a_different_test_after_a_failure_still_gets_its_turn() -> None:
    check, calls = run_one(
        failed(), ok(counts_line(10, 0)), answers=[experiment_answer("a = 1"), experiment_answer("a = 2")]
    )
    assert (len(calls), check.outcome, check.attempts) == (2, "ran", 2)


def test_counts_printed_as_a_python_dict_are_read_with_a_note() -> None:
    """Malformed model output, the README's main command on the embedded model (2026-11-26): the
    test ended with print(counts), a dict's repr, in five turns of five; each turn failed on it."""
    counts = parse_counts("checking...\n{'trials': 3000, 'violations': 0, 'series': []}\n")
    assert (counts.trials, counts.violations) == (3000, 0)
    assert counts.notes[0] == "the counts line was printed as a Python dict, not JSON; read as the same object"


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("{'trials': __import__('os').getpid(), 'violations': 0}", id="code-is-not-a-literal"),
        pytest.param("{1: 3000, 2: 0}", id="keys-not-strings"),
        pytest.param("{'trials': 3000, 'violations': 0", id="unclosed"),
        pytest.param("['trials', 3000]", id="not-a-dict"),
        pytest.param("{'trials': 10, 'violations': 0, 'trials': 20}", id="duplicate-key"),
    ],
)
def test_a_python_literal_that_is_not_a_counts_dict_still_fails_the_turn(line: str) -> None:
    with pytest.raises(TestFailure, match="not the JSON counts object"):
        parse_counts(line + "\n")


# =========================================================================== lemmata's own predicate (issue 34)


def test_a_lemma_with_a_formal_statement_is_tested_by_its_own_predicate_without_a_model_call() -> None:
    """Its violation rate comes from lemmata running the formal statement in the box; a lemma
    without one still gets the agent's test; a machine-checked lemma is verified, never tested."""
    client, backend = scripted_client({"experiment": [experiment_answer("code for L2")]})
    tested = lemma("L1", "low_confidence").model_copy(update={"status": "tested", "formal": formal_checks.tested()})
    checked = lemma("L3", "proved").model_copy(
        update={"status": "machine_checked", "verified": True, "formal": formal_checks.machine_checked()}
    )
    ours = FakeRunner(ok(counts_line(2694, 0)))
    theirs = FakeRunner(ok(counts_line(100, 0)))
    experiment = run_experiment(
        client, theory(tested, lemma("L2", "low_confidence"), checked), "true", runner=theirs, predicate_runner=ours
    )
    assert [check.lemma_id for check in experiment.checks] == ["L1", "L2"]
    assert experiment.verified_lemmas == ["L3"]
    l1, l2 = experiment.checks
    assert (l1.author, l1.trials, l1.violations, l1.attempts) == ("lemmata", 2694, 0, 0)
    assert "print_counts" in ours.codes[0] and '"conclusion":"(a + b) % 2 == 0"' in ours.codes[0]
    assert (l2.author, theirs.codes) == ("model", ["code for L2"])
    assert len(backend.calls("experiment")) == 1


def test_a_lemma_read_as_circular_gets_no_test_and_the_paper_is_told_why() -> None:
    """The README's main command (2026-11-29): the plan's L1, "An integer is even if it can be
    written as 2k for some integer k", was read as `x % 2 == 0` implies `x % 2 == 0` and refused;
    the embedded model's test then sampled every integer, counted the odd ones (5006 of 10000),
    and the paper warned against a true lemma. A lemma whose conclusion is one of its hypotheses
    gets no test; a lemma refused for another reason still gets the agent's."""
    circular = formal_checks.not_formalized(
        "An integer is even if it can be written as 2k for some integer k.",
        why=f"the formal statement was refused: {CIRCULAR}",
    )
    definition = lemma("L1", "low_confidence").model_copy(update={"formal": circular})
    asymptotic = lemma("L2", "low_confidence").model_copy(update={"formal": formal_checks.not_formalized()})
    client, backend = scripted_client({"experiment": [experiment_answer("code for L2")]})
    runner = FakeRunner(ok(counts_line(100, 0)))
    t = theory(definition, asymptotic)
    experiment = run_experiment(client, t, "true", runner=runner)
    l1, l2 = experiment.checks
    assert (l1.lemma_id, l1.outcome, l1.author, l1.detail) == ("L1", "not_run", "lemmata", TRUE_BY_ITS_FORM)
    assert not l1.numerically_suspect and l1.trials == 0 and l1.code == ""
    assert (l2.outcome, runner.codes, len(backend.calls("experiment"))) == ("ran", ["code for L2"], 1)
    assert experiment.low_confidence_lemmas == ["L1", "L2"] and experiment.alignment_score == 1.0
    assert [lemma.id for lemma in model_tested(t)] == ["L2"]  # what the forecast counts calls for
    assert experiment_summary(experiment).splitlines()[0] == f"[L1] {TRUE_BY_ITS_FORM}"


def test_lemmatas_predicate_runs_in_the_real_box_and_counts_the_violations_of_a_false_statement() -> None:
    false = formal_checks.formal("The sum of two integers is even if one of them is even.").model_copy(
        update={"spec": formal_checks.EVEN_SUM.model_copy(update={"hypotheses": ["a % 2 == 0 or b % 2 == 0"]})}
    )
    suspect = lemma("L1", "low_confidence").model_copy(update={"formal": false})
    experiment = run_experiment(scripted_client()[0], theory(suspect), "true")
    [check] = experiment.checks
    assert check.outcome == "ran" and check.author == "lemmata" and check.numerically_suspect
    assert check.trials > 1000 and 0 < check.violations < check.trials and len(check.series) > 1
    assert "bubblewrap box" in check.sandbox
