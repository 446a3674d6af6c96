"""One trial pdflatex pass over a document, for the writer's own compile check.

Not a rescue compile: the real compile (compile.py: pdflatex, bibtex, pdflatex, pdflatex) is
unchanged. The writer runs this on the paper it assembled, before it hands it on, to learn
whether it compiles and where it breaks: `-draftmode` (no PDF written), in a scratch directory
in a TeX box of its own (`texbox.py`) with the same protections as the real compile.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from lemmata.isolation.box import BoxUnavailable
from lemmata.latex import formats
from lemmata.latex.compile import PDFLATEX_FLAGS, parse_latex_log
from lemmata.latex.document import PAPER_PREAMBLE, support_files
from lemmata.latex.texbox import LOG_TAIL_BYTES, TexBoxError, run_tex_once

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
    """The errors of one `pdflatex -draftmode` pass over `tex` (empty: it compiles), with lemmata's
    preamble preloaded when `tex` has it (formats.py); a format TeX cannot load is forgotten."""
    return formats.with_format(PAPER_PREAMBLE, tex, lambda preloaded: _trial(tex, timeout, preloaded))


def _trial(tex: str, timeout: float, preloaded: Path | None) -> list[TrialError]:
    files: dict[str, Path | str] = {f"{TRIAL_STEM}.tex": tex, **{path.name: path for path in support_files()}}
    if preloaded is not None:
        files[preloaded.name] = preloaded
    command = ["pdflatex", "-draftmode", *PDFLATEX_FLAGS, *formats.pdflatex_options(preloaded), f"{TRIAL_STEM}.tex"]
    try:
        returncode, timed_out, found = run_tex_once(
            files, command, timeout, {f"{TRIAL_STEM}.log": (LOG_TAIL_BYTES, True)}
        )
    except (TexBoxError, BoxUnavailable) as error:  # no TeX to try with: the real compile will say why
        return [TrialError(f"TeX could not run: {error}", None)]
    if returncode != 0 and preloaded is not None and found[f"{TRIAL_STEM}.log"] is None:
        raise formats.FormatNotLoaded(TRIAL_STEM)
    if timed_out:
        return [
            TrialError(
                f"pdflatex timed out after {timeout:g} s on {TRIAL_STEM}.tex (an endless macro loop?)",
                None,
                timed_out=True,
            )
        ]
    if returncode == 0:
        return []
    errors, _ = parse_latex_log((found[f"{TRIAL_STEM}.log"] or b"").decode("latin-1"))
    return [_trial_error(error) for error in errors] or [TrialError(f"pdflatex exited with status {returncode}", None)]


def _trial_error(message: str) -> TrialError:
    message = " ".join(message.split())
    found = _LINE.match(message)  # where TeX noticed: at or after the cause (a .sty line names none of ours)
    return TrialError(message, int(found.group("line")) if found else None)
