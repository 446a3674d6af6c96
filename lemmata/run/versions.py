"""A run's paper versions: `paper_v1.tex` from the writer stage, `paper_v<n>.tex` after the
(n-1)th rewrite. A version, once written, is never rewritten."""

from __future__ import annotations

import re
from pathlib import Path

from lemmata.errors import UserError

_PAPER_VERSION = re.compile(r"paper_v([1-9][0-9]*)\.tex")


def paper_versions(run_dir: Path) -> list[int]:
    """The paper versions the run has (`paper_v<n>.tex`), in order."""
    return sorted(int(m.group(1)) for p in Path(run_dir).glob("paper_v*.tex") if (m := _PAPER_VERSION.fullmatch(p.name)))


def current_paper(run_dir: Path) -> tuple[int, str]:
    """The latest version and its LaTeX source; a clear error when the run has no paper yet."""
    versions = paper_versions(run_dir)
    if not versions:
        raise UserError(f"run {Path(run_dir).name} has no paper yet: questions can be asked once its writer "
                        f"stage has written paper_v1.tex (`lemmata status {Path(run_dir).name}` shows where it is)")
    version = versions[-1]
    return version, (Path(run_dir) / f"paper_v{version}.tex").read_text(encoding="utf-8")
