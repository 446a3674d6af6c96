"""Every model backend, registered once: its name, credential, default models and constructor.

`resolve.py` walks this registry instead of keeping its own tables (compare simonw/llm's
`register_models` hook). One `BackendSpec` per backend says everything resolution needs:

- `credential`: what must be set (named word for word in the error) and how to read it;
- `check`: a precondition beyond credentials (the embedded model file exists);
- `default_models(settings)`: the (active, fast) models before LEMMATA_ACTIVE_MODEL/LEMMATA_FAST_MODEL;
- `build(settings, environ, run_dir)`: the backend itself;
- `automatic`: chosen when LLM_BACKEND is empty and its credential is present, in registration order.

The specs live here, not in the backend modules, because those modules import their SDK
(anthropic, openai) at the top: registering from there would import every SDK at start-up.
Each `build` imports its backend module only when called, so importing this registry (and
`resolve`) imports no SDK, and a run imports only the SDK of the backend it uses.

The names must equal Settings' LLM_BACKEND values. Settings cannot derive them from here
(settings must not import the model layer), so a unit test keeps the two from drifting.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lemmata.credentials import credentials_file
from lemmata.errors import UserError
from lemmata.home_layout import MODELS, PROMPT_STATES
from lemmata.llm.base import Backend
from lemmata.llm.credentials_proxy import has_cli_credentials

if TYPE_CHECKING:
    from lemmata.settings import Settings


@dataclass(frozen=True)
class Credential:
    """What a backend needs set, as its error names it, and how to read it (empty: missing)."""

    needs: str
    read: Callable[[Settings, Mapping[str, str]], object]

    def present(self, settings: Settings, environ: Mapping[str, str]) -> bool:
        return bool(self.read(settings, environ))


@dataclass(frozen=True)
class BackendSpec:
    name: str
    default_models: Callable[[Settings], tuple[str, str]]
    build: Callable[[Settings, Mapping[str, str], Path], Backend]
    credential: Credential | None = None
    #: Raises a UserError saying what to do when the backend cannot run (beyond its credential).
    check: Callable[[Settings], object] | None = None
    #: Chosen when LLM_BACKEND is empty and its credential is present (first in registration order).
    automatic: bool = False
    #: Configured with one model name: LEMMATA_ACTIVE_MODEL serves the fast tier too unless
    #: LEMMATA_FAST_MODEL is set.
    fast_follows_active: bool = False

    def has_credential(self, settings: Settings, environ: Mapping[str, str]) -> bool:
        return self.credential is None or self.credential.present(settings, environ)

    def require(self, settings: Settings, environ: Mapping[str, str]) -> None:
        """Checks that the backend can be built, without connecting; a UserError when it cannot."""
        if self.check is not None:
            self.check(settings)
        if self.credential is not None and not self.credential.present(settings, environ):
            raise UserError(f"LLM_BACKEND={self.name} needs {self.credential.needs} to be set")


_REGISTRY: dict[str, BackendSpec] = {}


def register(spec: BackendSpec) -> BackendSpec:
    if spec.name in _REGISTRY:
        raise ValueError(f"backend {spec.name!r} is registered twice")
    _REGISTRY[spec.name] = spec
    return spec


def backend_spec(name: str) -> BackendSpec:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UserError(f"unknown LLM backend {name!r}: the backends are {', '.join(_REGISTRY)}") from None


def registered() -> tuple[BackendSpec, ...]:
    """Every backend, in registration order (the order automatic choice tries them in)."""
    return tuple(_REGISTRY.values())


def backend_names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


# --- vendora: Anthropic's API, with a key or through the provider CLI's login -------------------


def anthropic_key(environ: Mapping[str, str]) -> str:
    return environ.get("VENDORA_API_KEY") or environ.get("ANTHROPIC_API_KEY") or ""


def _vendora_credential(settings: Settings, environ: Mapping[str, str]) -> bool:
    return bool(anthropic_key(environ)) or has_cli_credentials(credentials_file(settings.VENDORA_CREDENTIALS_FILE))


def _build_vendora(settings: Settings, environ: Mapping[str, str], run_dir: Path) -> Backend:
    from lemmata.llm.anthropic_backend import AnthropicBackend

    if anthropic_key(environ):
        return AnthropicBackend(anthropic_key(environ), settings.LLM_TIMEOUT, settings.VENDORA_BASE_URL)
    return _vendora_through_cli_login(settings)


def _vendora_through_cli_login(settings: Settings) -> Backend:
    """The spec's fallback: the provider CLI's login, added to each request by a loopback proxy,
    so the token never passes through the SDK, our logs or our errors."""
    from lemmata.llm.anthropic_backend import AnthropicBackend
    from lemmata.llm.credentials_proxy import CredentialsProxy, read_access_token

    path = credentials_file(settings.VENDORA_CREDENTIALS_FILE)
    read_access_token(path)  # an expired or unreadable login is a clear error now, not a 401 later
    proxy = CredentialsProxy(path, settings.VENDORA_BASE_URL or "https://api.anthropic.com").start()
    backend = AnthropicBackend(proxy.client_key, settings.LLM_TIMEOUT, proxy.base_url)
    backend.proxy = proxy  # lives as long as the backend
    return backend


# --- router, local, vendorx: OpenAI-compatible HTTP servers ---------------------------------------


def _openai_compatible(
    name: str, base_url: str, key: str, settings: Settings, send_json_schema: bool = False
) -> Backend:
    from lemmata.llm.openai_backend import OpenAICompatibleBackend

    return OpenAICompatibleBackend(name, base_url, key, settings.LLM_TIMEOUT, send_json_schema=send_json_schema)


def _build_router(settings: Settings, environ: Mapping[str, str], run_dir: Path) -> Backend:
    return _openai_compatible("router", settings.COMPAT_BASE_URL, environ.get("COMPAT_API_KEY", ""), settings)


def _build_local(settings: Settings, environ: Mapping[str, str], run_dir: Path) -> Backend:
    # Only the local server (llama.cpp-style) understands a schema inside json_object.
    return _openai_compatible("local", settings.LOCAL_LLM_BASE_URL, "", settings, send_json_schema=True)


def _build_vendorx(settings: Settings, environ: Mapping[str, str], run_dir: Path) -> Backend:
    return _openai_compatible("vendorx", settings.VENDORX_BASE_URL, environ.get("VENDORX_API_KEY", ""), settings)


# --- embedded: a GGUF model in-process ------------------------------------------------------------


def embedded_model_file(settings: Settings) -> Path:
    """The GGUF file the embedded backend loads: LEMMATA_EMBEDDED_MODEL, else the default model."""
    from lemmata.llm.embedded_model import model_path
    from lemmata.settings import lemmata_home

    return model_path(settings, lemmata_home())


def generation_lock(home: Path) -> Path:
    """One embedded generation at a time per machine (they share its cores). Named after the
    host: on a cluster whose data directory is shared, jobs on other nodes do not wait."""
    return Path(home) / MODELS / f".generate-{socket.gethostname()}.lock"


def _embedded_models(settings: Settings) -> tuple[str, str]:
    name = embedded_model_file(settings).stem  # the GGUF file's name for both
    return name, name


def _build_embedded(settings: Settings, environ: Mapping[str, str], run_dir: Path) -> Backend:
    """A job of a run with a model server calls the run's shared model; anyone else (the paper
    Q&A, a test, the server itself) loads the model in its own process."""
    from lemmata.llm.model_server import SOCKET_VARIABLE, SharedModelBackend

    if environ.get(SOCKET_VARIABLE):
        return SharedModelBackend(Path(environ[SOCKET_VARIABLE]))
    return in_process_embedded(settings)


def in_process_embedded(settings: Settings) -> Backend:
    from lemmata.llm.embedded_backend import EmbeddedBackend
    from lemmata.settings import lemmata_home

    return EmbeddedBackend(
        embedded_model_file(settings),
        settings.LEMMATA_EMBEDDED_CONTEXT,
        settings.LEMMATA_EMBEDDED_THREADS,
        lock_path=generation_lock(lemmata_home()),
        max_answer_tokens=settings.LEMMATA_EMBEDDED_MAX_TOKENS,
        prompt_states=lemmata_home() / MODELS / PROMPT_STATES,
    )


# --- replay: answers from a recording -------------------------------------------------------------


def _replay_models(settings: Settings) -> tuple[str, str]:
    from lemmata.llm.replay import recorded_model

    name = recorded_model(Path(settings.LEMMATA_REPLAY))  # "replay" when the recording names none
    return name, name


def _build_replay(settings: Settings, environ: Mapping[str, str], run_dir: Path) -> Backend:
    from lemmata.llm.replay import ReplayBackend

    return ReplayBackend(Path(settings.LEMMATA_REPLAY), run_dir)


# --- the registrations, in the order automatic choice tries them ----------------------------------

register(
    BackendSpec(
        name="vendora",
        default_models=lambda settings: ("claude-sonnet-4-5", "claude-haiku-4-5"),
        build=_build_vendora,
        credential=Credential(
            "VENDORA_API_KEY or ANTHROPIC_API_KEY (or a login of the provider's CLI)", _vendora_credential
        ),
        automatic=True,
    )
)
register(
    BackendSpec(
        name="router",
        default_models=lambda settings: ("anthropic/claude-sonnet-4.5", "anthropic/claude-haiku-4.5"),
        build=_build_router,
        credential=Credential("COMPAT_API_KEY", lambda settings, environ: environ.get("COMPAT_API_KEY", "")),
    )
)
register(
    BackendSpec(
        name="local",
        default_models=lambda settings: (settings.LOCAL_LLM_MODEL, settings.LOCAL_LLM_MODEL),
        build=_build_local,
        fast_follows_active=True,
    )
)
register(
    BackendSpec(
        name="vendorx",
        default_models=lambda settings: (settings.VENDORX_MODEL, settings.VENDORX_MODEL),
        build=_build_vendorx,
        credential=Credential("VENDORX_API_KEY", lambda settings, environ: environ.get("VENDORX_API_KEY", "")),
        fast_follows_active=True,
    )
)
register(
    BackendSpec(
        name="embedded",
        default_models=_embedded_models,
        build=_build_embedded,
        check=embedded_model_file,  # raises with what to install when the model is missing
        automatic=True,  # needs no credential: the fallback when no earlier backend has one
    )
)
register(
    BackendSpec(
        name="replay",
        default_models=_replay_models,
        build=_build_replay,
        credential=Credential("LEMMATA_REPLAY", lambda settings, environ: settings.LEMMATA_REPLAY),
    )
)
