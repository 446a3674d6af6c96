"""One bounded end-to-end run on the real embedded model: no key, no network, real llama.cpp.

Every other test uses fakes. This one proves the default a new user meets works: the CLI
announces the offline model on its first line, every stage runs on it, and the PDF compiles
with its unverified steps marked. Token caps keep it to a few minutes on 2 cores.
bin/test sets LEMMATA_REQUIRE_EMBEDDED=1, so in CI a missing model fails instead of skipping.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REAL_LEMMATA_HOME, cli_environment

from lemmata.artifacts import Learned, PaperMeta, Survey, Theory, read_artifact
from lemmata.llm.calllog import read_call_records
from lemmata.llm.embedded_model import DEFAULT_MODEL, default_model_path, is_installed
from support.paper_audit import audit_paper, pdf_text

# Minutes of the real model on both cores: run on its own (bin/test), never beside other tests,
# where llama.cpp's two threads on two shared cores took over 25 minutes instead of 6.
pytestmark = pytest.mark.alone

#: Small answers everywhere: the smoke test checks the path through the pipeline, not the prose.
TOKEN_CAPS = {
    "MAX_TOKENS_AGENT": "900",
    "MAX_TOKENS_PLANNER": "600",
    "MAX_TOKENS_DECOMPOSER": "500",
    "MAX_TOKENS_ARCHITECT": "500",
    "MAX_TOKENS_PROVER": "300",
    "MAX_TOKENS_VERIFIER": "100",
    "MAX_TOKENS_ASSEMBLER": "300",
    "MAX_TOKENS_CRYSTALLIZER": "120",
    "MAX_TOKENS_FORMALIZER": "200",
    "MAX_TOKENS_COMPRESS": "200",
    "MAX_TOKENS_ANALYST": "200",
    "MAX_TOKENS_SKETCH": "200",
    # Two proof turns per lemma: the retry path runs on the real model without
    # multiplying the test's time (refinement and compression are covered with fakes).
    "THEORY_STAGE_MAX_TURNS": "2",
    # One writer turn: further turns (continuing a cut-off answer, asking for missing parts) cost
    # the most time on this model (4 turns, 190 s of a 490 s run) and are covered with fakes and by
    # the replays of whole embedded runs (test_embedded_replays.py); a part the one turn leaves
    # out is lemmata's own text, which the paper audit below reads like any other.
    "WRITER_MAX_TURNS": "1",
}


def installed_model() -> Path:
    # find_spec, not import: llama_cpp opens files at import that it never closes.
    if importlib.util.find_spec("llama_cpp") is None:
        reason = "llama-cpp-python is not installed (pip install 'lemmata[embedded]')"
    elif is_installed(REAL_LEMMATA_HOME):
        return default_model_path(REAL_LEMMATA_HOME)
    else:
        reason = f"the embedded model is not installed in {REAL_LEMMATA_HOME} (run: lemmata model install)"
    if os.environ.get("LEMMATA_REQUIRE_EMBEDDED") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


def test_prove_on_the_embedded_model_with_no_key_and_no_network(tmp_path: Path) -> None:
    model = installed_model()
    home = tmp_path / "home"
    env = cli_environment(
        home,
        **TOKEN_CAPS,
        LEMMATA_EMBEDDED_MODEL=str(model),
        VENDORA_CREDENTIALS_FILE=str(tmp_path / "no-cli-login.json"),
        EXPERIMENT_MODE="false",
        SEARCH_TOOLS="false",
    )  # no network: a survey turn per failed search would only cost time
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "lemmata",
            "prove",
            "Prove that the sum of two even integers is even.",
            "--output",
            "out",
            # One job at a time: with two lemma jobs sharing the model, which one's call comes
            # first (and so what it takes from the model's cache) varies, and the answers with it;
            # one at a time, the run is the same each time. The model answers one call at a time
            # anyway, so this costs little.
            "--jobs",
            "1",
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=1500,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stderr.splitlines()[0].startswith(
        "lemmata: no provider credential found: using the embedded offline model"
    )
    pdf = tmp_path / "out" / "paper_v1.pdf"
    assert result.stdout.splitlines()[-1] == str(pdf)

    run_dir = next((home / "runs").iterdir())
    calls = list(read_call_records(run_dir / "llm_calls.jsonl"))
    assert {c["backend"] for c in calls} == {"embedded"}
    assert {c["model"] for c in calls} == {Path(DEFAULT_MODEL.file_name).stem}
    assert not [c for c in calls if c["error"]]
    assert {
        "survey",
        "ideation",
        "planner",
        "formalizer",
        "decomposer",
        "architect",
        "prover",
        "assembler",
        "writer",
    } <= {c["role"] for c in calls}

    theory = read_artifact(run_dir / "theory.json", Theory)
    assert theory.goal == "The sum of two even integers is even."
    # The embedded model's checks were measured not to discriminate: it verifies nothing; only the
    # machines do (issue 34). The goal is a one-liner for Coq: machine-checked, so established.
    assert all(lemma.status == "machine_checked" for lemma in theory.lemmas if lemma.verified)
    assert {lemma.checked_by.trust for lemma in theory.lemmas if lemma.checked_by} <= {"not_discriminating"}
    assert theory.main_result_status == "machine_checked" and theory.main_result_established
    assert theory.goal_check is not None and any(check.checker == "coq" for check in theory.goal_check.proofs)
    assert "main result not established" not in result.stderr
    development = pdf.parent / "formal_v1.v"
    assert "Module Main_result." in development.read_text(encoding="utf-8")
    meta = read_artifact(run_dir / "paper_v1.json", PaperMeta)
    assert meta.bib_entries == 0  # nothing was retrieved, so nothing may be cited
    assert read_artifact(run_dir / "survey.json", Survey).tools_available == []  # SEARCH_TOOLS=false
    assert " ".join(meta.title.split()[:3]) in pdf_text(pdf)  # our template set the model's title
    assert audit_paper(theory, pdf) == []  # every lemma stated and marked, Limitations, no prompt material
    # What the run learned went to the `general` memories (no domain), embedded offline too.
    learned = read_artifact(run_dir / "learned.json", Learned)
    assert learned.memory_domain == "general" and learned.note == "" and learned.memories
    assert (home / "memory" / "domains" / "general" / learned.memories[0].file).is_file()
