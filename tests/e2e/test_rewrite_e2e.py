"""Rewrites end to end: `lemmata rewrite` on a completed run, through the real workflow and
pdflatex, against the fake model and search servers. Every version is kept byte for byte."""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import api_client, local_environment

import lemmata
from lemmata.artifacts import Experiment, PaperMeta, RewriteContext, Theory, read_artifact
from lemmata.llm.calllog import read_call_records
from lemmata.memory.knowledge_graph import KnowledgeGraph, graph_path
from lemmata.run.qa_history import read_history
from lemmata.run.record import load_record, save_record
from support.cli import run_lemmata
from support.completed_run import copy_completed_home
from support.fake_llm_server import FakeLLMServer, Fault
from support.waiting import wait_until

INSTRUCTIONS = "Stress the parity argument and name the ideal 2Z explicitly"


@pytest.fixture
def run(services, completed_home, tmp_path):
    """(run directory, environment) of a copy of the completed run, modification times kept."""
    llm, search = services
    home = tmp_path / "home"
    env = local_environment(home, llm, search)
    run_dir = copy_completed_home(completed_home, home, env)
    save_record(run_dir, load_record(run_dir), output_dir=str(tmp_path / "out"))  # an output folder of its own
    return run_dir, env


def start_rewrite(run_dir: Path, env: dict[str, str], cwd: Path) -> subprocess.Popen:
    """`lemmata rewrite` with INSTRUCTIONS, in the background, its output captured."""
    return subprocess.Popen(
        [sys.executable, "-m", "lemmata", "rewrite", run_dir.name, INSTRUCTIONS],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@contextmanager
def slowed(llm: FakeLLMServer, seconds: float) -> Iterator[None]:
    """Every model answer takes `seconds` while the block runs: time to act during a rewrite."""
    llm.latency = seconds
    try:
        yield
    finally:
        llm.latency = 0.0


def digests(run_dir: Path, version: int) -> dict[str, str]:
    names = [f"paper_v{version}.tex", f"paper_v{version}.pdf", f"paper_v{version}.json"]
    if version > 1:
        names.append(f"rewrite_context_v{version}.json")
    return {name: hashlib.sha256((run_dir / name).read_bytes()).hexdigest() for name in names}


def request_texts(run_dir: Path, scope_prefix: str) -> list[str]:
    return [
        "\n".join(m["content"] for m in r["messages"])
        for r in read_call_records(run_dir / "llm_calls.jsonl")
        if r["scope"].startswith(scope_prefix)
    ]


def package_copy(tmp_path: Path) -> Path:
    """lemmata's code (and its Snakemake logger plugin) copied, to change the writer between two
    rewrites as a code update would."""
    target = tmp_path / "code"
    plugin = importlib.util.find_spec("snakemake_logger_plugin_lemmata")
    assert plugin is not None and plugin.submodule_search_locations
    for source in (Path(lemmata.__file__).parent, Path(plugin.submodule_search_locations[0])):
        shutil.copytree(source, target / source.name, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def test_two_rewrites_make_v2_and_v3_and_never_touch_an_earlier_version(run, tmp_path):
    run_dir, env = run
    code = package_copy(tmp_path)
    env = {**env, "PYTHONPATH": str(code)}
    v1 = digests(run_dir, 1)
    first = run_lemmata(["rewrite", run_dir.name, INSTRUCTIONS], env, tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip().endswith("paper_v2.pdf")
    # A rewrite's stages show their cards as the first run's do (issue 23), the writer's last.
    cards = [line for line in first.stdout.splitlines() if line.startswith("┌ ")]
    assert [card.split()[1] for card in cards] == ["theory", "experiment", "writer:"], cards
    assert cards[-1].startswith("┌ writer: version 2 ")
    context = read_artifact(run_dir / "rewrite_context_v2.json", RewriteContext)
    assert (context.version, context.base_version, context.paper) == (2, 1, "paper_v2.tex")
    assert INSTRUCTIONS in context.revision_prompt
    for scope in ("rewrite_theory:v2", "rewrite_experiment:v2", "rewrite_writer:v2"):
        texts = request_texts(run_dir, scope)
        assert texts and all(INSTRUCTIONS in text for text in texts[:1]), scope
    assert any(INSTRUCTIONS in text for text in request_texts(run_dir, "rewrite_theory:v2:plan"))
    # The same writer as version 1's: the whole paper from version 2's theory, in one turn here.
    meta = read_artifact(run_dir / "paper_v2.json", PaperMeta)
    lemmas = read_artifact(run_dir / "versions/v2/theory.json", Theory).lemmas
    assert (meta.lemmas_stated, meta.writer_turns, meta.compile_errors) == (len(lemmas), 1, [])
    assert all(f"\\label{{lem:{lemma.id}}}" in (run_dir / "paper_v2.tex").read_text() for lemma in lemmas)
    v2 = digests(run_dir, 2)
    assert digests(run_dir, 1) == v1
    # The session's knowledge graph follows the rewritten theory, as after the first run (issue 23).
    graph = read_artifact(graph_path(run_dir.parent.parent, run_dir.name), KnowledgeGraph)
    v2_theory = read_artifact(run_dir / "versions/v2/theory.json", Theory)
    assert [node.statement for node in graph.nodes if node.kind == "lemma"] == [
        lemma.statement for lemma in v2_theory.lemmas
    ]
    assert graph.updated >= (run_dir / "versions/v2/theory.json").stat().st_mtime - 1

    # A code update between rewrites: the writer now marks its papers. Only v3 may show it.
    writer = code / "lemmata/stages/paper/writer.py"
    writer.write_text(
        writer.read_text().replace(
            "    tex = render_document(",
            "    body = body + '\\n% written by the updated writer\\n'\n    tex = render_document(",
            1,
        )
    )
    second = run_lemmata(["rewrite", run_dir.name, "Shorten the introduction"], env, tmp_path)
    assert second.returncode == 0, second.stderr
    assert "% written by the updated writer" in (run_dir / "paper_v3.tex").read_text()
    assert digests(run_dir, 1) == v1 and digests(run_dir, 2) == v2
    assert "% written by the updated writer" not in (run_dir / "paper_v2.tex").read_text()
    out = Path(load_record(run_dir).output_dir)
    assert (out / "paper_v2.pdf").is_file() and (out / "paper_v3.pdf").is_file()  # each delivered in its turn
    # Each version's picture of its lemmas, as the run directory keeps it (issue 26).
    assert (out / "lemma_graph_v3.svg").read_bytes() == (run_dir / "versions/v3/lemma_graph.svg").read_bytes()
    assert list((run_dir / "versions/v3/figures").glob("*-v3.pdf")) and list(out.glob("figures/*-v3.pdf"))
    markers = [(r.marker, r.paper_version) for r in read_history(run_dir) if r.role == "event"]
    assert markers == [("rewrite_requested", 1), ("rewrite_saved", 2), ("rewrite_requested", 2), ("rewrite_saved", 3)]
    assert load_record(run_dir).status == "completed"


def test_a_writer_failure_keeps_the_latest_version_and_leaves_a_marker(run, services, tmp_path):
    run_dir, env = run
    llm, _ = services
    v1 = digests(run_dir, 1)
    remembered = remembered_graph(run_dir)
    llm.inject_fault("writer", Fault(status=400, message="the writer is down"))
    result = run_lemmata(["rewrite", run_dir.name, INSTRUCTIONS], env, tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "rewrite to version 2 failed" in result.stderr and "version 1 stays current" in result.stderr
    assert not (run_dir / "paper_v2.tex").exists() and not (run_dir / "rewrite_context_v2.json").exists()
    assert digests(run_dir, 1) == v1
    # Version 2's theory was written (and remembered) before its writer failed: the session's
    # knowledge graph is version 1's again (issue 36).
    assert (run_dir / "versions/v2/theory.json").is_file()
    assert remembered_graph(run_dir) == remembered
    failed = [r for r in read_history(run_dir) if r.marker == "rewrite_failed"]
    assert len(failed) == 1 and "the writer is down" in failed[0].content and failed[0].paper_version == 1
    assert load_record(run_dir).status == "completed"
    # The next rewrite takes the number the failed one did not use.
    again = run_lemmata(["rewrite", run_dir.name, INSTRUCTIONS], env, tmp_path)
    assert again.returncode == 0, again.stderr
    assert (run_dir / "paper_v2.pdf").is_file()


def test_a_theory_failure_keeps_the_latest_version_and_its_graph_and_leaves_a_marker(run, services, tmp_path):
    """The spec's rewrite rule: the theory agent fails, the previous version is restored, a marker."""
    run_dir, env = run
    llm, _ = services
    v1, remembered = digests(run_dir, 1), remembered_graph(run_dir)
    llm.inject_fault("prover", Fault(status=400, message="the prover is down"))
    result = run_lemmata(["rewrite", run_dir.name, INSTRUCTIONS], env, tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "rewrite to version 2 failed" in result.stderr and "version 1 stays current" in result.stderr
    assert not (run_dir / "versions/v2/theory.json").exists() and not (run_dir / "paper_v2.tex").exists()
    assert digests(run_dir, 1) == v1 and remembered_graph(run_dir) == remembered
    failed = [record for record in read_history(run_dir) if record.marker == "rewrite_failed"]
    assert len(failed) == 1 and "the prover is down" in failed[0].content and failed[0].paper_version == 1
    assert load_record(run_dir).status == "completed"


def remembered_graph(run_dir: Path) -> tuple[list, list]:
    """The session's knowledge graph, its nodes and edges (not when it was written)."""
    graph = read_artifact(graph_path(run_dir.parent.parent, run_dir.name), KnowledgeGraph)
    return [node.model_dump() for node in graph.nodes], [edge.model_dump() for edge in graph.edges]


def test_a_rewrite_remembers_its_lemmas_before_its_assembly_as_a_first_run_does(run, services, tmp_path):
    run_dir, env = run
    llm, _ = services
    seen: list[KnowledgeGraph] = []

    def at_the_assembly(request) -> None:
        if request.role == "assembler" and not seen:
            seen.append(read_artifact(graph_path(run_dir.parent.parent, run_dir.name), KnowledgeGraph))

    started = time.time()
    llm.before_answer = at_the_assembly
    try:
        result = run_lemmata(["rewrite", run_dir.name, INSTRUCTIONS], env, tmp_path)
    finally:
        llm.before_answer = None
    assert result.returncode == 0, result.stderr
    (before_assembly,) = seen
    v2_lemmas = read_artifact(run_dir / "versions/v2/theory.json", Theory).lemmas
    assert before_assembly.updated >= started  # version 2's, written during the rewrite
    assert [node.id for node in before_assembly.nodes] == [lemma.id for lemma in v2_lemmas]  # no theorem yet
    assert all(node.kind == "lemma" for node in before_assembly.nodes)


def test_an_experiment_failure_does_not_stop_the_rewrite(run, services, tmp_path):
    run_dir, env = run
    llm, _ = services
    llm.inject_fault("experiment", Fault(status=400, message="the sandbox agent is down"))
    result = run_lemmata(["rewrite", run_dir.name, INSTRUCTIONS], env, tmp_path)
    assert result.returncode == 0, result.stderr
    experiment = read_artifact(run_dir / "versions/v2/experiment.json", Experiment)
    assert experiment.skipped and "the sandbox agent is down" in experiment.skip_reason
    assert (run_dir / "paper_v2.pdf").is_file()


def test_a_rewrite_of_a_run_with_missing_artifacts_is_refused_and_says_so_in_the_chat(run, tmp_path):
    run_dir, env = run
    (run_dir / "theory.json").write_text("{not json")
    result = run_lemmata(["rewrite", run_dir.name, INSTRUCTIONS], env, tmp_path)
    assert result.returncode == 2 and "cannot be rewritten" in result.stderr and "theory.json" in result.stderr
    assert not (run_dir / "revisions").exists() and not (run_dir / "paper_v2.tex").exists()
    (marker,) = read_history(run_dir)
    assert marker.marker == "error" and "cannot be rewritten" in marker.content


def test_instructions_asked_with_lemmata_ask_make_the_next_version(run, tmp_path):
    """The spec's Paper rewrite rule 1, from the CLI: `lemmata ask` with a message that reads as
    revision instructions rewrites; `--question` asks the same words instead (here refused before
    any call: the message is not a question about a missing run)."""
    run_dir, env = run
    result = run_lemmata(["ask", run_dir.name, "rewrite: " + INSTRUCTIONS], env, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "reads as revision instructions" in result.stderr
    assert result.stdout.strip().endswith("paper_v2.pdf")
    context = read_artifact(run_dir / "rewrite_context_v2.json", RewriteContext)
    assert INSTRUCTIONS in context.revision_prompt and "rewrite:" not in context.revision_prompt
    markers = [(r.marker, r.content) for r in read_history(run_dir) if r.role == "event"]
    assert markers[0] == ("rewrite_requested", INSTRUCTIONS)


def test_a_rewrite_while_one_runs_is_refused_and_the_first_goes_on(run, services, tmp_path):
    run_dir, env = run
    llm, _ = services
    with slowed(llm, 0.5):  # until the second is refused: then the first may go at full speed
        first = start_rewrite(run_dir, env, tmp_path)
        wait_until(lambda: (run_dir / "revisions/v2.json").exists() or first.poll() is not None, 300, message=None)
        second = run_lemmata(["rewrite", run_dir.name, "Something else"], env, tmp_path)
    _, stderr = first.communicate(timeout=300)
    assert second.returncode == 3 and "is in progress" in second.stderr
    assert first.returncode == 0, stderr
    assert read_artifact(run_dir / "rewrite_context_v2.json", RewriteContext).revision_prompt.count(INSTRUCTIONS) == 1
    assert not (run_dir / "paper_v3.tex").exists()


def test_a_paused_rewrite_is_continued_by_resume(run, services, tmp_path):
    run_dir, env = run
    llm, _ = services
    with slowed(llm, 0.5):  # until the pause is asked for
        rewrite = start_rewrite(run_dir, env, tmp_path)
        wait_until(lambda: request_texts(run_dir, "rewrite_theory:v2") or rewrite.poll() is not None, 300, message=None)
        assert run_lemmata(["pause", run_dir.name], env, tmp_path).returncode == 0
    _, stderr = rewrite.communicate(timeout=300)
    assert rewrite.returncode == 1, stderr  # paused: not done
    assert "paused during the rewrite to version 2" in stderr and load_record(run_dir).status == "paused"
    assert not (run_dir / "paper_v2.tex").exists()
    resumed = run_lemmata(["resume", run_dir.name], env, tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip().endswith("paper_v2.pdf") and (run_dir / "rewrite_context_v2.json").is_file()
    assert [r.marker for r in read_history(run_dir)] == ["rewrite_requested", "rewrite_saved"]
    # The theory job the pause let finish was not run again: one plan, each lemma proved once.
    calls = Counter(
        (r["scope"], r["role"])
        for r in read_call_records(run_dir / "llm_calls.jsonl")
        if r["scope"].startswith("rewrite_")
    )
    assert calls[("rewrite_theory:v2:plan", "decomposer")] == 1 and calls[("rewrite_writer:v2", "writer")] == 1
    assert calls[("rewrite_theory:v2:prove_lemma:L1", "prover")] == 1


def test_the_rewrite_endpoint_accepts_at_once_refuses_a_second_and_the_new_version_appears(run, services):
    from lemmata.run.record import DataHome

    run_dir, env = run
    llm, _ = services
    with api_client(DataHome(run_dir.parent.parent), environ=env) as client:
        with slowed(llm, 0.3):  # until the second request is refused
            accepted = client.post(f"/api/runs/{run_dir.name}/rewrite", json={"instructions": INSTRUCTIONS})
            refused = client.post(f"/api/runs/{run_dir.name}/rewrite", json={"instructions": "Something else"})
        wait_until(
            lambda: not client.get(f"/api/runs/{run_dir.name}").json()["rewrite_in_progress"],
            300,
            0.5,
            message=None,
        )
        status = client.get(f"/api/runs/{run_dir.name}").json()
        history = client.get(f"/api/runs/{run_dir.name}/history").json()["records"]
    assert accepted.status_code == 202 and accepted.json()["version"] == 2
    assert refused.status_code == 409 and "the earlier rewrite continues" in refused.json()["error"]
    assert status["versions"] == [1, 2] and status["status"] == "completed"
    assert [r["marker"] for r in history] == ["rewrite_requested", "rewrite_saved"]
    assert INSTRUCTIONS in read_artifact(run_dir / "rewrite_context_v2.json", RewriteContext).revision_prompt
