"""Attack tests: a JSONL append that fails (disk full, file too large, a write cut short) leaves
the file exactly as it was, so the next record is never glued to half of the failed one.

Every append-only JSONL log of lemmata is driven: the call log, the paper's Q&A history and the
Snakemake logger plugin's event log. The real failure is a file size limit (RLIMIT_FSIZE with
SIGXFSZ ignored: writes past it fail with EFBIG, as root too), in a child process.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from lemmata import layout
from lemmata.llm.calllog import CallLog, CallRecord, read_call_records
from lemmata.llm.replay import load_replay_script
from lemmata.run.events import TailReader
from lemmata.run.qa_history import ChatRecord, append_record, read_history

LONG = "x" * 20_000  # a record far larger than one short write


def call_record(text: str) -> CallRecord:
    return CallRecord(
        role="prover",
        backend="scripted",
        model="m",
        scope="s",
        messages=[],
        max_tokens=1,
        response=text,
        tokens_in=1,
        tokens_out=1,
        cache_read_tokens=None,
        cache_write_tokens=None,
        latency_s=0.0,
        attempts=1,
    )


def append_call(directory: Path, text: str) -> None:
    CallLog(directory / layout.LLM_CALLS).append(call_record(text))


def append_chat(directory: Path, text: str) -> None:
    append_record(directory, ChatRecord(role="user", content=text, paper_version=1))


def append_event(directory: Path, text: str) -> None:
    from snakemake_logger_plugin_lemmata import LogHandler

    handler = LogHandler.__new__(LogHandler)  # Snakemake's settings are not needed to append
    handler.path = str(directory / "events.jsonl")
    handler.emit(SimpleNamespace(event="progress", msg=text, getMessage=lambda: text))


#: name -> (append one record whose text is the argument, the file it appends to)
APPENDERS: dict[str, tuple[Callable[[Path, str], None], str]] = {
    "call log": (append_call, layout.LLM_CALLS),
    "paper Q&A history": (append_chat, layout.QA_HISTORY),
    "workflow events": (append_event, "events.jsonl"),
}


def texts_in(path: Path) -> list[str]:
    """Every line is a complete JSON record; the text each carries."""
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    texts = []
    for line in raw.decode("utf-8").splitlines():
        record = json.loads(line)
        texts.append(record.get("response") or record.get("content") or record.get("msg"))
    return texts


@pytest.fixture(params=sorted(APPENDERS))
def appender(request: pytest.FixtureRequest) -> tuple[Callable[[Path, str], None], str]:
    return APPENDERS[request.param]


def test_a_write_cut_short_by_a_full_disk_leaves_the_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, appender: tuple[Callable[[Path, str], None], str]
) -> None:
    append, name = appender
    append(tmp_path, "first")
    before = (tmp_path / name).read_bytes()
    real_write = os.write

    def half_then_full(fd: int, data: bytes) -> int:
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(OSError) as caught:
        append(tmp_path, LONG)
    monkeypatch.undo()
    assert caught.value.errno == errno.ENOSPC and name in str(caught.value)
    assert (tmp_path / name).read_bytes() == before
    append(tmp_path, "second")
    assert texts_in(tmp_path / name) == ["first", "second"]


REAL_LIMIT_SCRIPT = """
import errno, resource, signal, sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from test_jsonl_appends import APPENDERS
append, name = APPENDERS[sys.argv[1]]
directory = Path(sys.argv[2])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the limit, write() fails with EFBIG instead
_, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, ((directory / name).stat().st_size + 1000, hard))
try:
    append(directory, "y" * 20000)
except OSError as error:
    print(errno.errorcode[error.errno])
"""


def test_a_real_file_size_limit_leaves_the_file_as_it_was(
    tmp_path: Path, appender: tuple[Callable[[Path, str], None], str]
) -> None:
    append, name = appender
    key = next(k for k, v in APPENDERS.items() if v == appender)
    append(tmp_path, "first")
    before = (tmp_path / name).read_bytes()
    child = subprocess.run(
        [sys.executable, "-c", REAL_LIMIT_SCRIPT, key, str(tmp_path), str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == "EFBIG"  # the limit was hit: 1000 bytes of 20 000 fitted
    assert (tmp_path / name).read_bytes() == before
    append(tmp_path, "second")
    assert texts_in(tmp_path / name) == ["first", "second"]


def test_a_torn_line_left_by_an_older_version_is_not_glued_to_the_next_record(
    tmp_path: Path, appender: tuple[Callable[[Path, str], None], str]
) -> None:
    append, name = appender
    append(tmp_path, "first")
    with open(tmp_path / name, "ab") as handle:
        handle.write(b'{"role": "user", "content": "cut o')  # what an older lemmata left after a full disk
    append(tmp_path, "second")
    lines = (tmp_path / name).read_bytes().splitlines()
    assert len(lines) == 3 and json.loads(lines[2])  # the new record has a line of its own


# ----------------------------------------------------------------------------- readers


def torn_file(path: Path, complete: list[dict], torn: str) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in complete) + torn, encoding="utf-8")


GLUED = '{"role": "prover", "response": "cut o' + json.dumps({"role": "prover", "response": "glued"}) + "\n"


def test_the_call_log_reader_skips_and_reports_a_glued_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / layout.LLM_CALLS
    path.write_text(json.dumps({"response": "a"}) + "\n" + GLUED + json.dumps({"response": "b"}) + "\n")
    with caplog.at_level(logging.WARNING):
        assert [r["response"] for r in read_call_records(path)] == ["a", "b"]
    assert f"{path}:2" in caplog.text


def test_the_history_reader_reports_a_line_it_skips(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    record = ChatRecord(role="user", content="Q1", paper_version=1)
    torn_file(tmp_path / layout.QA_HISTORY, [json.loads(record.model_dump_json())], '{"role": "user", "cont\n')
    with caplog.at_level(logging.WARNING):
        assert [r.content for r in read_history(tmp_path)] == ["Q1"]
    assert f"{layout.QA_HISTORY}:2" in caplog.text


def test_the_tail_reader_reports_a_line_it_skips(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(GLUED + json.dumps({"event": "progress"}) + "\n")
    with caplog.at_level(logging.WARNING):
        assert TailReader(path).read_new() == [{"event": "progress"}]
    assert "events.jsonl" in caplog.text


def test_a_recording_with_a_torn_last_line_replays_the_calls_before_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / layout.LLM_CALLS
    torn_file(path, [{"role": "prover", "response": "A"}], '{"role": "prover", "resp')
    with caplog.at_level(logging.WARNING):
        assert [e["response"] for e in load_replay_script(path)] == ["A"]
    assert f"{path}:2" in caplog.text
