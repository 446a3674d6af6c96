"""Replay: a recorded llm_calls.jsonl (or a hand-written script) answers again, per role and scope."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lemmata import layout
from lemmata.agents.client import make_client
from lemmata.errors import ProviderError, ReplayExhaustedError, UserError
from lemmata.llm.base import ChatRequest
from lemmata.llm.replay import ReplayBackend, load_replay_script
from lemmata.llm.resolve import choose_backend
from lemmata.settings import Settings
from support.fake_llm_server import FakeLLMServer, Fault


def replay_client(script: Path, run_dir: Path, scope: str = ""):
    settings = Settings.from_mapping(
        {"LLM_BACKEND": "replay", "LEMMATA_REPLAY": str(script), "LLM_RETRY_WAIT_MIN": 0, "LLM_RETRY_WAIT_MAX": 0}
    )
    return make_client(settings, {}, run_dir, scope=scope)


def write_script(path: Path, *entries: dict | str) -> Path:
    lines = [entry if isinstance(entry, str) else json.dumps(entry) for entry in entries]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def request(role: str, scope: str = "") -> ChatRequest:
    return ChatRequest(role=role, model="replay", system="s", messages=(), max_tokens=1, scope=scope)


def test_recorded_calls_replay_per_role_in_order(fake_llm: FakeLLMServer, llm_client, tmp_path: Path) -> None:
    recording = tmp_path / "recorded"
    fake_llm.enqueue("prover", "proof 1", "proof 2")
    fake_llm.enqueue("verifier", '{"verdict": "valid"}')
    fake_llm.inject_fault("verifier", Fault(status=500))
    live = llm_client("local", run_dir=recording, LLM_RETRY_ATTEMPTS=0)
    live.complete("prover", "s", "a")
    with pytest.raises(ProviderError):
        live.complete("verifier", "s", "b")  # recorded as a failed call: must not be replayed
    live_answers = [live.complete("verifier", "s", "b"), live.complete("prover", "s", "c")]
    script = recording / layout.LLM_CALLS
    assert [json.loads(line)["error"] is None for line in script.read_text().splitlines()] == [True, False, True, True]

    client = replay_client(script, tmp_path / "replayed")
    # Roles interleaved differently from the recording: each role still gets its own answers in order.
    assert client.complete("verifier", "s", "anything") == live_answers[0]
    assert client.complete("prover", "s", "anything") == "proof 1"
    assert client.complete("prover", "s", "anything") == "proof 2"
    assert client.backend.name == "replay"
    replayed = [json.loads(line) for line in (tmp_path / "replayed" / layout.LLM_CALLS).read_text().splitlines()]
    assert [(r["role"], r["response"], r["backend"]) for r in replayed] == [
        ("verifier", '{"verdict": "valid"}', "replay"),
        ("prover", "proof 1", "replay"),
        ("prover", "proof 2", "replay"),
    ]
    assert replayed[1]["tokens_out"] is not None  # token counts come from the recording


def test_scoped_entries_go_to_their_scope_even_out_of_order(
    fake_llm: FakeLLMServer, llm_client, tmp_path: Path
) -> None:
    recording = tmp_path / "recorded"
    fake_llm.enqueue("prover", "proof of L1", "proof of L2")
    llm_client("local", run_dir=recording, scope="prove_lemma:L1").complete("prover", "s", "L1")
    llm_client("local", run_dir=recording, scope="prove_lemma:L2").complete("prover", "s", "L2")

    run_dir = tmp_path / "replayed"
    script = recording / layout.LLM_CALLS
    second = replay_client(script, run_dir, scope="prove_lemma:L2")
    first = replay_client(script, run_dir, scope="prove_lemma:L1")
    assert second.complete("prover", "s", "L2") == "proof of L2"
    assert first.complete("prover", "s", "L1") == "proof of L1"


REPLAY_PROCESS = """
import sys
from pathlib import Path
from lemmata.agents.client import make_client
from lemmata.settings import Settings
script, run_dir, scope = sys.argv[1:4]
settings = Settings.from_mapping({"LLM_BACKEND": "replay", "LEMMATA_REPLAY": script})
print(make_client(settings, {}, Path(run_dir), scope=scope).complete("prover", "s", "q"), end="")
"""


def test_scoped_replay_across_processes(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "script.jsonl",
        {"role": "prover", "scope": "prove_lemma:L1", "response": "proof of L1"},
        {"role": "prover", "scope": "prove_lemma:L2", "response": "proof of L2"},
    )
    run_dir = tmp_path / "run"

    def job(scope: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-c", REPLAY_PROCESS, str(script), str(run_dir), scope],
            capture_output=True,
            text=True,
            timeout=60,
        )

    second = job("prove_lemma:L2")
    assert (second.returncode, second.stdout) == (0, "proof of L2"), second.stderr
    first = job("prove_lemma:L1")
    assert (first.returncode, first.stdout) == (0, "proof of L1"), first.stderr
    # Consumption is shared between processes through the run directory: L1's answer is used up.
    again = job("prove_lemma:L1")
    assert again.returncode != 0 and "no answer left for role 'prover'" in again.stderr


def test_hand_written_unscoped_script_lines(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "script.jsonl",
        {"role": "planner", "response": "plan A"},
        "",
        {"role": "planner", "response": "plan B"},
    )
    client = replay_client(script, tmp_path / "run", scope="plan")  # unscoped lines serve any scope
    assert client.complete("planner", "s", "q") == "plan A"
    assert client.complete("planner", "s", "q") == "plan B"


def test_scoped_request_prefers_its_scope_then_falls_back_to_unscoped(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        {"role": "prover", "response": "generic"},
        {"role": "prover", "scope": "prove_lemma:L1", "response": "for L1"},
    )
    backend = ReplayBackend(script, tmp_path / "run")
    assert backend.complete(request("prover", "prove_lemma:L1")).text == "for L1"
    assert backend.complete(request("prover", "prove_lemma:L1")).text == "generic"


def test_a_split_call_takes_its_parent_s_recorded_answers_before_unscoped_ones(tmp_path: Path) -> None:
    """A recording from before the experiment checked its lemmas at once: its calls have the
    job's scope, the replay's calls the lemma's ("experiment:L2")."""
    script = write_script(
        tmp_path / "s.jsonl",
        {"role": "experiment", "response": "generic"},
        {"role": "experiment", "scope": "experiment", "response": "turn 1"},
        {"role": "experiment", "scope": "experiment:L3", "response": "for L3"},
        {"role": "experiment", "scope": "experiment", "response": "turn 2"},
    )
    backend = ReplayBackend(script, tmp_path / "run")
    answers = [backend.complete(request("experiment", "experiment:L2")).text for _ in range(3)]
    assert answers == ["turn 1", "turn 2", "generic"]
    assert backend.complete(request("experiment", "experiment:L3")).text == "for L3"


def test_failed_records_are_skipped(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        {"role": "prover", "response": None, "error": "local answered HTTP 500: boom"},
        {"role": "prover", "response": "stale", "error": "some failure"},
        {"role": "prover", "response": "good", "error": None},
    )
    assert [e["response"] for e in load_replay_script(script)] == ["good"]
    assert replay_client(script, tmp_path / "run").complete("prover", "s", "q") == "good"


def test_exhaustion_in_the_backend_raises_replay_exhausted_naming_the_role(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", {"role": "prover", "response": "only one"})
    backend = ReplayBackend(script, tmp_path / "run")
    backend.complete(request("prover"))
    with pytest.raises(ReplayExhaustedError, match="'prover'"):
        backend.complete(request("prover"))
    with pytest.raises(ReplayExhaustedError, match="'verifier'"):
        backend.complete(request("verifier"))


def test_exhaustion_through_the_client_is_one_line_naming_the_role(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", {"role": "prover", "response": "only one"})
    client = replay_client(script, tmp_path / "run")
    client.complete("prover", "s", "q")
    with pytest.raises(ProviderError) as caught:
        client.complete("prover", "s", "q")
    assert "'prover'" in str(caught.value) and "no answer left" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_exhaustion_through_the_client_keeps_the_replay_exhausted_type(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", {"role": "prover", "response": "only one"})
    client = replay_client(script, tmp_path / "run")
    client.complete("prover", "s", "q")
    with pytest.raises(ReplayExhaustedError):
        client.complete("prover", "s", "q")


def test_missing_file_is_a_user_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(UserError, match="nope.jsonl"):
        replay_client(missing, tmp_path / "run")


@pytest.mark.parametrize(
    ("bad_line", "why"),
    [
        ("this is not json", "not a JSON line"),
        ('{"response": "no role"}', "role"),
        ("[1, 2]", "role"),
        ('{"role": "prover"}', "response"),
    ],
)
def test_unusable_line_is_a_user_error_naming_file_and_line(tmp_path: Path, bad_line: str, why: str) -> None:
    script = write_script(tmp_path / "script.jsonl", {"role": "prover", "response": "ok"}, bad_line)
    with pytest.raises(UserError) as caught:
        replay_client(script, tmp_path / "run")
    message = str(caught.value)
    assert f"{script}:2" in message
    assert why in message
    assert "\n" not in message


def test_replay_backend_without_lemmata_replay_is_a_user_error(tmp_path: Path) -> None:
    settings = Settings.from_mapping({"LLM_BACKEND": "replay"})
    with pytest.raises(UserError, match="LEMMATA_REPLAY"):
        choose_backend(settings, {})
    with pytest.raises(UserError, match="LEMMATA_REPLAY"):
        make_client(settings, {}, tmp_path)


def test_a_replays_checks_are_named_after_the_recorded_backend(tmp_path: Path) -> None:
    """Issue 54: a replay's paper named the replaying backend as its checker (and advised
    `lemmata calibrate --backend replay ...`, which makes no sense) where the recorded run named
    `local`: a replay is the recorded model's answers again, checked as that backend's."""
    from lemmata.llm.base import answering_backend
    from lemmata.verification.calibration import checker_for

    script = tmp_path / "calls.jsonl"
    script.write_text(
        json.dumps({"role": "qa", "backend": "local", "model": "local-model", "response": "A.", "messages": []}) + "\n"
    )
    backend = ReplayBackend(script, tmp_path)
    assert backend.name == "replay" and answering_backend(backend) == "local"
    assert checker_for(answering_backend(backend), "local-model", tmp_path).backend == "local"
    unnamed = tmp_path / "unnamed.jsonl"
    unnamed.write_text(json.dumps({"role": "qa", "response": "A."}) + "\n")
    assert answering_backend(ReplayBackend(unnamed, tmp_path)) == "replay"  # a recording that names none
