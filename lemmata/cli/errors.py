"""How every command reports our errors: one line on stderr and the error's exit code."""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import wraps
from typing import Any

import click

from lemmata.errors import LemmataError
from lemmata.redaction import redact_known


def reports_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Our errors become one line on stderr and their exit code; bugs keep their traceback."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except LemmataError as exc:
            click.echo(redact_known(f"lemmata: error: {exc}"), err=True)  # a message may quote a key
            sys.exit(exc.exit_code)

    return wrapper
