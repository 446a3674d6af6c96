"""The theory review gate's chain is rendered from the artifact: L1, L2, … tagged 'verified' or
'low confidence' (spec, lemma record) with the status that decides it (issue 34: machine-checked,
refuted as formalized, tested, reviewed, unverified), with how each lemma was verified (issue 4),
who checked it and how far that checker is trusted, and whether the main result is established
(issue 21)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lemmata import layout
from lemmata.artifacts import (
    ACCEPTING_METHODS,
    Checker,
    CheckStep,
    CompileReport,
    ConsistencyCheck,
    Direction,
    Directions,
    Experiment,
    LemmaCheck,
    PaperMeta,
    ProvedLemma,
    StageForecast,
    Theory,
    write_artifact,
)
from lemmata.run.cards import (
    compile_line,
    experiment_card,
    lemma_chain,
    stage_card,
    theory_card,
    theory_review,
    writer_card,
)
from lemmata.run.events import TokenTally
from lemmata.run.gates import lemma_named
from lemmata.stages.experiment.lemma_checks import TRUE_BY_ITS_FORM
from lemmata.stages.paper.audit import NOT_AUDITED
from lemmata.verification.calibration import trust_in_words


def lemma(
    lemma_id: str, method: str, status: str, confidence: float, attempts: int = 1, verification: str = ""
) -> ProvedLemma:
    verified = method in ("auto_accepted", "verifier_pass")
    return ProvedLemma(
        id=lemma_id,
        statement=f"Statement of {lemma_id}.",
        proof_text="" if status == "failed" else "p",
        confidence=confidence,
        verified=verified,
        status=status,  # type: ignore[arg-type]
        verification_method=method,
        verification=verification,
        attempts=attempts,
    )  # type: ignore[arg-type]


THEORY = Theory(
    goal="g",
    theorem_statement="t",
    assembled_proof="By [parity] and [sum].",
    proof_status="partial",
    consistency=ConsistencyCheck(passed=True),
    lemmas=[
        lemma("parity", "auto_accepted", "proved", 0.98),
        lemma("sum", "verifier_pass", "proved", 0.7, attempts=2),
        lemma("closure", "flagged", "low_confidence", 0.7, attempts=6, verification="verifier: uncertain (gap)"),
        lemma("bound", "not_checked", "low_confidence", 0.6, verification="not checked: the verifier could not run"),
        lemma("extra", "failed", "failed", 0.0, verification="no usable proof"),
    ],
)


def test_the_chain_is_numbered_in_plan_order_and_tagged_from_the_artifact() -> None:
    heads = [line for line in lemma_chain(THEORY) if not line.startswith("    ")]
    assert heads == [
        "L1 [parity] verified: reviewed (auto-accepted), confidence 0.98: Statement of parity.",
        "L2 [sum] verified: reviewed (verifier pass, 2 turns), confidence 0.70: Statement of sum.",
        "L3 [closure] low confidence: unverified (flagged by a check, 6 turns), confidence 0.70: Statement of closure.",
        "L4 [bound] low confidence: unverified (not checked), confidence 0.60: Statement of bound.",
        "L5 [extra] low confidence: unverified (did not pass the check), confidence 0.00: Statement of extra.",
    ]


def test_every_unverified_lemma_says_why() -> None:
    whys = [line.strip() for line in lemma_chain(THEORY) if line.startswith("    why: ")]
    assert whys == [
        "why: verifier: uncertain (gap)",
        "why: not checked: the verifier could not run",
        "why: no usable proof",
    ]


def test_the_theory_card_counts_verified_lemmas_from_the_artifact() -> None:
    assert "Proof status: partial (4/5 lemmas with a proof, 2 verified)" in theory_card(THEORY)


CALIBRATED = Checker(
    backend="vendora",
    model="claude-checker",
    trust="calibrated",
    false_accept_rate=0.05,
    correct_accept_rate=0.9,
    measured_on="Open Proof Corpus, 120 proofs, 2025-06-01",
)
UNCALIBRATED = Checker(backend="embedded", model="qwen-small", trust="uncalibrated")


def checked(lemma_id: str, checker: Checker, method: str) -> ProvedLemma:
    """A lemma checked by `checker`, the way the theory stage records it: only a proof that passed
    the checks is verified, and only when its checker is trusted."""
    accepted = method in ACCEPTING_METHODS
    verified = method == "verifier_pass" and checker.can_verify
    verification = "verifier: valid" if accepted else "verifier: uncertain (step 2 is unjustified)"
    if accepted and not verified:
        verification += "; accepted by the checks, but not verified: " + trust_in_words(checker)
    verifier = CheckStep(check="verifier", outcome="passed" if accepted else "objected", detail=verification)
    return ProvedLemma(
        id=lemma_id,
        statement=f"Statement of {lemma_id}.",
        proof_text="p",
        confidence=0.8,
        verified=verified,
        status="proved" if verified else "low_confidence",
        verification_method=method,
        verification=verification,  # type: ignore[arg-type]
        checks=[
            CheckStep(check="structure", outcome="passed"),
            verifier,
            *([CheckStep(check="refuter", outcome="passed")] if verified else []),
        ],
        checked_by=checker,
    )


def checked_theory(*lemmas: ProvedLemma) -> Theory:
    return Theory(
        goal="g",
        theorem_statement="t",
        lemmas=list(lemmas),
        assembled_proof="By [L1] and [L2].",
        consistency=ConsistencyCheck(passed=True),
        proof_status="proved" if all(lemma.verified for lemma in lemmas) else "partial",
    )


VERIFIED_THEORY = checked_theory(checked("L1", CALIBRATED, "verifier_pass"), checked("L2", CALIBRATED, "verifier_pass"))
PARTLY_VERIFIED_THEORY = checked_theory(
    checked("L1", CALIBRATED, "verifier_pass"), checked("L2", CALIBRATED, "flagged")
)
UNTRUSTED_THEORY = checked_theory(checked("L1", UNCALIBRATED, "verifier_pass"), checked("L2", UNCALIBRATED, "flagged"))


def flat(card: str) -> str:
    """A card's text without its line breaks (the box wraps long lines)."""
    return " ".join(card.split())


def test_the_theory_card_says_when_the_main_result_is_not_established_and_why() -> None:
    card = flat(theory_card(PARTLY_VERIFIED_THEORY))
    assert "Main result: NOT established: lemma L2 is not verified" in card
    assert (
        "L1 verified: reviewed (verifier pass)" in card and "L2 low confidence: unverified (flagged by a check)" in card
    )
    assert "checks: structure passed, verifier objected" in card
    assert "why: verifier: uncertain (step 2 is unjustified)" in card


def test_a_chain_whose_ids_start_at_l2_keeps_its_own_numbers_at_the_gate() -> None:
    """A refuted L1 left L2, L3: the gate must not number them 1, 2 beside their ids (issue 36)."""
    card = flat(
        theory_card(checked_theory(checked("L2", CALIBRATED, "verifier_pass"), checked("L3", CALIBRATED, "flagged")))
    )
    assert "L2 verified: reviewed" in card and "L3 low confidence: unverified" in card
    assert "L1" not in card and "[L2]" not in card


def test_a_fully_verified_theory_card_says_the_main_result_is_established() -> None:
    card = flat(theory_card(VERIFIED_THEORY))
    assert "Main result: established" in card and "NOT established" not in card
    assert f"Checked by: claude-checker (vendora), trust: calibrated. {trust_in_words(CALIBRATED)}" in card


def test_an_untrusted_checker_is_named_once_with_what_its_verdicts_are_worth() -> None:
    card = flat(theory_card(UNTRUSTED_THEORY))
    assert "Main result: NOT established: lemmas L1, L2 are not verified" in card
    assert card.count("Checked by: qwen-small (embedded), trust: uncalibrated.") == 1
    assert card.count(trust_in_words(UNCALIBRATED)) == 1  # not repeated in each lemma's why
    assert "L1 low confidence: unverified (verifier pass)" in card
    assert "accepted by the checks, but not verified: its checker verifies nothing (see Checked by)" in card


def test_lemmas_recorded_before_checkers_still_render_and_say_no_checker_was_recorded() -> None:
    review = theory_review(THEORY)
    assert review[0] == (
        "Main result: NOT established: the proof of lemma extra failed; lemmas closure, bound are not verified"
    )
    assert review[1].startswith("Checked by: not recorded")
    assert review[2:] == lemma_chain(THEORY)


def written_run(run_dir: Path, theory: Theory) -> Path:
    """The artifacts the writer card reads, for a run whose theory is `theory`."""
    write_artifact(run_dir / "directions.json", Directions(candidates=[Direction(title="d")], chosen=0, goal="g"))
    write_artifact(run_dir / "theory.json", theory)
    write_artifact(
        run_dir / "paper_v1.json", PaperMeta(version=1, title="Parity", tex_file="paper_v1.tex", bib_entries=0)
    )
    write_artifact(
        run_dir / "paper_v1.compile.json",
        CompileReport(tex_file="paper_v1.tex", ok=True, pdf_file="paper_v1.pdf", passes=["pdflatex"]),
    )
    return run_dir


@pytest.mark.parametrize(
    "theory, main_result, verified",
    [
        pytest.param(
            PARTLY_VERIFIED_THEORY,
            "Main result: NOT established: lemma L2 is not verified",
            "1 of 2",
            id="not-established",
        ),
        pytest.param(VERIFIED_THEORY, "Main result: established", "2 of 2", id="established"),
    ],
)
def test_the_writer_card_says_whether_the_main_result_is_established(
    tmp_path: Path, theory: Theory, main_result: str, verified: str
) -> None:
    card = flat(writer_card(written_run(tmp_path, theory), TokenTally(), 1.0, tmp_path / "out"))
    assert main_result in card and f"verified lemmas: {verified}" in card


def test_the_writer_card_counts_the_prose_repairs(tmp_path: Path) -> None:
    run_dir = written_run(tmp_path, VERIFIED_THEORY)
    assert "Prose repairs: none" in flat(writer_card(run_dir, TokenTally(), 1.0, tmp_path / "out"))
    meta = PaperMeta(
        version=1,
        title="Parity",
        tex_file="paper_v1.tex",
        bib_entries=0,
        prose_repairs={"unfounded claims": 2, "unretrieved authors": 1},
    )
    write_artifact(run_dir / "paper_v1.json", meta)
    card = flat(writer_card(run_dir, TokenTally(), 1.0, tmp_path / "out"))
    assert "Prose repairs: 3 (unfounded claims 2, unretrieved authors 1)" in card
    assert "Prose claims checked" not in card  # none was sent


def test_the_writer_card_says_which_claims_of_the_prose_the_machines_refuted(tmp_path: Path) -> None:
    run_dir = written_run(tmp_path, VERIFIED_THEORY)
    meta = PaperMeta(version=1, title="Parity", tex_file="paper_v1.tex", bib_entries=0, prose_claims_checked=2)
    write_artifact(run_dir / "paper_v1.json", meta)
    card = flat(writer_card(run_dir, TokenTally(), 1.0, tmp_path / "out"))
    assert "Prose claims checked by the machines: 2 (none refuted; they stay unchecked prose)" in card
    refuted = meta.model_copy(update={"refuted_prose_claims": ["The square of every odd integer is even."]})
    write_artifact(run_dir / "paper_v1.json", refuted)
    card = flat(writer_card(run_dir, TokenTally(), 1.0, tmp_path / "out"))
    assert (
        "Prose claims checked by the machines: 2, 1 refuted and removed (see Limitations): "
        "“The square of every odd integer is even.”" in card
    )


@pytest.mark.parametrize(
    "report, line",
    [
        pytest.param(
            CompileReport(
                tex_file="paper_v1.tex",
                ok=True,
                pdf_file="paper_v1.pdf",
                passes=["pdflatex", "bibtex", "pdflatex", "pdflatex"],
                seconds=1.234,
            ),
            "Compile: 4 passes in 1.2 s, 0 warnings",
            id="clean",
        ),
        pytest.param(
            CompileReport(
                tex_file="paper_v1.tex",
                ok=True,
                pdf_file="paper_v1.pdf",
                passes=["pdflatex"] * 3,
                seconds=2.0,
                warnings=["w1", "w2"],
                undefined_citations=["lee2019"],
            ),
            "Compile: 3 passes in 2.0 s, 2 warnings; undefined citations: lee2019, undefined references: none",
            id="undefined-citation",
        ),
        pytest.param(
            CompileReport(
                tex_file="paper_v1.tex",
                ok=False,
                passes=["pdflatex"],
                errors=["paper_v1.tex:41: Undefined control sequence \\Tr"],
            ),
            "Compile FAILED after pdflatex: paper_v1.tex:41: Undefined control sequence \\Tr",
            id="failed",
        ),
        pytest.param(
            CompileReport(
                tex_file="paper_v1.tex",
                ok=True,
                pdf_file="paper_v1.pdf",
                passes=["pdflatex"] * 3,
                seconds=2.0,
                audit_findings=["markdown in the paper: '**'", "no Limitations section, yet lemmas are not verified"],
            ),
            "Compile: 3 passes in 2.0 s, 0 warnings; the paper audit found 2: markdown in the paper: '**'; "
            "no Limitations section, yet lemmas are not verified",
            id="audit-findings",
        ),
        pytest.param(
            CompileReport(
                tex_file="paper_v1.tex",
                ok=True,
                pdf_file="paper_v1.pdf",
                passes=["pdflatex"] * 3,
                seconds=2.0,
                audit_findings=[NOT_AUDITED],
            ),
            f"Compile: 3 passes in 2.0 s, 0 warnings; the paper was {NOT_AUDITED}",
            id="not-audited",
        ),
    ],
)
def test_the_writer_card_shows_the_compile_report(report: CompileReport, line: str) -> None:
    assert compile_line(report) == line


SANDBOX = [
    "bubblewrap box",
    "read-only system",
    "scratch tmpfs",
    "no network",
    "pid namespace",
    "environment from nothing",
    "unprivileged uid",
    "no capabilities",
    "wall-clock timeout",
    "whole-test limits (cgroup v1)",
    "audit hook (telemetry)",
]
EXPERIMENT = Experiment(
    skipped=False,
    verified_lemmas=["parity"],
    low_confidence_lemmas=["closure", "bound", "extra"],
    alignment_score=0.5,
    checks=[
        LemmaCheck(
            lemma_id="closure",
            group="low_confidence",
            outcome="ran",
            trials=2000,
            violations=0,
            violation_rate=0.0,
            attempts=1,
            plot="figures/closure.pdf",
            sandbox=SANDBOX,
        ),
        LemmaCheck(
            lemma_id="bound",
            group="low_confidence",
            outcome="ran",
            trials=1000,
            violations=40,
            violation_rate=0.04,
            numerically_suspect=True,
            attempts=2,
            sandbox=SANDBOX,
            failures=["crashed (exit status 1): ZeroDivisionError: division by zero"],
            notes=["series ignored: two points have the same x"],
        ),
        LemmaCheck(
            lemma_id="extra",
            group="low_confidence",
            outcome="error",
            attempts=5,
            sandbox=SANDBOX,
            detail="denied: network access (socket.connect)",
            failures=["stopped: exceeded the 20 s CPU-time limit"] * 4 + ["denied: network access (socket.connect)"],
        ),
    ],
)


def test_the_experiment_card_shows_alignment_and_each_lemmas_check() -> None:
    text = " ".join(experiment_card(EXPERIMENT).split())  # the card wraps long lines
    expected = [
        "Alignment score: 0.50 (1 of 2 tests agree with their lemma)",
        "closure: 0/2000 violations, rate 0.0000 (1 turn); plot figures/closure.pdf",
        "bound: 40/1000 violations, rate 0.0400, NUMERICALLY SUSPECT (2 turns)",
        "earlier attempt: crashed (exit status 1): ZeroDivisionError: division by zero",
        "note: series ignored: two points have the same x",
        "extra: no valid test after 5 turns: denied: network access (socket.connect)",
        "Sandbox: bubblewrap box, read-only system, scratch tmpfs, no network, pid namespace, environment from nothing, "
        "unprivileged uid, no capabilities, wall-clock timeout, whole-test limits (cgroup v1), audit hook (telemetry)",
    ]
    positions = [text.index(part) for part in expected]
    assert positions == sorted(positions)
    assert "CPU-time" not in text  # the earlier failures of a lemma that never ran are not repeated


@pytest.mark.parametrize(
    "experiment, line",
    [
        pytest.param(
            Experiment(
                skipped=True, skip_reason="EXPERIMENT_MODE=auto and the formal statement has no quantitative signals"
            ),
            "Skipped: EXPERIMENT_MODE=auto and the formal statement has no quantitative signals",
            id="skipped",
        ),
        pytest.param(
            Experiment(skipped=False, skip_reason="no low-confidence lemma to test"),
            "no low-confidence lemma to test",
            id="nothing-to-test",
        ),
        pytest.param(
            Experiment(
                skipped=False,
                low_confidence_lemmas=["L1"],
                checks=[
                    LemmaCheck(
                        lemma_id="L1",
                        group="low_confidence",
                        outcome="not_run",
                        author="lemmata",
                        detail=TRUE_BY_ITS_FORM,
                    )
                ],
            ),
            f"Alignment score: n/a L1: {TRUE_BY_ITS_FORM}",
            id="read-as-circular",
        ),
    ],
)
def test_the_experiment_card_says_why_nothing_was_tested(experiment: Experiment, line: str) -> None:
    assert line in " ".join(experiment_card(experiment).split())


def test_a_rewrites_writer_card_reads_its_versions_theory_and_a_failed_compile_from_logs(tmp_path: Path) -> None:
    """Issue 23: a writer card for every version, and when its compile failed (its report then in logs/)."""
    run_dir = written_run(tmp_path, PARTLY_VERIFIED_THEORY)
    write_artifact(run_dir / "versions/v2/theory.json", VERIFIED_THEORY)
    write_artifact(
        run_dir / "paper_v2.json", PaperMeta(version=2, title="Parity, again", tex_file="paper_v2.tex", bib_entries=0)
    )
    write_artifact(
        run_dir / "logs/paper_v2.compile.json",
        CompileReport(
            tex_file="paper_v2.tex", ok=False, passes=["pdflatex"], errors=["paper_v2.tex:7: Double superscript"]
        ),
    )
    card = flat(writer_card(run_dir, TokenTally(), 1.0, tmp_path / "out", version=2))
    assert card.startswith("┌ writer: version 2") and "Paper: Parity, again" in card
    assert "Main result: established" in card  # version 2's theory, not the first run's
    assert "Compile FAILED after pdflatex: paper_v2.tex:7: Double superscript" in card


def test_the_writer_card_says_what_the_calls_cost(tmp_path: Path) -> None:
    tally = TokenTally()
    for role, scope, cost in (
        ("survey", "survey", 0.01),
        ("prover", "prove_lemma:L1", 0.2),
        ("writer", "writer", None),
    ):
        tally.apply({"role": role, "scope": scope, "tokens_in": 100, "tokens_out": 10, "cost_usd": cost})
    card = flat(writer_card(written_run(tmp_path, VERIFIED_THEORY), tally, 1.0, tmp_path / "out"))
    assert "Model calls: 3, tokens in/out: 300/30, cost $0.2100 + 1 call of unknown cost;" in card
    assert "Cost by stage: survey $0.0100, theory $0.2000" in card


def test_a_stage_card_and_the_writer_card_set_each_forecast_beside_what_the_stage_used(tmp_path: Path) -> None:
    run_dir = written_run(tmp_path, VERIFIED_THEORY)
    write_artifact(run_dir / layout.THEORY, VERIFIED_THEORY)
    calls = [{"role": "prover", "scope": "prove_lemma:L1", "tokens_in": 100, "tokens_out": 10, "cost_usd": 0.02}] * 3
    calls.append({"role": "writer", "scope": "writer", "tokens_in": 900, "tokens_out": 100, "cost_usd": None})
    (run_dir / layout.LLM_CALLS).write_text("".join(json.dumps(call) + "\n" for call in calls))
    forecasts = [
        StageForecast(stage="theory", made_at=0, calls=4, tokens_in=400, tokens_out=40, cost_usd=0.08, basis="b"),
        StageForecast(stage="writer", made_at=0, calls=2, tokens_in=1800, tokens_out=200, cost_usd=None, basis="b"),
    ]
    (run_dir / layout.FORECASTS).write_text("".join(f.model_dump_json() + "\n" for f in forecasts))
    card = flat(stage_card(run_dir / layout.THEORY) or "")
    assert "Calls: forecast 4 calls, 440 tokens, $0.0800; used 3 calls, 330 tokens, $0.0600" in card
    writer = flat(writer_card(run_dir, TokenTally(), 1.0, tmp_path / "out"))
    # The writer's model has no price: its forecast is set against its calls.
    assert "Forecasts: theory $0.0800 (used $0.0600), writer 2 calls (used 1)" in writer


@pytest.mark.parametrize(
    "step, meant",
    [("2", "L2"), ("3", "L3"), ("l3", "L3"), ("1", "1"), ("the bound", "the bound")],
)
def test_a_reviewer_names_a_step_by_the_number_the_gate_shows(step, meant) -> None:
    """The chain L2, L3 (a refuted L1 left it): "2" is L2, as shown, not the second lemma."""
    theory = checked_theory(checked("L2", CALIBRATED, "verifier_pass"), checked("L3", CALIBRATED, "flagged"))
    assert lemma_named(theory, step) == meant


def test_the_review_shows_the_models_sketch_above_the_chain_said_to_be_the_models() -> None:
    theory = VERIFIED_THEORY.model_copy(update={"sketch": "By [L1] and then [L2], the sum is $2(m+n)$."})
    review = theory_review(theory)
    assert review[1] == (
        "Sketch (the model's summary of the argument; the chain below says what was checked): "
        "By [L1] and then [L2], the sum is $2(m+n)$."
    )
    assert review.index(review[1]) < next(i for i, line in enumerate(review) if line.startswith("L1 "))
    unsketched = theory_review(VERIFIED_THEORY.model_copy(update={"sketch_note": "the model's sketch was empty"}))
    assert unsketched[1] == "Sketch: none (the model's sketch was empty)"
    assert not any(line.startswith("Sketch") for line in theory_review(VERIFIED_THEORY))  # a theory from before
