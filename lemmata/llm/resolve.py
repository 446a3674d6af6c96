"""Choosing the backend and its models from settings and credentials.

Resolution order when LLM_BACKEND is empty:
1. `vendora` if VENDORA_API_KEY or ANTHROPIC_API_KEY is set;
2. `vendora` through a local proxy if the provider CLI's credentials file holds a login;
3. otherwise `embedded`, the offline model (the CLI announces it on its first line).
An explicit LLM_BACKEND is obeyed strictly: a missing credential is an error, never a
silent switch to another provider.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from lemmata.errors import UserError
from lemmata.llm.base import Backend, ModelChoice
from lemmata.credentials import credentials_file
from lemmata.llm.credentials_proxy import has_cli_credentials
from lemmata.settings import Settings

#: Each backend's default (active, fast) models; LEMMATA_ACTIVE_MODEL / LEMMATA_FAST_MODEL override.
DEFAULT_MODELS = {
    "vendora": ("claude-sonnet-4-5", "claude-haiku-4-5"),
    "router": ("anthropic/claude-sonnet-4.5", "anthropic/claude-haiku-4.5"),
    "local": (None, None),  # LOCAL_LLM_MODEL for both
    "vendorx": (None, None),  # VENDORX_MODEL for both
    "embedded": (None, None),  # the GGUF file's name for both
    "replay": ("replay", "replay"),  # the recorded model, when the recording names one
}


@dataclass(frozen=True)
class BackendChoice:
    name: str
    models: ModelChoice


def backend_name(settings: Settings, environ: Mapping[str, str]) -> str:
    if settings.LLM_BACKEND:
        return settings.LLM_BACKEND
    if anthropic_key(environ) or has_cli_credentials(credentials_file(settings.VENDORA_CREDENTIALS_FILE)):
        return "vendora"
    return "embedded"


def anthropic_key(environ: Mapping[str, str]) -> str:
    return environ.get("VENDORA_API_KEY") or environ.get("ANTHROPIC_API_KEY") or ""


def resolve_models(name: str, settings: Settings) -> ModelChoice:
    active, fast = DEFAULT_MODELS[name]
    if name == "local":
        active = fast = settings.LOCAL_LLM_MODEL
    if name == "vendorx":
        active = fast = settings.VENDORX_MODEL
    if name == "embedded":
        active = fast = embedded_model_file(settings).stem
    if name == "replay":
        from lemmata.llm.replay import recorded_model

        active = fast = recorded_model(Path(settings.LEMMATA_REPLAY))
    active = settings.LEMMATA_ACTIVE_MODEL or active
    fast = settings.LEMMATA_FAST_MODEL or (settings.LEMMATA_ACTIVE_MODEL if name in ("local", "vendorx") else "") or fast
    return ModelChoice(active=str(active), fast=str(fast))


def choose_backend(settings: Settings, environ: Mapping[str, str]) -> BackendChoice:
    """Which backend and models a run will use; checks credentials without connecting."""
    name = backend_name(settings, environ)
    _require_credentials(name, settings, environ)
    return BackendChoice(name=name, models=resolve_models(name, settings))


def embedded_model_file(settings: Settings) -> Path:
    """The GGUF file the embedded backend loads: LEMMATA_EMBEDDED_MODEL, else the default model."""
    from lemmata.llm.embedded_model import model_path
    from lemmata.settings import lemmata_home

    return model_path(settings, lemmata_home())


def _require_credentials(name: str, settings: Settings, environ: Mapping[str, str]) -> None:
    if name == "embedded":
        embedded_model_file(settings)  # raises with what to install when the model is missing
        return
    cli_login = has_cli_credentials(credentials_file(settings.VENDORA_CREDENTIALS_FILE))
    needed = {"vendora": ("VENDORA_API_KEY or ANTHROPIC_API_KEY (or a login of the provider's CLI)",
                          anthropic_key(environ) or cli_login),
              "router": ("COMPAT_API_KEY", environ.get("COMPAT_API_KEY", "")),
              "vendorx": ("VENDORX_API_KEY", environ.get("VENDORX_API_KEY", "")),
              "replay": ("LEMMATA_REPLAY", settings.LEMMATA_REPLAY)}
    if name in needed and not needed[name][1]:
        raise UserError(f"LLM_BACKEND={name} needs {needed[name][0]} to be set")


def build_backend(name: str, settings: Settings, environ: Mapping[str, str], run_dir: Path) -> Backend:
    # SDK modules are imported only for the backend in use: start-up stays cheap.
    timeout = settings.LLM_TIMEOUT
    if name == "vendora":
        from lemmata.llm.anthropic_backend import AnthropicBackend

        if anthropic_key(environ):
            return AnthropicBackend(anthropic_key(environ), timeout, settings.VENDORA_BASE_URL)
        return _vendora_through_cli_login(settings, timeout)
    if name == "embedded":
        from lemmata.llm.embedded_backend import EmbeddedBackend
        from lemmata.settings import lemmata_home

        return EmbeddedBackend(embedded_model_file(settings), settings.LEMMATA_EMBEDDED_CONTEXT,
                               settings.LEMMATA_EMBEDDED_THREADS, lock_path=generation_lock(lemmata_home()),
                               max_answer_tokens=settings.LEMMATA_EMBEDDED_MAX_TOKENS)
    if name == "replay":
        from lemmata.llm.replay import ReplayBackend

        return ReplayBackend(Path(settings.LEMMATA_REPLAY), run_dir)
    from lemmata.llm.openai_backend import OpenAICompatibleBackend

    endpoints = {
        "router": (settings.COMPAT_BASE_URL, environ.get("COMPAT_API_KEY", "")),
        "local": (settings.LOCAL_LLM_BASE_URL, ""),
        "vendorx": (settings.VENDORX_BASE_URL, environ.get("VENDORX_API_KEY", "")),
    }
    base_url, key = endpoints[name]
    return OpenAICompatibleBackend(name, base_url, key, timeout, send_json_schema=name == "local")


def _vendora_through_cli_login(settings: Settings, timeout: float) -> Backend:
    """The spec's fallback: the provider CLI's login, added to each request by a loopback proxy,
    so the token never passes through the SDK, our logs or our errors."""
    from lemmata.llm.anthropic_backend import AnthropicBackend
    from lemmata.llm.credentials_proxy import CredentialsProxy, read_access_token

    path = credentials_file(settings.VENDORA_CREDENTIALS_FILE)
    read_access_token(path)  # an expired or unreadable login is a clear error now, not a 401 later
    proxy = CredentialsProxy(path, settings.VENDORA_BASE_URL or "https://api.anthropic.com").start()
    backend = AnthropicBackend(proxy.client_key, timeout, proxy.base_url)
    backend.proxy = proxy  # lives as long as the backend
    return backend


def generation_lock(home: Path) -> Path:
    """One embedded generation at a time per machine (they share its cores). Named after the
    host: on a cluster whose data directory is shared, jobs on other nodes do not wait."""
    return home / "models" / f".generate-{socket.gethostname()}.lock"
