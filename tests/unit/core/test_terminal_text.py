"""terminal_text.shown: what a terminal would obey becomes visible text; everything else, the
mathematics a paper is written in among it, passes unchanged (issue 53, item 1)."""

from __future__ import annotations

import io
import json
import re
import sys

import click
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lemmata.terminal_text import REPLACEMENT, ShownStream, drawing_stream, escape_the_standard_streams, shown

OBEYED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


@pytest.mark.parametrize(
    "text, seen",
    [
        pytest.param("\x1b]52;c;cm0K\x07", "\\u001b]52;c;cm0K\\u0007", id="osc-52-clipboard"),
        pytest.param("\x1b]0;title\x1b\\", "\\u001b]0;title\\u001b\\", id="osc-0-title-string-terminator"),
        pytest.param("unverified\r\x1b[Kverified", "unverified\\r\\u001b[Kverified", id="cr-erase-line"),
        pytest.param("\x9b2J", "\\u009b2J", id="c1-csi"),
        pytest.param("\x90q\x9c", "\\u0090q\\u009c", id="c1-dcs-st"),
        pytest.param("ab\x08\x08\x7f", "ab\\u0008\\u0008\\u007f", id="backspace-del"),
        pytest.param("\x00\x05\x0b\x0c", "\\u0000\\u0005\\u000b\\u000c", id="nul-enq-vt-ff"),
        pytest.param("\u202edeifirev\u202c", "\\u202edeifirev\\u202c", id="rtl-override"),
        pytest.param("\u2067x\u2069 \u200f \u061c", "\\u2067x\\u2069 \\u200f \\u061c", id="isolates-and-marks"),
        pytest.param("half \ud83d emoji", f"half {REPLACEMENT} emoji", id="lone-surrogate"),
        pytest.param("line one\r\nline two\r\n", "line one\nline two\n", id="crlf-is-a-newline"),
        pytest.param("\r\n\x1b", "\n\\u001b", id="crlf-beside-an-escape"),
    ],
)
def test_what_a_terminal_would_obey_is_shown(text: str, seen: str) -> None:
    assert shown(text) == seen


@pytest.mark.parametrize(
    "text",
    [
        "∀ a, b ∈ ℤ: a mod 2 = 0 ∧ b mod 2 = 0 ⇒ (a + b) mod 2 = 0",
        "α² − 61β² ≠ 1, √(x² + y²) ≤ 11, ⌊x⌋, 𝔽_p, 😀",
        "columns\tand\nlines",
        "Ελληνικά, русский, 中文, עברית, العربية",
        "$\\frac{1}{2}$ \\u001b written out is only text",
    ],
)
def test_text_and_mathematics_pass_unchanged(text: str) -> None:
    assert shown(text) == text


@given(st.text())
def test_nothing_a_terminal_obeys_survives(text: str) -> None:
    seen = shown(text)
    assert not OBEYED.search(seen)
    if not OBEYED.search(text):
        assert seen == text
    seen.encode("utf-8")  # always encodable: no lone surrogate is left


def test_the_stream_escapes_click_and_print_and_keeps_the_terminal_for_drawing() -> None:
    terminal = io.StringIO()
    stream = ShownStream(terminal)  # type: ignore[arg-type]
    click.echo("model: \x1b]0;pwned\x07", file=stream)
    print("provider: \x9b2J", file=stream)
    assert stream.write("\r") == 1
    drawing_stream(stream).write("\r\x1b[K")  # lemmata's own erase-line, obeyed
    assert terminal.getvalue() == "model: \\u001b]0;pwned\\u0007\nprovider: \\u009b2J\n\\r\r\x1b[K"
    assert drawing_stream(terminal) is terminal  # a stream never wrapped is its own terminal
    with pytest.raises(TypeError):
        stream.write(b"\x1b")  # type: ignore[arg-type]


def test_the_standard_streams_are_wrapped_once(monkeypatch: pytest.MonkeyPatch) -> None:
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    escape_the_standard_streams()
    escape_the_standard_streams()
    assert isinstance(sys.stdout, ShownStream) and sys.stdout.wrapped is out
    assert isinstance(sys.stderr, ShownStream) and sys.stderr.wrapped is err
    print("\x1b[2J")
    click.echo("\x07", err=True)
    assert (out.getvalue(), err.getvalue()) == ("\\u001b[2J\n", "\\u0007\n")


@given(st.text())
def test_json_written_through_the_stream_stays_json_and_means_the_same(text: str) -> None:
    """`lemmata check --json` writes DEL, C1 and bidirectional characters raw inside its strings:
    escaped in JSON's own notation, the answer still reads back to the same value."""
    terminal = io.StringIO()
    value = {"statement": whole(text)}
    ShownStream(terminal).write(json.dumps(value, ensure_ascii=False))  # type: ignore[arg-type]
    assert json.loads(terminal.getvalue()) == value
    assert not OBEYED.search(terminal.getvalue())


def whole(text: str) -> str:
    """Text a JSON writer accepts: no lone surrogate."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
