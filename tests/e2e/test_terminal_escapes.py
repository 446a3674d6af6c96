"""Model and provider text on the researcher's terminal (issue 53, item 1), under a real
pseudo-terminal: the escape sequences a model or a provider writes reach the screen as visible
text, never as commands. No clipboard written (OSC 52), no window title set (OSC 0), no line
overwritten (carriage return and erase-line) on the screen the researcher approves from, no
8-bit control (C1 CSI), no text reversed by a bidirectional override."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
import pexpect
from conftest import cli_environment

from e2e.test_paper_qa_cli import SESSION, make_run
from support import even_sum_session
from support.fake_llm_server import FakeLLMServer, Fault
from support.fake_search_servers import FakeSearchServers, unused_port

#: What a hostile model or provider writes: each piece a command a common terminal obeys.
HOSTILE = (
    "The proof is fine."
    "\x1b]52;c;cm0gLXJmIH4K\x07"  # OSC 52: "rm -rf ~" into the clipboard
    "\x1b]0;lemmata: all verified\x07"  # OSC 0: the window's title
    "\r\x1b[KL1 verified (Coq)"  # back to the line's start, erase it, write a lie
    "\x9b2J"  # C1 CSI (8-bit): clear the screen
    "\u202edeifirev\u202c"  # a right-to-left override: the letters read "verified"
    "\x08\x08\x08\x7f"  # backspaces and DEL
)
#: Each command as the researcher sees it instead: visible, in Python's escape notation.
SHOWN = ["\\u001b]52;c;cm0gLXJmIH4K\\u0007", "\\u001b]0;lemmata: all verified\\u0007", "\\u001b[KL1 verified (Coq)"]
SHOWN_TOO = ["\\u009b2J", "\\u202edeifirev\\u202c", "\\u0008\\u0008\\u0008\\u007f"]
#: What none of the hostile text may leave on the terminal.
COMMANDS = ["\x1b]", "\x07", "\x9b", "\u202e", "\u202c", "\x08", "\x7f", "\r\x1b[KL1 verified"]


def spawn(args: list[str], env: dict[str, str], cwd: Path) -> pexpect.spawn:
    return pexpect.spawn(sys.executable, ["-m", "lemmata", *args], env=env, cwd=str(cwd), encoding="utf-8", timeout=180)


def screen_of(terminal: pexpect.spawn) -> str:
    """Everything the process wrote to its terminal, to its end."""
    terminal.expect(pexpect.EOF)
    terminal.close()
    return terminal.before


def assert_shown_not_obeyed(screen: str) -> None:
    for command in COMMANDS:
        assert command not in screen, f"{command!r} reached the terminal: {screen!r}"
    for shown in SHOWN + SHOWN_TOO:
        assert shown in screen, f"{shown!r} is not shown: {screen!r}"


def test_a_hostile_answer_to_a_question_is_shown_not_obeyed(tmp_path: Path):
    with FakeLLMServer() as llm:
        llm.enqueue("qa", HOSTILE)
        home = tmp_path / "home"
        make_run(home, LLM_BACKEND="local", LOCAL_LLM_BASE_URL=llm.openai_base_url)
        terminal = spawn(["ask", SESSION, "Is the proof right?"], cli_environment(home), tmp_path)
        screen = screen_of(terminal)
    assert terminal.exitstatus == 0, screen
    assert_shown_not_obeyed(screen)
    assert "\\r\\u001b[KL1 verified (Coq)" in screen
    assert "\x1b" not in screen and "\r" not in screen.replace("\r\n", "\n")  # `ask` draws nothing itself


def test_a_providers_hostile_error_message_is_shown_not_obeyed(tmp_path: Path):
    with FakeLLMServer() as llm:
        llm.inject_fault("qa", Fault(status=400, message=HOSTILE))
        home = tmp_path / "home"
        make_run(home, LLM_BACKEND="local", LOCAL_LLM_BASE_URL=llm.openai_base_url)
        terminal = spawn(["ask", SESSION, "Is the proof right?"], cli_environment(home), tmp_path)
        screen = screen_of(terminal)
    assert terminal.exitstatus == 1 and "lemmata: error: model call for role 'qa'" in screen, screen
    assert_shown_not_obeyed(screen)
    assert "\x1b" not in screen


def test_a_hostile_sketch_cannot_overwrite_the_theory_review(tmp_path: Path):
    """The sketch is the model's text shown at the theory review, above the statuses the
    researcher approves: CR + erase-line there once rewrote "unverified" as "verified (Coq)".
    The status line's own erase-line, lemmata's, still redraws."""
    with FakeLLMServer() as llm, FakeSearchServers() as search:
        even_sum_session.install(llm)
        llm.set_default("sketch", even_sum_session.SKETCH + HOSTILE)
        env = cli_environment(
            tmp_path / "home", LLM_BACKEND="local", LOCAL_LLM_BASE_URL=llm.openai_base_url, **search.settings_values()
        )
        terminal = spawn(["prove", even_sum_session.TASK], env, tmp_path)
        terminal.expect(r"Approve the lemma chain and continue to the writer\? \[Y/n\]: ")
        screen = terminal.before
        terminal.sendintr()  # pauses the run at the gate: what was shown is what is tested
        terminal.expect(pexpect.EOF)
        terminal.close()
    assert "Sketch (the model's summary" in screen
    assert_shown_not_obeyed(screen)
    assert "\r\x1b[K[00:0" in screen  # lemmata's own status line still redraws in place


def test_the_servers_log_on_a_terminal_is_plain_text(tmp_path: Path):
    """uvicorn colours its log on a terminal; through the escaping streams the colours would show
    as `\\u001b[32m` litter, so `lemmata serve` logs without them. A client's path is quoted by
    uvicorn itself (`%1B`), never written raw."""
    port = unused_port()
    terminal = spawn(["serve", "--port", str(port)], cli_environment(tmp_path / "home"), tmp_path)
    try:
        terminal.expect("Uvicorn running on")
        answer = httpx.get(f"http://127.0.0.1:{port}/api/runs/%1b]0;pwned%07", timeout=10, trust_env=False)
        terminal.expect("401 Unauthorized")
        screen = terminal.before + terminal.after
    finally:
        terminal.terminate(force=True)
    assert answer.status_code == 401
    assert "INFO:" in screen and "\x1b" not in screen and "\\u001b" not in screen, screen
