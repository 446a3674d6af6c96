"""Preloaded preambles: lemmata's fixed preambles read once per machine, not at every pdflatex pass.

Every paper lemmata writes starts with the same preamble (preamble.tex) and every plot with the
same few lines; reading them (amsmath, hyperref, cleveref, pgfplots, the fonts) was about half of
each pass: 0.28 s of a paper pass, 0.35 s of a plot (2 cores, 2026-11-27). Here such a preamble
is compiled once into a TeX format with mylatexformat (TeX Live's latex-extra), kept in
lemmata's cache, and a pass loads it with `-fmt`: 0.13-0.16 s a pass.

A format skips the document's lines up to `\\begin{document}` unread, so it is used only for a
document whose text up to that line is exactly the preamble it was made from (`applies`);
anything else (a hand-edited paper, a new preamble) compiles as before. The cache key holds the
preamble, its support files and the TeX installation (the engine and its LaTeX format, which TeX
Live's updates rebuild), so an update makes a new format instead of loading a stale one. A format
that cannot be made (no mylatexformat, no TeX) is remembered as such, and the passes run without.
The format is made in a TeX box like every other TeX run (texbox.py).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

from lemmata.files import write_bytes_atomically
from lemmata.isolation.box import BoxUnavailable
from lemmata.latex.texbox import LOG_TAIL_BYTES, PDF_MAX_BYTES, TexBoxError, run_tex_once
from lemmata.machine_cache import private_cache

T = TypeVar("T")
BEGIN_DOCUMENT = "\\begin{document}"
FORMAT_TIMEOUT = 60.0
#: How a failure TeX itself reports begins; only such a failure is remembered (a box that could
#: not start, a pass out of time under load, may go better next time).
TEX_REFUSED = "pdftex -ini exited"
#: Where the formats are kept: a machine's cache, not research data (machine_cache.py).
CACHE_NAME = "tex-formats"
_ERROR_LINE = re.compile(r"^(?:! |[^\s:]+:\d+: )")
_BUILD_LOCK = threading.Lock()  # two plots drawn at once make the format once


@dataclass(frozen=True)
class Preamble:
    """A fixed preamble: `text` is everything a document holds before its `\\begin{document}`
    line; `support` the files of ours it loads from beside the .tex (lemmata-math.sty)."""

    name: str
    text: str
    support: tuple[Path, ...] = ()

    def applies(self, tex: str) -> bool:
        """Whether `tex` is a document of this preamble: the format may stand in for its lines."""
        return tex.startswith(self.text) and tex[len(self.text) :].startswith(BEGIN_DOCUMENT)


def preloaded(preamble: Preamble) -> Path | None:
    """The format file of `preamble`, made now if this machine has none yet; None when it cannot
    be made here (the passes then read the preamble as usual)."""
    installation = tex_installation()
    if installation is None:
        return None
    key = hashlib.sha256(
        "\0".join(
            [preamble.name, preamble.text, installation, *(p.read_text("utf-8") for p in preamble.support)]
        ).encode()
    ).hexdigest()[:16]
    with _BUILD_LOCK:
        # None: a cache we cannot make, or one another user could write (a format planted there
        # would write its text into our papers): no format, nothing else lost
        directory = private_cache(CACHE_NAME)
        if directory is None:
            return None
        made, failed = directory / f"{preamble.name}-{key}.fmt", directory / f"{preamble.name}-{key}.failed"
        if made.is_file():
            return made
        if failed.is_file():
            return None
        content, why_not = _make_format(preamble)
        try:
            if content is None:
                if why_not.startswith(TEX_REFUSED):  # TeX's own answer: it would give it again
                    write_bytes_atomically(failed, why_not.encode("utf-8", "replace"))
                return None
            for stale in directory.glob(f"{preamble.name}-*"):  # an earlier installation's
                stale.unlink(missing_ok=True)
            write_bytes_atomically(made, content)
        except OSError:  # a cache we cannot write: no format, nothing else lost
            return None
    return made


class FormatNotLoaded(Exception):
    """pdflatex stopped before it opened the document's log: the format could not be loaded."""


def with_format(preamble: Preamble, tex: str, attempt: Callable[[Path | None], T]) -> T:
    """`attempt(format)` with the preamble's format when `tex` is a document of that preamble, else
    `attempt(None)`; a format TeX could not load (FormatNotLoaded) is removed, to be made again at
    the next need, and the document tried without it."""
    format_file = preloaded(preamble) if preamble.applies(tex) else None
    if format_file is not None:
        try:
            return attempt(format_file)
        except FormatNotLoaded:
            format_file.unlink(missing_ok=True)
    return attempt(None)


def pdflatex_options(format_file: Path | None) -> tuple[str, ...]:
    """The option that makes pdflatex load the format, copied beside the .tex under its own name."""
    return (f"-fmt={Path(format_file).stem}",) if format_file is not None else ()


@lru_cache(maxsize=1)
def tex_installation() -> str | None:
    """What a format depends on besides its preamble: the engine and its LaTeX format (rebuilt by
    every TeX Live update); None without pdftex."""
    engine = shutil.which("pdftex")
    if engine is None:
        return None
    try:
        found = subprocess.run(
            ["kpsewhich", "-engine=pdftex", "pdflatex.fmt"], capture_output=True, text=True, timeout=30, check=False
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    if not found:
        return None
    identities = []
    for path in (os.path.realpath(engine), os.path.realpath(found)):
        status = os.stat(path)
        identities.append(f"{path}:{status.st_size}:{status.st_mtime_ns}")
    return "\n".join(identities)


def _make_format(preamble: Preamble) -> tuple[bytes | None, str]:
    """(the format's bytes, "") or (None, why not): mylatexformat dumps the preamble at its
    `\\begin{document}`."""
    source = f"{preamble.name}.tex"
    files: dict[str, Path | str] = {
        source: preamble.text + BEGIN_DOCUMENT + "\n\\end{document}\n",
        **{path.name: path for path in preamble.support},
    }
    command = [
        "pdftex",
        "-ini",
        "-interaction=nonstopmode",
        "-halt-on-error",
        "-file-line-error",
        f"-jobname={preamble.name}",
        "&pdflatex",
        "mylatexformat.ltx",
        source,
    ]
    wanted = {f"{preamble.name}.fmt": (PDF_MAX_BYTES, False), f"{preamble.name}.log": (LOG_TAIL_BYTES, True)}
    try:
        returncode, timed_out, found = run_tex_once(files, command, FORMAT_TIMEOUT, wanted)
    except (TexBoxError, BoxUnavailable) as error:
        return None, f"TeX could not run: {error}"
    content = found[f"{preamble.name}.fmt"]
    if returncode != 0 or timed_out or not content:
        log = (found[f"{preamble.name}.log"] or b"").decode("latin-1")
        if timed_out:
            return None, f"pdftex -ini timed out after {FORMAT_TIMEOUT:g} s"
        first_error = next((line for line in log.splitlines() if _ERROR_LINE.match(line)), "no error in its log")
        return None, f"{TEX_REFUSED} with status {returncode}: {first_error}"
    return content, ""
