"""The copy-out: what the researcher's output folder receives of a paper version, as a transaction.

The output folder is checked when the run is made, before any model call, and again at
delivery: a directory (a link named as --output is resolved once, when the run is made; the
record keeps the real path, which must stay a directory and not become a link), owned by the
user, not writable by anyone else unless sticky (then nobody else can remove or rename our files).
Each file is written to a new temporary name in the folder (O_EXCL|O_NOFOLLOW, relative to the
opened folder) and only when every file is whole are they renamed onto their names: a rename
replaces a link planted under that name instead of following it, and a full disk leaves every
earlier file as it was. The figures/ subfolder is made or opened without following a link.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from lemmata import layout
from lemmata.errors import UserError
from lemmata.latex.document import support_files
from lemmata.run.pipeline import (
    delivered_formal_development,
    delivered_lemma_graph,
    user_files,
)

#: Delivered files are private, as the run's own files: `chmod` them to share the paper.
DELIVERED_MODE = 0o600
COPY_CHUNK = 1 << 20


class OutputFolderError(UserError):
    """The output folder cannot safely receive the paper (checked before any model call)."""


class DeliveryFailed(UserError):
    """Writing into the output folder failed (full disk, read-only); nothing in it was changed."""


@dataclass(frozen=True)
class Delivery:
    """One file to deliver: `source` in the run directory, `name` in the output folder."""

    source: Path
    name: str  # relative to the output folder: a paper file's name, or "figures/<lemma>.pdf"


def check_output_folder(output: Path) -> Path:
    """The output folder, made when missing, once it may receive a paper; its real path.
    OutputFolderError (one line, exit 2) naming what is wrong and what to do otherwise."""
    output = Path(output).expanduser()
    try:
        output.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise OutputFolderError(f"the output folder {output} is not a directory: choose another --output") from None
    except OSError as error:
        raise OutputFolderError(
            f"the output folder {output} cannot be made ({error.strerror}): choose another --output"
        ) from None
    real = output.resolve()
    if not real.is_dir():
        raise OutputFolderError(f"the output folder {output} is not a directory: choose another --output")
    _check_safe(real, os.stat(real))
    if not os.access(real, os.W_OK | os.X_OK):
        raise OutputFolderError(
            f"the output folder {real} is not writable: make it writable or choose another --output"
        )
    return real


def _check_safe(folder: Path, status: os.stat_result) -> None:
    """Ours, and nobody else may plant or swap files in it (a sticky folder keeps our files ours)."""
    if status.st_uid != os.geteuid():
        raise OutputFolderError(
            f"the output folder {folder} belongs to another user (uid {status.st_uid}): "
            "choose a folder of your own with --output"
        )
    if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not status.st_mode & stat.S_ISVTX:
        raise OutputFolderError(
            f"the output folder {folder} is writable by other users: `chmod go-w {folder}` "
            "(or `chmod +t` it), or choose another --output"
        )


def planned(run_dir: Path, version: int) -> list[Delivery]:
    """What the output folder receives of `version`: the user's files that exist (none: nothing),
    the support files its .tex needs to compile, the picture of its lemmas, its formal development
    and its plots."""
    papers = [Delivery(run_dir / name, name) for name in user_files(version) if (run_dir / name).is_file()]
    if not papers:
        return []
    extras = [Delivery(source, source.name) for source in support_files()]
    graph = run_dir / layout.lemma_graph_of(version)
    if graph.is_file():
        extras.append(Delivery(graph, delivered_lemma_graph(version)))
    development = run_dir / layout.formal_development_of(version)
    if development.is_file():
        extras.append(Delivery(development, delivered_formal_development(version)))
    figures = sorted((run_dir / layout.figures_of(version)).glob("*.pdf"))
    extras += [Delivery(figure, f"{layout.FIGURES}/{figure.name}") for figure in figures]
    return papers + extras


def deliver(run_dir: Path, version: int, output: Path) -> list[str]:
    """Copy `version`'s files to the output folder, all or none; the names of the user's files
    (paper, PDF, bibliography) delivered. OutputFolderError when the folder is not safe,
    DeliveryFailed when writing fails: the folder then holds what it held before."""
    deliveries = planned(run_dir, version)
    if not deliveries:
        return []
    folder = check_output_folder(output)
    try:
        _deliver_into(folder, deliveries)
    except OutputFolderError:
        raise
    except OSError as error:
        reason = error.strerror or str(error)
        raise DeliveryFailed(f"the paper could not be delivered to {folder}: {reason}") from None
    return [d.name for d in deliveries if d.name in user_files(version)]


def _deliver_into(folder: Path, deliveries: list[Delivery]) -> None:
    """Every file to a temporary name first, then each renamed onto its name."""
    folder_fd = _open_directory(folder, None)
    opened = {"": folder_fd}
    staged: list[tuple[int, str, str]] = []  # (directory fd, temporary name, final name)
    try:
        for delivery in deliveries:
            subfolder, _, name = delivery.name.rpartition("/")
            if subfolder not in opened:
                opened[subfolder] = _subfolder(folder_fd, folder, subfolder)
            directory = opened[subfolder]
            temporary = f".{name}.{secrets.token_hex(4)}.tmp"
            staged.append((directory, temporary, name))
            _copy_to(delivery.source, directory, temporary)
        for directory, temporary, name in staged:
            os.replace(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
        staged.clear()
    finally:
        for directory, temporary, _ in staged:  # nothing renamed yet: the folder is as it was
            with suppress(OSError):
                os.unlink(temporary, dir_fd=directory)
        for fd in opened.values():
            os.close(fd)


def _open_directory(path: Path | str, dir_fd: int | None) -> int:
    """The directory itself, never what a link under its name points to."""
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise OutputFolderError(
                f"{path} in the output folder is a link or not a directory: remove it, or choose another --output"
            ) from None
        raise


def _subfolder(folder_fd: int, folder: Path, name: str) -> int:
    """figures/ of the output folder: made, or opened when it is a directory of ours."""
    with suppress(FileExistsError):
        os.mkdir(name, 0o700, dir_fd=folder_fd)
    fd = _open_directory(name, folder_fd)
    try:
        _check_safe(folder / name, os.fstat(fd))
    except OutputFolderError:
        os.close(fd)
        raise
    return fd


def _copy_to(source: Path, directory: int, temporary: str) -> None:
    """`source` into a new file `temporary` of `directory`, on disk before it is renamed."""
    target = os.open(
        temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, DELIVERED_MODE, dir_fd=directory
    )
    try:
        with open(source, "rb") as reading:
            while chunk := reading.read(COPY_CHUNK):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(target, view) :]
        os.fsync(target)
    finally:
        os.close(target)


def paper_path(output: Path, version: int) -> Path:
    """Where the delivered PDF of `version` is."""
    return Path(output) / layout.paper_pdf(version)
