"""The whole pipeline end to end: real CLI, real Snakemake subprocess, real pdflatex, the
model replaced by the fake OpenAI-compatible server on 127.0.0.1 (or by replay)."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from conftest import cli_environment
from pypdf import PdfReader

import lemmata
from lemmata.artifacts import (
    Checkpoint,
    CompileReport,
    Directions,
    Experiment,
    FormalStatement,
    GateDecision,
    PaperMeta,
    ProvedLemma,
    ResearchOutput,
    Survey,
    TaskInput,
    Theory,
    TheoryPlan,
    read_artifact,
    write_artifact,
)
from lemmata.layout import SNAKEMAKE_LOG
from lemmata.llm.calllog import read_call_records
from lemmata.llm.prices import usd
from lemmata.memory.knowledge_graph import KnowledgeGraph, graph_path
from lemmata.run.pausing import checkpoint_file, pause_flag
from lemmata.run.record import load_record
from lemmata.run.spending.costs import run_costs, stage_of_scope
from lemmata.run.spending.forecast import read_forecasts
from lemmata.run.workflow import snakemake_command, workflow_environment
from support import DATA, REPO, even_sum_session
from support.cli import run_lemmata
from support.fake_llm_server import Answer, FakeLLMServer, Fault, RecordedRequest
from support.fake_search_servers import DEFAULT_PAPERS, FakeSearchServers
from support.processes import wait_until_none_left
from support.waiting import wait_until

TASK = even_sum_session.TASK
ROLES_OF_A_RUN = {
    "survey",
    "extractor",
    "ideation",
    "planner",
    "formalizer",
    "decomposer",
    "architect",
    "prover",
    "verifier",
    "refuter",
    "refiner",
    "assembler",
    "consistency",
    "sketch",
    "experiment",
    "writer",
}
#: L1 is auto-accepted in one turn (accepted, not verified); L2 passes the verifier and the refuter
#: in one turn (verified, reviewed: the fake model is a trusted checker in test homes); L3 is
#: machine-checked (Z3 at planning, Coq's automation) before any prover is asked, so it has no
#: prover call and no model check; L4 carries an open [GAP: ...] in all THEORY_STAGE_MAX_TURNS (6)
#: turns, flagged without a call each time, with one refinement after STAGNATION_WINDOW (3)
#: stagnant turns.
PROVER_CALLS = {"L1": 1, "L2": 1, "L4": 6}
#: Upstream: survey (a search turn and a final turn), the paper reader (two papers), ideation,
#: planner, the formalizer (the goal, then each of the four lemmas), decomposer, architect. Checks:
#: a verifier and a refuter call for L2. Assembly: the assembler, the consistency check (the
#: goal's formal statement is machine-checked: the theorem is the goal, no crystallizer call) and
#: the sketch for the theory review. Rest: an experiment per unverified lemma (L1, L4), the writer.
CALLS_OF_A_RUN = 13 + sum(PROVER_CALLS.values()) + 2 + 1 + 3 + 3  # upstream, prover, checks, refiner, assembly, rest


@pytest.fixture(scope="module", autouse=True)
def search_services():
    """arXiv, Semantic Scholar and the web, faked on 127.0.0.1 for every run of this module; the
    first paper has a PDF with theorem statements, for the paper reader."""
    with_pdf = dataclasses.replace(DEFAULT_PAPERS[0], pdf=(DATA / "theorems.pdf").read_bytes())
    with FakeSearchServers(papers=(with_pdf, *DEFAULT_PAPERS[1:])) as servers:
        SEARCH_SETTINGS.update(servers.settings_values())
        yield servers
    SEARCH_SETTINGS.clear()


SEARCH_SETTINGS: dict[str, str] = {}


@pytest.fixture
def fake_server():
    server = FakeLLMServer()
    even_sum_session.install(server)
    with server:
        yield server


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def lemmata_env(home: Path, **extra: str) -> dict[str, str]:
    return cli_environment(home, **{**SEARCH_SETTINGS, **extra})


def local_env(home: Path, server: FakeLLMServer, **extra: str) -> dict[str, str]:
    return lemmata_env(home, LLM_BACKEND="local", LOCAL_LLM_BASE_URL=server.openai_base_url, **extra)


def start_lemmata(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen:
    """`lemmata ARGS` running in the background, its output captured."""
    return subprocess.Popen(
        [sys.executable, "-m", "lemmata", *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def lemma_of(request) -> str:
    """The lemma a prover or verifier request is about ("" for other roles)."""
    markers = {
        "prover": r"Lemma to prove now \[(\w+)\]",
        "verifier": r"Lemma \[(\w+)\]",
        "refuter": r"Statement \[(\w+)\]",
    }
    pattern = markers.get(request.headers.get("x-lemmata-role", ""))
    found = re.search(pattern, request.body["messages"][-1]["content"]) if pattern else None
    return found.group(1) if found else ""


def only_run_dir(home: Path) -> Path:
    runs = list((home / "runs").iterdir())
    assert len(runs) == 1, runs
    return runs[0]


@dataclasses.dataclass(frozen=True)
class FinishedRun:
    """One `lemmata prove` of the even-sum task, start to PDF, at the user's prices for the fake
    server's model (issue 26: $2 in, $8 out per million tokens); what the server was asked."""

    server: FakeLLMServer  # still serving: tests that extend a copy of the run call it again
    home: Path
    workdir: Path  # where lemmata ran
    result: subprocess.CompletedProcess
    run_dir: Path
    requests: tuple[RecordedRequest, ...]  # what the run asked, before any test asked more

    @property
    def out(self) -> Path:
        return self.workdir / "out"

    @property
    def shown(self) -> str:
        """The terminal's output, its line breaks and runs of spaces as single spaces."""
        return " ".join(self.result.stdout.split())

    def requests_of(self, role: str) -> list[str]:
        return [r.body["messages"][-1]["content"] for r in self.requests if r.headers.get("x-lemmata-role") == role]


@pytest.fixture(scope="module")
def finished(search_services, tmp_path_factory) -> Iterator[FinishedRun]:
    """The module's finished run, made once: the tests below read it (or work on a copy)."""
    server = FakeLLMServer()
    even_sum_session.install(server)
    with server:
        workdir = tmp_path_factory.mktemp("finished")
        home = workdir / "home"
        home.mkdir(mode=0o700)
        (home / "prices.yaml").write_text("models:\n  local-model: {input: 2.0, output: 8.0}\n")
        result = run_lemmata(["prove", TASK, "--output", "out"], local_env(home, server), workdir)
        assert result.returncode == 0, result.stderr
        yield FinishedRun(server, home, workdir, result, only_run_dir(home), tuple(server.requests))


def copy_of(finished: FinishedRun, tmp_path: Path) -> tuple[Path, Path]:
    """(home, run directory) of a copy of the finished run, modification times kept."""
    home = tmp_path / "home"
    shutil.copytree(finished.home, home, symlinks=True)
    return home, only_run_dir(home)


def test_a_finished_run_ends_with_the_papers_path_and_delivers_a_tex_that_compiles_alone(finished, tmp_path):
    out = finished.out
    assert finished.result.stdout.splitlines()[-1] == str(out / "paper_v1.pdf")
    assert {p.name for p in out.iterdir()} == {
        "paper_v1.pdf",
        "paper_v1.tex",
        "references.bib",
        "lemmata-math.sty",
        "lemma_graph_v1.svg",
        "formal_v1.v",
        "figures",
    }
    elsewhere = shutil.copytree(out, tmp_path / "elsewhere")
    rebuilt = subprocess.run(
        ["pdflatex", "-no-shell-escape", "-interaction=nonstopmode", "paper_v1.tex"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert rebuilt.returncode == 0, rebuilt.stdout[-2000:]  # the delivered .tex compiles on its own


def test_the_survey_keeps_what_the_search_returned_and_reads_the_first_papers_pdf(finished):
    run_dir = finished.run_dir
    assert read_artifact(run_dir / "input.json", TaskInput).task == TASK
    survey = read_artifact(run_dir / "survey.json", Survey)
    assert survey.open_problems and [call.argument for call in survey.tool_calls] == ["sum of even integers"]
    # What the search returned; the paper the model named from memory is not there, nor in the .bib.
    assert [paper.id for paper in survey.papers] == ["arXiv:2101.00001", "arXiv:1905.01234"]
    assert "Hallucinated" not in (run_dir / "survey.json").read_text() + (finished.out / "references.bib").read_text()
    assert read_artifact(run_dir / "gates/survey_papers.json", GateDecision).decided_by == "automatic"
    assert [(n.paper_id, n.source) for n in survey.paper_notes] == [
        ("arXiv:2101.00001", "pdf"),
        ("arXiv:1905.01234", "abstract"),
    ]
    # Read from the PDF, not the abstract; what it says reaches the decomposer.
    assert any("Theorem 1." in prompt for prompt in finished.requests_of("extractor"))
    decomposer = finished.requests_of("decomposer")[0]
    assert "Known results from the literature" in decomposer and "[arXiv:2101.00001] Parity of Sums" in decomposer


def test_each_lemma_carries_the_status_its_checks_earned(finished):
    run_dir = finished.run_dir
    assert read_artifact(run_dir / "directions.json", Directions).goal
    plan = read_artifact(run_dir / "theory/plan.json", TheoryPlan)
    assert plan.level == "full" and [lemma.id for lemma in plan.lemmas] == ["L1", "L2", "L3", "L4"]
    assert plan.formal_statement == read_artifact(run_dir / "theory/formal.json", FormalStatement).formal_statement
    assert plan.lemmas[3].approach and plan.architect_note.startswith("applied")
    lemmas = {p.stem: read_artifact(p, ProvedLemma) for p in (run_dir / "theory/lemmas").glob("*.json")}
    assert lemmas["L4"].status == "unverified" and not lemmas["L4"].verified
    assert (lemmas["L4"].verification_method, lemmas["L4"].attempts, len(lemmas["L4"].refinements)) == ("flagged", 6, 1)
    assert (lemmas["L1"].verification_method, lemmas["L1"].verified) == ("auto_accepted", False)
    assert (lemmas["L2"].status, lemmas["L2"].verification_method, lemmas["L2"].verified) == (
        "reviewed",
        "verifier_pass",
        True,
    )
    assert lemmas["L2"].checked_by is not None and lemmas["L2"].checked_by.model == "local-model"
    assert [step.check for step in lemmas["L2"].checks] == ["structure", "verifier", "refuter"]
    # Issue 34: L3's formal statement is proved by the machines; issue 38: before any prover is asked.
    assert (lemmas["L3"].status, lemmas["L3"].verified, lemmas["L3"].attempts) == ("machine_checked", True, 0)
    assert lemmas["L3"].proved_by_machine_alone and "(unsat)" in lemmas["L3"].proof_text
    assert lemmas["L3"].formal is not None and {c.checker for c in lemmas["L3"].formal.proofs} == {"z3", "coq"}
    assert [(lemma.formal.not_formalized != "") for lemma in plan.lemmas if lemma.formal] == [True, True, False, True]


def test_the_machine_checked_goal_establishes_the_main_result_and_its_coq_file_is_delivered(finished):
    run_dir = finished.run_dir
    theory = read_artifact(run_dir / "theory.json", Theory)
    assert theory.proof_status == "proved" and theory.consistency.passed
    assert theory.main_result_status == "machine_checked" and theory.main_result_established
    development = (finished.out / "formal_v1.v").read_text(encoding="utf-8")
    assert development == (run_dir / "theory/formal.v").read_text(encoding="utf-8")
    assert "Module Main_result." in development and "Module Lemma_L3." in development


def test_the_lemma_graph_shows_each_status_and_dependency_and_the_knowledge_graph_each_lemma(finished):
    """Issue 26: each box with its proof's status, an arrow per dependency; delivered with the paper."""
    run_dir = finished.run_dir
    plan = read_artifact(run_dir / "theory/plan.json", TheoryPlan)
    picture = (run_dir / "theory/lemma_graph.svg").read_text(encoding="utf-8")
    assert (finished.out / "lemma_graph_v1.svg").read_text(encoding="utf-8") == picture
    assert dict(re.findall(r'data-lemma="(\w+)" data-status="([^"]+)"', picture)) == {
        "L1": "unverified",
        "L2": "reviewed",
        "L3": "machine-checked",
        "L4": "unverified",
    }
    arrows = set(re.findall(r'class="edge" data-from="(\w+)" data-to="(\w+)"', picture))
    assert arrows == {(dependency, lemma.id) for lemma in plan.lemmas for dependency in lemma.depends_on} != set()
    graph = KnowledgeGraph.model_validate_json(graph_path(finished.home, run_dir.name).read_text(encoding="utf-8"))
    assert [node.id for node in graph.nodes] == ["L1", "L2", "L3", "L4", "theorem"]


def test_with_no_terminal_the_gates_take_their_defaults_in_one_workflow_start(finished):
    run_dir = finished.run_dir
    assert read_artifact(run_dir / "gates/theory_review.json", GateDecision).decided_by == "default"
    # GATE_MODE auto: no review after the survey or the directions; L1 and L4 are not verified, so the
    # experiment review asks (its default, without a terminal, is to go on).
    assert [
        read_artifact(run_dir / f"gates/{gate}.json", GateDecision).decided_by
        for gate in ("survey_review", "direction_review", "experiment_review")
    ] == ["automatic", "automatic", "default"]
    # Nobody to ask: the workflow took those defaults itself, so one Snakemake start made the whole
    # run, and the terminal still shows each question with its answer.
    events = [json.loads(line)["event"] for line in (run_dir / "logs/events.jsonl").read_text().splitlines()]
    assert events.count("workflow_started") == 1
    assert "Approve the lemma chain and continue to the writer? [Y/n]: Y (no terminal: default)" in finished.shown
    assert "Continue to the writer with these numerical checks? [Y/n]: Y (no terminal: default)" in finished.shown
    assert "Theory review: the lemma chain the paper will stand on" in finished.shown


def test_the_unverified_lemmas_are_tested_and_the_paper_cites_only_what_was_found(finished):
    run_dir = finished.run_dir
    experiment = read_artifact(run_dir / "experiment.json", Experiment)
    assert [check.lemma_id for check in experiment.checks] == ["L1", "L4"] and experiment.checks[1].trials == 2000
    assert read_artifact(run_dir / "paper_v1.json", PaperMeta).removed_citations == ["knuth1997"]
    output = read_artifact(run_dir / "research_output.json", ResearchOutput)
    assert [entry["key"] for entry in json.loads(output.bibliography_json)] == ["example2021", "placeholder2019"]
    assert [c.id for c in output.lemma_chain] == ["L1", "L2", "L3", "L4"]
    assert [p.pdf_file for p in output.papers] == ["paper_v1.pdf"]
    compiled = read_artifact(run_dir / "paper_v1.compile.json", CompileReport)
    assert compiled.ok and compiled.errors == [] and compiled.passes == ["pdflatex", "bibtex", "pdflatex", "pdflatex"]
    assert "Compile: 4 passes in" in finished.result.stdout  # on the writer card
    assert "lemmata-math.sty, lemma_graph_v1.svg, formal_v1.v, figures/ (2 plots)" in finished.shown  # L1, L4


def test_every_role_is_asked_as_often_as_the_run_needs_and_a_lemma_waits_for_its_dependencies(finished):
    records = list(read_call_records(finished.run_dir / "llm_calls.jsonl"))
    requests = finished.requests
    assert {r["role"] for r in records} == ROLES_OF_A_RUN
    assert all(r["backend"] == "local" and r["attempts"] == 1 and r["response"] for r in records)
    assert {r.headers.get("x-lemmata-role") for r in requests} == ROLES_OF_A_RUN
    assert len(records) == len(requests) == CALLS_OF_A_RUN

    # L2 builds on L1 and L4 on L1 and L3: a lemma's job starts only after its dependencies' jobs ended.
    def span(lemma_id: str) -> tuple[float, float]:
        calls = [r for r in requests if lemma_of(r) == lemma_id]
        return min(c.started_at for c in calls), max(c.finished_at for c in calls)

    assert span("L2")[0] >= span("L1")[1]
    assert span("L4")[0] >= span("L1")[1]
    # L3 has no call (a machine proves it): L4's first call starts after its job's end (logged to the second).
    ended = (finished.run_dir / "logs/prove_lemma/L3.log").read_text().splitlines()[-1]
    assert " done in " in ended
    l3_end = datetime.strptime(ended[:19], "%Y-%m-%d %H:%M:%S").timestamp()
    l4_calls = [r for r in records if r["scope"] == "prove_lemma:L4"]
    assert min(r["timestamp"] - r["latency_s"] for r in l4_calls) >= l3_end


def test_the_pdf_states_every_lemma_in_order_with_its_marker_and_the_kept_citation(finished):
    run_dir = finished.run_dir
    text = pdf_text(finished.out / "paper_v1.pdf")
    assert_whole_paper(text, read_artifact(run_dir / "theory.json", Theory))
    meta = read_artifact(run_dir / "paper_v1.json", PaperMeta)
    assert (meta.lemmas_stated, meta.writer_turns, meta.compile_errors, meta.missing_parts) == (4, 1, [], [])
    assert "\\cite{knuth1997}" not in (finished.out / "paper_v1.tex").read_text()
    assert "Parity of Sums of Even Integers" in text  # the one kept citation reaches the references


def test_each_calls_cost_is_its_tokens_at_the_users_prices_and_status_and_the_card_say_the_total(finished):
    run_dir, env = finished.run_dir, local_env(finished.home, finished.server)
    calls = list(read_call_records(run_dir / "llm_calls.jsonl"))
    for call in calls:
        assert call["cost_usd"] == pytest.approx((call["tokens_in"] * 2.0 + call["tokens_out"] * 8.0) / 1e6, abs=1e-6)
    total = sum(call["cost_usd"] for call in calls)
    costs = read_artifact(run_dir / "research_output.json", ResearchOutput).model_costs
    assert costs is not None and (costs.calls, costs.unknown_calls) == (len(calls), 0)
    assert costs.usd == pytest.approx(total, abs=1e-5) and sum(costs.by_stage.values()) == pytest.approx(
        total, abs=1e-5
    )
    status = run_lemmata(["status"], env, finished.workdir)
    assert run_dir.name in status.stdout and "completed" in status.stdout
    assert f"${total:.4f}" in status.stdout
    detail = run_lemmata(["status", run_dir.name], env, finished.workdir)
    assert f"model calls: {len(calls)}, cost ${total:.4f}" in detail.stdout
    # The writer card said the same as the run ended (the stage cards said each stage's part).
    assert f"Model calls: {len(calls)}, tokens in/out: " in finished.result.stdout
    assert f"cost ${total:.4f}; elapsed" in finished.shown
    assert re.search(r"by stage: survey \$0\.\d{4}, direction planning \$0\.\d{4}, theory", detail.stdout)
    stages, files = detail.stdout.split("\nfiles:\n")
    assert stages.count(" done ") == 7, detail.stdout
    assert re.search(r"theory/lemmas/L4\.json\s+done\s+\(theory\)", files) and "figures/L4.pdf" in files
    assert " pending " not in files and " incomplete " not in files


def test_the_report_of_a_finished_run_is_written_beside_it(finished, tmp_path):
    home, run_dir = copy_of(finished, tmp_path)  # a report is a new file of the run: made on a copy
    report = run_lemmata(["report", run_dir.name], local_env(home, finished.server), tmp_path)
    assert report.returncode == 0 and report.stdout.strip() == str(run_dir / "report.html"), report.stderr
    assert "theory_plan" in (run_dir / "report.html").read_text(encoding="utf-8", errors="replace")


def pdf_text(path: Path) -> str:
    return " ".join(" ".join(page.extract_text() for page in PdfReader(path).pages).split())


def assert_whole_paper(text: str, theory: Theory) -> None:
    """Every lemma stated, in plan order, one marker on each unverified one, Limitations and the
    main result stated or said not to be established."""
    headings = list(re.finditer(r"Lemma \d+ \((L\d+)\)\.", text))
    assert [h.group(1) for h in headings] == [lemma.id for lemma in theory.lemmas]
    ends = [h.start() for h in headings[1:]] + [text.index("Main result", headings[-1].end())]
    for heading, end, lemma in zip(headings, ends, theory.lemmas):
        assert text[heading.end() : end].count("[Unverified step]") == (0 if lemma.verified else 1), lemma.id
    assert text.count("[Unverified step]") == sum(not lemma.verified for lemma in theory.lemmas)
    if theory.main_result_established:
        assert "The main result is not established" not in text
    else:
        assert "The main result is not established:" in text and "Limitations" in text


#: A writer answer whose discussion pdflatex cannot compile: a double superscript, which no clean-up
#: can read the meaning of (malformed model output).
BROKEN_DISCUSSION = even_sum_session.WRITER.replace(
    "The random trials found no pair", "The power $x^{1}^{2}$ is ambiguous. The random trials found no pair"
)


def test_a_cut_off_answer_and_a_compile_error_each_cost_the_writer_a_turn(fake_server, home, tmp_path):
    """The first answer stops at its token limit mid-sentence, before any lemma; the second breaks
    the compile; the third fixes it. The paper is whole."""
    cut = even_sum_session.WRITER.split("%%% PRELIMINARIES")[0] + "%%% PRELIMINARIES\nAn integer $n$ is ev"
    fake_server.enqueue("writer", Answer(cut, finish_reason="length"), BROKEN_DISCUSSION)
    result = run_lemmata(["prove", TASK, "-o", "out"], local_env(home, fake_server), tmp_path)
    assert result.returncode == 0, result.stderr
    writer_calls = fake_server.calls("writer")
    assert len(writer_calls) == 3
    assert "cut off in the part %%% PRELIMINARIES" in writer_calls[1].body["messages"][-1]["content"]
    assert "Double superscript" in writer_calls[2].body["messages"][-1]["content"]
    run_dir = only_run_dir(home)
    meta = read_artifact(run_dir / "paper_v1.json", PaperMeta)
    assert meta.writer_turns == 3 and meta.turn_reasons[0].startswith("cut off (finish reason length)")
    assert meta.turn_reasons[1] == "compile error in %%% DISCUSSION: Double superscript." and meta.compile_errors == []
    records = [r for r in read_call_records(run_dir / "llm_calls.jsonl") if r["role"] == "writer"]
    assert [r["finish_reason"] for r in records] == ["length", "stop", "stop"]
    text = pdf_text(tmp_path / "out/paper_v1.pdf")
    assert_whole_paper(text, read_artifact(run_dir / "theory.json", Theory))
    assert "x^{1}^{2}" not in (tmp_path / "out/paper_v1.tex").read_text()


def test_transient_errors_are_retried_and_logged_as_attempts(fake_server, home, tmp_path):
    fake_server.inject_fault("survey", Fault(status=429, message="slow down"), Fault(status=500, message="oops"))
    result = run_lemmata(["prove", TASK], local_env(home, fake_server), tmp_path)
    assert result.returncode == 0, result.stderr
    records = list(read_call_records(only_run_dir(home) / "llm_calls.jsonl"))
    survey = [r for r in records if r["role"] == "survey"]  # two turns: the first met the faults
    assert [(r["attempts"], r["error"]) for r in survey] == [(3, None), (1, None)]
    assert len(fake_server.calls("survey")) == 4


def test_exhausted_retries_stop_the_run_with_one_line_and_no_half_artifact(fake_server, home, tmp_path):
    fake_server.inject_fault("decomposer", Fault(status=429, message="quota exceeded for today"))
    result = run_lemmata(["prove", TASK], local_env(home, fake_server, LLM_RETRY_ATTEMPTS="0"), tmp_path)
    assert result.returncode == 1
    error_lines = [line for line in result.stderr.splitlines() if line.startswith("lemmata: error:")]
    assert error_lines == [
        "lemmata: error: theory_plan: model call for role 'decomposer' (local) failed after 1 attempt: "
        "local answered HTTP 429: quota exceeded for today"
    ]
    assert "Traceback" not in result.stderr
    run_dir = only_run_dir(home)
    assert not (run_dir / "theory/plan.json").exists()
    assert not list(run_dir.rglob("*.tmp"))
    read_artifact(run_dir / "directions.json", Directions)  # earlier work is intact
    assert load_record(run_dir).status == "failed"
    records = list(read_call_records(run_dir / "llm_calls.jsonl"))
    assert records[-1]["role"] == "decomposer" and records[-1]["error"] and records[-1]["response"] is None


@pytest.mark.parametrize("turns", [None, "1"], ids=["writer-max-turns-default-4", "writer-max-turns-1"])
def test_a_paper_that_does_not_compile_stops_the_run_with_its_error_and_keeps_the_tex(
    fake_server, home, tmp_path, turns
):
    """The writer's part never compiles: after WRITER_MAX_TURNS turns the writer still writes the .tex
    and records the error; the compile step fails with it, and the .tex is delivered."""
    fake_server.set_default("writer", BROKEN_DISCUSSION)
    env = local_env(home, fake_server, **({"WRITER_MAX_TURNS": turns} if turns else {}))
    result = run_lemmata(["prove", TASK, "-o", "out"], env, tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert len(fake_server.calls("writer")) == int(turns or 4)
    assert "compile: paper_v1.tex:" in result.stderr and "Double superscript" in result.stderr
    assert f"the LaTeX written so far is in {tmp_path / 'out'}" in " ".join(result.stderr.split())
    assert "x^{1}^{2}" in (tmp_path / "out/paper_v1.tex").read_text()  # delivered for fixing by hand
    assert (tmp_path / "out/lemmata-math.sty").is_file() and not (tmp_path / "out/paper_v1.pdf").exists()
    run_dir = only_run_dir(home)
    report = read_artifact(run_dir / "logs/paper_v1.compile.json", CompileReport)
    assert not report.ok and report.errors[0].endswith("Double superscript.")
    assert "x^{1}^{2}" in (run_dir / "paper_v1.tex").read_text()  # the paper is kept for fixing
    assert not (run_dir / "paper_v1.pdf").exists() and load_record(run_dir).status == "failed"
    meta = read_artifact(run_dir / "paper_v1.json", PaperMeta)
    assert meta.writer_turns == int(turns or 4) and meta.compile_errors == ["part:discussion: Double superscript."]
    assert meta.lemmas_stated == 4


def test_replaying_a_run_reproduces_the_paper_byte_for_byte(finished, tmp_path):
    recording = finished.run_dir / "llm_calls.jsonl"
    replay_home = tmp_path / "replay-home"
    replay_home.mkdir(mode=0o700)
    shutil.copy(finished.home / "prices.yaml", replay_home)  # the same prices: the same costs in the paper
    env = lemmata_env(replay_home, LLM_BACKEND="replay", LEMMATA_REPLAY=str(recording))
    second = run_lemmata(["prove", TASK, "-o", "second"], env, tmp_path)
    assert second.returncode == 0, second.stderr
    assert (tmp_path / "second/paper_v1.tex").read_bytes() == (finished.out / "paper_v1.tex").read_bytes()
    replayed = list(read_call_records(only_run_dir(replay_home) / "llm_calls.jsonl"))
    assert {r["backend"] for r in replayed} == {"replay"} and len(replayed) == CALLS_OF_A_RUN


def test_a_second_process_on_a_running_run_is_refused(fake_server, home, tmp_path):
    fake_server.latency = 0.4
    env = local_env(home, fake_server)
    first = start_lemmata(["prove", TASK], env, tmp_path)
    try:
        run_dir = _wait_for_calls(home)
        second = run_lemmata(["resume", run_dir.name], env, tmp_path)
        fake_server.latency = 0.0  # refused or not, the first may now go at full speed
        assert second.returncode == 3
        assert f"lemmata: error: run {run_dir.name} is in progress" in second.stderr
        _, stderr = first.communicate(timeout=240)
        assert first.returncode == 0, stderr
    finally:
        first.kill()
    assert (run_dir / "paper_v1.pdf").exists() and load_record(run_dir).status == "completed"


def _wait_for_calls(home: Path) -> Path:
    logs = wait_until(
        lambda: list((home / "runs").glob("*/llm_calls.jsonl")) if (home / "runs").exists() else [],
        60,
        0.1,
        message="the first run made no model call within 60 s",
    )
    return logs[0].parent


@pytest.mark.parametrize(
    ("variable", "value", "allowed"),
    [
        ("MAX_TOKENS_PROVER", "abc", "expected an integer greater than 0 and at most 1000000"),
        ("GATE_MODE", "sometimes", "allowed values are none, auto, human"),
    ],
)
def test_a_wrong_setting_stops_before_any_work(home, tmp_path, variable, value, allowed):
    result = run_lemmata(["prove", TASK], lemmata_env(home, LLM_BACKEND="local", **{variable: value}), tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == f"lemmata: error: {variable}={value!r} is not valid: {allowed}"
    assert not (home / "runs").exists()


def test_a_broken_price_table_stops_before_any_work(home, tmp_path):
    home.mkdir(mode=0o700, parents=True, exist_ok=True)  # private, as lemmata makes it
    (home / "prices.yaml").write_text("models:\n  local-model: {input: 2.0}\n")  # no output price
    result = run_lemmata(["prove", TASK], lemmata_env(home, LLM_BACKEND="local"), tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().startswith(f"lemmata: error: {home / 'prices.yaml'}: models.local-model.output: ")
    assert "fix it or remove it" in result.stderr and "Traceback" not in result.stderr
    assert not (home / "runs").exists()


def test_the_workflow_ships_inside_the_installed_package():
    from lemmata.run.workflow import snakefile

    package = Path(lemmata.__file__).parent
    assert snakefile() == package / "Snakefile"
    for relative in (
        "rules/theory.smk",
        "scripts/prove_lemma.py",
        "config/config.yaml",
        "config/schema.yaml",
        "latex/lemmata-math.sty",
        "agents/prompts/prover.md",
    ):
        assert (package / relative).is_file(), relative


def test_the_recorded_demo_replays_from_a_relative_path(home, tmp_path):
    """The README's replay demo: the bundled recording, named relative to the working directory."""
    demo = REPO / "examples/even-sum/llm_calls.jsonl"
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples/llm_calls.jsonl").write_bytes(demo.read_bytes())
    env = lemmata_env(home, LLM_BACKEND="replay", LEMMATA_REPLAY="examples/llm_calls.jsonl", SEARCH_TOOLS="false")
    shutil.rmtree(home / "calibration")  # a user's home: the recorded model's checks were never measured
    result = run_lemmata(["prove", TASK], env, tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "results" / only_run_dir(home).name / "paper_v1.pdf").is_file()  # results/<run id>/
    assert read_artifact(only_run_dir(home) / "gates/survey_papers.json", GateDecision).decided_by == "automatic"


def test_a_missing_recording_is_refused_before_any_work(home, tmp_path):
    env = lemmata_env(home, LLM_BACKEND="replay", LEMMATA_REPLAY="nowhere.jsonl")
    result = run_lemmata(["prove", TASK], env, tmp_path)
    assert result.returncode == 2 and "no such file" in result.stderr
    assert not (home / "runs").exists()


def hold_the_answers_of(fake_server: FakeLLMServer, role: str) -> threading.Event:
    """The role's calls wait for the returned event (a minute at most) before they are answered:
    a test stops a run while they are in flight without racing the model's latency."""
    released = threading.Event()
    fake_server.before_answer = lambda request: request.role == role and released.wait(60)
    return released


def wait_for_the_workflow_to_start_no_more_jobs(run_dir: Path) -> None:
    """Until Snakemake's scheduler has taken the stop (SIGTERM): from then on it starts no job."""
    log = run_dir / SNAKEMAKE_LOG
    wait_until(
        lambda: "Will exit after finishing currently running jobs" in log.read_text(errors="replace"),
        60,
        0.02,
        message=lambda: f"Snakemake never took the stop; its log ends:\n{log.read_text(errors='replace')[-2000:]}",
    )


def snakemake_child(process: subprocess.Popen) -> int:
    """The pid of the Snakemake process the lemmata driver started."""
    children = wait_until(
        lambda: Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split(),
        30,
        0.02,
        message="lemmata started no Snakemake process",
    )
    return int(children[0])


@pytest.mark.parametrize(
    "target, signum",
    [
        pytest.param("lemmata", signal.SIGINT, id="ctrl-c-to-lemmata"),
        pytest.param("lemmata", signal.SIGTERM, id="sigterm-to-lemmata"),
        pytest.param("snakemake", signal.SIGTERM, id="sigterm-to-the-workflow-process"),
        pytest.param("pause-command", None, id="lemmata-pause-command"),
        pytest.param("everything", signal.SIGKILL, id="sigkill-to-the-driver-and-the-workflow"),
    ],
)
def test_a_run_stopped_mid_theory_resumes_without_re_proving_a_lemma(fake_server, home, tmp_path, target, signum):
    """A run stopped while lemmas are being proved, then `lemmata resume`: proved lemmas are kept, not
    recomputed. A pause (Ctrl+C, a kill, `lemmata pause`) leaves checkpoint.json; completion clears it."""
    released = hold_the_answers_of(fake_server, "prover")  # L1's proof is in flight until the stop landed
    env = local_env(home, fake_server)
    first = start_lemmata(["prove", TASK], env, tmp_path)
    try:
        workflow = snakemake_child(first)
        wait_until(lambda: fake_server.calls("prover"), 90, 0.02, message="no prover call within 90 s")
        # L1 and L3 (no dependencies) are being proved now.
        if target == "pause-command":
            paused = run_lemmata(["pause", only_run_dir(home).name], env, tmp_path)
            assert paused.returncode == 0 and "pause requested" in paused.stdout, paused.stderr
        elif target == "everything":  # a crash: no handler runs, Snakemake's lock and markers stay
            os.kill(first.pid, signal.SIGKILL)
            os.killpg(workflow, signal.SIGKILL)
        else:
            os.kill(first.pid if target == "lemmata" else workflow, signum)
        if target != "everything":
            wait_for_the_workflow_to_start_no_more_jobs(only_run_dir(home))
        released.set()
        _, stderr = first.communicate(timeout=120)
    finally:
        released.set()
        first.kill()
    run_dir = only_run_dir(home)
    wait_until_none_left(home, 30)  # no workflow process, job or sandbox outlives a paused, stopped or killed run
    if target == "everything":
        assert first.returncode == -signal.SIGKILL and load_record(run_dir).status == "running"
        assert list((run_dir / ".snakemake/locks").iterdir())  # what resume must repair
    elif target == "snakemake":
        assert first.returncode == 1
        assert load_record(run_dir).status == "stopped"
        assert f"lemmata resume {run_dir.name}" in stderr
        assert not checkpoint_file(run_dir).exists()  # not a pause: nobody asked for one
    else:
        assert first.returncode == 1, stderr  # paused, not done (issue 35: 0 means done)
        assert load_record(run_dir).status == "paused"
        checkpoint = read_artifact(checkpoint_file(run_dir), Checkpoint)
        assert checkpoint.stage_name == "theory" and checkpoint.completed_stages == ["survey", "direction planning"]
        assert checkpoint.requested_by == {signal.SIGINT: "ctrl-c", signal.SIGTERM: "signal"}.get(signum, "command")
        brief = json.loads(checkpoint.research_brief_json)
        assert brief["goal"] == "The sum of two even integers is even" and brief["research_brief"].startswith("Unfold")
        assert not pause_flag(run_dir).exists()
        assert run_lemmata(["pause", run_dir.name], env, tmp_path).returncode == 2  # nothing runs to pause
    # The running jobs finished (a crash killed them); L2 and L4, which wait for them, never started.
    # L3 is proved by the machine alone: with its Coq file remembered on this machine (an earlier
    # test's run), it is done in milliseconds, before even a crash can stop it.
    proved = {p.stem for p in (run_dir / "theory/lemmas").glob("*.json")}
    if target == "everything":
        assert proved <= {"L3"}
    else:
        assert proved == {"L1", "L3"}

    fake_server.before_answer = None
    resumed = run_lemmata(["resume", run_dir.name], env, tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    if target == "everything":
        assert "repaired: removed the lock a killed run left on its workflow directory" in resumed.stderr
        assert "theory/lemmas/L1.json" in resumed.stderr  # an unfinished output, made again
    assert load_record(run_dir).status == "completed" and not checkpoint_file(run_dir).exists()
    provers = Counter(
        r["scope"].split(":")[1] for r in read_call_records(run_dir / "llm_calls.jsonl") if r["role"] == "prover"
    )
    assert provers == PROVER_CALLS  # over both runs: no lemma proved twice


def test_a_killed_driver_lets_its_workflow_finish_the_running_jobs_and_refuses_a_resume_meanwhile(
    fake_server, home, tmp_path
):
    """Only the driver SIGKILLed: the kernel tells its workflow process (a session of its own), which
    finishes its running jobs, starts no new one, and exits: nothing is left running. While it
    still works it holds Snakemake's lock, and a resume then would start a second workflow on the
    same files: it is refused (exit 3), naming that process, and changes nothing. Afterwards
    resume completes, proving no lemma twice."""
    released = hold_the_answers_of(fake_server, "prover")  # the orphan works until the refused resume is done
    env = local_env(home, fake_server)
    first = start_lemmata(["prove", TASK], env, tmp_path)
    try:
        workflow = snakemake_child(first)
        wait_until(lambda: fake_server.calls("prover"), 90, 0.02, message="no prover call within 90 s")
        os.kill(first.pid, signal.SIGKILL)
        first.communicate(timeout=30)
        run_dir = only_run_dir(home)
        before = load_record(run_dir)
        assert before.status == "running" and list((run_dir / ".snakemake/locks").iterdir())

        refused = run_lemmata(["resume", run_dir.name], env, tmp_path)
        assert refused.returncode == 3, refused.stderr
        assert refused.stderr.strip().splitlines()[-1] == (
            f"lemmata: error: a workflow process of an earlier driver (pid {workflow}) still works on this run: "
            f"let it end, or stop it (kill {workflow}), then resume"
        )
        assert load_record(run_dir) == before  # not even its timestamp rewritten
        assert not checkpoint_file(run_dir).exists()
        assert list((run_dir / ".snakemake/locks").iterdir())  # the orphan's lock is left to it
        wait_for_the_workflow_to_start_no_more_jobs(run_dir)  # told by the kernel that its driver died
    finally:
        released.set()
        first.kill()
    wait_until_none_left(home, 120)  # the orphan ended by itself
    lemmas_done = {p.stem for p in (run_dir / "theory/lemmas").glob("*.json")}
    assert lemmas_done == {"L1", "L3"}  # the running jobs finished; those waiting for them never started

    fake_server.before_answer = None
    resumed = run_lemmata(["resume", run_dir.name], env, tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert load_record(run_dir).status == "completed" and (run_dir / "paper_v1.pdf").exists()
    provers = Counter(
        r["scope"].split(":")[1] for r in read_call_records(run_dir / "llm_calls.jsonl") if r["role"] == "prover"
    )
    assert provers == PROVER_CALLS  # over both runs: no lemma proved twice


def run_workflow(run_dir: Path, env: dict[str, str], target: str) -> None:
    """Snakemake on the run directory, as the driver starts it, up to `target`."""
    command = [*snakemake_command(run_dir, 2), target]
    subprocess.run(
        command, cwd=run_dir, env={**workflow_environment(run_dir), **env}, check=True, capture_output=True, timeout=120
    )


def test_a_changed_lemma_reruns_only_itself_and_the_lemmas_built_on_it(finished, tmp_path):
    home, run_dir = copy_of(finished, tmp_path)
    env = local_env(home, finished.server)
    plan_file = run_dir / "theory/plan.json"
    plan = read_artifact(plan_file, TheoryPlan)
    plan.lemmas[2].statement = "For all integers $m, n$: $2m + 2n = 2(n + m)$."  # L3; L4 builds on L1 and L3
    write_artifact(plan_file, plan)
    before = len(list(read_call_records(run_dir / "llm_calls.jsonl")))
    run_workflow(run_dir, env, "theory.json")
    again = Counter(
        r["scope"].split(":")[1]
        for r in list(read_call_records(run_dir / "llm_calls.jsonl"))[before:]
        if r["role"] == "prover"
    )
    # L3's job ran again (its new statement is in theory.json), proved by the machine without a
    # prover; L4, built on it, was proved again; L1 and L2 untouched.
    assert again == {"L4": PROVER_CALLS["L4"]}
    assert read_artifact(run_dir / "theory.json", Theory).lemmas[2].statement.endswith("2(n + m)$.")


def test_the_formalizer_is_asked_again_only_when_the_goal_changed(finished, tmp_path):
    """Rerunning the theory after directions.json was rewritten: same goal, no formalizer call; the
    same lemmas, none either (a run formalizes the goal and its four lemmas: five calls)."""
    home, run_dir = copy_of(finished, tmp_path)
    env = local_env(home, finished.server)
    directions_file = run_dir / "directions.json"

    def rerun_plan_with(**changes: str) -> None:
        directions = read_artifact(directions_file, Directions)
        write_artifact(directions_file, directions.model_copy(update=changes))
        run_workflow(run_dir, env, "theory/plan.json")

    def calls(role: str) -> int:
        return sum(r["role"] == role for r in read_call_records(run_dir / "llm_calls.jsonl"))

    rerun_plan_with(research_brief="A new brief, the same goal.")
    assert (calls("formalizer"), calls("decomposer")) == (5, 2)  # the plan was redone, the formalizations reused
    rerun_plan_with(goal="For all integers $a$, if $a$ is even then $3a$ is even.")
    # Only the new goal is formalized: twice, since the scripted answer (the old goal's) leaves out its 3.
    assert (calls("formalizer"), calls("decomposer")) == (7, 3)
    assert read_artifact(run_dir / "theory/formal.json", FormalStatement).goal.endswith("then $3a$ is even.")


def test_from_papers_starts_from_the_named_papers(fake_server, home, tmp_path):
    result = run_lemmata(
        ["from-papers", "2101.00001", "Parity Arguments in Graph Theory"], local_env(home, fake_server), tmp_path
    )
    assert result.returncode == 0, result.stderr
    survey = read_artifact(only_run_dir(home) / "survey.json", Survey)
    assert [p.id for p in survey.papers][:2] == ["arXiv:2101.00001", "DOI:10.5555/graphs.2015.42"]  # looked up first
    first_survey = next(
        r.body["messages"][-1]["content"] for r in fake_server.requests if r.headers.get("x-lemmata-role") == "survey"
    )
    assert "Mode: from-papers" in first_survey
    assert "[DOI:10.5555/graphs.2015.42] Parity Arguments in Graph Theory" in first_survey


def test_a_budget_pauses_the_run_before_the_stage_that_would_pass_it_and_a_larger_one_completes_it(
    finished, fake_server, tmp_path
):
    """Issue 26: the first run teaches the forecast; the second, on a budget that covers the
    survey and the direction but not the theory's forecast, pauses before any theory call with
    spent, forecast and limit named; a resume with a larger budget completes it, no call twice."""
    home, first_dir = copy_of(finished, tmp_path)  # at the user's prices
    env = local_env(home, fake_server)
    first_calls = list(read_call_records(first_dir / "llm_calls.jsonl"))
    cost = run_costs(first_dir)
    before_theory = cost.by_stage["survey"] + cost.by_stage["direction planning"]
    budget = round(before_theory + cost.by_stage["theory"] / 2, 6)

    second = run_lemmata(["prove", TASK, "--output", "second", "--budget", str(budget)], env, tmp_path)
    assert second.returncode == 1, second.stderr  # paused: not done (0 means the paper exists)
    [run_dir] = [path for path in (home / "runs").iterdir() if path != first_dir]
    record = load_record(run_dir)
    assert record.status == "paused" and record.budget_usd == budget
    assert record.message.startswith("paused by its budget at the theory stage: the theory stage is forecast to cost $")
    spent = run_costs(run_dir).known_usd  # a little more than the first run's: its memories are in the prompts
    assert f"with {usd(spent)} spent so far, that would pass the budget of {usd(budget)}" in record.message
    assert record.message.endswith(f"continue with a larger budget: `lemmata resume {run_dir.name} --budget USD`")
    assert "paused by its budget at the theory stage: the theory stage is forecast" in second.stderr
    assert f"of the {usd(budget)} budget" in second.stderr  # the progress line, as the run went
    stages = {stage_of_scope(call["scope"]) for call in read_call_records(run_dir / "llm_calls.jsonl")}
    assert stages == {"survey", "direction planning"}  # not one theory call was made
    forecasts = read_forecasts(run_dir)
    assert forecasts["theory"].runs == 1 and forecasts["theory"].lemmas == 4
    assert forecasts["theory"].calls == sum(stage_of_scope(c["scope"]) == "theory" for c in first_calls)
    # Said as the stage was about to start, with the budget it is held to.
    assert f"theory: forecast {forecasts['theory'].calls} calls, " in second.stderr
    assert f"; budget {usd(budget)}, used so far {usd(spent)}\n" in second.stderr
    assert read_artifact(checkpoint_file(run_dir), Checkpoint).requested_by == "budget"
    assert not pause_flag(run_dir).exists()

    status = run_lemmata(["status", run_dir.name], env, tmp_path)
    assert f"budget: {usd(budget)}" in status.stdout and "forecast" in status.stdout

    resumed = run_lemmata(["resume", run_dir.name, "--budget", "100"], env, tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert load_record(run_dir).status == "completed" and load_record(run_dir).budget_usd == 100
    second_calls = list(read_call_records(run_dir / "llm_calls.jsonl"))
    # The same calls as the run that was never paused: none made twice, none missing.
    assert Counter((c["role"], c["scope"]) for c in second_calls) == Counter(
        (c["role"], c["scope"]) for c in first_calls
    )
