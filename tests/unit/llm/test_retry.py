"""Retries live in LLMClient alone: transient failures are retried with bounded backoff, others not."""

from __future__ import annotations

from pathlib import Path

import pytest

from lemmata import layout
from lemmata.errors import ProviderError, TransientProviderError
from lemmata.llm.calllog import read_call_records
from support.fake_llm_server import FakeLLMServer, Fault

SYSTEM = "system prompt"


def records(run_dir: Path) -> list[dict]:
    return list(read_call_records(run_dir / layout.LLM_CALLS))


def test_429_then_500_then_success_returns_the_text(fake_llm: FakeLLMServer, llm_client, tmp_path: Path) -> None:
    fake_llm.inject_fault("prover", Fault(status=429), Fault(status=500))
    fake_llm.enqueue("prover", "Proof. Done.")
    client = llm_client("local", run_dir=tmp_path)
    assert client.complete("prover", SYSTEM, "Prove.") == "Proof. Done."
    assert [r.answered_status for r in fake_llm.requests] == [429, 500, 200]
    (record,) = records(tmp_path)
    assert record["attempts"] == 3
    assert record["error"] is None
    assert record["response"] == "Proof. Done."


def test_exhausted_retries_raise_one_line_provider_error(fake_llm: FakeLLMServer, llm_client) -> None:
    fake_llm.inject_fault("verifier", Fault(status=429, message="slow down, you are rate limited"))
    client = llm_client("local", LLM_RETRY_ATTEMPTS=0)
    with pytest.raises(ProviderError) as caught:
        client.complete("verifier", SYSTEM, "Check.")
    message = str(caught.value)
    assert "\n" not in message
    for part in ("verifier", "local", "HTTP 429", "slow down, you are rate limited"):
        assert part in message
    # The SDK's own retries are off: exactly one request reached the provider.
    assert len(fake_llm.requests) == 1


def test_retries_stop_after_llm_retry_attempts(fake_llm: FakeLLMServer, llm_client, tmp_path: Path) -> None:
    """LLM_RETRY_ATTEMPTS counts retries (the spec: "retried up to LLM_RETRY_ATTEMPTS times"): 3 is 4 attempts."""
    fake_llm.inject_fault("prover", *[Fault(status=503)] * 5)
    fake_llm.enqueue("prover", "never reached")
    client = llm_client("local", run_dir=tmp_path, LLM_RETRY_ATTEMPTS=3)
    with pytest.raises(ProviderError, match="4 attempts.*HTTP 503"):
        client.complete("prover", SYSTEM, "q")
    assert len(fake_llm.requests) == 4
    assert records(tmp_path)[0]["attempts"] == 4


def test_five_rate_limits_then_an_answer_complete_with_the_default_retries(
    fake_llm: FakeLLMServer, llm_client, tmp_path: Path
) -> None:
    """Issue 23: the default 5 retries are 6 attempts; a fifth 429 in a row is still retried."""
    fake_llm.inject_fault("prover", *[Fault(status=429)] * 5)
    fake_llm.enqueue("prover", "at last")
    client = llm_client("local", run_dir=tmp_path, LLM_RETRY_WAIT_MIN=0, LLM_RETRY_WAIT_MAX=0)
    assert client.settings.LLM_RETRY_ATTEMPTS == 5
    assert client.complete("prover", SYSTEM, "q") == "at last"
    assert [r.answered_status for r in fake_llm.requests] == [429] * 5 + [200]
    assert records(tmp_path)[0]["attempts"] == 6


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_are_not_retried(fake_llm: FakeLLMServer, llm_client, status: int) -> None:
    fake_llm.inject_fault("planner", Fault(status=status, message=f"refused with {status}"))
    fake_llm.enqueue("planner", "would succeed on a retry")
    with pytest.raises(ProviderError) as caught:
        llm_client("local", LLM_RETRY_ATTEMPTS=5).complete("planner", SYSTEM, "q")
    assert not isinstance(caught.value, TransientProviderError)
    assert f"HTTP {status}" in str(caught.value) and f"refused with {status}" in str(caught.value)
    assert len(fake_llm.requests) == 1
    assert fake_llm.pending("planner") == 1


def test_timeout_is_retried(fake_llm: FakeLLMServer, llm_client, tmp_path: Path) -> None:
    fake_llm.inject_fault("prover", Fault(hang=3))
    fake_llm.enqueue("prover", "after the hang")
    client = llm_client("local", run_dir=tmp_path, LLM_TIMEOUT=0.3)
    assert client.complete("prover", SYSTEM, "q") == "after the hang"
    assert len(fake_llm.requests) == 2
    assert records(tmp_path)[0]["attempts"] == 2


def test_timeouts_exhausting_retries_report_a_timeout(fake_llm: FakeLLMServer, llm_client) -> None:
    fake_llm.inject_fault("prover", Fault(hang=3), Fault(hang=3))
    with pytest.raises(ProviderError, match="timed out"):
        llm_client("local", LLM_TIMEOUT=0.2, LLM_RETRY_ATTEMPTS=1).complete("prover", SYSTEM, "q")
    assert len(fake_llm.requests) == 2


def test_malformed_body_is_retried(fake_llm: FakeLLMServer, llm_client, tmp_path: Path) -> None:
    fake_llm.inject_fault("analyst", Fault(malformed=True))
    fake_llm.enqueue("analyst", "fine now")
    assert llm_client("local", run_dir=tmp_path).complete("analyst", SYSTEM, "q") == "fine now"
    assert len(fake_llm.requests) == 2
    assert records(tmp_path)[0]["attempts"] == 2


def test_connection_refused_is_retried_then_reported(llm_client, tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = llm_client(
        "local", run_dir=tmp_path, LOCAL_LLM_BASE_URL=f"http://127.0.0.1:{port}/v1", LLM_RETRY_ATTEMPTS=1
    )
    with pytest.raises(ProviderError, match="cannot reach local"):
        client.complete("prover", SYSTEM, "q")
    assert records(tmp_path)[0]["attempts"] == 2


@pytest.mark.parametrize("status", [529, 500])
def test_vendora_transient_status_is_retried(fake_llm: FakeLLMServer, llm_client, status: int) -> None:
    fake_llm.inject_fault("prover", Fault(status=status))
    fake_llm.enqueue("prover", "recovered")
    assert llm_client("vendora").complete("prover", SYSTEM, "q") == "recovered"
    assert [r.answered_status for r in fake_llm.requests] == [status, 200]
    assert all(r.path == "/v1/messages" for r in fake_llm.requests)


@pytest.mark.parametrize("status", [529, 500])
def test_vendora_sdk_retries_are_off(fake_llm: FakeLLMServer, llm_client, status: int) -> None:
    fake_llm.inject_fault("prover", Fault(status=status, message="overloaded right now"))
    with pytest.raises(ProviderError) as caught:
        llm_client("vendora", LLM_RETRY_ATTEMPTS=0).complete("prover", SYSTEM, "q")
    message = str(caught.value)
    assert "\n" not in message
    for part in ("prover", "vendora", f"HTTP {status}", "overloaded right now"):
        assert part in message
    assert len(fake_llm.requests) == 1


def test_vendora_client_error_is_not_retried(fake_llm: FakeLLMServer, llm_client) -> None:
    fake_llm.inject_fault("prover", Fault(status=400, message="bad request body"))
    with pytest.raises(ProviderError, match="HTTP 400: bad request body"):
        llm_client("vendora").complete("prover", SYSTEM, "q")
    assert len(fake_llm.requests) == 1


def test_vendora_timeout_and_malformed_body_are_retried(fake_llm: FakeLLMServer, llm_client) -> None:
    fake_llm.inject_fault("prover", Fault(hang=3), Fault(malformed=True))
    fake_llm.enqueue("prover", "third time lucky")
    assert llm_client("vendora", LLM_TIMEOUT=0.3).complete("prover", SYSTEM, "q") == "third time lucky"
    assert len(fake_llm.requests) == 3


def test_backoff_waits_stay_within_min_and_max(fake_llm: FakeLLMServer, llm_client) -> None:
    wait_min, wait_max = 0.15, 0.3
    fake_llm.inject_fault("prover", *[Fault(status=503)] * 3)
    fake_llm.enqueue("prover", "ok")
    client = llm_client("local", LLM_RETRY_WAIT_MIN=wait_min, LLM_RETRY_WAIT_MAX=wait_max)
    assert client.complete("prover", SYSTEM, "q") == "ok"
    starts = [r.started_at for r in fake_llm.requests]
    gaps = [later - earlier for earlier, later in zip(starts, starts[1:])]
    assert len(gaps) == 3
    for gap in gaps:
        assert wait_min * 0.9 <= gap <= wait_max + 0.5, gaps  # loose upper bound: request overhead
    # Exponential: the later waits reach the cap rather than staying at the minimum.
    assert gaps[-1] >= wait_max * 0.9, gaps


def test_zero_wait_settings_retry_without_sleeping(fake_llm: FakeLLMServer, llm_client) -> None:
    fake_llm.inject_fault("prover", *[Fault(status=429)] * 4)
    fake_llm.enqueue("prover", "ok")
    client = llm_client("local", LLM_RETRY_WAIT_MIN=0, LLM_RETRY_WAIT_MAX=0)
    assert client.complete("prover", SYSTEM, "q") == "ok"
    assert fake_llm.requests[-1].started_at - fake_llm.requests[0].started_at < 1.0


def test_a_key_echoed_in_a_provider_error_is_redacted(fake_llm, llm_client) -> None:
    fake_llm.inject_fault("prover", Fault(status=401, message="invalid api key compat-test-key-1 for this account"))
    client = llm_client("router", LLM_RETRY_ATTEMPTS=0)
    with pytest.raises(ProviderError) as caught:
        client.complete("prover", "system", "prove it")
    assert "compat-test-key-1" not in str(caught.value) and "[redacted]" in str(caught.value)
