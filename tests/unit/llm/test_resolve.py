"""Backend and model resolution from settings and credentials."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import get_args

import pytest
from conftest import write_cli_login

from lemmata.agents.client import LLMClient, ModelChoice, make_client
from lemmata.agents.roles import ROLES
from lemmata.errors import UserError
from lemmata.llm.registry import backend_names, backend_spec, register, registered
from lemmata.llm.resolve import (
    backend_name,
    build_backend,
    choose_backend,
    resolve_models,
)
from lemmata.settings import Settings
from support.scripted_backend import ScriptedBackend


def settings(**values: object) -> Settings:
    return Settings.from_mapping(values)


@pytest.mark.parametrize("key_variable", ["VENDORA_API_KEY", "ANTHROPIC_API_KEY"])
def test_empty_backend_with_an_anthropic_key_means_vendora(key_variable: str) -> None:
    choice = choose_backend(settings(), {key_variable: "key-123456789"})
    assert choice.name == "vendora"
    assert choice.models == ModelChoice("claude-sonnet-4-5", "claude-haiku-4-5")


def test_no_credential_at_all_means_the_embedded_model() -> None:
    assert backend_name(settings(), {}) == "embedded"


@pytest.mark.parametrize("key_variable", ["COMPAT_API_KEY", "VENDORX_API_KEY"])
def test_other_keys_do_not_pick_their_backend_silently(key_variable: str) -> None:
    assert backend_name(settings(), {key_variable: "key-123456789"}) == "embedded"


def test_embedded_without_an_installed_model_says_what_to_install() -> None:
    with pytest.raises(UserError) as caught:
        choose_backend(settings(), {})
    message = str(caught.value)
    assert "\n" not in message
    assert "lemmata model install" in message and "LEMMATA_EMBEDDED_MODEL" in message


def test_empty_key_counts_as_missing() -> None:
    assert backend_name(settings(), {"VENDORA_API_KEY": ""}) == "embedded"


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
    [
        ("vendora", {"VENDORA_API_KEY": "k" * 10}),
        ("router", {"COMPAT_API_KEY": "k" * 10}),
        ("local", {}),
        ("vendorx", {"VENDORX_API_KEY": "k" * 10}),
    ],
)
def test_active_and_fast_model_overrides(backend: str, environ: dict) -> None:
    both = choose_backend(
        settings(LLM_BACKEND=backend, LEMMATA_ACTIVE_MODEL="big", LEMMATA_FAST_MODEL="small"), environ
    )
    assert both.models == ModelChoice("big", "small")
    fast_only = choose_backend(settings(LLM_BACKEND=backend, LEMMATA_FAST_MODEL="small"), environ)
    assert fast_only.models.fast == "small"
    assert fast_only.models.active == choose_backend(settings(LLM_BACKEND=backend), environ).models.active


def test_active_override_on_vendora_keeps_the_fast_default() -> None:
    choice = choose_backend(
        settings(LLM_BACKEND="vendora", LEMMATA_ACTIVE_MODEL="claude-opus-x"), {"VENDORA_API_KEY": "k" * 10}
    )
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
    assert fast_roles == {"extractor", "consistency", "formalizer", "analyst", "sketch", "compress"}
    assert sent == {name: "claude-haiku-4-5" if name in fast_roles else "claude-sonnet-4-5" for name in ROLES}


def test_make_client_uses_the_chosen_backend_and_models(tmp_path: Path) -> None:
    client = make_client(settings(LLM_BACKEND="local", LOCAL_LLM_MODEL="m1"), {}, tmp_path, scope="survey")
    assert client.backend.name == "local"
    assert client.models == ModelChoice("m1", "m1")
    assert client.scope == "survey"
    assert client.call_log is not None and client.call_log.path == tmp_path / "llm_calls.jsonl"


def cli_login(path: Path, token: str = "sk-ant-oat01-test-login-token", expires_in: float = 3600) -> Path:
    return write_cli_login(path, token, time.time() + expires_in)


def test_a_cli_login_without_a_key_means_vendora_through_the_local_proxy(fake_llm, tmp_path: Path) -> None:
    from lemmata import layout

    token = "sk-ant-oat01-test-login-token"
    values = {
        "VENDORA_CREDENTIALS_FILE": str(cli_login(tmp_path / "credentials.json", token)),
        "VENDORA_BASE_URL": fake_llm.anthropic_base_url,
        "LLM_RETRY_ATTEMPTS": 0,
    }
    assert choose_backend(settings(**values), {}).name == "vendora"
    fake_llm.enqueue("survey", '{"summary": "s"}')
    client = make_client(settings(**values), {}, tmp_path / "run")
    assert client.complete("survey", "SYSTEM", "hello") == '{"summary": "s"}'
    headers = fake_llm.calls("survey")[0].headers
    assert headers["authorization"] == f"Bearer {token}"
    assert "x-api-key" not in headers and "oauth-2025-04-20" in headers["anthropic-beta"]
    assert token not in (tmp_path / "run" / layout.LLM_CALLS).read_text()


def test_an_expired_cli_login_is_a_clear_error_before_any_call(tmp_path: Path) -> None:
    values = {
        "VENDORA_CREDENTIALS_FILE": str(cli_login(tmp_path / "credentials.json", expires_in=-60)),
        "LLM_BACKEND": "vendora",
    }
    with pytest.raises(UserError, match="VENDORA_API_KEY") as caught:
        make_client(settings(**values), {}, tmp_path / "run")
    assert "sk-ant-oat01" not in str(caught.value)


def test_explicit_vendora_without_key_or_login_names_both(tmp_path: Path) -> None:
    values = {"LLM_BACKEND": "vendora", "VENDORA_CREDENTIALS_FILE": str(tmp_path / "absent.json")}
    with pytest.raises(UserError, match=r"VENDORA_API_KEY or ANTHROPIC_API_KEY \(or a login of the provider's CLI\)"):
        choose_backend(settings(**values), {})


def test_embedded_backend_loads_the_configured_gguf(tmp_path: Path) -> None:
    from lemmata.llm.embedded_backend import EmbeddedBackend

    gguf = tmp_path / "tiny-model.gguf"
    gguf.write_bytes(b"GGUF" + bytes(60))
    chosen = settings(
        LLM_BACKEND="embedded",
        LEMMATA_EMBEDDED_MODEL=str(gguf),
        LEMMATA_EMBEDDED_CONTEXT=4096,
        LEMMATA_EMBEDDED_THREADS=3,
    )
    choice = choose_backend(chosen, {})
    assert choice.name == "embedded" and choice.models == ModelChoice("tiny-model", "tiny-model")
    backend = build_backend("embedded", chosen, {}, tmp_path / "run")
    assert isinstance(backend, EmbeddedBackend)
    assert (backend.model_path, backend.context_tokens, backend.threads) == (gguf.resolve(), 4096, 3)


def test_embedded_with_a_file_that_is_not_gguf_names_the_variable(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(UserError, match="LEMMATA_EMBEDDED_MODEL"):
        choose_backend(settings(LLM_BACKEND="embedded", LEMMATA_EMBEDDED_MODEL=str(tmp_path / "notes.txt")), {})


# --- the backend registry --------------------------------------------------------------------


def test_the_registry_names_are_the_settings_backend_values() -> None:
    # Settings must not import the model layer, so its Literal cannot be derived from the registry.
    allowed = set(get_args(Settings.model_fields["LLM_BACKEND"].annotation)) - {""}
    assert set(backend_names()) == allowed
    assert len(backend_names()) == len(allowed)


def test_every_registered_backend_has_a_name_and_default_models(tmp_path: Path) -> None:
    gguf = tmp_path / "tiny-model.gguf"
    gguf.write_bytes(b"GGUF" + bytes(60))
    chosen = settings(LEMMATA_EMBEDDED_MODEL=str(gguf), LEMMATA_REPLAY=str(tmp_path / "absent.jsonl"))
    for spec in registered():
        assert spec.name
        active, fast = spec.default_models(chosen)
        assert isinstance(active, str) and active and isinstance(fast, str) and fast, spec.name
        assert callable(spec.build)


def test_automatic_choice_ends_with_a_backend_that_needs_no_credential() -> None:
    automatic = [spec for spec in registered() if spec.automatic]
    assert [spec.name for spec in automatic] == ["vendora", "embedded"]
    assert automatic[-1].credential is None


def test_an_unknown_backend_name_is_a_clear_error(tmp_path: Path) -> None:
    for call in (
        lambda: backend_spec("nonesuch"),
        lambda: resolve_models("nonesuch", settings()),
        lambda: build_backend("nonesuch", settings(), {}, tmp_path),
    ):
        with pytest.raises(
            UserError,
            match=r"unknown LLM backend 'nonesuch': the backends are vendora, router, "
            r"local, vendorx, embedded, replay",
        ):
            call()


def test_a_backend_is_registered_once() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        register(backend_spec("local"))


_SDKS = ("anthropic", "openai", "llama_cpp")


def _imported_sdks(code: str) -> set[str]:
    probe = code + f"\nimport json, sys\nprint(json.dumps([m for m in {_SDKS!r} if m in sys.modules]))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(json.loads(result.stdout.strip().splitlines()[-1]))


def test_resolving_imports_no_sdk() -> None:
    assert (
        _imported_sdks(
            "from lemmata.llm.resolve import choose_backend\n"
            "from lemmata.settings import Settings\n"
            "choose_backend(Settings.from_mapping({'LLM_BACKEND': 'local'}), {})\n"
            "choose_backend(Settings.from_mapping({'LLM_BACKEND': 'vendora'}), {'VENDORA_API_KEY': 'k' * 10})\n"
        )
        == set()
    )


@pytest.mark.parametrize(
    ("backend", "environ", "sdk"), [("local", {}, "openai"), ("vendora", {"VENDORA_API_KEY": "k" * 10}, "anthropic")]
)
def test_building_a_backend_imports_only_its_own_sdk(backend: str, environ: dict, sdk: str, tmp_path: Path) -> None:
    assert _imported_sdks(
        "from pathlib import Path\n"
        "from lemmata.llm.resolve import build_backend\n"
        "from lemmata.settings import Settings\n"
        f"build_backend({backend!r}, Settings.from_mapping({{}}), {environ!r}, Path({str(tmp_path)!r}))\n"
    ) == {sdk}


@pytest.mark.parametrize(
    ("backend", "environ", "base_url", "json_schema"),
    [
        ("router", {"COMPAT_API_KEY": "k" * 10}, "https://openrouter.ai/api/v1", False),
        ("local", {}, "http://localhost:8000/v1", True),
        ("vendorx", {"VENDORX_API_KEY": "k" * 10}, "https://api.novita.ai/v3/openai", False),
    ],
)
def test_openai_compatible_backends_get_their_endpoint(
    backend: str, environ: dict, base_url: str, json_schema: bool, tmp_path: Path
) -> None:
    built = build_backend(backend, settings(), environ, tmp_path)
    assert (built.name, built.base_url, built.send_json_schema) == (backend, base_url, json_schema)
