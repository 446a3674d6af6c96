"""Experiment stage: numerical tests of low-confidence lemmas in the sandbox.

Spec: low-confidence lemmas get a numerical test computing violation_rate; > 1% means
numerically_suspect; EXPERIMENT_MODE auto skips without quantitative signals, true always
runs, false always skips. A crashing, timed-out or garbage-printing test is an `error`
outcome, never a crash of the stage.
"""

from __future__ import annotations

import json
import os

import pytest

from lemmata.artifacts import ConsistencyCheck, ProvedLemma, Theory
from lemmata.llm.base import ChatRequest
from lemmata.sandbox import Limits, SandboxResult, run_python
from lemmata.stages.experiment import SUSPECT_RATE, experiment_decision, run_experiment
from lemmata.testing.scripted_backend import scripted_client

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
        verification_method="auto_accepted" if status == "proved" else "failed",
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


class FakeRunner:
    """Records the code it was given and answers with a fixed SandboxResult."""

    def __init__(self, result: SandboxResult) -> None:
        self.result = result
        self.codes: list[str] = []

    def __call__(self, code: str) -> SandboxResult:
        self.codes.append(code)
        return self.result


# =========================================================================== decision


@pytest.mark.parametrize(
    "mode, statement, run",
    [
        pytest.param("true", QUALITATIVE, True, id="true-runs-without-signals"),
        pytest.param("true", QUANTITATIVE, True, id="true-runs-with-signals"),
        pytest.param("false", QUANTITATIVE, False, id="false-skips-with-signals"),
        pytest.param("false", QUALITATIVE, False, id="false-skips-without-signals"),
        pytest.param("auto", QUANTITATIVE, True, id="auto-digits-and-relations"),
        pytest.param("auto", "Every prime above two is odd.", True, id="auto-signal-words"),
        pytest.param("auto", "The series $\\sum a_n$ converges.", True, id="auto-latex-sum"),
        pytest.param("auto", "The error is at most the step size.", True, id="auto-at-most"),
        pytest.param("auto", QUALITATIVE, False, id="auto-no-signals"),
        pytest.param("auto", "Every group action on a tree has a fixed point or an invariant end.", False,
                     id="auto-no-signals-algebra"),
    ],
)
def test_experiment_decision(mode: str, statement: str, run: bool) -> None:
    decided, reason = experiment_decision(mode, theory(lemma("L1", "low_confidence", statement), statement=statement))
    assert decided is run
    assert reason


def test_auto_looks_at_lemma_statements_too() -> None:
    t = theory(lemma("L1", "low_confidence", "The sum is bounded by 10."), statement=QUALITATIVE)
    assert experiment_decision("auto", t)[0] is True


@pytest.mark.parametrize("mode", ["false", "auto"])
def test_skipped_experiment_makes_no_call(mode: str) -> None:
    client, backend = scripted_client()
    runner = FakeRunner(ok(counts_line(10, 0)))
    t = theory(lemma("L1", "low_confidence", QUALITATIVE), statement=QUALITATIVE)
    experiment = run_experiment(client, t, mode, runner=runner)
    assert experiment.skipped is True
    assert experiment.skip_reason
    assert backend.requests == [] and runner.codes == []


# =========================================================================== run_experiment


def run_one(result: SandboxResult, code: str = "print('x')") -> tuple[object, FakeRunner]:
    client, backend = scripted_client({"experiment": [experiment_answer(code)]})
    runner = FakeRunner(result)
    experiment = run_experiment(client, theory(lemma("L1", "low_confidence")), "true", runner=runner)
    assert backend.pending() == 0
    assert runner.codes == [code]
    return experiment, runner


@pytest.mark.parametrize("answer", [
    pytest.param("Sure! Here is a test: print(1)", id="prose-not-json"),
    pytest.param('{"rationale": "forgot the code"}', id="json-without-code"),
])
def test_an_unusable_experiment_answer_is_that_lemmas_error_not_the_stages(answer: str) -> None:
    client, _ = scripted_client({"experiment": [answer]})
    runner = FakeRunner(ok(counts_line(10, 0)))
    experiment = run_experiment(client, theory(lemma("L1", "low_confidence")), "true", runner=runner)
    [check] = experiment.checks
    assert check.outcome == "error" and "experiment answer" in check.detail
    assert runner.codes == [] and experiment.alignment_score is None


def test_clean_pass() -> None:
    experiment, _ = run_one(ok("sampling...\n" + counts_line(1000, 0)), code="CODE")
    assert experiment.skipped is False
    [check] = experiment.checks
    assert check.lemma_id == "L1"
    assert check.group == "low_confidence"
    assert check.outcome == "ran"
    assert (check.trials, check.violations) == (1000, 0)
    assert check.violation_rate == 0.0
    assert check.numerically_suspect is False
    assert check.code == "CODE"
    assert check.detail == "sample n uniformly"
    assert experiment.alignment_score == 1.0


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
    experiment, _ = run_one(ok(counts_line(trials, violations)))
    [check] = experiment.checks
    assert check.outcome == "ran"
    assert check.violation_rate == pytest.approx(rate)
    assert check.numerically_suspect is suspect
    assert experiment.alignment_score == (0.0 if suspect else 1.0)


def test_the_last_json_line_counts() -> None:
    stdout = counts_line(10, 10) + "progress\n" + counts_line(200, 0) + "bye\n"
    experiment, _ = run_one(ok(stdout))
    assert (experiment.checks[0].trials, experiment.checks[0].violations) == (200, 0)


@pytest.mark.parametrize(
    "result, detail",
    [
        pytest.param(
            SandboxResult(1, "", "Traceback (most recent call last):\nZeroDivisionError: division by zero\n", False, True),
            "crashed: ZeroDivisionError",
            id="crash",
        ),
        pytest.param(SandboxResult(-9, counts_line(5, 0), "", True, True), "out of time", id="timeout"),
        pytest.param(SandboxResult(-9, "", "", False, True), "crashed: no output", id="killed-no-output"),
        pytest.param(ok("hello world\n42\n[1, 2]\n"), "no valid", id="garbage-output"),
        pytest.param(ok(""), "no valid", id="empty-output"),
        pytest.param(ok(counts_line(0, 0)), "no valid", id="trials-zero"),
        pytest.param(ok(counts_line(10, 11)), "no valid", id="more-violations-than-trials"),
        pytest.param(ok(counts_line(10, -1)), "no valid", id="negative-violations"),
        pytest.param(ok('{"trials": 10.5, "violations": 0}\n'), "no valid", id="float-trials"),
        pytest.param(ok('{"trials": "10", "violations": "0"}\n'), "no valid", id="string-counts"),
        pytest.param(ok('{"n": 10, "bad": 0}\n'), "no valid", id="wrong-keys"),
    ],
)
def test_a_failing_test_is_an_error_outcome(result: SandboxResult, detail: str) -> None:
    experiment, _ = run_one(result)
    [check] = experiment.checks
    assert check.outcome == "error"
    assert detail in check.detail
    assert check.numerically_suspect is False
    assert check.violation_rate is None
    assert experiment.alignment_score is None


def test_only_low_confidence_lemmas_are_tested() -> None:
    client, backend = scripted_client({
        "experiment": [experiment_answer("code for L2"), experiment_answer("code for L4")],
    })
    runner = FakeRunner(ok(counts_line(100, 0)))
    t = theory(
        lemma("L1", "proved"),
        lemma("L2", "low_confidence"),
        lemma("L3", "failed"),
        lemma("L4", "low_confidence"),
    )
    experiment = run_experiment(client, t, "true", runner=runner)
    calls = backend.calls("experiment")
    assert len(calls) == 2
    assert "Lemma [L2]" in user_text(calls[0]) and "Lemma [L4]" in user_text(calls[1])
    assert runner.codes == ["code for L2", "code for L4"]
    assert [c.lemma_id for c in experiment.checks] == ["L2", "L4"]
    assert experiment.verified_lemmas == ["L1"]
    assert experiment.low_confidence_lemmas == ["L2", "L4"]
    assert backend.pending() == 0


def test_alignment_is_over_the_checks_that_ran() -> None:
    results = iter([ok(counts_line(100, 0)), ok(counts_line(100, 50)), ok("garbage"), ok(counts_line(100, 1))])
    client, _ = scripted_client({"experiment": [experiment_answer()] * 4})
    t = theory(*(lemma(f"L{i}", "low_confidence") for i in range(1, 5)))
    experiment = run_experiment(client, t, "true", runner=lambda code: next(results))
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


# =========================================================================== real sandbox

SANDBOX_SCRIPT = """
import json, os
key = os.environ.get("VENDORA_API_KEY")
leaks = [name for name in os.environ if name.endswith("_API_KEY")]
print("progress line")
print(json.dumps({"trials": 50, "violations": 0, "key": key, "leaks": leaks}))
"""


def test_real_sandbox_runs_the_script_without_the_parent_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-fake-test-0123456789"
    monkeypatch.setenv("VENDORA_API_KEY", secret)
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    assert os.environ["VENDORA_API_KEY"] == secret

    result = run_python(SANDBOX_SCRIPT, Limits(wall_seconds=10))
    assert result.returncode == 0, result.stderr
    assert result.timed_out is False
    last = json.loads(result.stdout.strip().splitlines()[-1])
    assert last["key"] is None
    assert last["leaks"] == []
    assert secret not in result.stdout + result.stderr

    # and through the stage: the real runner's JSON line is read as counts
    client, _ = scripted_client({"experiment": [experiment_answer(SANDBOX_SCRIPT)]})
    experiment = run_experiment(client, theory(lemma("L1", "low_confidence")), "true", runner=run_python)
    [check] = experiment.checks
    assert (check.outcome, check.trials, check.violations) == ("ran", 50, 0)
