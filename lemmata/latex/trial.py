"""One trial pdflatex pass over a document, for the writer's own compile check.

Not a rescue compile: the real compile (compile.py: pdflatex, bibtex, pdflatex, pdflatex) is
unchanged. The writer runs this on the paper it assembled, before it hands it on, to learn
whether it compiles and where it breaks: `-draftmode` (no PDF written), in a scratch directory
that is removed afterwards, with the same protections as the real compile (no shell escape,
paranoid file access, a timeout, a fresh TEXMFVAR).
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from lemmata.latex.compile import PDFLATEX_FLAGS, LatexCompileError, parse_latex_log, run_sandboxed, sandbox_environment
from lemmata.latex.document import support_files

TRIAL_STEM = "paper"
_LINE = re.compile(r"^[^:\n]*\.tex:(?P<line>\d+): ")


@dataclass(frozen=True)
class TrialError:
    """One error of a trial pass; `line` in the trial document, None when TeX named none."""

    message: str
    line: int | None
    timed_out: bool = False

    @property
    def detail(self) -> str:
        """The message without its file and line: what a reader (or the model) can act on."""
        return _LINE.sub("", self.message)


def pdflatex_available() -> bool:
    return shutil.which("pdflatex") is not None


def trial_compile(tex: str, *, timeout: float) -> list[TrialError]:
    """The errors of one `pdflatex -draftmode` pass over `tex` (empty: it compiles)."""
    with tempfile.TemporaryDirectory(prefix="lemmata-trial-") as scratch:
        directory = Path(scratch)
        (directory / f"{TRIAL_STEM}.tex").write_text(tex, encoding="utf-8")
        for support in support_files():
            shutil.copyfile(support, directory / support.name)
        environment = sandbox_environment(directory / "texmf-var")
        command = ["pdflatex", "-draftmode", *PDFLATEX_FLAGS, f"{TRIAL_STEM}.tex"]
        try:
            returncode = run_sandboxed(command, directory, environment, timeout)
        except LatexCompileError as error:  # the timeout: an endless macro loop
            return [TrialError(str(error), None, timed_out=True)]
        if returncode == 0:
            return []
        log = directory / f"{TRIAL_STEM}.log"
        errors, _ = parse_latex_log(log.read_text(encoding="latin-1") if log.is_file() else "")
    return [_trial_error(error) for error in errors] or [TrialError(f"pdflatex exited with status {returncode}", None)]


def _trial_error(message: str) -> TrialError:
    message = " ".join(message.split())
    found = _LINE.match(message)  # where TeX noticed: at or after the cause (a .sty line names none of ours)
    return TrialError(message, int(found.group("line")) if found else None)
