"""Verification that a weak or careless verifier cannot fool (issue 21).

A verdict that names a flaw, an open [GAP: ...], a truncated answer or a refuter that finds an
error never yields `verified`; an accepted proof is verified only when its checker was measured
to tell wrong proofs from right ones (calibration), with confidence >= 0.40. Each malformed or
careless answer met in real output is a named case here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from lemmata.agents.proof_attempt import parse_proof_attempt
from lemmata.artifacts import Checker, CheckStep, Lemma, ProvedLemma, TheoryPlan
from lemmata.cli.main import cli
from lemmata.errors import ArtifactError
from lemmata.llm.replay import recorded_model
from lemmata.run.cards import why_not_verified
from lemmata.stages.theory.prove import prove_lemma
from lemmata.verification.calibration import (
    MAX_FALSE_ACCEPT_RATE,
    STACK_VERSION,
    Calibration,
    calibration_path,
    checker_for,
    load_calibration,
    model_slug,
    save_calibration,
    trust_in_words,
)
from lemmata.verification.checks import REFUTER_PROOF_CHARS, check_proof, named_flaws
from lemmata.verification.ladder import status_line
from lemmata.verification.user_proof import check_scope
from support.checkers import NOT_DISCRIMINATING, TRUSTED, UNCALIBRATED
from support.scripted_backend import scripted_client

PLAN = TheoryPlan(
    goal="The sum of two even integers is even.",
    level="full",
    lemmas=[
        Lemma(id="L1", statement="For all even integers $a, b$, the sum $a + b$ is even."),
    ],
)
PROOF = "Write $a = 2m$ and $b = 2n$. Then $a + b = 2(m + n)$, which is even. QED"
NO_ERROR = json.dumps({"error_found": False, "first_error": ""})


def prover(confidence: float, body: str = PROOF, completeness: str = "complete") -> str:
    block = {
        "confidence": confidence,
        "completeness": completeness,
        "gaps": [],
        "weakest_step": "",
        "techniques_used": [],
    }
    return f"{body}\n\n```json\n{json.dumps(block)}\n```"


def verifier(verdict: str, *issues: str) -> str:
    return json.dumps({"verdict": verdict, "issues": list(issues)})


def refuter(error_found: bool, first_error: str = "") -> str:
    return json.dumps({"error_found": error_found, "first_error": first_error})


def prove(script: dict, checker: Checker = TRUSTED, **settings: object) -> tuple[ProvedLemma, object]:
    client, backend = scripted_client(script, THEORY_STAGE_MAX_TURNS=1, **settings)
    return prove_lemma(client, PLAN, "L1", client.settings, checker=checker), backend


# =========================================================================== careless verifiers


@pytest.mark.parametrize(
    "script, method",
    [
        pytest.param(
            {"prover": [prover(0.6)], "verifier": [verifier("valid", "the case of negative integers is not treated")]},
            "flagged",
            id="valid-while-naming-a-flaw",
        ),
        pytest.param(
            {
                "prover": [prover(0.05, "Let $a, b$ be real numbers. Then $a + b$ is a real number.")],
                "verifier": [verifier("valid", "the proof does not address the statement")],
            },
            "flagged",
            id="embedded-real-valid-for-an-unrelated-proof-at-0.05",
        ),
        pytest.param(
            {"prover": [prover(0.6)], "verifier": [verifier("VALID.", "  ", "Step 3 assumes what it proves")]},
            "flagged",
            id="valid-with-a-blank-and-a-flaw",
        ),
        pytest.param({"prover": [prover(0.6)], "verifier": [verifier("mostly valid")]}, "flagged", id="hedged-verdict"),
        pytest.param(
            {
                "prover": [prover(0.6)],
                "verifier": [verifier("valid")],
                "refuter": [refuter(True, "Step 2 divides by $m - n$, which may be zero.")],
            },
            "flagged",
            id="refuter-finds-the-first-error",
        ),
        pytest.param(
            {
                "prover": [prover(0.6)],
                "verifier": [verifier("valid")],
                "refuter": [refuter(False, "the case $a = 0$ is not treated")],
            },
            "flagged",
            id="refuter-says-no-error-while-describing-one",
        ),
        pytest.param(
            {"prover": [prover(0.6)], "verifier": ['{"verdict": "valid", "issues": ["the case n = 0 is']},
            "not_checked",
            id="verifier-answer-cut-off-is-not-repaired",
        ),
        pytest.param(
            {
                "prover": [prover(0.6)],
                "verifier": [verifier("valid")],
                "refuter": ['{"error_found": false, "first_error": "Step 4 uses'],
            },
            "not_checked",
            id="refuter-answer-cut-off-is-not-repaired",
        ),
        pytest.param(
            {"prover": [prover(0.6)], "verifier": [verifier("invalid", "wrong sign")]}, "failed", id="invalid"
        ),
    ],
)
def test_a_careless_verifier_cannot_make_a_proof_verified(script: dict, method: str) -> None:
    proved, _ = prove(script)
    assert proved.verified is False and proved.status == "unverified"
    assert proved.verification_method == method


def test_a_gap_proof_is_never_verified_even_when_the_verifier_says_valid() -> None:
    """The issue's scripted case: [GAP] at confidence 0.45 and a verifier answering valid with an issue."""
    body = "Write $a = 2m$, $b = 2n$; then $a + b = 2(m + n)$. [GAP: negative integers are not treated]"
    proved, backend = prove(
        {
            "prover": [prover(0.45, body, "partial")],
            "verifier": [verifier("valid", "the case of negative integers is not treated")],
        }
    )
    assert (proved.verified, proved.status, proved.verification_method) == (False, "unverified", "flagged")
    assert proved.gaps == ["negative integers are not treated"]
    assert "open gaps: negative integers are not treated" in proved.verification
    assert backend.calls("verifier") == []  # the prover said it is incomplete: no check can make it whole


@pytest.mark.parametrize(
    "issues",
    [[], [""], ["None"], ["none."], ["No issues found"], ["N/A"], ["The proof is correct."]],
    ids=["empty", "blank", "None", "none-dot", "no-issues-found", "n-a", "proof-is-correct"],
)
def test_issues_that_name_nothing_do_not_count_as_flaws(issues: list[str]) -> None:
    assert named_flaws(issues) == []
    proved, backend = prove({"prover": [prover(0.6)], "verifier": [verifier("valid", *issues)], "refuter": [NO_ERROR]})
    assert proved.verified is True and proved.verification_method == "verifier_pass"
    assert len(backend.calls("refuter")) == 1


def test_both_checks_see_what_they_need() -> None:
    """The verifier gets head and tail (1000 characters, the spec); the refuter the whole proof."""
    body = "HEAD " + "".join(f"step {i} follows. " for i in range(300)) + "MIDDLE " + "tail. " * 100 + "QED"
    proved, backend = prove({"prover": [prover(0.6, body)], "verifier": [verifier("valid")], "refuter": [NO_ERROR]})
    assert proved.verified is True
    assert "MIDDLE" not in backend.calls("verifier")[0].messages[-1].content
    assert "MIDDLE" in backend.calls("refuter")[0].messages[-1].content


def test_a_proof_too_long_for_the_refuter_to_read_whole_is_not_accepted() -> None:
    body = "By parity. " * (REFUTER_PROOF_CHARS // 10) + "QED"
    proved, _ = prove({"prover": [prover(0.6, body)], "verifier": [verifier("valid")], "refuter": [NO_ERROR]})
    assert proved.verification_method == "flagged" and proved.verified is False
    assert f"read only {REFUTER_PROOF_CHARS:,}" in proved.verification


def test_a_self_declared_sketch_is_flagged_without_a_call() -> None:
    proved, backend = prove({"prover": [prover(0.95, completeness="sketch")]})
    assert proved.verification_method == "flagged" and backend.requests == [backend.calls("prover")[0]]


def test_a_partial_proof_is_not_auto_accepted_the_checks_decide() -> None:
    proved, backend = prove(
        {"prover": [prover(0.95, completeness="partial")], "verifier": [verifier("valid")], "refuter": [NO_ERROR]}
    )
    assert proved.verification_method == "verifier_pass" and len(backend.calls("verifier")) == 1


# =========================================================================== trust


@pytest.mark.parametrize("checker", [NOT_DISCRIMINATING, UNCALIBRATED], ids=["not-discriminating", "uncalibrated"])
def test_an_untrusted_checker_accepts_but_never_verifies(checker: Checker) -> None:
    proved, _ = prove({"prover": [prover(0.6)], "verifier": [verifier("valid")]}, checker)
    assert proved.accepted is True and proved.verified is False and proved.status == "unverified"
    assert "accepted by the checks, but not verified" in proved.verification
    assert proved.checked_by == checker


@pytest.mark.parametrize("checker", [NOT_DISCRIMINATING, UNCALIBRATED], ids=["not-discriminating", "uncalibrated"])
def test_the_checkers_trust_is_said_once_not_again_in_each_lemmas_status_line(checker: Checker) -> None:
    """The README's task on the embedded model (2026-11-27): the paper explained the checker before
    the lemmas, then again in L1's status line, since the lemma's words hold the sentence without
    its period and only the sentence with it was looked for."""
    proved, _ = prove({"prover": [prover(0.6)], "verifier": [verifier("valid")]}, checker)
    assert trust_in_words(checker).rstrip(".") in proved.verification
    line = status_line(proved)
    assert "they can only reject a proof" not in line
    assert (
        "accepted by the checks, but not verified: its checker verifies nothing (see How the lemmas were checked)"
        in line
    )
    assert "its checker verifies nothing (see Checked by)" in why_not_verified(proved)
    assert trust_in_words(checker).rstrip(".") not in why_not_verified(proved)


@pytest.mark.parametrize("checker", [TRUSTED, UNCALIBRATED], ids=["trusted", "uncalibrated"])
def test_an_auto_accepted_proof_is_accepted_not_verified(checker: Checker) -> None:
    """The spec's auto-accept stays (no call, the turns end), but nothing but the prover looked at the proof."""
    proved, backend = prove({"prover": [prover(0.95)]}, checker)
    assert (proved.accepted, proved.verified, proved.verification_method) == (True, False, "auto_accepted")
    assert backend.calls("verifier") == []
    assert "accepted on the prover's own rating without a check" in proved.verification


def test_confident_proofs_are_checked_when_asked_and_can_then_be_verified() -> None:
    proved, backend = prove(
        {"prover": [prover(0.95)], "verifier": [verifier("valid")], "refuter": [NO_ERROR]}, CHECK_CONFIDENT_PROOFS=True
    )
    assert (proved.verified, proved.verification_method) == (True, "verifier_pass")
    assert len(backend.calls("verifier")) == len(backend.calls("refuter")) == 1


def test_an_untrusted_checker_is_not_asked_to_refute() -> None:
    """Its pass could verify nothing, and its objections would only cost turns."""
    proved, backend = prove({"prover": [prover(0.6)], "verifier": [verifier("valid")]}, NOT_DISCRIMINATING)
    assert backend.calls("refuter") == [] and proved.verification_method == "verifier_pass"
    assert proved.checks[-1].outcome == "skipped" and proved.verified is False


def test_an_untrusted_checker_still_rejects() -> None:
    proved, _ = prove({"prover": [prover(0.6)], "verifier": [verifier("invalid", "wrong")]}, NOT_DISCRIMINATING)
    assert proved.proof_failed and proved.status == "unverified"


def test_no_proof_below_0_40_is_verified() -> None:
    proved, _ = prove({"prover": [prover(0.35)], "verifier": [verifier("valid")], "refuter": [NO_ERROR]})
    assert proved.accepted is True and proved.verified is False
    assert "below 0.40" in proved.verification


def test_the_accepted_turn_ends_the_loop_whatever_the_trust() -> None:
    """An untrusted checker must not make the prover spend all its turns on a proof the checks accepted."""
    client, backend = scripted_client({"prover": [prover(0.95)] * 3})
    proved = prove_lemma(client, PLAN, "L1", client.settings, checker=UNCALIBRATED)
    assert proved.attempts == 1 and len(backend.calls("prover")) == 1


PASSED_CHECKS = [CheckStep(check=check, outcome="passed") for check in ("structure", "verifier", "refuter")]


def checked(**fields: object) -> dict:
    base = {
        "id": "L1",
        "statement": "s",
        "proof_text": "p",
        "confidence": 0.9,
        "verified": True,
        "status": "reviewed",
        "verification_method": "verifier_pass",
        "checked_by": TRUSTED,
        "checks": PASSED_CHECKS,
    }
    return {**base, **fields}


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param({"checked_by": NOT_DISCRIMINATING}, id="untrusted-checker"),
        pytest.param({"checked_by": UNCALIBRATED}, id="uncalibrated-checker"),
        pytest.param({"gaps": ["negative integers"]}, id="open-gap"),
        pytest.param({"confidence": 0.39}, id="below-0.40"),
        pytest.param({"verification_method": "flagged"}, id="flagged"),
        pytest.param({"verification_method": "auto_accepted"}, id="auto-accepted-checked-by-nobody"),
        pytest.param({"checks": PASSED_CHECKS[:2]}, id="no-refuter-pass"),
        pytest.param({"verified": False, "status": "unverified"}, id="unverified-yet-reviewed"),
    ],
)
def test_no_artifact_calls_such_a_proof_verified(fields: dict) -> None:
    with pytest.raises(ValidationError):
        ProvedLemma(**checked(**fields))


def test_a_lemma_of_a_run_recorded_before_checkers_still_reads() -> None:
    lemma = ProvedLemma(**{**checked(), "checked_by": None, "confidence": 0.2})
    assert lemma.verified is True


# =========================================================================== calibration


def calibration(false_accepts: int, incorrect: int = 60, **fields: object) -> Calibration:
    values = {
        "backend": "embedded",
        "model": "Tiny-Model 1.5B",
        "stack_version": STACK_VERSION,
        "dataset": "labelled proofs",
        "measured_at": "2026-11-25",
        "incorrect": incorrect,
        "correct": 40,
        "false_accepts": false_accepts,
        "correct_accepted": 20,
    }
    return Calibration(**{**values, **fields})


@pytest.mark.parametrize(
    "record, trust",
    [
        pytest.param(calibration(6), "calibrated", id="10-percent-is-the-limit"),
        pytest.param(calibration(7), "not_discriminating", id="above-10-percent"),
        pytest.param(calibration(0, incorrect=19), "not_discriminating", id="too-few-incorrect-proofs"),
        pytest.param(calibration(0, stack_version=STACK_VERSION - 1), "uncalibrated", id="measured-with-older-checks"),
        pytest.param(calibration(0, correct_accepted=7), "not_discriminating", id="rejects-nearly-everything"),
        pytest.param(calibration(0, correct_accepted=8), "calibrated", id="accepts-20-points-more-correct-proofs"),
    ],
)
def test_trust_follows_the_measured_false_accept_rate(record: Calibration, trust: str) -> None:
    assert MAX_FALSE_ACCEPT_RATE == 0.10
    assert record.trust() == trust


def test_the_users_calibration_wins_and_names_the_measurement(tmp_path: Path) -> None:
    assert checker_for("embedded", "Tiny-Model 1.5B", tmp_path).trust == "uncalibrated"
    path = save_calibration(tmp_path, calibration(3))
    assert path == tmp_path / "calibration" / "tiny-model-1.5b.json" == calibration_path(tmp_path, "Tiny-Model 1.5B")
    checker = checker_for("embedded", "Tiny-Model 1.5B", tmp_path)
    assert (checker.trust, checker.false_accept_rate) == ("calibrated", pytest.approx(0.05))
    assert "labelled proofs, 2026-11-25" in checker.measured_on
    assert "accepted 5% of the proofs humans judged incorrect" in trust_in_words(checker)


def test_a_corrupt_calibration_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = calibration_path(tmp_path, "m")
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(ArtifactError, match="calibration/m.json"):
        checker_for("local", "m", tmp_path)


def test_the_embedded_models_bundled_calibration_is_found(tmp_path: Path) -> None:
    record = load_calibration(tmp_path, "qwen2.5-coder-1.5b-instruct-q4_k_m")
    assert record is not None and record.incorrect + record.correct == 120 and record.stack_version == STACK_VERSION


@pytest.mark.parametrize(
    "model, slug",
    [
        ("anthropic/claude-sonnet-4.5", "anthropic-claude-sonnet-4.5"),
        ("qwen2.5-coder-1.5b-instruct-q4_k_m", "qwen2.5-coder-1.5b-instruct-q4_k_m"),
        ("../../etc/passwd", "etc-passwd"),
    ],
)
def test_model_slugs_are_file_names(model: str, slug: str) -> None:
    assert model_slug(model) == slug


def test_a_replay_is_the_recorded_models_answers(tmp_path: Path) -> None:
    script = tmp_path / "calls.jsonl"
    script.write_text(json.dumps({"role": "verifier", "model": "qwen-x", "response": "{}"}) + "\n")
    assert recorded_model(script) == "qwen-x"
    assert recorded_model(tmp_path / "missing.jsonl") == "replay"


# =========================================================================== lemmata check


STATEMENT_TEXT = "For all even integers $a, b$, the sum $a + b$ is even.\n"


def replay_script(path: Path, proof: str, *answers: tuple[str, str], model: str = "model-x") -> Path:
    scope = check_scope(STATEMENT_TEXT, proof)
    lines = [
        json.dumps({"role": role, "scope": scope, "model": model, "response": response}) for role, response in answers
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def proof_files(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "statement.txt").write_text(STATEMENT_TEXT)
    (tmp_path / "proof.txt").write_text(PROOF + "\n")
    return tmp_path / "statement.txt", tmp_path / "proof.txt"


def run_check(monkeypatch: pytest.MonkeyPatch, script: Path, *args: str) -> object:
    monkeypatch.setenv("LLM_BACKEND", "replay")
    monkeypatch.setenv("LEMMATA_REPLAY", str(script))
    return CliRunner().invoke(cli, ["check", *args])


def test_check_prints_one_json_object_and_exits_1_when_not_verified(
    tmp_path: Path, proof_files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    script = replay_script(tmp_path / "r.jsonl", PROOF + "\n", ("verifier", verifier("valid")), ("refuter", NO_ERROR))
    result = run_check(
        monkeypatch, script, "--json", "--no-machine-checks", "--log-dir", str(tmp_path / "log"), *map(str, proof_files)
    )
    assert result.exit_code == 1, result.output
    assert "fails to connect" not in result.output  # a replay connects to nothing: no retry notice
    answer = json.loads(result.stdout)
    assert (answer["verified"], answer["accepted"], answer["method"]) == (False, True, "verifier_pass")
    assert answer["checker"] == {
        "backend": "replay",
        "model": "model-x",
        "trust": "uncalibrated",
        "false_accept_rate": None,
        "correct_accept_rate": None,
        "measured_on": "",
    }
    assert answer["confidence"] == 0.5 and answer["issues"] == [] and answer["calls"] == 2
    assert "have not been measured" in answer["trust"]
    assert [json.loads(line)["role"] for line in (tmp_path / "log" / "llm_calls.jsonl").read_text().splitlines()] == [
        "verifier",
        "refuter",
    ]


def test_check_verifies_with_a_calibrated_model_and_exits_0(
    tmp_path: Path, proof_files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, lemmata_home: Path
) -> None:
    save_calibration(lemmata_home, calibration(2, model="model-x"))
    script = replay_script(tmp_path / "r.jsonl", PROOF + "\n", ("verifier", verifier("valid")), ("refuter", NO_ERROR))
    result = run_check(
        monkeypatch, script, "--no-machine-checks", "--log-dir", str(tmp_path / "log"), *map(str, proof_files)
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("REVIEWED (VERIFIED): the model checks passed its proof")
    assert "proof: accepted by the model checks (method verifier_pass" in result.stdout
    assert "refuter: passed - no error found in the whole proof" in result.stdout


def test_check_names_the_flaw(tmp_path: Path, proof_files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    script = replay_script(
        tmp_path / "r.jsonl",
        PROOF + "\n",
        ("verifier", verifier("valid", "the case of negative integers is not treated")),
    )
    result = run_check(
        monkeypatch, script, "--json", "--no-machine-checks", "--log-dir", str(tmp_path / "log"), *map(str, proof_files)
    )
    answer = json.loads(result.stdout)
    assert answer["method"] == "flagged"
    assert answer["issues"] == ["valid, yet it names a flaw (the case of negative integers is not treated)"]


def formalizer_answer(conclusion: str) -> str:
    return json.dumps(
        {
            "formal_statement": "For all even integers a, b, a + b is even.",
            "variables": [{"name": "a", "type": "integer"}, {"name": "b", "type": "integer"}],
            "hypotheses": ["a % 2 == 0", "b % 2 == 0"],
            "conclusion": conclusion,
            "not_formalizable_because": "",
        }
    )


def test_check_without_a_proof_runs_the_machine_checks_and_machine_checks_a_true_statement(
    tmp_path: Path, proof_files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 34: `lemmata check STATEMENT_FILE` with no proof formalizes the statement and lets the
    machines decide; --json says the status, the formal statement, by whom and how."""
    script = replay_script(tmp_path / "r.jsonl", "", ("formalizer", formalizer_answer("(a + b) % 2 == 0")))
    result = run_check(monkeypatch, script, "--json", "--log-dir", str(tmp_path / "log"), str(proof_files[0]))
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert (answer["status"], answer["verified"], answer["calls"]) == ("machine_checked", True, 1)
    formal = answer["formal"]
    assert formal["statement"] == "∀ a, b ∈ ℤ: a mod 2 = 0 ∧ b mod 2 = 0 ⇒ (a + b) mod 2 = 0"
    assert (formal["counterexample"], formal["not_formalized"]) == (None, "")
    assert formal["instances"] > 100 and formal["method"] in ("kernel proof", "solver")
    assert formal["checker"] == ("coq" if formal["method"] == "kernel proof" else "z3")
    assert answer["method"] == "not_checked" and answer["checks"] == []


def test_check_refutes_a_false_statement_with_its_counterexample_and_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    statement = tmp_path / "false.txt"
    statement.write_text(STATEMENT_TEXT)
    script = replay_script(tmp_path / "r.jsonl", "", ("formalizer", formalizer_answer("(a + b) % 4 == 0")))
    result = run_check(monkeypatch, script, "--log-dir", str(tmp_path / "log"), str(statement))
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert (
        lines[0]
        == "REFUTED AS FORMALIZED (NOT verified): a counterexample to its formal statement, confirmed by exact arithmetic"
    )
    assert lines[1] == "formal statement: ∀ a, b ∈ ℤ: a mod 2 = 0 ∧ b mod 2 = 0 ⇒ (a + b) mod 4 = 0"
    assert "sampling (sampling): refuted" in result.stdout and "counterexample a = 0, b = 2" in result.stdout
    assert "proof: no proof was given: only the machine checks ran" in result.stdout


def test_machine_checks_without_a_proof_are_refused_with_no_machine_checks(
    tmp_path: Path, proof_files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run_check(monkeypatch, tmp_path / "unused.jsonl", "--no-machine-checks", str(proof_files[0]))
    assert result.exit_code == 2 and "give PROOF_FILE too" in result.output


@pytest.mark.parametrize(
    "content, message",
    [(b"", "is empty"), (b"  \n", "is empty"), (b"\xff\xfe proof", "is not UTF-8 text")],
    ids=["empty", "blank", "binary"],
)
def test_check_refuses_unusable_files_with_a_clear_error(
    tmp_path: Path, proof_files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, content: bytes, message: str
) -> None:
    proof_files[1].write_bytes(content)
    result = run_check(monkeypatch, tmp_path / "unused.jsonl", *map(str, proof_files))
    assert result.exit_code == 2 and f"PROOF_FILE {proof_files[1]} {message}" in result.output
    assert "Traceback" not in result.output


def test_check_of_a_missing_file_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = run_check(monkeypatch, tmp_path / "unused.jsonl", str(tmp_path / "nope.txt"), str(tmp_path / "nope2.txt"))
    assert result.exit_code == 2 and "does not exist" in result.output


def test_a_brought_proof_is_never_accepted_on_its_own_rating() -> None:
    client, backend = scripted_client({"verifier": [verifier("uncertain", "step 2")]})
    attempt = parse_proof_attempt(prover(1.0), [])
    verdict = check_proof(client, "S", "statement", attempt, client.settings, auto_accept=False)
    assert verdict.method == "flagged" and len(backend.calls("verifier")) == 1
