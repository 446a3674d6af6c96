"""Text from a model or a provider made whole where it enters: no lone surrogate.

JSON writes a character beyond U+FFFF as two escapes, `\\ud83d\\ude00`, and Python reads each as a
code point of its own. A streaming provider that cuts its chunks between the two, or a model that
writes one half alone, hands over a string with a lone surrogate, which UTF-8 cannot encode: the
call log's write failed, and with it the job, the call's record and the budget's view of it
(issue 53). Here the halves are joined again and a half without its partner becomes U+FFFD.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_SURROGATE = re.compile("[\ud800-\udfff]")
_HIGH_HALF = ("\ud800", "\udbff")


def whole_text(text: str) -> str:
    """`text` with each surrogate pair joined into its character and each lone half U+FFFD."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


class WholeCharacters:
    """Passes a stream's pieces on whole: a piece that ends in the first half of a pair waits for
    the next piece, which may bring the second half. `finish` at the stream's end, `restart`
    when the answer starts again."""

    def __init__(self, consumer: Callable[[str], None]) -> None:
        self.consumer = consumer
        self._held = ""

    def __call__(self, piece: str) -> None:
        text, self._held = self._held + piece, ""
        if text and _HIGH_HALF[0] <= text[-1] <= _HIGH_HALF[1]:
            text, self._held = text[:-1], text[-1]
        if text:
            self.consumer(whole_text(text))

    def finish(self) -> None:
        held, self._held = self._held, ""
        if held:
            self.consumer(whole_text(held))

    def restart(self) -> None:
        self._held = ""
