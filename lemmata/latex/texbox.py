"""TeX in a box: pdflatex and bibtex see only their build directory and the TeX trees.

Model-written LaTeX is untrusted: `\\input` or `\\openin` of a file name that kpathsea expands
(`^^24HOME/...`, `$LEMMATA_HOME/...`) once printed other runs' papers and dotfiles into the
PDF, and an `\\openout` loop wrote hundreds of MB. Here TeX runs in a box (`lemmata.isolation`)
whose file system holds the TeX trees read-only and a size-capped tmpfs as its build
directory, with an environment built from nothing but TeX's own settings (paranoid
openin/openout, no shell escape, a HOME and TEXMFVAR inside the build). The build directory
lives as long as the box: `tex_driver.py` runs the passes in it on request and hands back, with
size caps, only what the caller asks for (the PDF, the end of the log). Nothing TeX writes
reaches the host's disk but that, and it is gone when the box ends, after a failure too.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from lemmata.isolation.box import Box, BoxLimits, BoxSpec, interpreter_paths, open_box
from lemmata.isolation.bubblewrap import SETPRIV, system_library_paths
from lemmata.isolation.staging import open_to_the_box, staging_folder
from lemmata.latex import tex_driver

DRIVER_SOURCE = Path(tex_driver.__file__)
DRIVER_NAME = "_lemmata_tex_driver.py"
BUILD = "/box/build"
#: Where TeX Live keeps its trees, configuration and formats on Debian: all TeX may read.
TEX_TREES = (
    "/usr/bin",
    "/etc/alternatives",
    "/usr/share/texlive",
    "/usr/share/texmf",
    "/usr/local/share/texmf",
    "/etc/texmf",
    "/var/lib/texmf",
    "/usr/share/tex-common",
    "/usr/share/fonts",
)
#: Everything TeX may write together: the build directory's tmpfs. A paper with its figures is a
#: few MB; an \openout loop stops here ("No space left on device").
BUILD_BYTES = 256 << 20
#: Per process (a pass is one): the pass timeout bounds its time; the CPU limit only backs it up.
TEX_LIMITS = BoxLimits(
    cpu_seconds=600,
    memory_bytes=4 << 30,
    processes=16,
    scratch_bytes=BUILD_BYTES,
    file_bytes=BUILD_BYTES,
    open_files=256,
)
#: At most this much of a log is read: its end, where the errors are.
LOG_TAIL_BYTES = 1 << 20
PDF_MAX_BYTES = BUILD_BYTES
#: Time the driver may take beyond a command's own timeout (starting, answering).
DRIVER_GRACE_SECONDS = 15.0


class TexBoxError(Exception):
    """The box or its driver failed (not TeX: TeX's failures are return codes)."""


class TexBox:
    """A running TeX box: `run` a command in the build directory, `read` a file of it."""

    def __init__(self, box: Box) -> None:
        self._box = box
        assert box.process.stdin is not None and box.process.stdout is not None
        self._stdin = box.process.stdin
        self._stdout = box.process.stdout.fileno()
        self._buffer = bytearray()

    def load(self) -> None:
        """Have the driver copy the inputs into the build directory, and wait until it has."""
        self._send({"op": "load"})
        if not self._receive_header(DRIVER_GRACE_SECONDS).get("ready"):
            raise TexBoxError("the TeX box did not start")

    def run(self, argv: Sequence[str], timeout: float) -> tuple[int, bool]:
        """(return code, timed out) of `argv` run in the build directory."""
        self._send({"op": "run", "argv": list(argv), "timeout": timeout})
        reply = self._receive_header(timeout + DRIVER_GRACE_SECONDS)
        return int(reply["returncode"]), bool(reply["timed_out"])

    def read(self, name: str, limit: int, *, tail: bool = False) -> bytes | None:
        """At most `limit` bytes of a file of the build directory (its end when `tail`); None when missing."""
        self._send({"op": "read", "name": name, "limit": limit, "tail": tail})
        reply = self._receive_header(DRIVER_GRACE_SECONDS)
        if reply.get("missing"):
            return None
        size = int(reply["size"])
        if not 0 <= size <= limit:
            raise TexBoxError(f"the TeX box announced {size} bytes of {name}, more than the {limit} asked for")
        return self._receive_bytes(size, DRIVER_GRACE_SECONDS)

    def _send(self, request: dict) -> None:
        try:
            self._stdin.write(json.dumps(request).encode() + b"\n")
            self._stdin.flush()
        except OSError as error:
            raise TexBoxError(f"the TeX box stopped answering ({error.strerror})" + self._last_words()) from None

    def _receive_header(self, seconds: float) -> dict:
        deadline = time.monotonic() + seconds
        while b"\n" not in self._buffer:
            self._fill(deadline, 1 << 16)
        line, _, rest = bytes(self._buffer).partition(b"\n")
        self._buffer = bytearray(rest)
        try:
            reply = json.loads(line)
        except json.JSONDecodeError:
            raise TexBoxError("the TeX box answered garbage") from None
        if not isinstance(reply, dict):
            raise TexBoxError("the TeX box answered garbage")
        return reply

    def _receive_bytes(self, size: int, seconds: float) -> bytes:
        deadline = time.monotonic() + seconds
        while len(self._buffer) < size:
            self._fill(deadline, size - len(self._buffer))
        data, self._buffer = bytes(self._buffer[:size]), self._buffer[size:]
        return data

    def _fill(self, deadline: float, wanted: int) -> None:
        remaining = deadline - time.monotonic()
        with selectors.DefaultSelector() as selector:
            selector.register(self._stdout, selectors.EVENT_READ)
            if remaining <= 0 or not selector.select(remaining):
                raise TexBoxError("the TeX box did not answer in time")
        chunk = os.read(self._stdout, max(wanted, 1 << 16))
        if not chunk:
            raise TexBoxError("the TeX box ended unexpectedly" + self._last_words())
        self._buffer += chunk

    def _last_words(self) -> str:
        """The end of what the box wrote on stderr (bwrap's or the driver's complaint), if it ended."""
        process = self._box.process
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=2)
        if process.returncode is None or process.stderr is None:
            return ""
        text = process.stderr.read(64 << 10).decode("utf-8", "replace").strip()
        return f": {' '.join(text.splitlines()[-3:])[-500:]}" if text else f" (exit status {process.returncode})"


@dataclass
class StartedBox:
    """A TeX box whose driver waits for its inputs, which go in `staging` (the box sees it)."""

    staging: Path
    box: Box
    closing: contextlib.ExitStack  # ends the box, then removes `staging`

    def close(self) -> None:
        self.closing.close()


def start_tex_box() -> StartedBox:
    """A new TeX box, its driver started and waiting (not yet given inputs)."""
    closing = contextlib.ExitStack()
    try:
        staging = closing.enter_context(staging_folder())
        shutil.copyfile(DRIVER_SOURCE, staging / DRIVER_NAME)
        open_to_the_box(staging)
        interpreter = os.path.realpath(sys.executable)
        spec = BoxSpec(
            [interpreter, "-I", "-S", "-B", str(staging / DRIVER_NAME), str(staging)],
            tex_box_paths(str(staging)),
            tex_environment(),
            TEX_LIMITS,
            BUILD,
            whole_box_limits=False,
        )
        box = closing.enter_context(
            open_box(spec, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        )
    except BaseException:
        closing.close()
        raise
    return StartedBox(staging, box, closing)


KEEPER_THREAD = "lemmata-spare-tex-box"


class SpareBox:
    """At most one TeX box started ahead, for the next `open_tex_box` of this process to take.

    A box takes about 0.04 s to start (bubblewrap, then the driver's interpreter: 2 cores,
    2026-11-29), and a run opens one after the other on its critical path: the last plot, the
    writer's trial pass, the compile. Each use starts the next box on a thread of its own, while
    the caller works. A spare is an empty box: its inputs are put in its staging folder when it is
    taken, and each box still serves one use. Off unless `keep` was called: only the workflow
    process keeps one (run/snakemake_process.py); it is ended with the process."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._spare: StartedBox | None = None
        self._kept = False
        self._ended = False  # discarded: the process is ending, no spare starts again
        self._wanted = False  # the keeper thread is to start a box
        self._keeper: threading.Thread | None = None

    def keep(self) -> None:
        """From now on keep a spare: the first one starts now."""
        with self._lock:
            if self._kept or self._ended:
                return
            self._kept = True
        atexit.register(self.discard)
        self._start_in_background()

    def take(self) -> StartedBox | None:
        """The spare, if there is one; the next one starts in the background."""
        with self._lock:
            spare, self._spare = self._spare, None
            kept = self._kept
        if kept:
            self._start_in_background()
        return spare

    def _start_in_background(self) -> None:
        with self._lock:
            self._wanted = True
            if self._keeper is None:
                self._keeper = threading.Thread(target=self._keep_starting, name=KEEPER_THREAD, daemon=True)
                self._keeper.start()
            self._lock.notify()

    def _keep_starting(self) -> None:
        """One thread starts every spare and lives as long as the process: a box dies with the
        thread that started it (bubblewrap's --die-with-parent follows that thread, not the
        process), so a short-lived thread would leave a dead spare behind."""
        while True:
            with self._lock:
                while not self._wanted and not self._ended:
                    self._lock.wait()
                if self._ended:
                    return
                self._wanted = False
            self._start_one()

    def discard(self) -> None:
        with self._lock:
            spare, self._spare, self._kept, self._ended = self._spare, None, False, True
            self._lock.notify()
        if spare is not None:
            spare.close()

    def _start_one(self) -> None:
        try:
            started = start_tex_box()
        except Exception:  # noqa: BLE001 - the next caller starts its own box and meets the error
            return
        with self._lock:
            wanted = self._kept and self._spare is None
            if wanted:
                self._spare = started
        if not wanted:  # one spare is enough, or the process is ending
            started.close()


SPARE = SpareBox()


@contextlib.contextmanager
def open_tex_box(inputs: Path) -> Iterator[TexBox]:
    """A TeX box whose build directory starts as a copy of the files in `inputs` (and figures/)."""
    started, tex = SPARE.take(), None
    if started is not None:
        try:
            tex = _loaded(started, inputs)
        except BaseException as error:
            started.close()
            if not isinstance(error, (TexBoxError, OSError)):
                raise
            # the spare ended while it waited, or its staging folder went (a cleaner of /tmp): a new box
    if tex is None:
        started = start_tex_box()
    assert started is not None
    with started.closing:
        yield tex or _loaded(started, inputs)


def _loaded(started: StartedBox, inputs: Path) -> TexBox:
    """`started`'s box, its driver given the files in `inputs` (copied where the box's uid may read them)."""
    _stage(Path(inputs), started.staging)
    tex = TexBox(started.box)
    tex.load()
    return tex


def _stage(source: Path, target: Path) -> None:
    """Copy the inputs where the box's uid may read them (the run directory may be private)."""
    for path in source.iterdir():
        if path.is_dir():
            shutil.copytree(path, target / path.name)
        elif path.is_file():
            shutil.copyfile(path, target / path.name)
    open_to_the_box(target)


def tex_box_paths(staging: str) -> tuple[str, ...]:
    """The TeX trees and programs, the system's libraries, the interpreter's standard library
    (the driver's only import), the staged inputs; and setpriv, which drops root's privileges."""
    python = interpreter_paths(os.path.realpath(sys.executable))
    return (*TEX_TREES, *system_library_paths(), *python, staging, *((SETPRIV,) if os.geteuid() == 0 else ()))


def tex_environment() -> dict[str, str]:
    """TeX's whole environment: its safety settings and places inside the build, nothing else."""
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": BUILD,
        "TEXMFVAR": f"{BUILD}/.texmf-var",
        "LANG": "C.UTF-8",
        "openin_any": "p",
        "openout_any": "p",
        "shell_escape": "f",
        "max_print_line": "10000",
    }


def run_tex_once(
    files: dict[str, Path | str], argv: Sequence[str], timeout: float, wanted: dict[str, tuple[int, bool]]
) -> tuple[int, bool, dict[str, bytes | None]]:
    """One TeX command on `files` (name -> text, or a file to copy) in a box of its own:
    (return code, timed out, the `wanted` files: name -> (limit, tail) as read back)."""
    with tempfile.TemporaryDirectory(prefix="lemmata-tex-inputs-") as inputs:
        for name, content in files.items():
            if isinstance(content, Path):
                shutil.copyfile(content, Path(inputs) / name)
            else:
                (Path(inputs) / name).write_text(content, encoding="utf-8")
        with open_tex_box(Path(inputs)) as tex:
            returncode, timed_out = tex.run(argv, timeout)
            found = {name: tex.read(name, limit, tail=tail) for name, (limit, tail) in wanted.items()}
    return returncode, timed_out, found
