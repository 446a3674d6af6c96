"""Backend and model resolution from settings and credentials."""

from __future__ import annotations

from pathlib import Path

import pytest

from lemmata.errors import UserError
from lemmata.llm.client import LLMClient, ModelChoice
from lemmata.llm.resolve import choose_backend, make_client
from lemmata.llm.roles import ROLES
from lemmata.settings import Settings
from lemmata.testing.scripted_backend import ScriptedBackend

def settings(**values: object) -> Settings:
    return Settings.from_mapping(values)


@pytest.mark.parametrize("key_variable", ["VENDORA_API_KEY", "ANTHROPIC_API_KEY"])
def test_empty_backend_with_an_anthropic_key_means_vendora(key_variable: str) -> None:
    choice = choose_backend(settings(), {key_variable: "key-123456789"})
    assert choice.name == "vendora"
    assert choice.models == ModelChoice("claude-sonnet-4-5", "claude-haiku-4-5")


def test_empty_backend_and_no_key_says_how_to_configure() -> None:
    with pytest.raises(UserError) as caught:
        choose_backend(settings(), {})
    message = str(caught.value)
    assert "\n" not in message
    assert "LLM_BACKEND" in message and "VENDORA_API_KEY" in message
    for backend in ("vendora", "router", "local", "vendorx", "replay"):
        assert backend in message


@pytest.mark.parametrize("key_variable", ["COMPAT_API_KEY", "VENDORX_API_KEY"])
def test_other_keys_do_not_pick_a_backend_silently(key_variable: str) -> None:
    with pytest.raises(UserError, match="no language model is configured"):
        choose_backend(settings(), {key_variable: "key-123456789"})


def test_empty_key_counts_as_missing() -> None:
    with pytest.raises(UserError):
        choose_backend(settings(), {"VENDORA_API_KEY": ""})


@pytest.mark.parametrize(
    ("backend", "variable", "wrong_keys"),
    [
        ("vendora", "VENDORA_API_KEY", {"COMPAT_API_KEY", "VENDORX_API_KEY"}),
        ("anthropic", "VENDORA_API_KEY", {"COMPAT_API_KEY"}),
        ("router", "COMPAT_API_KEY", {"VENDORA_API_KEY", "VENDORX_API_KEY"}),
        ("vendorx", "VENDORX_API_KEY", {"VENDORA_API_KEY", "ANTHROPIC_API_KEY", "COMPAT_API_KEY"}),
    ],
)
def test_explicit_backend_missing_its_credential_names_the_variable(
    backend: str, variable: str, wrong_keys: set[str], tmp_path: Path
) -> None:
    # Other providers' keys are present: an explicit choice is never silently switched.
    environ = {name: "some-other-key-123" for name in wrong_keys}
    with pytest.raises(UserError) as caught:
        choose_backend(settings(LLM_BACKEND=backend), environ)
    assert variable in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(UserError, match=variable):
        make_client(settings(LLM_BACKEND=backend), environ, tmp_path)


def test_local_backend_needs_no_credential() -> None:
    assert choose_backend(settings(LLM_BACKEND="local"), {}).name == "local"


def test_explicit_backend_wins_over_an_anthropic_key() -> None:
    choice = choose_backend(settings(LLM_BACKEND="router"), {"VENDORA_API_KEY": "k" * 10, "COMPAT_API_KEY": "c" * 10})
    assert choice.name == "router"


@pytest.mark.parametrize(
    ("backend", "environ", "active", "fast"),
    [
        ("vendora", {"VENDORA_API_KEY": "k" * 10}, "claude-sonnet-4-5", "claude-haiku-4-5"),
        ("router", {"COMPAT_API_KEY": "k" * 10}, "anthropic/claude-sonnet-4.5", "anthropic/claude-haiku-4.5"),
        ("local", {}, "local-model", "local-model"),
        ("vendorx", {"VENDORX_API_KEY": "k" * 10}, "deepseek/deepseek-v3.1", "deepseek/deepseek-v3.1"),
        ("replay", {}, "replay", "replay"),
    ],
)
def test_default_models_per_backend(backend: str, environ: dict, active: str, fast: str) -> None:
    choice = choose_backend(settings(LLM_BACKEND=backend, LEMMATA_REPLAY="x.jsonl"), environ)
    assert choice.name == backend
    assert choice.models == ModelChoice(active, fast)


@pytest.mark.parametrize(
    ("backend", "environ"),
    [("vendora", {"VENDORA_API_KEY": "k" * 10}), ("router", {"COMPAT_API_KEY": "k" * 10}), ("local", {}),
     ("vendorx", {"VENDORX_API_KEY": "k" * 10})],
)
def test_active_and_fast_model_overrides(backend: str, environ: dict) -> None:
    both = choose_backend(settings(LLM_BACKEND=backend, LEMMATA_ACTIVE_MODEL="big", LEMMATA_FAST_MODEL="small"),
                          environ)
    assert both.models == ModelChoice("big", "small")
    fast_only = choose_backend(settings(LLM_BACKEND=backend, LEMMATA_FAST_MODEL="small"), environ)
    assert fast_only.models.fast == "small"
    assert fast_only.models.active == choose_backend(settings(LLM_BACKEND=backend), environ).models.active


def test_active_override_on_vendora_keeps_the_fast_default() -> None:
    choice = choose_backend(settings(LLM_BACKEND="vendora", LEMMATA_ACTIVE_MODEL="claude-opus-x"),
                            {"VENDORA_API_KEY": "k" * 10})
    assert choice.models == ModelChoice("claude-opus-x", "claude-haiku-4-5")


def test_local_and_vendorx_model_settings() -> None:
    local = choose_backend(settings(LLM_BACKEND="local", LOCAL_LLM_MODEL="llama-70b"), {})
    assert local.models == ModelChoice("llama-70b", "llama-70b")
    vendorx = choose_backend(settings(LLM_BACKEND="vendorx", VENDORX_MODEL="vx-2"), {"VENDORX_API_KEY": "k" * 10})
    assert vendorx.models == ModelChoice("vx-2", "vx-2")
    # On single-model backends the active override also serves the fast tier unless that is set too.
    single = choose_backend(settings(LLM_BACKEND="local", LOCAL_LLM_MODEL="llama", LEMMATA_ACTIVE_MODEL="qwen"), {})
    assert single.models == ModelChoice("qwen", "qwen")


def test_model_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_BACKEND", "local")
    monkeypatch.setenv("LOCAL_LLM_MODEL", "from-env")
    monkeypatch.setenv("LEMMATA_FAST_MODEL", "fast-from-env")
    choice = choose_backend(Settings.from_environment(), {})
    assert choice.models == ModelChoice("from-env", "fast-from-env")


def test_fast_tier_roles_get_the_fast_model() -> None:
    choice = choose_backend(settings(LLM_BACKEND="vendora"), {"VENDORA_API_KEY": "k" * 10})
    backend = ScriptedBackend({name: ["answer"] for name in ROLES})
    client = LLMClient(backend, settings(), choice.models)
    for name in ROLES:
        client.complete(name, "s", "q")
    sent = {request.role: request.model for request in backend.requests}
    fast_roles = {name for name, spec in ROLES.items() if spec.tier == "fast"}
    assert fast_roles == {"consistency", "formalizer", "analyst", "sketch", "compress"}
    assert sent == {name: "claude-haiku-4-5" if name in fast_roles else "claude-sonnet-4-5" for name in ROLES}


def test_make_client_uses_the_chosen_backend_and_models(tmp_path: Path) -> None:
    client = make_client(settings(LLM_BACKEND="local", LOCAL_LLM_MODEL="m1"), {}, tmp_path, scope="survey")
    assert client.backend.name == "local"
    assert client.models == ModelChoice("m1", "m1")
    assert client.scope == "survey"
    assert client.call_log is not None and client.call_log.path == tmp_path / "llm_calls.jsonl"
