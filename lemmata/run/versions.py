"""A run's paper versions: `paper_v1.tex` from the writer stage, `paper_v<n>.tex` after the
(n-1)th rewrite. A version, once written, is never rewritten."""

from __future__ import annotations

from pathlib import Path

from lemmata import layout
from lemmata.errors import UserError


def paper_versions(run_dir: Path) -> list[int]:
    """The paper versions the run has (`paper_v<n>.tex`), in order."""
    return sorted(n for p in Path(run_dir).glob(layout.paper_tex("*")) if (n := layout.version_of_paper(p.name)))


def current_paper(run_dir: Path) -> tuple[int, str]:
    """The latest version and its LaTeX source; a clear error when the run has no paper yet."""
    versions = paper_versions(run_dir)
    if not versions:
        raise UserError(
            f"run {Path(run_dir).name} has no paper yet: questions can be asked once its writer "
            f"stage has written paper_v1.tex (`lemmata status {Path(run_dir).name}` shows where it is)"
        )
    version = versions[-1]
    return version, (Path(run_dir) / layout.paper_tex(version)).read_text(encoding="utf-8")
