"""How every command reports errors: one redacted line on stderr and the error's exit code.

- our errors (LemmataError): their message, their exit code (2 for the user's input or settings);
- a file the machine would not let us read or write (a full disk, a read-only or missing folder,
  a file where a folder should be): the file, why, and what to do, exit 2. These are faults of the
  environment, not of lemmata, and a traceback would only hide the one line that matters;
- anything else is our bug: its traceback stays (it is what a bug report needs), exit 1, but
  redacted first, since a traceback can quote a key (a local variable, a request's headers).
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable
from functools import wraps
from typing import Any

import click

from lemmata.errors import LemmataError
from lemmata.os_errors import describe_os_error, is_environmental
from lemmata.redaction import Redactor, redact_known
from lemmata.settings import CREDENTIAL_VARIABLES


def reports_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Our errors and the system's refusals become one line on stderr and exit code; bugs keep
    their traceback, redacted."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except (click.exceptions.ClickException, click.exceptions.Abort, click.exceptions.Exit):
            raise  # click's own: usage errors (exit 2), Ctrl+C at a prompt, an explicit exit
        except LemmataError as exc:
            click.echo(redacted(f"lemmata: error: {exc}"), err=True)  # a message may quote a key
            sys.exit(exc.exit_code)
        except OSError as exc:
            if not is_environmental(exc):  # not a file the system refused: a socket, our misuse of a call
                report_bug()
            click.echo(redacted(f"lemmata: error: {describe_os_error(exc)}"), err=True)
            sys.exit(2)
        except Exception:
            report_bug()

    return wrapper


def report_bug() -> None:
    """The traceback of the exception being handled, redacted, then exit 1."""
    click.echo(redacted(traceback.format_exc()).rstrip(), err=True)
    click.echo("lemmata: error: this is a bug in lemmata; please report it with the lines above", err=True)
    sys.exit(1)


def redacted(text: str) -> str:
    """`text` without a known secret. Redaction reads the .env files; when that fails (the very
    error being reported may be a broken .env) the process environment's credentials still go."""
    try:
        return redact_known(text)
    except Exception:  # noqa: BLE001 - the error path must not fail
        return Redactor([os.environ[name] for name in CREDENTIAL_VARIABLES if os.environ.get(name)])(text)
