"""Summary cards, rendered from artifacts (never from log text), printed after each stage."""

from __future__ import annotations

import textwrap
from pathlib import Path

from lemmata.artifacts import (
    CompileReport, Directions, Experiment, LemmaCheck, PaperMeta, Survey, Theory, read_artifact,
)
from lemmata.events import TokenTally
from lemmata.latex.document import support_files
from lemmata.pipeline import USER_FIGURES, USER_FILES

WIDTH = 78


def _box(title: str, lines: list[str]) -> str:
    rule = "─" * WIDTH
    body = []
    for line in lines:
        body += textwrap.wrap(line, WIDTH - 2, subsequent_indent="    ") or [""]
    return "\n".join([f"┌ {title} " + "─" * max(0, WIDTH - len(title) - 3), *(f"  {l}" for l in body), rule])


def _shorten(text: str, width: int = 90) -> str:
    return textwrap.shorten(" ".join(text.split()), width, placeholder="…")


def survey_card(survey: Survey) -> str:
    failed = [call for call in survey.tool_calls if not call.ok]
    lines = [f"Searches: {len(survey.tool_calls)} tool calls in {survey.turns} turns"
             + (f", {len(failed)} failed" if failed else "") + f"; {survey.retrieved} records retrieved"]
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
    return _box("survey", lines)


METHOD_LABELS = {"auto_accepted": "auto-accepted", "verifier_pass": "verifier pass",
                 "failed": "did not pass the check", "not_checked": "not checked"}


def lemma_chain(theory: Theory) -> list[str]:
    """The chain L1, L2, … each tagged 'verified' or 'low confidence' (or 'failed'), with how it
    was verified and, when not verified, why."""
    lines = []
    for number, lemma in enumerate(theory.lemmas, start=1):
        tag = "verified" if lemma.verified else ("failed" if lemma.status == "failed" else "low confidence")
        turns = f", {lemma.attempts} turns" if lemma.attempts > 1 else ""
        lines.append(f"L{number} [{lemma.id}] {tag} ({METHOD_LABELS[lemma.verification_method]}{turns}), "
                     f"confidence {lemma.confidence:.2f}: {_shorten(lemma.statement, 70)}")
        if not lemma.verified:
            lines.append(f"    why: {_shorten(lemma.verification, 80)}")
    return lines


def theory_card(theory: Theory) -> str:
    proven = theory.proven_count
    lines = [f"Proof status: {theory.proof_status} ({proven}/{len(theory.lemmas)} lemmas with a proof, "
             f"{sum(l.verified for l in theory.lemmas)} verified)"]
    lines += lemma_chain(theory)
    if not theory.consistency.passed:
        lines.append("Consistency: " + ("; ".join(theory.consistency.issues) or "failed"))
    return _box("theory", lines)


def experiment_card(experiment: Experiment) -> str:
    if experiment.skipped:
        return _box("experiment", [f"Skipped: {experiment.skip_reason}"])
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
    return _box("experiment", lines)


def check_lines(check: LemmaCheck) -> list[str]:
    """One lemma's numerical check: its numbers or why it has none, turns, earlier failures, notes."""
    turns = f"{check.attempts} turn{'s' if check.attempts != 1 else ''}"
    if check.outcome == "ran":
        flag = ", NUMERICALLY SUSPECT" if check.numerically_suspect else ""
        plot = f"; plot {check.plot}" if check.plot else ""
        lines = [f"{check.lemma_id}: {check.violations}/{check.trials} violations, "
                 f"rate {check.violation_rate or 0:.4f}{flag} ({turns}){plot}"]
        lines += [f"    earlier attempt: {_shorten(failure, 80)}" for failure in check.failures]
    else:
        lines = [f"{check.lemma_id}: no valid test after {turns}: {_shorten(check.detail, 80)}"]
    return lines + [f"    note: {_shorten(note, 80)}" for note in check.notes]


def writer_card(run_dir: Path, tally: TokenTally, elapsed: float, output_dir: Path) -> str:
    directions = read_artifact(run_dir / "directions.json", Directions)
    theory = read_artifact(run_dir / "theory.json", Theory)
    meta = read_artifact(run_dir / "paper_v1.json", PaperMeta)
    lines = [
        f"Paper: {meta.title}",
        f"Goal: {_shorten(directions.goal)}",
        f"Theorem: {_shorten(theory.theorem_statement)}",
        f"Proof status: {theory.proof_status}; lemmas: {len(theory.lemmas)}, "
        f"verified {sum(l.verified for l in theory.lemmas)}",
        f"Bibliography entries: {meta.bib_entries}; citations removed: {len(meta.removed_citations)}",
        compile_line(read_artifact(run_dir / "paper_v1.compile.json", CompileReport)),
        f"Model calls: {tally.calls}, tokens in/out: {tally.tokens_in}/{tally.tokens_out}; elapsed {elapsed:.1f} s",
        "Calls by role: " + ", ".join(f"{role} {v[0]}" for role, v in sorted(tally.by_role.items())),
        f"Files in {output_dir}: " + ", ".join(delivered_files(run_dir)),
    ]
    return _box("writer: session summary", lines)


def delivered_files(run_dir: Path) -> list[str]:
    """What the output folder receives: the paper's files and what its .tex needs to compile."""
    plots = len(list((run_dir / USER_FIGURES).glob("*.pdf")))
    return [*USER_FILES, *(source.name for source in support_files()),
            *([f"{USER_FIGURES}/ ({plots} plot{'s' * (plots != 1)})"] if plots else [])]


def compile_line(report: CompileReport) -> str:
    """The compile in one line: passes and time, or the first error; the warnings that matter."""
    if not report.ok:
        return f"Compile FAILED after {', '.join(report.passes)}: {report.errors[0] if report.errors else 'see logs'}"
    line = f"Compile: {len(report.passes)} passes in {report.seconds:.1f} s, {len(report.warnings)} warnings"
    if report.undefined_citations or report.undefined_references:
        line += (f"; undefined citations: {', '.join(report.undefined_citations) or 'none'}"
                 f", undefined references: {', '.join(report.undefined_references) or 'none'}")
    return line


def stage_card(stage_artifact: Path) -> str | None:
    """The card for a finished stage's artifact, or None for stages without one."""
    readers = {"survey.json": (Survey, survey_card), "theory.json": (Theory, theory_card),
               "experiment.json": (Experiment, experiment_card)}
    if stage_artifact.name not in readers:
        return None
    model, render = readers[stage_artifact.name]
    return render(read_artifact(stage_artifact, model))
