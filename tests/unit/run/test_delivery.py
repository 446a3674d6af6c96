"""The copy-out as a transaction (run/delivery.py): all files or none, no link followed, the
output folder checked."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from lemmata.run import delivery
from lemmata.run.delivery import DeliveryFailed, OutputFolderError, check_output_folder, deliver


def written_run(tmp_path: Path) -> Path:
    run_dir = tmp_path / "run"
    (run_dir / "figures").mkdir(parents=True)
    for name, text in {
        "paper_v1.tex": "new tex",
        "paper_v1.pdf": "new pdf",
        "references.bib": "new bib",
        "figures/L1.pdf": "new plot",
    }.items():
        (run_dir / name).write_text(text)
    return run_dir


def test_every_file_is_delivered_private_and_a_missing_folder_is_made(tmp_path: Path) -> None:
    output = tmp_path / "a" / "b"
    assert deliver(written_run(tmp_path), 1, output) == ["paper_v1.tex", "paper_v1.pdf", "references.bib"]
    assert (output / "figures/L1.pdf").read_text() == "new plot"
    assert (output / "lemmata-math.sty").is_file()
    assert (output / "paper_v1.tex").stat().st_mode & 0o777 == 0o600
    assert not list(output.glob(".*.tmp"))


def test_a_failure_midway_leaves_the_folder_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk at the third file: the earlier paper stays whole, no new file, no temporary."""
    output = tmp_path / "out"
    output.mkdir()
    (output / "paper_v1.tex").write_text("the user's edit")
    copy, copied = delivery._copy_to, []

    def full_disk_at_the_third(source: Path, directory: int, temporary: str) -> None:
        copied.append(source)
        if len(copied) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        copy(source, directory, temporary)

    monkeypatch.setattr(delivery, "_copy_to", full_disk_at_the_third)
    with pytest.raises(DeliveryFailed, match="No space left on device"):
        deliver(written_run(tmp_path), 1, output)
    assert [p.name for p in output.iterdir()] == ["paper_v1.tex"]
    assert (output / "paper_v1.tex").read_text() == "the user's edit"


def test_a_planted_link_is_replaced_and_its_target_untouched(tmp_path: Path) -> None:
    output = tmp_path / "out"
    output.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (output / "paper_v1.pdf").symlink_to(victim)
    (output / "figures").mkdir()
    (output / "figures/L1.pdf").symlink_to(tmp_path / "made-by-the-link")
    deliver(written_run(tmp_path), 1, output)
    assert victim.read_text() == "precious" and not (tmp_path / "made-by-the-link").exists()
    assert not (output / "paper_v1.pdf").is_symlink() and (output / "paper_v1.pdf").read_text() == "new pdf"
    assert (output / "figures/L1.pdf").read_text() == "new plot"


def test_a_figures_folder_that_is_a_link_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    output, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    output.mkdir()
    elsewhere.mkdir()
    (output / "figures").symlink_to(elsewhere)
    with pytest.raises(OutputFolderError, match="figures in the output folder is a link"):
        deliver(written_run(tmp_path), 1, output)
    assert list(elsewhere.iterdir()) == [] and sorted(p.name for p in output.iterdir()) == ["figures"]


@pytest.mark.parametrize(
    ("mode", "refused"), [(0o700, False), (0o755, False), (0o1777, False), (0o777, True), (0o770, True)]
)
def test_a_folder_others_may_write_is_refused_unless_sticky(tmp_path: Path, mode: int, refused: bool) -> None:
    output = tmp_path / "out"
    output.mkdir()
    output.chmod(mode)
    if refused:
        with pytest.raises(OutputFolderError, match="writable by other users"):
            check_output_folder(output)
    else:
        assert check_output_folder(output) == output.resolve()


def test_a_link_named_as_the_output_folder_is_resolved_once(tmp_path: Path) -> None:
    """The user's own link (~/papers -> /data/papers) is followed when the run is made; the record
    keeps the real folder, which delivery then opens without following a link."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "papers").symlink_to(real)
    assert check_output_folder(tmp_path / "papers") == real


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_a_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    output = tmp_path / "out"
    output.mkdir()
    os.chown(output, 65534, 65534)
    with pytest.raises(OutputFolderError, match="belongs to another user"):
        check_output_folder(output)
