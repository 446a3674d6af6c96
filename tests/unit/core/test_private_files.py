"""The data home's privacy helpers (lemmata/private_files.py): folders made 0700 whatever the umask,
a loose home made private once with one line, the user's umask kept for what is delivered."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

import pytest

from lemmata.private_files import (
    USER_UMASK_VARIABLE,
    make_data_home_private,
    make_files_private,
    private_directory,
    user_umask,
)


@pytest.fixture
def umask_022(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(USER_UMASK_VARIABLE, raising=False)
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_files_made_after_make_files_private_are_the_users_alone_and_the_users_umask_is_kept(tmp_path, umask_022):
    make_files_private()
    (tmp_path / "calls.jsonl").write_text("{}\n")
    (tmp_path / "logs").mkdir()
    assert (mode(tmp_path / "calls.jsonl"), mode(tmp_path / "logs")) == (0o600, 0o700)
    assert user_umask() == 0o022 and os.environ[USER_UMASK_VARIABLE] == "022"
    make_files_private()  # a process lemmata started: the user's umask is still the first one's
    assert user_umask() == 0o022


def test_private_directory_makes_every_missing_folder_0700_at_any_umask(tmp_path, umask_022):
    tmp_path.chmod(0o755)
    run_logs = private_directory(tmp_path / "home" / "runs" / "r1" / "logs")
    for folder in (run_logs, *list(run_logs.parents)[:3]):
        assert mode(folder) == 0o700, folder
    assert mode(tmp_path) == 0o755  # a folder that existed is left as it was


def test_a_loose_home_is_made_private_once_with_one_line(tmp_path, capsys):
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o755)
    make_data_home_private(home)
    assert mode(home) == 0o700
    assert capsys.readouterr().err == (
        f"lemmata: made the data directory {home} private (mode 755 -> 700): "
        "it holds every prompt and answer of your runs\n"
    )
    make_data_home_private(home)
    make_data_home_private(tmp_path / "none yet")  # nothing to do, nothing said
    (tmp_path / "a file").write_text("")
    make_data_home_private(tmp_path / "a file")
    assert capsys.readouterr().err == ""
