"""`llm_calls.jsonl`: one complete JSON line per call, failures included, never a credential."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from dataclasses import asdict
from pathlib import Path

import pytest

from lemmata import layout
from lemmata.errors import ProviderError
from lemmata.llm.base import Message
from lemmata.llm.calllog import CallLog, CallRecord, Redactor, read_call_records
from support.fake_llm_server import Answer, FakeLLMServer, Fault

SECRET = "sk-test-secret-123456"
RECORD_FIELDS = {
    "role",
    "backend",
    "model",
    "scope",
    "messages",
    "max_tokens",
    "response",
    "tokens_in",
    "tokens_out",
    "cache_read_tokens",
    "cache_write_tokens",
    "latency_s",
    "attempts",
    "error",
    "finish_reason",
    "timings",
    "timestamp",
    "cost_usd",
}


def log_lines(run_dir: Path) -> list[dict]:
    text = (run_dir / layout.LLM_CALLS).read_text(encoding="utf-8")
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def test_each_call_appends_one_full_record(fake_llm: FakeLLMServer, llm_client, tmp_path: Path) -> None:
    fake_llm.enqueue("decomposer", '{"lemmas": []}')
    fake_llm.enqueue("compress", "summary")
    client = llm_client("local", run_dir=tmp_path, scope="prove_lemma:L3", LOCAL_LLM_MODEL="m-local")
    client.complete(
        "decomposer",
        "SYS-1",
        [Message("user", "split"), Message("assistant", "ok"), Message("user", "now")],
        json_answer=True,
    )
    assert len(log_lines(tmp_path)) == 1
    client.complete("compress", "SYS-2", "history")
    first, second = log_lines(tmp_path)
    assert set(first) == RECORD_FIELDS
    assert first["role"] == "decomposer" and second["role"] == "compress"
    assert first["backend"] == "local"
    assert first["model"] == "m-local"
    assert first["scope"] == "prove_lemma:L3"
    assert first["messages"] == [
        {"role": "system", "content": "SYS-1"},
        {"role": "user", "content": "split"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "now"},
    ]
    assert second["messages"][0] == {"role": "system", "content": "SYS-2"}
    assert first["max_tokens"] == 2048 and second["max_tokens"] == 512
    assert first["response"] == '{"lemmas": []}'
    assert isinstance(first["tokens_in"], int) and first["tokens_in"] > 0
    assert isinstance(first["tokens_out"], int) and first["tokens_out"] > 0
    assert "cache_read_tokens" in first and "cache_write_tokens" in first
    assert isinstance(first["latency_s"], float) and 0 <= first["latency_s"] < 5
    assert first["attempts"] == 1
    assert first["error"] is None
    assert first["finish_reason"] == second["finish_reason"] == "stop"
    assert first["timestamp"] <= second["timestamp"]


def test_an_answer_cut_off_at_the_token_limit_is_logged_with_finish_reason_length(
    fake_llm: FakeLLMServer, llm_client, tmp_path: Path
) -> None:
    fake_llm.enqueue("writer", Answer("The paper stops mid-sente", finish_reason="length"))
    llm_client("local", run_dir=tmp_path).complete("writer", "SYS", "write")
    [record] = log_lines(tmp_path)
    assert record["finish_reason"] == "length" and record["response"] == "The paper stops mid-sente"


def test_latency_covers_the_whole_call(fake_llm: FakeLLMServer, llm_client, tmp_path: Path) -> None:
    from support.fake_llm_server import Answer

    fake_llm.enqueue("prover", Answer("slow", latency=0.25))
    llm_client("local", run_dir=tmp_path).complete("prover", "s", "q")
    assert log_lines(tmp_path)[0]["latency_s"] >= 0.2


def test_failed_call_is_logged_with_error_and_null_response(
    fake_llm: FakeLLMServer, llm_client, tmp_path: Path
) -> None:
    fake_llm.inject_fault("verifier", Fault(status=503, message="upstream down"), Fault(status=503))
    client = llm_client("local", run_dir=tmp_path, LLM_RETRY_ATTEMPTS=1)
    with pytest.raises(ProviderError):
        client.complete("verifier", "sys", "q")
    (record,) = log_lines(tmp_path)
    assert record["role"] == "verifier"
    assert record["response"] is None
    assert record["tokens_in"] is None and record["tokens_out"] is None
    assert "HTTP 503" in record["error"]
    assert record["attempts"] == 2


def test_non_retryable_failure_is_logged_once(fake_llm: FakeLLMServer, llm_client, tmp_path: Path) -> None:
    fake_llm.inject_fault("prover", Fault(status=404, message="no such model"))
    with pytest.raises(ProviderError):
        llm_client("local", run_dir=tmp_path).complete("prover", "sys", "q")
    (record,) = log_lines(tmp_path)
    assert record["attempts"] == 1 and "no such model" in record["error"] and record["response"] is None


@pytest.mark.parametrize("key_variable", ["VENDORA_API_KEY", "ANTHROPIC_API_KEY"])
def test_credential_never_reaches_the_log(
    fake_llm: FakeLLMServer, llm_client, tmp_path: Path, key_variable: str
) -> None:
    # The model echoes the key back, and the user pasted it into the task.
    fake_llm.enqueue("survey", f"your key is {SECRET}!")
    fake_llm.inject_fault("writer", Fault(status=401, message=f"invalid key {SECRET}"))
    client = llm_client("vendora", environ={key_variable: SECRET}, run_dir=tmp_path)
    assert SECRET in client.complete("survey", f"system mentions {SECRET}", f"my key: {SECRET}")
    with pytest.raises(ProviderError):
        client.complete("writer", "sys", "q")
    raw = (tmp_path / layout.LLM_CALLS).read_text(encoding="utf-8")
    assert SECRET not in raw
    records = log_lines(tmp_path)
    assert len(records) == 2
    assert SECRET not in json.dumps(records, ensure_ascii=False)
    assert "[redacted]" in records[0]["messages"][1]["content"]
    assert records[1]["error"] is not None


def test_other_credentials_in_the_environment_are_redacted_too(
    fake_llm: FakeLLMServer, llm_client, tmp_path: Path
) -> None:
    other = "compat-other-secret-987654"
    fake_llm.enqueue("prover", "ok")
    client = llm_client("local", environ={"COMPAT_API_KEY": other}, run_dir=tmp_path)
    client.complete("prover", "sys", f"remember {other}")
    assert other not in (tmp_path / layout.LLM_CALLS).read_text(encoding="utf-8")


def make_record(index: int, writer: str, size: int) -> CallRecord:
    return CallRecord(
        role="prover",
        backend="scripted",
        model="m",
        scope=f"{writer}:{index}",
        messages=[{"role": "system", "content": "s"}],
        max_tokens=1,
        response=f"{writer}-{index}-" + "x" * size,
        tokens_in=1,
        tokens_out=1,
        cache_read_tokens=None,
        cache_write_tokens=None,
        latency_s=0.0,
        attempts=1,
    )


def assert_complete_lines(path: Path, expected_scopes: set[str]) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n")
    scopes = []
    for line in text.splitlines():
        record = json.loads(line)  # every line is one complete record
        scopes.append(record["scope"])
        writer, index = record["scope"].split(":")
        assert record["response"].startswith(f"{writer}-{index}-")
    assert sorted(scopes) == sorted(expected_scopes)


def test_parallel_threads_append_only_complete_lines(tmp_path: Path) -> None:
    path = tmp_path / layout.LLM_CALLS
    threads_n, per_thread, size = 8, 25, 20_000

    def work(writer: str) -> None:
        log = CallLog(path)  # each job opens its own log, as parallel jobs do
        for index in range(per_thread):
            log.append(make_record(index, writer, size))

    threads = [threading.Thread(target=work, args=(f"t{n}",)) for n in range(threads_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert_complete_lines(path, {f"t{n}:{i}" for n in range(threads_n) for i in range(per_thread)})


WRITER_SCRIPT = """
import sys
from lemmata.llm.calllog import CallLog, CallRecord
from lemmata import layout
path, writer, count, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
log = CallLog(path)
for index in range(count):
    log.append(CallRecord(role="prover", backend="scripted", model="m", scope=f"{writer}:{index}",
                          messages=[{"role": "system", "content": "s"}], max_tokens=1,
                          response=f"{writer}-{index}-" + "x" * size, tokens_in=1, tokens_out=1,
                          cache_read_tokens=None, cache_write_tokens=None, latency_s=0.0, attempts=1))
"""


def test_parallel_processes_append_only_complete_lines(tmp_path: Path) -> None:
    path = tmp_path / layout.LLM_CALLS
    processes_n, per_process, size = 4, 40, 100_000
    processes = [
        subprocess.Popen([sys.executable, "-c", WRITER_SCRIPT, str(path), f"p{n}", str(per_process), str(size)])
        for n in range(processes_n)
    ]
    assert [p.wait(timeout=60) for p in processes] == [0] * processes_n
    assert_complete_lines(path, {f"p{n}:{i}" for n in range(processes_n) for i in range(per_process)})


def test_append_waits_for_the_lock_held_by_another_job(tmp_path: Path) -> None:
    import fcntl
    import time

    path = tmp_path / layout.LLM_CALLS
    path.write_text("", encoding="utf-8")
    with open(path, "a", encoding="utf-8") as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)  # another job is in the middle of writing
        writer = threading.Thread(target=CallLog(path).append, args=(make_record(0, "w", 10),))
        writer.start()
        time.sleep(0.2)
        assert writer.is_alive() and path.read_text(encoding="utf-8") == ""
        fcntl.flock(holder, fcntl.LOCK_UN)
        writer.join(timeout=5)
    assert not writer.is_alive()
    assert [r["scope"] for r in read_call_records(path)] == ["w:0"]


def test_reader_skips_a_partial_last_line(tmp_path: Path) -> None:
    path = tmp_path / layout.LLM_CALLS
    CallLog(path).append(make_record(0, "a", 10))
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(asdict(make_record(1, "a", 10)))[:30])  # a job still writing
    assert [r["scope"] for r in read_call_records(path)] == ["a:0"]


def test_short_values_are_not_treated_as_secrets(tmp_path: Path) -> None:
    # Redacting a 3-character "key" would mangle ordinary text.
    path = tmp_path / layout.LLM_CALLS
    CallLog(path, Redactor(["abc"])).append(make_record(0, "abc", 5))
    assert read_call_records(path).__next__()["scope"] == "abc:0"
