"""The Settings tab: the 12 token limits under short field names (`prover` for
MAX_TOKENS_PROVER), each with its value, default, use and where the value comes from."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from lemmata.errors import SettingsError
from lemmata.settings import Settings, save_settings, saved_settings

PREFIX = "MAX_TOKENS_"
#: Field name on the wire -> setting name: the spec's field mapping.
FIELDS = {name.removeprefix(PREFIX).lower(): name for name in Settings.model_fields if name.startswith(PREFIX)}


def token_limits(environ: Mapping[str, str] | None) -> list[dict[str, Any]]:
    """The limits a run started now would get. `source`: environment (a variable of the
    server's environment, which wins), saved (from this tab), .env (a dotenv file) or default."""
    process = os.environ if environ is None else environ
    current, saved = Settings.from_environment(environ), saved_settings(environ)
    rows = []
    for field, name in FIELDS.items():
        info, value = Settings.model_fields[name], getattr(current, name)
        source = (
            "environment"
            if name in process
            else "saved"
            if name in saved
            else "default"
            if value == info.default
            else ".env"
        )
        rows.append(
            {
                "field": field,
                "name": name,
                "value": value,
                "default": info.default,
                "used_for": (info.description or "").removeprefix("max output tokens: "),
                "source": source,
            }
        )
    return rows


def save_token_limits(body: Mapping[str, Any], environ: Mapping[str, str] | None) -> None:
    """Save the limits of `body` (field -> positive integer) for the next run; SettingsError
    naming the first bad field, and nothing saved."""
    values = {}
    for field, value in body.items():
        if field not in FIELDS:
            raise SettingsError(f"{field!r} is not a token-limit field: use one of {', '.join(FIELDS)}")
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise SettingsError(f"{field}={value!r} is not valid: expected a positive integer (tokens)")
        values[FIELDS[field]] = value
    save_settings(values, environ)
