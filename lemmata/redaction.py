"""Which values are secrets, and taking them out of what lemmata writes and shows.

The secrets are the values of the credential variables `settings.CREDENTIAL_VARIABLES` names
(model keys, search keys, the API token), wherever they are set (the environment or a `.env`
file), and the tokens of the provider CLI's login, read from its credentials file when asked
(the CLI refreshes them in place). Redaction is applied where text leaves our hands: the call
log, the Q&A history, every file written with `artifacts.atomic_write_text` (artifacts, papers,
the failure note), sandbox output as the experiment stage receives it, and error messages.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping

from lemmata.credentials import credentials_file, oauth_entry
from lemmata.settings import CREDENTIAL_VARIABLES, load_environment

REDACTED = "[redacted]"
#: Shorter values are not treated as secrets: replacing "abc" everywhere would mangle ordinary text.
MIN_SECRET_LENGTH = 8


class Redactor:
    """Replaces secret values in text. `secrets` is a list, or a function giving the current list
    (evaluated at each use: a refreshed login token is known at once)."""

    def __init__(self, secrets: Iterable[str] | Callable[[], Iterable[str]] = ()) -> None:
        self._source = secrets if callable(secrets) else None
        self._forms = [] if callable(secrets) else _forms(secrets)

    def __call__(self, text: str) -> str:
        for form in _forms(self._source()) if self._source else self._forms:
            text = text.replace(form, REDACTED)
        return text


def _forms(secrets: Iterable[str]) -> list[str]:
    """Each secret as it appears in plain text and inside a JSON string (escaped: a secret with
    a quote, a backslash or a non-ASCII letter), longest first so no part of one survives."""
    forms: set[str] = set()
    for secret in secrets:
        if len(secret) >= MIN_SECRET_LENGTH:
            forms |= {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}
    return sorted(forms, key=len, reverse=True)


def known_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """Every secret lemmata knows of now: the credential variables of the process environment, of
    `environ` if given (the one a run or a server's runs get) and of the `.env` files, and the
    provider CLI's login tokens. Redacting a value too many is harmless; one too few is a leak."""
    found: list[str] = []
    for source in (os.environ, *([environ] if environ is not None else [])):
        values = load_environment(source)
        found += [values[name] for name in CREDENTIAL_VARIABLES if values.get(name)]
        found += cli_login_tokens(values.get("VENDORA_CREDENTIALS_FILE", ""))
    return found


def cli_login_tokens(configured_file: str) -> list[str]:
    """The access and refresh tokens of the provider CLI's login, if its credentials file has one."""
    try:
        entry = oauth_entry(credentials_file(configured_file))
    except (OSError, ValueError):
        return []
    return [value for key in ("accessToken", "refreshToken") if isinstance(value := entry.get(key), str)]


def redact_known(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` without any secret `known_secrets(environ)` finds."""
    return Redactor(known_secrets(environ))(text)
