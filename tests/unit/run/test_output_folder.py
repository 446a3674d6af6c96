"""The output folder a new run delivers to (issue 54): `--output DIR` names where a user finds the
papers, for one run or many. A folder another run delivers to, or one holding a paper, is never
written over: the new run's files go to DIR/<run id>/, and the run says so. Before, `--output
./results` (the spec's default spelled out) worked once and then refused every later run."""

from __future__ import annotations

from pathlib import Path

import pytest

from lemmata.run.create import create_new_run
from lemmata.run.delivery import OutputFolderError
from lemmata.run.record import DataHome, load_record

ENVIRON = {"LLM_BACKEND": "local", "LOCAL_LLM_BASE_URL": "http://127.0.0.1:9/v1", "SEARCH_TOOLS": "false"}


def started(home: DataHome, output: Path | None):
    return create_new_run(
        home, "prove", "the sum of two even integers is even", output, None, ENVIRON, lambda _: Path()
    )


def test_a_free_folder_receives_the_paper_itself(tmp_path: Path) -> None:
    new = started(DataHome(tmp_path / "home"), tmp_path / "papers")
    assert Path(load_record(new.run_dir).output_dir) == (tmp_path / "papers").resolve()
    assert new.output_note == ""


def test_another_runs_folder_gives_the_next_run_a_folder_inside_it_and_says_so(tmp_path: Path) -> None:
    home = DataHome(tmp_path / "home")
    first = started(home, tmp_path / "results")
    second = started(home, tmp_path / "results")
    folder = (tmp_path / "results").resolve()
    assert Path(load_record(first.run_dir).output_dir) == folder
    assert Path(load_record(second.run_dir).output_dir) == folder / second.run_dir.name
    assert second.output_note == (
        f"the output folder {folder} is the output folder of run {first.run_dir.name}: this run's paper goes "
        f"to {folder / second.run_dir.name}"
    )


def test_a_folder_holding_a_paper_keeps_it_and_the_run_goes_inside(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "paper_v1.pdf").write_bytes(b"%PDF a paper of mine")
    new = started(DataHome(tmp_path / "home"), tmp_path / "mine")
    assert Path(load_record(new.run_dir).output_dir) == (tmp_path / "mine" / new.run_dir.name).resolve()
    assert "holds paper_v1.pdf already" in new.output_note
    assert (tmp_path / "mine" / "paper_v1.pdf").read_bytes() == b"%PDF a paper of mine"


def test_an_unsafe_folder_is_still_refused_before_any_work(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir(mode=0o777)
    (tmp_path / "shared").chmod(0o777)  # writable by others, not sticky
    with pytest.raises(OutputFolderError, match="writable by other users"):
        started(DataHome(tmp_path / "home"), tmp_path / "shared")
    assert not (tmp_path / "home" / "runs").exists() or not any((tmp_path / "home" / "runs").iterdir())
