"""What the boxes show of Python (isolation/box.py `interpreter_paths`, `python_paths`): the way
from the command's interpreter to its file, the standard library, libpython; never the folder
the interpreter sits in nor its prefix, which for a distribution's Python are /usr/bin and /usr
(every program of the system: the attack tests in tests/e2e/test_sandbox_attacks.py)."""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

from lemmata.isolation.box import _links_to, interpreter_paths, python_paths


def test_each_link_on_the_way_to_the_interpreter_is_shown(tmp_path: Path) -> None:
    real = tmp_path / "base" / "bin" / "python3.11"
    real.parent.mkdir(parents=True)
    real.write_text("")
    (tmp_path / "base" / "bin" / "python3").symlink_to("python3.11")  # a version manager's link
    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python3").symlink_to(tmp_path / "base" / "bin" / "python3")
    (venv_bin / "python").symlink_to("python3")
    assert _links_to(str(venv_bin / "python")) == [
        str(venv_bin / "python"),
        str(venv_bin / "python3"),
        str(tmp_path / "base" / "bin" / "python3"),
        str(real),
    ]


def test_the_interpreter_s_folder_and_prefix_are_not_shown_whole() -> None:
    shown = interpreter_paths(os.path.realpath(sys.executable))
    assert os.path.realpath(sys.executable) in shown
    assert sysconfig.get_path("stdlib") in shown
    assert os.path.dirname(os.path.realpath(sys.executable)) not in shown
    assert sys.base_prefix not in shown and sys.base_exec_prefix not in shown


def test_a_virtualenv_is_shown_whole_and_its_base_is_not() -> None:
    shown = python_paths()
    assert sysconfig.get_path("purelib") in shown
    if sys.prefix != sys.base_prefix:
        assert sys.prefix in shown
    assert sys.base_prefix not in shown
