"""Faults of the machine, on the real CLI (issue 35, finding 5 and 6): a data directory that is
read-only, a regular file or under /proc; a .env that is not UTF-8; an unwritable --log-dir; a disk
that fills up while a run writes; inputs too large or not files. Each is one redacted line
`lemmata: error: ...` naming the file and what to do, exit 2, never a traceback; what was lost:
nothing (no run directory half-made where none could be, a run stopped by a full disk resumes to
completion once there is space)."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import cli_environment

from lemmata.cli.check_cmd import MAX_CHECK_FILE_BYTES
from lemmata.run.record import load_record
from support import even_sum_session
from support.fake_llm_server import FakeLLMServer, RecordedRequest
from support.fake_search_servers import FakeSearchServers

KEY = "sk-ant-api03-fault-test-key-0123456789abcdef"
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs (a read-only or full disk) needs root")


def lemmata(
    args: list[str], home: Path, cwd: Path, timeout: float = 60, **env: str
) -> subprocess.CompletedProcess[str]:
    """The real CLI with LEMMATA_HOME at `home`, which nothing prepares (cli_environment writes into
    the home it is given: that is a scratch one here)."""
    environment = {**cli_environment(cwd / "scratch-home", **env), "LEMMATA_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "lemmata", *args],
        env=environment,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def the_error(result: subprocess.CompletedProcess[str]) -> str:
    """The one `lemmata: error:` line of a run that exited 2, with no traceback and no key."""
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and KEY not in result.stderr + result.stdout, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("lemmata: error: ")]
    assert len(errors) == 1, result.stderr
    return errors[0]


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[callable]:
    """mount(size, read_only) -> a fresh tmpfs folder; every one unmounted after the test."""
    mounted: list[Path] = []

    def mount(size: str = "1m", read_only: bool = False) -> Path:
        point = tmp_path / f"tmpfs{len(mounted)}"
        point.mkdir()
        options = f"size={size},mode=0755" + (",ro" if read_only else "")
        subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(point)], check=True)
        mounted.append(point)
        return point

    try:
        yield mount
    finally:
        for point in reversed(mounted):
            subprocess.run(["umount", "-l", str(point)], check=False)


@needs_root
def test_a_read_only_data_directory_is_one_line_naming_it(tmp_path, tmpfs):
    home = tmpfs(read_only=True) / "home"
    line = the_error(lemmata(["prove", "x"], home, tmp_path, LLM_BACKEND="local", VENDORA_API_KEY=KEY))
    assert str(home) in line and "Read-only file system" in line and f"LEMMATA_HOME is {home}" in line


def test_a_data_directory_that_is_a_regular_file_is_one_line_naming_it(tmp_path):
    home = tmp_path / "home"
    home.write_text("a file, not a folder")
    line = the_error(lemmata(["prove", "x"], home, tmp_path, LLM_BACKEND="local", VENDORA_API_KEY=KEY))
    assert str(home) in line and "not a folder" in line
    assert home.read_text() == "a file, not a folder"  # lost: nothing


def test_a_data_directory_under_proc_is_one_line_naming_it(tmp_path):
    line = the_error(lemmata(["prove", "x"], Path("/proc/lemmata-home"), tmp_path, LLM_BACKEND="local"))
    assert "/proc/lemmata-home" in line and "LEMMATA_HOME" in line


def test_a_dotenv_that_is_not_utf8_is_one_line_naming_it_and_no_key(tmp_path):
    (tmp_path / ".env").write_bytes(f"VENDORA_API_KEY={KEY}\nGATE_MODE=\xff\xfeauto\n".encode("latin-1"))
    line = the_error(lemmata(["prove", "x"], tmp_path / "home", tmp_path))
    assert str(tmp_path / ".env") in line and "not UTF-8" in line
    assert not (tmp_path / "home" / "runs").exists()


@needs_root
def test_check_with_an_unwritable_log_dir_says_so_before_any_call(tmp_path, tmpfs):
    (tmp_path / "s.txt").write_text("1 + 1 = 2")
    log_dir = tmpfs(read_only=True) / "logs"
    result = lemmata(["check", "s.txt", "--log-dir", str(log_dir)], tmp_path / "home", tmp_path, LLM_BACKEND="local")
    line = the_error(result)
    assert f"--log-dir {log_dir}" in line and "Read-only file system" in line


@pytest.mark.parametrize("name", ["/dev/zero", "big.txt", "."])
def test_check_refuses_inputs_too_large_or_not_files_before_reading_them(tmp_path, name):
    """`check stmt.txt /dev/zero` reached 8 GB of memory in 13 s; a 50 MB proof went to the model."""
    (tmp_path / "s.txt").write_text("1 + 1 = 2")
    with open(tmp_path / "big.txt", "wb") as big:
        big.truncate(MAX_CHECK_FILE_BYTES + 1)  # sparse: no disk used
    # Reading /dev/zero would never end: the command's 30 s timeout would fail the test.
    result = lemmata(["check", "s.txt", name], tmp_path / "home", tmp_path, timeout=30, LLM_BACKEND="local")
    if name == ".":  # click's own check: a folder is a usage error
        assert result.returncode == 2 and "is a directory" in result.stderr
        return
    line = the_error(result)
    assert "PROOF_FILE" in line and ("not a regular file" in line or f"{MAX_CHECK_FILE_BYTES:,} bytes" in line)


@needs_root
def test_a_disk_that_fills_up_during_a_run_is_one_line_and_the_run_resumes_to_completion(tmp_path, tmpfs):
    """The disk of LEMMATA_HOME fills up at the run's first model call: the run ends with one line
    naming the file that could not be written (exit 2); once there is space, `lemmata resume`
    completes it. Lost: nothing."""
    home = tmpfs(size="64m") / "home"
    filler = home.parent / "filler"

    def fill_the_disk(request: RecordedRequest) -> None:
        if filler.exists():
            return
        with open(filler, "wb") as handle:
            try:
                while True:
                    handle.write(b"\0" * 65536)
                    handle.flush()
            except OSError as exc:
                assert exc.errno == errno.ENOSPC

    with FakeLLMServer() as llm, FakeSearchServers() as search:
        even_sum_session.install(llm)
        env = {"LLM_BACKEND": "local", "LOCAL_LLM_BASE_URL": llm.openai_base_url, **search.settings_values()}
        llm.before_answer = fill_the_disk
        first = lemmata(["prove", even_sum_session.TASK, "-o", str(tmp_path / "out")], home, tmp_path, 300, **env)
        line = the_error(first)
        assert "No space left on device" in line and "lemmata resume" in line
        llm.before_answer = None
        filler.unlink()
        [run_dir] = (home / "runs").iterdir()
        resumed = lemmata(["resume", run_dir.name], home, tmp_path, 300, **env)
        assert resumed.returncode == 0, resumed.stderr
        assert load_record(run_dir).status == "completed"
        assert (tmp_path / "out" / "paper_v1.pdf").is_file()
