"""The gates at the real prompts — the survey and direction-planning fallbacks and the theory
review: `lemmata prove` on a pseudo-terminal (pexpect), typing answers or Ctrl+C, against the
fake model server and the fake search services on 127.0.0.1, through the real workflow."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pexpect
import pytest
from conftest import cli_environment

from lemmata.artifacts import Checkpoint, Directions, GateDecision, Survey, TheoryRework, read_artifact
from lemmata.llm.calllog import read_call_records
from lemmata.run.pausing import checkpoint_file, pause_flag
from lemmata.run.qa_history import read_history
from lemmata.run.record import load_record
from lemmata.run.workflow import STOP_NOTICE
from support import even_sum_session
from support.fake_llm_server import FakeLLMServer, RecordedRequest
from support.fake_search_servers import FakeSearchServers, Fault
from support.waiting import wait_until

TASK = even_sum_session.TASK
PAPERS_PROMPT = r"Paper identifiers or titles, comma-separated \(Enter to continue without papers\): "
DIRECTION_PROMPT = r"Research direction \(Enter to stop\): "
APPROVE_PROMPT = r"Approve the lemma chain and continue to the writer\? \[Y/n\]: "
FEEDBACK_PROMPT = r"Feedback for the next agent \(Enter for none\): "
SURVEY_REVIEW_PROMPT = r"Continue to direction planning with this survey\? \[Y/n\]: "
DIRECTION_REVIEW_PROMPT = r"Continue to the theory with this goal\? \[Y/n\]: "
EXPERIMENT_PROMPT = r"Continue to the writer with these numerical checks\? \[Y/n\]: "
REVIEW_PROMPT = r"Review the paper\? \[y/N\]: "


@pytest.fixture
def llm():
    server = FakeLLMServer()
    even_sum_session.install(server)
    with server:
        yield server


@pytest.fixture
def search():
    with FakeSearchServers() as servers:
        yield servers


def spawn(args: list[str], env: dict[str, str], cwd: Path) -> pexpect.spawn:
    return pexpect.spawn(
        sys.executable,
        ["-m", "lemmata", *args],
        env=env,
        cwd=str(cwd),
        encoding="utf-8",
        timeout=180,
        dimensions=(60, 200),
    )


def environment(home: Path, llm: FakeLLMServer, search: FakeSearchServers | None) -> dict[str, str]:
    services = search.settings_values() if search else {}  # none: every search service is down
    return cli_environment(home, LLM_BACKEND="local", LOCAL_LLM_BASE_URL=llm.openai_base_url, **services)


def answer(terminal: pexpect.spawn, prompt: str, reply: str, feedback: str) -> None:
    """Go on at a review question (`reply`), then give the feedback for the next agent."""
    terminal.expect(prompt)
    terminal.sendline(reply)
    terminal.expect(FEEDBACK_PROMPT)
    terminal.sendline(feedback)


def decline_review(terminal: pexpect.spawn) -> None:
    """A completed run offers the review loop: Enter declines it."""
    terminal.expect(REVIEW_PROMPT)
    terminal.sendline("")


def reading_the_terminal(pid: int) -> bool:
    """The process is blocked reading its terminal (read(0, ...)).

    A Ctrl+C sent between input() writing its prompt and reading the terminal is lost: Python
    runs its handler only once the read returns, so the prompt waits on. A person cannot press
    the key within those microseconds; pexpect, answering the prompt the moment it appears, can
    (a CI run hung so). Where /proc does not show it, say yes."""
    try:
        return Path(f"/proc/{pid}/syscall").read_text().startswith("0 0x0 ")  # x86-64: read is 0
    except PermissionError:
        return True
    except OSError:
        return False


def wait_for_the_prompt_to_read(terminal: pexpect.spawn) -> None:
    wait_until(lambda: reading_the_terminal(terminal.pid), 30, 0.01, message="the prompt never read the terminal")


def press_ctrl_c(terminal: pexpect.spawn) -> None:
    """Ctrl+C at the prompt the terminal shows, once the process reads its answer."""
    wait_for_the_prompt_to_read(terminal)
    terminal.sendintr()


def pause_at_the_theory_review(terminal: pexpect.spawn, home: Path) -> Path:
    """Ctrl+C at the theory review: a test of an earlier gate stops there, not at the PDF (the runs
    that go on to the paper are tested on their own); the run directory."""
    terminal.expect(APPROVE_PROMPT)
    press_ctrl_c(terminal)
    run_dir = run_dir_of(home)
    checkpoint = paused(terminal, run_dir)
    assert (checkpoint.stage_name, checkpoint.requested_by) == ("theory_review_gate", "ctrl-c")
    return run_dir


def run_dir_of(home: Path) -> Path:
    (run_dir,) = (home / "runs").iterdir()
    return run_dir


def user_texts(llm: FakeLLMServer, role: str) -> list[str]:
    return [r.body["messages"][-1]["content"] for r in llm.requests if r.headers.get("x-lemmata-role") == role]


def searching_for_nothing(request) -> str:
    """A survey agent whose search finds nothing; it keeps whatever records it was handed."""
    text = request.body["messages"][-1]["content"]
    if "Earlier turns:\n(none)" in text:
        return json.dumps({"tool_calls": [{"tool": "preprint_search", "argument": "noncommutative parity sheaves"}]})
    kept = re.findall(r"^\[([A-Za-z]+:[^\]]+)\]", text, re.MULTILINE)
    return json.dumps({**even_sum_session.SURVEY, "tool_calls": [], "papers": kept})


def test_a_typed_paper_list_is_injected_and_the_survey_runs_once_more(llm, search, tmp_path):
    llm.set_default("survey", searching_for_nothing)
    search.inject_fault("scholar", Fault(status=429), Fault(status=429))  # met by the title lookup
    terminal = spawn(["prove", TASK], environment(tmp_path / "home", llm, search), tmp_path)
    terminal.expect("The survey kept no papers")
    terminal.expect(PAPERS_PROMPT)
    terminal.sendline("2101.00001, Parity Arguments in Graph Theory")
    run_dir = pause_at_the_theory_review(terminal, tmp_path / "home")
    decision = read_artifact(run_dir / "gates/survey_papers.json", GateDecision)
    assert (decision.decided_by, decision.feedback) == ("user", "2101.00001, Parity Arguments in Graph Theory")
    survey = read_artifact(run_dir / "survey.json", Survey)
    assert survey.user_papers == ["2101.00001", "Parity Arguments in Graph Theory"]
    assert [p.id for p in survey.papers] == ["arXiv:2101.00001", "DOI:10.5555/graphs.2015.42"]
    surveys = user_texts(llm, "survey")
    assert len(surveys) == 4  # two turns, then two turns of the one re-run
    assert "Papers the researcher named: 2101.00001, Parity Arguments in Graph Theory" in surveys[2]
    # The title lookup met two 429s and still got its record.
    assert [r.status for r in search.requests("scholar")] == [429, 429, 200]
    assert read_artifact(run_dir / "survey/first.json", Survey).papers == []


def test_enter_at_the_survey_fallback_continues_without_papers_and_shows_the_outage(llm, tmp_path):
    terminal = spawn(["prove", TASK], environment(tmp_path / "home", llm, None), tmp_path)
    terminal.expect("The survey kept no papers")
    terminal.expect(r"tool error: preprint_search\('sum of even integers'\): ")
    terminal.expect(PAPERS_PROMPT)
    terminal.sendline("")
    run_dir = pause_at_the_theory_review(terminal, tmp_path / "home")
    survey = read_artifact(run_dir / "survey.json", Survey)
    assert survey.papers == [] and survey.note.endswith("no papers: the run proceeds without them")
    assert not survey.tool_calls[0].ok and len(user_texts(llm, "survey")) == 2  # not run again
    assert read_artifact(run_dir / "gates/survey_papers.json", GateDecision).feedback == ""


def test_ctrl_c_at_the_survey_fallback_pauses_there_and_resume_asks_again(llm, tmp_path):
    env = environment(tmp_path / "home", llm, None)
    terminal = spawn(["prove", TASK], env, tmp_path)
    terminal.expect(PAPERS_PROMPT)
    press_ctrl_c(terminal)
    run_dir = run_dir_of(tmp_path / "home")
    checkpoint = paused(terminal, run_dir)
    assert (checkpoint.stage_name, checkpoint.requested_by) == ("survey", "ctrl-c")
    assert "paused at the survey papers question" in terminal.before

    resumed = spawn(["resume", run_dir.name], env, tmp_path)
    resumed.expect(PAPERS_PROMPT)
    resumed.sendline("")
    pause_at_the_theory_review(resumed, tmp_path / "home")  # the run went on past the survey
    assert len(user_texts(llm, "survey")) == 2  # which was not run again


def test_a_typed_direction_replaces_an_empty_ideation(llm, search, tmp_path):
    llm.set_default("ideation", json.dumps({"tool_calls": [], "directions": []}))
    terminal = spawn(["prove", TASK], environment(tmp_path / "home", llm, search), tmp_path)
    terminal.expect("Direction planning needs a research direction: the ideation agent proposed no research direction")
    terminal.expect("Extend closure under addition to ideals nZ for every n")  # the survey's open problems
    terminal.expect(DIRECTION_PROMPT)
    terminal.sendline("Closure of 2Z under addition")
    run_dir = pause_at_the_theory_review(terminal, tmp_path / "home")
    assert read_artifact(run_dir / "directions.json", Directions).candidates[0].title == "Closure of 2Z under addition"
    assert "0. Closure of 2Z under addition" in user_texts(llm, "planner")[0]


@pytest.mark.parametrize(
    "answer, reason",
    [
        pytest.param("", "no research direction given", id="empty-input"),
        pytest.param("\x03", r"no research direction given \(cancelled\)", id="ctrl-c"),
    ],
)
def test_no_direction_ends_the_run_cleanly_and_resume_asks_again(llm, search, tmp_path, answer, reason):
    llm.set_default("ideation", "I have no ideas today.")
    env = environment(tmp_path / "home", llm, search)
    terminal = spawn(["prove", TASK], env, tmp_path)
    terminal.expect("the ideation agent gave no readable answer in 3 turns")
    terminal.expect(DIRECTION_PROMPT)
    wait_for_the_prompt_to_read(terminal)
    terminal.send(answer if answer else "\r")  # Ctrl+C, too, only once the prompt reads
    terminal.expect(pexpect.EOF)
    terminal.close()
    assert terminal.exitstatus == 1 and "Traceback" not in terminal.before
    run_dir = run_dir_of(tmp_path / "home")
    assert re.search(
        rf"lemmata: error: {reason}; the gate asks again on `lemmata resume {run_dir.name}`",
        " ".join(terminal.before.split()),
    )
    assert load_record(run_dir).status == "stopped" and not (run_dir / "gates/direction.json").exists()
    status = subprocess.run(
        [sys.executable, "-m", "lemmata", "status", run_dir.name],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert re.search(r"direction planning\s+waiting\s+directions.json", status.stdout), status.stdout

    resumed = spawn(["resume", run_dir.name], env, tmp_path)
    resumed.expect(DIRECTION_PROMPT)
    resumed.sendline("Closure of 2Z under addition")
    pause_at_the_theory_review(resumed, tmp_path / "home")  # the run went on past the direction
    assert len(user_texts(llm, "survey")) == 2  # the survey was not run again


STEP_PROMPT = r"Most problematic step \(number or identifier\): "
ISSUE_PROMPT = r"What is the issue: "


def calls(run_dir: Path, role: str) -> list[dict]:
    return [r for r in read_call_records(run_dir / "llm_calls.jsonl") if r["role"] == role]


def request_text(record: dict) -> str:
    return record["messages"][-1]["content"]


#: The sketch of the argument the theory review shows above the lemma chain (issue 36).
SKETCH_LINE = r"Sketch \(the model's summary of the argument"


def reject_once(terminal: pexpect.spawn, step: str, issue: str) -> None:
    terminal.expect(SKETCH_LINE)
    terminal.expect(APPROVE_PROMPT)
    terminal.sendline("n")
    terminal.expect(STEP_PROMPT)
    terminal.sendline(step)
    terminal.expect(ISSUE_PROMPT)
    terminal.sendline(issue)
    terminal.expect("re-running the theory once with your objection")
    terminal.expect("Theory review, after your objection: the updated lemma chain")
    terminal.expect(SKETCH_LINE)  # the spec: the updated sketch is shown once more


def test_n_at_the_theory_review_reruns_the_theory_once_with_the_objection(llm, search, tmp_path):
    terminal = spawn(["prove", TASK], environment(tmp_path / "home", llm, search), tmp_path)
    reject_once(terminal, "4", "closure of Z under addition is assumed, not shown")
    answer(terminal, APPROVE_PROMPT, "y", "Stress the parity argument in the introduction")
    answer(terminal, EXPERIMENT_PROMPT, "", "")
    decline_review(terminal)
    terminal.expect(pexpect.EOF)
    terminal.close()
    assert terminal.exitstatus == 0, terminal.before

    run_dir = run_dir_of(tmp_path / "home")
    rework = read_artifact(run_dir / "gates/theory_rework.json", TheoryRework)
    assert (rework.step, rework.issue) == ("L4", "closure of Z under addition is assumed, not shown")  # 4 -> L4
    decomposer = calls(run_dir, "decomposer")
    assert len(decomposer) == 2 and "Most problematic step: L4. Issue: closure of Z" in request_text(decomposer[1])
    provers = calls(run_dir, "prover")  # only the lemma objected to is proved again (six turns each time)
    assert Counter(r["scope"] for r in provers) == {
        "prove_lemma:L1": 1,
        "prove_lemma:L2": 1,
        "prove_lemma:L4": 12,  # L3: proved by the machine, no prover call
    }
    assert "The reviewer rejected the earlier proof of this step: closure of Z" in request_text(provers[-1])
    assert len(calls(run_dir, "sketch")) == 2  # the first theory's and the re-run's
    # The approval's feedback reaches the agents after the gate: the experiment's and the writer's.
    experiment = calls(run_dir, "experiment")[0]
    assert "Reviewer feedback to take into account: Stress the parity argument" in request_text(experiment)
    writer = calls(run_dir, "writer")[0]
    assert "Reviewer feedback to follow: Stress the parity argument in the introduction" in request_text(writer)
    decision = read_artifact(run_dir / "gates/theory_review.json", GateDecision)
    assert decision.approved and decision.feedback == "Stress the parity argument in the introduction"


def test_n_at_the_second_look_stops_the_run_and_resume_shows_the_chain_again(llm, search, tmp_path):
    env = environment(tmp_path / "home", llm, search)
    terminal = spawn(["prove", TASK], env, tmp_path)
    reject_once(terminal, "L4", "the gap is still there")
    terminal.expect(APPROVE_PROMPT)
    terminal.sendline("n")
    terminal.expect(r"What is still wrong \(kept in the run record\): ")
    terminal.sendline("L4 still assumes closure")
    terminal.expect(pexpect.EOF)
    terminal.close()
    run_dir = run_dir_of(tmp_path / "home")
    record = load_record(run_dir)
    assert terminal.exitstatus == 1 and record.status == "stopped" and "L4 still assumes closure" in record.message
    assert not (run_dir / "gates/theory_review.json").exists() and not (run_dir / "paper_v1.tex").exists()

    resumed = spawn(["resume", run_dir.name], env, tmp_path)
    resumed.expect("Theory review, after your objection: the updated lemma chain")  # no third run of the theory
    pause_at_the_theory_review(resumed, tmp_path / "home")
    assert len(calls(run_dir, "decomposer")) == 2


def test_gate_mode_human_asks_after_every_stage_and_passes_each_feedback_on(llm, search, tmp_path):
    terminal = spawn(["prove", TASK, "--gate", "human"], environment(tmp_path / "home", llm, search), tmp_path)
    answer(terminal, SURVEY_REVIEW_PROMPT, "y", "Prefer elementary arguments")
    answer(terminal, DIRECTION_REVIEW_PROMPT, "", "Keep the plan to four lemmas")
    terminal.expect("Theory review: the lemma chain")
    answer(terminal, APPROVE_PROMPT, "y", "")
    answer(terminal, EXPERIMENT_PROMPT, "y", "Mention how many trials were run")
    decline_review(terminal)
    terminal.expect(pexpect.EOF)
    terminal.close()
    assert terminal.exitstatus == 0, terminal.before

    run_dir = run_dir_of(tmp_path / "home")
    assert "Reviewer feedback on the survey: Prefer elementary arguments" in request_text(calls(run_dir, "ideation")[0])
    assert "Keep the plan to four lemmas" in request_text(calls(run_dir, "decomposer")[0])
    assert "Reviewer feedback to follow: Mention how many trials were run" in request_text(calls(run_dir, "writer")[0])
    for gate in ("survey_review", "direction_review", "theory_review", "experiment_review"):
        assert read_artifact(run_dir / f"gates/{gate}.json", GateDecision).decided_by == "user"


def test_gate_mode_auto_turns_human_when_a_lemma_is_not_verified_and_n_stops_at_a_review(llm, search, tmp_path):
    env = environment(tmp_path / "home", llm, search)
    terminal = spawn(["prove", TASK], env, tmp_path)  # GATE_MODE auto: no review after survey or directions
    terminal.expect(r"GATE_MODE auto -> human: L1, L4 not verified; every later gate asks too")
    terminal.expect(r"L3 verified: machine-checked \(prose proof not checked\)")
    terminal.expect(r"formally: ∀ m, n ∈ ℤ: 2·m \+ 2·n = 2·\(m \+ n\)")
    terminal.expect(r"L4 low confidence: unverified \(flagged by a check, 6 turns\), confidence 0\.70")
    answer(terminal, APPROVE_PROMPT, "", "")  # Enter approves
    terminal.expect(EXPERIMENT_PROMPT)
    terminal.sendline("n")
    terminal.expect(r"What is wrong \(kept in the run record\): ")
    terminal.sendline("rerun with more trials")
    terminal.expect(pexpect.EOF)
    terminal.close()
    run_dir = run_dir_of(tmp_path / "home")
    assert terminal.exitstatus == 1 and load_record(run_dir).status == "stopped"
    assert "stopped at the experiment review: rerun with more trials" in load_record(run_dir).message
    for gate in ("survey_review", "direction_review"):
        assert read_artifact(run_dir / f"gates/{gate}.json", GateDecision).decided_by == "automatic"

    resumed = spawn(["resume", run_dir.name], env, tmp_path)
    answer(resumed, EXPERIMENT_PROMPT, "y", "")
    decline_review(resumed)
    resumed.expect(pexpect.EOF)
    resumed.close()
    assert resumed.exitstatus == 0 and load_record(run_dir).status == "completed"


def paused(terminal: pexpect.spawn, run_dir: Path) -> Checkpoint:
    """The run ended paused: exit 1 (not done: 0 means the paper exists), the flag consumed, the
    checkpoint saved."""
    terminal.expect(pexpect.EOF)
    terminal.close()
    assert terminal.exitstatus == 1 and "Traceback" not in terminal.before, terminal.before
    assert load_record(run_dir).status == "paused" and not pause_flag(run_dir).exists()
    return read_artifact(checkpoint_file(run_dir), Checkpoint)


def while_in_flight(role: str, home: Path, act: Callable[[], None]) -> Callable[[RecordedRequest], None]:
    """A fake-server hook: at the first call of `role`, `act` (ask for a pause), and answer only
    once the driver has told Snakemake to stop, so the job making the call is the last to finish."""
    fired = []

    def hook(request: RecordedRequest) -> None:
        if request.role != role or fired:
            return
        fired.append(request)
        log = run_dir_of(home) / "logs/snakemake.log"
        notices = log.read_text(errors="replace").count(STOP_NOTICE)
        act()
        wait_until(lambda: log.read_text(errors="replace").count(STOP_NOTICE) != notices, 30, message=None)

    return hook


def call_multiset(run_dir: Path) -> Counter:
    return Counter(
        (r["role"], r["scope"], json.dumps(r["messages"])) for r in read_call_records(run_dir / "llm_calls.jsonl")
    )


def test_a_pause_at_every_stage_boundary_ends_with_the_paper_of_an_uninterrupted_replay(llm, search, tmp_path):
    """GATE_MODE human, paused once per stage, each time another way: Ctrl+C at the survey review,
    `lemmata pause` while the direction review waits, Ctrl+C at the theory review, a kill while
    the experiment's call is in flight, Ctrl+C while the writer's is. Each resume continues from
    the checkpoint; the paper is byte for byte that of an uninterrupted replay of the run's calls,
    and the replay needed every call the run made: none was made twice."""
    home = tmp_path / "home"
    env = environment(home, llm, search)
    terminal = spawn(["prove", TASK, "--gate", "human"], env, tmp_path)
    terminal.expect(SURVEY_REVIEW_PROMPT)
    press_ctrl_c(terminal)
    run_dir = run_dir_of(home)
    checkpoint = paused(terminal, run_dir)
    assert (checkpoint.stage_name, checkpoint.completed_stages, checkpoint.requested_by) == ("survey", [], "ctrl-c")
    assert f"paused at the survey review question (`lemmata resume {run_dir.name}` asks it again)" in terminal.before
    status = subprocess.run(
        [sys.executable, "-m", "lemmata", "status", run_dir.name],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert re.search(r"survey\s+waiting\s+survey.json", status.stdout), status.stdout

    terminal = spawn(["resume", run_dir.name], env, tmp_path)
    answer(terminal, SURVEY_REVIEW_PROMPT, "y", "")  # asked again
    terminal.expect(DIRECTION_REVIEW_PROMPT)
    pause = subprocess.run(
        [sys.executable, "-m", "lemmata", "pause", run_dir.name],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert pause.returncode == 0, pause.stderr
    terminal.sendline("y")  # the answer counts; the run pauses before the next stage starts
    terminal.expect(FEEDBACK_PROMPT)
    terminal.sendline("")
    checkpoint = paused(terminal, run_dir)
    assert (checkpoint.stage_name, checkpoint.completed_stages, checkpoint.requested_by) == (
        "theory",
        ["survey", "direction planning"],
        "command",
    )
    assert read_artifact(run_dir / "gates/direction_review.json", GateDecision).decided_by == "user"
    assert not (run_dir / "theory/formal.json").exists()  # no job of the theory started

    terminal = spawn(["resume", run_dir.name], env, tmp_path)
    terminal.expect(APPROVE_PROMPT)
    press_ctrl_c(terminal)
    checkpoint = paused(terminal, run_dir)
    assert (checkpoint.stage_name, checkpoint.requested_by) == ("theory_review_gate", "ctrl-c")
    assert checkpoint.completed_stages == ["survey", "direction planning", "theory"]

    llm.before_answer = while_in_flight("experiment", home, lambda: os.kill(terminal.pid, signal.SIGTERM))
    terminal = spawn(["resume", run_dir.name], env, tmp_path)
    answer(terminal, APPROVE_PROMPT, "y", "")
    checkpoint = paused(terminal, run_dir)
    assert (checkpoint.stage_name, checkpoint.requested_by) == ("experiment", "signal")  # its review is next
    assert (run_dir / "experiment.json").exists() and not (run_dir / "paper_v1.tex").exists()

    llm.before_answer = while_in_flight("writer", home, lambda: os.kill(terminal.pid, signal.SIGINT))
    terminal = spawn(["resume", run_dir.name], env, tmp_path)
    answer(terminal, EXPERIMENT_PROMPT, "y", "")
    checkpoint = paused(terminal, run_dir)
    assert (checkpoint.stage_name, checkpoint.requested_by) == ("compile", "ctrl-c")
    assert checkpoint.completed_stages == [
        "survey",
        "direction planning",
        "theory",
        "theory_review_gate",
        "experiment",
        "writer",
    ]
    llm.before_answer = None

    terminal = spawn(["resume", run_dir.name], env, tmp_path)
    decline_review(terminal)
    terminal.expect(pexpect.EOF)
    terminal.close()
    assert terminal.exitstatus == 0, terminal.before
    assert load_record(run_dir).status == "completed" and not checkpoint_file(run_dir).exists()

    replay_home = tmp_path / "replay-home"
    replay_env = cli_environment(
        replay_home,
        LLM_BACKEND="replay",
        LEMMATA_REPLAY=str(run_dir / "llm_calls.jsonl"),
        GATE_MODE="human",
        **search.settings_values(),
    )
    replay = subprocess.run(
        [sys.executable, "-m", "lemmata", "prove", TASK, "-o", "replayed"],
        env=replay_env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    assert replay.returncode == 0, replay.stderr
    first = tmp_path / "results" / run_dir.name / "paper_v1.tex"  # without --output: results/<run id>/
    assert (tmp_path / "replayed/paper_v1.tex").read_bytes() == first.read_bytes()
    made = call_multiset(run_dir)
    assert call_multiset(run_dir_of(replay_home)) == made and sum(made.values()) > 20


QUESTION_PROMPT = r"Question \(Enter to accept\): "
NEXT_PROMPT = r"What next\? \[a\]ccept \[q\]uestion \[r\]ewrite: "


def answer_by_version(request: RecordedRequest) -> str:
    """The Q&A agent's answer names the paper version its system prompt holds."""
    system = request.body["messages"][0]["content"]
    return "Answer about version 2." if "The paper (version 2)" in system else "Answer about version 1."


def test_the_review_loop_answers_questions_and_a_rewrite_makes_the_next_version(llm, search, tmp_path):
    llm.set_default("qa", answer_by_version)
    env = environment(tmp_path / "home", llm, search)
    terminal = spawn(["prove", TASK], env, tmp_path)
    for prompt in (APPROVE_PROMPT, EXPERIMENT_PROMPT):
        answer(terminal, prompt, "y", "")
    terminal.expect(REVIEW_PROMPT)
    terminal.sendline("y")
    terminal.expect(QUESTION_PROMPT)
    terminal.sendline("What does the proof rest on?")
    terminal.expect("Answer about version 1.")
    terminal.expect(NEXT_PROMPT)
    terminal.sendline("r")
    terminal.expect(r"Revision instructions: ")
    terminal.sendline("Name the ideal 2Z explicitly")
    terminal.expect("paper version 2 in")
    terminal.expect(QUESTION_PROMPT)
    terminal.sendline("And now?")
    terminal.expect("Answer about version 2.")
    terminal.expect(NEXT_PROMPT)
    terminal.sendline("q")
    terminal.expect(QUESTION_PROMPT)
    terminal.sendline("Shorten the introduction")  # instructions at the question prompt: a rewrite
    terminal.expect("reads as revision instructions")
    terminal.expect("paper version 3 in")
    terminal.expect(NEXT_PROMPT)
    terminal.sendline("q")
    terminal.expect(QUESTION_PROMPT)
    terminal.sendline("")  # Enter accepts
    terminal.expect("accepted: version 3 of the paper")
    terminal.expect(pexpect.EOF)
    terminal.close()
    assert terminal.exitstatus == 0, terminal.before

    run_dir = run_dir_of(tmp_path / "home")
    assert (run_dir / "paper_v2.pdf").is_file() and (run_dir / "rewrite_context_v2.json").is_file()
    history = [(r.role, r.marker, r.paper_version) for r in read_history(run_dir)]
    assert history == [
        ("user", "", 1),
        ("assistant", "", 1),
        ("event", "rewrite_requested", 1),
        ("event", "rewrite_saved", 2),
        ("user", "", 2),
        ("assistant", "", 2),
        ("event", "rewrite_requested", 2),
        ("event", "rewrite_saved", 3),
    ]
    writer = [r for r in read_call_records(run_dir / "llm_calls.jsonl") if r["scope"] == "rewrite_writer:v2"]
    assert "Name the ideal 2Z explicitly" in request_text(writer[0])

    reviewed = spawn(["review", run_dir.name], env, tmp_path)  # the loop on a finished run
    reviewed.expect("paper version 3")
    reviewed.expect(QUESTION_PROMPT)
    reviewed.sendline("")
    reviewed.expect("accepted: version 3 of the paper")
    reviewed.expect(pexpect.EOF)
    reviewed.close()
    assert reviewed.exitstatus == 0
