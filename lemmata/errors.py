"""The error hierarchy: who is at fault decides how the edge (CLI, server) reports it.

- UserError: the researcher's input or configuration is wrong. One clear line, exit code 2.
- ProviderError: the model provider failed for good (after retries, or a 4xx). One line.
- ModelOutputError: the model answered, but not in a usable shape even after fallbacks.
- ArtifactError: a run-directory file is missing or corrupt. Names the file.
- RunBusyError: another lemmata process holds the run.
Anything else is our bug and is raised with its traceback.
"""


class LemmataError(Exception):
    """Base of every error lemmata reports to the user as one line."""

    exit_code = 1


class UserError(LemmataError):
    """The user's input or configuration is wrong; the message says what to do."""

    exit_code = 2


class SettingsError(UserError):
    """A setting has a value outside its allowed set."""


class ProviderError(LemmataError):
    """A model provider failed for good: a non-retryable 4xx, or retries exhausted."""


class TransientProviderError(ProviderError):
    """Rate limit, 5xx, connection error or timeout: worth retrying."""


class ModelOutputError(LemmataError):
    """The model's answer could not be used, even after every fallback."""


class ArtifactError(LemmataError):
    """A run-directory artifact is missing or does not validate."""


class RunBusyError(LemmataError):
    """Another lemmata process is working on this run."""

    exit_code = 3


class ReplayExhaustedError(ProviderError):
    """The replay script has no answer left for a role."""


class GateClosed(Exception):
    """A gate's job ended on purpose: its question is the driver's to ask (not a LemmataError: the
    run does not fail, it waits at the gate)."""


class BudgetReached(Exception):
    """A job did not start: the run's budget would be passed (run/spending/stage_boundary.py). Not a
    LemmataError: the run does not fail, it pauses, and a resume with a larger budget goes on."""


def check_utf8_text(what: str, text: str, plural: bool = False) -> None:
    """UserError when `text` holds a surrogate: a byte of argv that is not UTF-8 (Python reads it
    as U+DC80..U+DCFF) or half of a pair a JSON escape cut in two. No file can hold either: the
    run's record failed to write after its folder was made (issue 53)."""
    half = next((c for c in text if "\ud800" <= c <= "\udfff"), None)
    if half is None:
        return
    code, where = ord(half), text.index(half)
    found = f"byte 0x{code - 0xDC00:02X}" if 0xDC80 <= code <= 0xDCFF else f"half a surrogate pair, U+{code:04X},"
    raise UserError(
        f"{what} {'are' if plural else 'is'} not UTF-8 text: {found} at position {where}; write {'them' if plural else 'it'} in UTF-8 "
        "(a terminal or file in another encoding sends other bytes)"
    )
