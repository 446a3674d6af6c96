"""Summary cards, rendered from artifacts (never from log text), printed after each stage."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lemmata import layout
from lemmata.artifacts import (
    Checker,
    CompileReport,
    Directions,
    Experiment,
    LemmaCheck,
    PaperMeta,
    ProvedLemma,
    Survey,
    Theory,
    chain_numbers,
    read_artifact,
    refutation_in_words,
)
from lemmata.latex.document import support_files
from lemmata.llm.prices import usd
from lemmata.run.events import TokenTally
from lemmata.run.gates import STAGE_REVIEWS, THEORY_REVIEW, THEORY_REVIEW_QUESTION
from lemmata.run.outcome import main_result_line
from lemmata.run.pipeline import (
    delivered_formal_development,
    delivered_lemma_graph,
    user_files,
)
from lemmata.run.spending.forecast import StageActual, actual_by_stage, forecast_against_actual, plural, read_forecasts
from lemmata.stages.paper.audit import NOT_AUDITED
from lemmata.verification.calibration import trust_in_words, without_trust
from lemmata.verification.ladder import evidence_in_words, label

WIDTH = 78


def _box(title: str, lines: list[str]) -> str:
    rule = "─" * WIDTH
    body = wrapped(lines, WIDTH - 2)
    return "\n".join([f"┌ {title} " + "─" * max(0, WIDTH - len(title) - 3), *(f"  {line}" for line in body), rule])


def wrapped(lines: list[str], width: int = WIDTH) -> list[str]:
    """Long lines broken at `width`, continuations indented: a card reads the same in a terminal
    and in the browser's fixed-width view. Never inside a word: ids, paths and options stay whole."""
    return [
        part
        for line in lines
        for part in textwrap.wrap(line, width, subsequent_indent="    ", break_on_hyphens=False) or [""]
    ]


def _shorten(text: str, width: int = 90) -> str:
    return textwrap.shorten(" ".join(text.split()), width, placeholder="…")


def survey_card(survey: Survey, footer: Sequence[str] = ()) -> str:
    failed = [call for call in survey.tool_calls if not call.ok]
    lines = [
        f"Searches: {len(survey.tool_calls)} tool calls in {survey.turns} turns"
        + (f", {len(failed)} failed" if failed else "")
        + f"; {survey.retrieved} records retrieved"
    ]
    lines += [f"  ! {call.tool}({call.argument!r}): {_shorten(call.error)}" for call in failed[:3]]
    lines.append(f"Papers kept: {len(survey.papers)}")
    lines += [f"  - [{p.id}] {_shorten(p.title)} ({p.year or 'n.d.'})" for p in survey.papers]
    if not survey.tools_available:
        lines.append("  (no literature search tools in this run: nothing may be cited)")
    if survey.note:
        lines.append(f"Note: {survey.note}")
    lines.append(f"Open problems: {len(survey.open_problems)}")
    lines += [f"  - {_shorten(p)}" for p in survey.open_problems]
    lines.append("Key mathematical objects: " + (", ".join(survey.key_objects) or "none"))
    return _box("survey", [*lines, *footer])


METHOD_LABELS = {
    "auto_accepted": "auto-accepted",
    "verifier_pass": "verifier pass",
    "flagged": "flagged by a check",
    "failed": "did not pass the check",
    "not_checked": "not checked",
}


def default_answer_card(gate: str, theory: Theory | None, escalated: bool) -> str:
    """What the terminal shows of a review nobody was there to answer, which the workflow answered
    with the default itself: what the question would have shown, and the answer."""
    if gate != THEORY_REVIEW:
        return f"{STAGE_REVIEWS[gate]} [Y/n]: Y (no terminal: default)"
    lines = ["Theory review: the lemma chain the paper will stand on"]
    if escalated and theory is not None:
        unverified = ", ".join(lemma.id for lemma in theory.lemmas if not lemma.verified)
        lines.append(f"GATE_MODE auto -> human: {unverified} not verified; every later gate asks too.")
    lines += ["  " + line for line in (theory_review(theory) if theory is not None else [])]
    lines.append(f"{THEORY_REVIEW_QUESTION} [Y/n]: Y (no terminal: default)")
    return "\n".join(lines)


def theory_review(theory: Theory) -> list[str]:
    """What the theory card and the theory review gate (terminal and browser) show: the main
    result, who checked the proofs and how far they are trusted, then the lemma chain."""
    return [*review_head(theory), *lemma_chain(theory), *refuted_lines(theory)]


def review_head(theory: Theory) -> list[str]:
    """The review's lines before its lemma chain: the main result, the sketch of its argument, the
    goal's formal statement, who checked."""
    return [main_result_line(theory), *sketch_lines(theory), *goal_lines(theory), *checker_lines(theory)]


#: The most of a sketch a review shows: a few sentences (MAX_TOKENS_SKETCH caps the model at ~2,400).
SKETCH_CHARS = 1200


def sketch_lines(theory: Theory) -> list[str]:
    """The model's sketch of the argument (stages/theory/sketch.py), said to be the model's: the
    statuses of the chain below are what was checked. A theory from before sketches shows none."""
    if theory.sketch:
        return [
            f"Sketch (the model's summary of the argument; the chain below says what was checked): "
            f"{_shorten(theory.sketch, SKETCH_CHARS)}"
        ]
    return [f"Sketch: none ({theory.sketch_note})"] if theory.sketch_note else []


def goal_lines(theory: Theory) -> list[str]:
    """The goal's formal statement, what the researcher compares with the prose, and its status."""
    check = theory.goal_check
    if check is None:
        return []
    if check.not_formalized:
        return [f"Goal, formally: none ({_shorten(check.not_formalized, 140)})"]
    return [f"Goal, formally: {check.text}", f"    {_shorten(evidence_in_words(check), 160)}"]


def refuted_lines(theory: Theory) -> list[str]:
    """Statements of the plan a counterexample refuted before any proof: replaced or removed."""
    lines = []
    for attempt in theory.refuted:
        fate = f"replaced by: {_shorten(attempt.replaced_by, 70)}" if attempt.replaced_by else "removed from the plan"
        statement = _shorten(attempt.statement, 70).rstrip(".")
        lines.append(f"Refuted [{attempt.id}]: {statement}; {refutation_in_words(attempt.formal)}; {fate}")
    return lines


def checker_lines(theory: Theory) -> list[str]:
    """Who checked the proofs, once per checker: a theory's lemmas are normally checked by one
    model; a run recorded before checkers were recorded names none."""
    checkers: list[Checker] = []
    for lemma in theory.lemmas:
        if lemma.checked_by is not None and lemma.checked_by not in checkers:
            checkers.append(lemma.checked_by)
    if not checkers:
        return [
            "Checked by: not recorded (a run from before checkers were recorded): 'verified' there means only "
            "that the checks accepted the proof, by a model whose checks were never measured"
        ]
    lines = []
    for checker in checkers:
        checked = [lemma.id for lemma in theory.lemmas if lemma.checked_by == checker]
        which = f" (lemmas {', '.join(checked)})" if len(checkers) > 1 else ""
        lines.append(
            f"Checked by: {checker.model} ({checker.backend}), trust: {checker.trust.replace('_', ' ')}"
            f"{which}. {trust_in_words(checker)}"
        )
    return lines


def lemma_chain(theory: Theory) -> list[str]:
    """The chain L1, L2, … (one numbering: artifacts.chain_numbers), each tagged 'verified' or 'low
    confidence' (or 'failed'), with how it was checked, the checks that ran and, when not verified, why."""
    lines = []
    for number, lemma in zip(chain_numbers([lemma.id for lemma in theory.lemmas]), theory.lemmas):
        turns = f", {lemma.attempts} turns" if lemma.attempts > 1 else ""
        method = "prose proof not checked" if lemma.machine_checked else METHOD_LABELS[lemma.verification_method]
        name = lemma.id if lemma.id == f"L{number}" else f"L{number} [{lemma.id}]"  # one numbering of the chain
        lines.append(
            f"{name} {lemma_tag(lemma)} ({method}{turns}), "
            f"confidence {lemma.confidence:.2f}: {_shorten(lemma.statement, 70)}"
        )
        if lemma.formal is not None:
            lines += formal_lines(lemma)
        if lemma.checks:
            lines.append(
                "    checks: "
                + ", ".join(f"{step.check.replace('_', '-')} {step.outcome.replace('_', ' ')}" for step in lemma.checks)
            )
        if not lemma.verified:
            lines.append(f"    why: {_shorten(why_not_verified(lemma), 160)}")
    return lines


def lemma_chain_view(theory: Theory) -> list[dict[str, str]]:
    """The lemma chain of `lemma_chain` as data, for the browser to typeset: each lemma's name as the
    chain shows it, its tag, its whole statement (model text, with its mathematics), its formal
    statement in LaTeX (empty when there is none) and, when not verified, why."""
    view = []
    for number, lemma in zip(chain_numbers([lemma.id for lemma in theory.lemmas]), theory.lemmas):
        formal = lemma.formal
        view.append(
            {
                "id": lemma.id,
                "name": lemma.id if lemma.id == f"L{number}" else f"L{number} [{lemma.id}]",
                "tag": lemma_tag(lemma),
                "statement": lemma.statement,
                "formal": formal.latex if formal is not None and not formal.not_formalized else "",
                "why": "" if lemma.verified else why_not_verified(lemma),
            }
        )
    return view


def lemma_tag(lemma: ProvedLemma) -> str:
    """The spec's tag, 'verified' or 'low confidence', with the status that decides it."""
    return f"{'verified' if lemma.verified else 'low confidence'}: {label(lemma.status)}"


def formal_lines(lemma: ProvedLemma) -> list[str]:
    """The lemma's formal statement beside its prose, and what the machines found."""
    formal = lemma.formal
    assert formal is not None
    if formal.not_formalized:
        return [f"    formally: none ({_shorten(formal.not_formalized, 120)})"]
    return [f"    formally: {formal.text}", f"    machine checks: {_shorten(evidence_in_words(formal), 140)}"]


def why_not_verified(lemma: ProvedLemma) -> str:
    """The lemma's verification in words, without the sentence on its checker's trust that the
    'Checked by' line already gives once for the whole chain."""
    if lemma.checked_by is None:
        return lemma.verification
    return without_trust(lemma.verification, lemma.checked_by, "its checker verifies nothing (see Checked by)")


def theory_card(theory: Theory, footer: Sequence[str] = ()) -> str:
    proven = theory.proven_count
    lines = [
        f"Proof status: {theory.proof_status} ({proven}/{len(theory.lemmas)} lemmas with a proof, "
        f"{verified_count(theory)} verified)"
    ]
    return _box("theory", [*lines, *theory_review(theory), *footer])


def verified_count(theory: Theory) -> int:
    return sum(lemma.verified for lemma in theory.lemmas)


def experiment_card(experiment: Experiment, footer: Sequence[str] = ()) -> str:
    if experiment.skipped:
        return _box("experiment", [f"Skipped: {experiment.skip_reason}", *footer])
    ran = [check for check in experiment.checks if check.outcome == "ran"]
    score = "n/a" if experiment.alignment_score is None else f"{experiment.alignment_score:.2f}"
    agreeing = f" ({sum(not c.numerically_suspect for c in ran)} of {len(ran)} tests agree with their lemma)"
    lines = [f"Alignment score: {score}" + (agreeing if ran else "")]
    for check in experiment.checks:
        lines += check_lines(check)
    if not experiment.checks:
        lines.append(experiment.skip_reason or "no checks")
    protections = next((check.sandbox for check in experiment.checks if check.sandbox), [])
    if protections:
        lines.append("Sandbox: " + ", ".join(protections))
    return _box("experiment", [*lines, *footer])


def check_lines(check: LemmaCheck) -> list[str]:
    """One lemma's numerical check: its numbers or why it has none, turns, earlier failures, notes."""
    turns = f"{check.attempts} turn{'s' if check.attempts != 1 else ''}"
    if check.author == "lemmata":
        turns = "its formal statement, run by lemmata"
    if check.outcome == "ran":
        flag = ", NUMERICALLY SUSPECT" if check.numerically_suspect else ""
        plot = f"; plot {check.plot}" if check.plot else ""
        lines = [
            f"{check.lemma_id}: {check.violations}/{check.trials} violations, "
            f"rate {check.violation_rate or 0:.4f}{flag} ({turns}){plot}"
        ]
        lines += [f"    earlier attempt: {_shorten(failure, 80)}" for failure in check.failures]
    elif check.outcome == "not_run":
        lines = [f"{check.lemma_id}: {_shorten(check.detail, 160)}"]
    else:
        lines = [f"{check.lemma_id}: no valid test after {turns}: {_shorten(check.detail, 80)}"]
    return lines + [f"    note: {_shorten(note, 80)}" for note in check.notes]


def writer_card(
    run_dir: Path, tally: TokenTally, elapsed: float, output_dir: Path, version: int = 1, undelivered: str = ""
) -> str:
    """The session summary after the writer and the compile of paper version `version`, whether
    the compile succeeded (its report beside the paper) or failed (its report in logs/);
    `undelivered`: why the output folder did not receive it."""
    directions = read_artifact(run_dir / layout.DIRECTIONS, Directions)
    theory = read_artifact(run_dir / layout.theory_of(version), Theory)
    meta = read_artifact(run_dir / layout.paper_meta(version), PaperMeta)
    report = run_dir / layout.compile_report(version)
    if not report.exists():
        report = run_dir / layout.LOGS / report.name
    lines = [
        f"Paper: {meta.title}",
        f"Goal: {_shorten(directions.goal)}",
        f"Theorem: {_shorten(theory.theorem_statement)}",
        main_result_line(theory),
        f"Proof status: {theory.proof_status}; verified lemmas: {verified_count(theory)} of {len(theory.lemmas)}",
        f"Bibliography entries: {meta.bib_entries}; citations removed: {len(meta.removed_citations)}",
        prose_repairs_line(meta),
        *([prose_claims_line(meta)] if meta.prose_claims_checked else []),
        compile_line(read_artifact(report, CompileReport)),
        f"Model calls: {tally.calls}, tokens in/out: {tally.tokens_in}/{tally.tokens_out}, cost {tally.cost.text}; "
        f"elapsed {elapsed:.1f} s",
        "Calls by role: " + ", ".join(f"{role} {v[0]}" for role, v in sorted(tally.by_role.items())),
        *(
            ["Cost by stage: " + ", ".join(f"{stage} {usd(amount)}" for stage, amount in tally.cost.by_stage.items())]
            if tally.cost.known_usd > 0
            else []
        ),
        *([forecasts_line(run_dir)] if version == 1 and read_forecasts(run_dir) else []),
        f"Files in {output_dir}: " + ", ".join(delivered_files(run_dir, version))
        if not undelivered
        else f"Not delivered: {undelivered}; the paper is in {run_dir}",
    ]
    return _box("writer: session summary" if version == 1 else f"writer: version {version}", lines)


def prose_repairs_line(meta: PaperMeta) -> str:
    """What lemmata removed from the writer model's prose before delivering it."""
    if not meta.prose_repairs:
        return "Prose repairs: none (the writer model's parts needed none)"
    total = sum(meta.prose_repairs.values())
    return f"Prose repairs: {total} (" + ", ".join(f"{kind} {n}" for kind, n in meta.prose_repairs.items()) + ")"


def prose_claims_line(meta: PaperMeta) -> str:
    """How many general claims of the prose the machines checked, and which they refuted."""
    checked = meta.prose_claims_checked
    head = f"Prose claims checked by the machines: {checked}"
    if not meta.refuted_prose_claims:
        return head + " (none refuted; they stay unchecked prose)"
    refuted = "; ".join(f"“{_shorten(sentence)}”" for sentence in meta.refuted_prose_claims)
    return head + f", {len(meta.refuted_prose_claims)} refuted and removed (see Limitations): {refuted}"


def forecasts_line(run_dir: Path) -> str:
    """Each stage's forecast against what it used: in dollars when both are known, else in calls."""
    actual = actual_by_stage(run_dir)
    parts = []
    for stage, forecast in read_forecasts(run_dir).items():
        used = actual.get(stage, StageActual())
        if (
            forecast.cost_usd is not None
            and used.cost.unknown_calls == 0
            and forecast.cost_usd + used.cost.known_usd > 0
        ):
            parts.append(f"{stage} {usd(forecast.cost_usd)} (used {usd(used.cost.known_usd)})")
        elif forecast.calls or used.calls:
            parts.append(f"{stage} {plural(forecast.calls, 'call')} (used {used.calls})")
    return "Forecasts: " + (", ".join(parts) or "no stage was forecast to call the model")


def forecast_card_line(run_dir: Path, stage: str) -> list[str]:
    """A stage card's line: its forecast beside what it used (none for a run without forecasts)."""
    forecast = read_forecasts(run_dir).get(stage)
    return [f"Calls: {forecast_against_actual(forecast, actual_by_stage(run_dir).get(stage))}"] if forecast else []


def delivered_files(run_dir: Path, version: int = 1) -> list[str]:
    """What the output folder receives of `version`: the paper's files and what its .tex needs to
    compile (run/delivery.py planned)."""
    plots = len(list((run_dir / layout.figures_of(version)).glob("*.pdf")))
    graph = [delivered_lemma_graph(version)] if (run_dir / layout.lemma_graph_of(version)).is_file() else []
    development = (
        [delivered_formal_development(version)] if (run_dir / layout.formal_development_of(version)).is_file() else []
    )
    return [
        *user_files(version),
        *(source.name for source in support_files()),
        *graph,
        *development,
        *([f"{layout.FIGURES}/ ({plots} plot{'s' * (plots != 1)})"] if plots else []),
    ]


def compile_line(report: CompileReport) -> str:
    """The compile in one line: passes and time, or the first error; the warnings that matter."""
    if not report.ok:
        return f"Compile FAILED after {', '.join(report.passes)}: {report.errors[0] if report.errors else 'see logs'}"
    line = f"Compile: {len(report.passes)} passes in {report.seconds:.1f} s, {len(report.warnings)} warnings"
    if report.undefined_citations or report.undefined_references:
        line += (
            f"; undefined citations: {', '.join(report.undefined_citations) or 'none'}"
            f", undefined references: {', '.join(report.undefined_references) or 'none'}"
        )
    if report.audit_findings == [NOT_AUDITED]:
        line += f"; the paper was {NOT_AUDITED}"
    elif report.audit_findings:
        line += f"; the paper audit found {len(report.audit_findings)}: {'; '.join(report.audit_findings)}"
    return line


def stage_card(stage_artifact: Path) -> str | None:
    """The card for a finished stage's artifact, or None for stages without one."""
    readers: dict[str, tuple[type[Survey | Theory | Experiment], Callable[[Any, Sequence[str]], str]]] = {
        layout.SURVEY: (Survey, survey_card),
        layout.THEORY: (Theory, theory_card),
        layout.EXPERIMENT: (Experiment, experiment_card),
    }
    if stage_artifact.name not in readers:
        return None
    model, render = readers[stage_artifact.name]
    footer = forecast_card_line(stage_artifact.parent, STAGE_OF_CARD[stage_artifact.name])
    return render(read_artifact(stage_artifact, model), footer)


#: The stage whose card each artifact shows.
STAGE_OF_CARD = {layout.SURVEY: "survey", layout.THEORY: "theory", layout.EXPERIMENT: "experiment"}
