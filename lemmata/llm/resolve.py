"""Choosing the backend and its models from settings and credentials, by walking the registry.

Each backend's name, credential, default models and constructor are registered once in
`lemmata/llm/registry.py`; this module only applies the rules common to all of them.

Resolution order when LLM_BACKEND is empty (the registry's automatic backends, in order):
1. `vendora` if VENDORA_API_KEY or ANTHROPIC_API_KEY is set;
2. `vendora` through a local proxy if the provider CLI's credentials file holds a login;
3. otherwise `embedded`, the offline model (the CLI announces it on its first line).
An explicit LLM_BACKEND is obeyed strictly: a missing credential is an error, never a
silent switch to another provider.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from lemmata.llm.base import Backend, ModelChoice
from lemmata.llm.registry import backend_spec, registered
from lemmata.settings import Settings


@dataclass(frozen=True)
class BackendChoice:
    name: str
    models: ModelChoice


def backend_name(settings: Settings, environ: Mapping[str, str]) -> str:
    if settings.LLM_BACKEND:
        return settings.LLM_BACKEND
    # The last automatic backend (embedded) needs no credential, so one always answers.
    return next(spec.name for spec in registered() if spec.automatic and spec.has_credential(settings, environ))


def resolve_models(name: str, settings: Settings) -> ModelChoice:
    """The backend's default models; LEMMATA_ACTIVE_MODEL / LEMMATA_FAST_MODEL override."""
    spec = backend_spec(name)
    active, fast = spec.default_models(settings)
    active = settings.LEMMATA_ACTIVE_MODEL or active
    fast = settings.LEMMATA_FAST_MODEL or (settings.LEMMATA_ACTIVE_MODEL if spec.fast_follows_active else "") or fast
    return ModelChoice(active=str(active), fast=str(fast))


def choose_backend(settings: Settings, environ: Mapping[str, str]) -> BackendChoice:
    """Which backend and models a run will use; checks credentials without connecting."""
    name = backend_name(settings, environ)
    backend_spec(name).require(settings, environ)
    return BackendChoice(name=name, models=resolve_models(name, settings))


def build_backend(name: str, settings: Settings, environ: Mapping[str, str], run_dir: Path) -> Backend:
    # Each spec imports its backend module (and SDK) only when built: start-up stays cheap.
    return backend_spec(name).build(settings, environ, run_dir)
