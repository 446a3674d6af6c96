"""Real embedded-model runs, replayed: what a small model really writes, through the real workflow.

Scripted answers are well-behaved; these are not. Each folder of tests/data/embedded_runs holds
the call log of a real `lemmata prove` run on the embedded model (recorded with record.py
there): its plans with duplicates, proofs that prove something else, verifiers that say "valid"
to anything, writer answers cut off or echoing the prompt, formal statements of false lemmas.
Replayed (LLM_BACKEND=replay; the recording names the embedded model, whose measured trust then
holds), the run must deliver what a researcher can rely on: every lemma of the theory stated in
the PDF with its status line, each one no machine checked marked unverified, no refuted statement
as a step, a Limitations section, no prompt material, the main result established only by a
machine or said to be not established, and the same honest status wherever it is shown.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import cli_environment

from lemmata import layout
from lemmata.artifacts import CompileReport, PaperMeta, Theory, read_artifact
from lemmata.stages.paper.unverified_marks import needs_limitations
from support import DATA
from support.paper_audit import audit_run, pdf_text

RECORDINGS = sorted(path.parent for path in (DATA / "embedded_runs").glob("*/recorded.json"))


def test_there_are_recordings_to_replay():
    assert len(RECORDINGS) >= 2, RECORDINGS


@pytest.mark.parametrize("recording", RECORDINGS, ids=lambda path: path.name)
def test_a_real_embedded_run_replays_into_an_honest_whole_paper(recording: Path, tmp_path: Path):
    recorded = json.loads((recording / "recorded.json").read_text())
    home = tmp_path / "home"
    env = cli_environment(
        home, **{**recorded["settings"], "LLM_BACKEND": "replay", "LEMMATA_REPLAY": str(recording / "llm_calls.jsonl")}
    )
    task = (recording / "task.txt").read_text().strip()
    result = subprocess.run(
        [sys.executable, "-m", "lemmata", "prove", task, "-o", str(tmp_path / "out")],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    run_dir = next((home / "runs").iterdir())
    theory = read_artifact(run_dir / "theory.json", Theory)
    pdf = tmp_path / "out" / "paper_v1.pdf"

    assert len(theory.lemmas) == recorded["lemmas"]
    # The embedded model was measured not to discriminate: its checks verify nothing; only the
    # machines do (issue 34), and the paper says what each checked.
    assert all(lemma.status == "machine_checked" for lemma in theory.lemmas if lemma.verified)
    assert {lemma.checked_by.trust for lemma in theory.lemmas if lemma.checked_by} <= {"not_discriminating"}
    outcome = "completed" if theory.main_result_established else "completed (main result not established)"
    assert recorded["outcome"] == outcome and f"{outcome} — paper in" in result.stderr + result.stdout
    assert recorded.get("main_result_status") in (None, theory.main_result_status)
    assert audit_run(run_dir, pdf) == []
    # The product ran the same audit on the PDF it delivered, and recorded what it found: nothing.
    assert read_artifact(run_dir / layout.compile_report(1), CompileReport).audit_findings == []
    meta = read_artifact(run_dir / "paper_v1.json", PaperMeta)
    assert meta.lemmas_stated == len(theory.lemmas)
    # The theorem is a statement: a crystallizer that went on with a proof and markdown sections
    # (an earlier recording of even-sum, 2026-11-25) made them the theorem and sections of the paper.
    assert "**Proof" not in theory.theorem_statement and "\n#" not in theory.theorem_statement
    # Limitations when something is left unchecked, or a claim of the prose was refuted; a run the
    # machines checked whole has none.
    assert ("Limitations" in pdf_text(pdf)) == (needs_limitations(theory) or bool(meta.refuted_prose_claims))
