"""What reaches a terminal: text from a model, a provider or a client is shown, never obeyed.

A terminal obeys the control characters in what it is sent: ESC opens sequences that write the
clipboard (OSC 52), set the window title (OSC 0), move the cursor and erase lines; CR returns to
the line's start, so the next words overwrite it; the 8-bit C1 controls do what ESC does in many
terminals; a bidirectional override reverses the letters after it. A model's answer, a lemma it
stated, a provider's error message, a request path a client sent: any of them can hold such
characters, so everything lemmata's command line writes passes through `shown` (the process's
stdout and stderr are wrapped at its entry, `escape_the_standard_streams`), which writes each as
visible text in JSON's notation: ESC as `\\u001b`, CR as `\\r`. Newline and tab pass, since they
only lay text out, and CRLF is read as a newline. A lone surrogate (half of an emoji a stream
split) cannot be encoded at all and becomes U+FFFD.

lemmata's own drawing, the erase-line that redraws its status line and a progress bar's cursor,
is the one thing written unescaped, and only through `drawing_stream`, never with a model's text.
"""

from __future__ import annotations

import io
import re
import sys
from typing import TextIO

#: C0 and C1 controls but newline and tab, DEL, the bidirectional marks, embeddings, overrides and
#: isolates, the Arabic letter mark, and lone surrogates.
_OBEYED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def shown(text: str) -> str:
    """`text` with every character a terminal would obey written as its visible escape."""
    if not _OBEYED.search(text):
        return text  # the common case, one scan
    return _OBEYED.sub(_visible, text.replace("\r\n", "\n"))


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xD800 <= code <= 0xDFFF:
        return REPLACEMENT
    if code == 0x0D:
        return "\\r"
    # JSON's notation, which Python reads too: a JSON answer (`lemmata check --json`) holds DEL, C1
    # and bidirectional characters raw, and written so it stays JSON, meaning the same string.
    return f"\\u{code:04x}"


class ShownStream(io.TextIOBase):
    """A text stream that writes what it is given through `shown` to the stream it wraps.

    It has no `buffer`: code that looks for the bytes underneath (click does, when a stream's
    encoding differs from its own choice) finds none and writes here."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.wrapped = stream

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.wrapped.write(shown(text))
        return len(text)

    def writable(self) -> bool:
        return True

    def flush(self) -> None:
        self.wrapped.flush()

    def isatty(self) -> bool:
        return self.wrapped.isatty()

    def fileno(self) -> int:
        # input() reads with readline when stdout's descriptor is the terminal's: prompts keep
        # their line editing. The prompt it writes there is lemmata's own (click writes the
        # question through this stream first).
        return self.wrapped.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.wrapped, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str:  # type: ignore[override]
        return getattr(self.wrapped, "errors", None) or "strict"


def escape_the_standard_streams() -> None:
    """From here on, everything this process writes to stdout and stderr is `shown`."""
    if not isinstance(sys.stdout, ShownStream):
        sys.stdout = ShownStream(sys.stdout)
    if not isinstance(sys.stderr, ShownStream):
        sys.stderr = ShownStream(sys.stderr)


def drawing_stream(stream: TextIO) -> TextIO:
    """The terminal under `stream`, for lemmata's own drawing only (the status line's erase-line,
    a progress bar): what is written here is obeyed, so never a model's or a client's text."""
    return stream.wrapped if isinstance(stream, ShownStream) else stream
