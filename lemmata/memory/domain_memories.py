"""Tier-4 memory: what worked and what failed, kept per research domain across runs.

Each memory is a markdown file (`# title`, a blank line, the text) under
`$LEMMATA_HOME/memory/domains/<domain>/`, listed in that directory's `_index.json` with its
embedding, computed once when it is written. Loading for injection takes a domain, a count k
and an optional query: with a query, the k memories most similar to it (cosine; ties newer
first); without one, the first k in index order, which is the order they were written in.
"""

from __future__ import annotations

import fcntl
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from lemmata.artifacts import Artifact, atomic_write_text, read_artifact, write_artifact
from lemmata.errors import ArtifactError, UserError
from lemmata.home_layout import MEMORY_INDEX, MEMORY_LOCK, domain_memories
from lemmata.latex.bibliography import ascii_letters
from lemmata.memory.embeddings import Embedder, default_embedder
from lemmata.plugins import normalised_domain

_DOMAIN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_MAX_SLUG = 60

#: strategy: what proved a lemma; failure: an approach that failed, and why.
MemoryKind = Literal["strategy", "failure"]


class MemoryEntry(Artifact):
    file: str = Field(description="the memory's file name in the domain directory")
    title: str
    kind: MemoryKind
    session_id: str = Field(description="the run the memory was distilled from")
    created: float = Field(description="Unix time of the write")
    embedding: list[float] = Field(min_length=1, description="of the title and text, computed at write time")
    embedder: str = Field(description="the embedder's name: vectors of different embedders are not compared")


class MemoryIndex(Artifact):
    """`_index.json`: one entry per memory file, in the order they were written."""

    domain: str
    entries: list[MemoryEntry] = Field(default_factory=list)


class Memory(BaseModel):
    """A memory as loaded for injection into a prompt."""

    domain: str
    file: str
    title: str
    kind: MemoryKind
    session_id: str
    created: float
    text: str
    similarity: float | None = Field(None, description="cosine similarity to the query; None without one")


def domain_slug(domain: str) -> str:
    """`Number Theory` → `number-theory`; anything beyond ASCII letters, digits, spaces, `-`, `_` is refused."""
    slug = normalised_domain(domain).replace(" ", "-")  # the domain as plugins and skills match it
    if not _DOMAIN.fullmatch(slug) or len(slug) > _MAX_SLUG:
        raise UserError(
            f"domain {domain!r} cannot name a memory directory: use lower-case letters, "
            f"digits and single '-' between them, at most {_MAX_SLUG} characters "
            "(for example 'number-theory')"
        )
    return slug


def slug(text: str) -> str:
    """`Erdős problems: a survey` → `erdos-problems-a-survey`: ASCII letters and digits (accents
    transliterated as in citation keys), one '-' between words, at most 60 characters."""
    words = (ascii_letters(word) for word in re.split(r"[\W_]+", text))
    return "-".join(word for word in words if word)[:_MAX_SLUG].strip("-")


def domain_dir(home: Path, domain: str) -> Path:
    return domain_memories(home) / domain_slug(domain)


def index_path(home: Path, domain: str) -> Path:
    return domain_dir(home, domain) / MEMORY_INDEX


def write_memory(
    home: Path,
    domain: str,
    *,
    title: str,
    text: str,
    kind: MemoryKind,
    session_id: str,
    embedder: Embedder | None = None,
) -> Path:
    """Write the memory's file and add its index entry; returns the file's path."""
    title, text = " ".join(title.split()), text.strip()
    if not title or not text:
        raise ValueError("a memory needs a title and a text")
    directory = domain_dir(home, domain)
    embedder = embedder or default_embedder()
    embedding = embedder.embed([f"{title}\n{text}"])[0]  # before the lock: the slow part
    with _index_lock(directory):
        index = _read_index(directory / MEMORY_INDEX, directory.name)
        path = directory / _free_file_name(directory, index, title)
        entry = MemoryEntry(
            file=path.name,
            title=title,
            kind=kind,
            session_id=session_id,
            created=time.time(),
            embedding=[round(float(x), 6) for x in embedding],
            embedder=embedder.name,
        )
        atomic_write_text(path, f"# {title}\n\n{text}\n")
        index.entries.append(entry)
        write_artifact(directory / MEMORY_INDEX, index)
    return path


def forget_session(home: Path, domain: str, session_id: str) -> int:
    """Remove what run `session_id` wrote to the domain (its files and entries); how many.
    A run's memories are replaced, not added to, when it learns again."""
    directory = domain_dir(home, domain)
    if not (directory / MEMORY_INDEX).exists():
        return 0
    with _index_lock(directory):
        index = _read_index(directory / MEMORY_INDEX, directory.name)
        gone = [entry for entry in index.entries if entry.session_id == session_id]
        if gone:
            index.entries = [entry for entry in index.entries if entry.session_id != session_id]
            write_artifact(directory / MEMORY_INDEX, index)  # the index first: a file it lists must exist
            for entry in gone:
                (directory / entry.file).unlink(missing_ok=True)
    return len(gone)


def load_memories(
    home: Path, domain: str, k: int, query: str | None = None, embedder: Embedder | None = None
) -> list[Memory]:
    """Up to k memories: the most similar to a (non-blank) query, else the first k in index order."""
    if k < 0:
        raise ValueError(f"k must be at least 0, not {k}")
    directory = domain_dir(home, domain)
    index = _read_index(directory / MEMORY_INDEX, directory.name)
    if k == 0 or not index.entries:
        return []
    if query is None or not query.strip():
        candidates: list[tuple[MemoryEntry, float | None]] = [(entry, None) for entry in index.entries]
    else:
        candidates = _ranked(index.entries, query, embedder or default_embedder())
    memories = []
    for entry, similarity in candidates:
        text = _memory_text(directory / entry.file)
        if text is not None:  # a file listed but removed since is skipped, not an error
            memories.append(
                Memory(
                    domain=directory.name,
                    text=text,
                    similarity=similarity,
                    **entry.model_dump(exclude={"embedding", "embedder"}),
                )
            )
        if len(memories) == k:
            break
    return memories


def _ranked(entries: list[MemoryEntry], query: str, embedder: Embedder) -> list[tuple[MemoryEntry, float | None]]:
    """By similarity, ties newer first; entries of another embedder after them, newest first."""
    vector = _unit(embedder.embed([query], query=True)[0])
    newest_first = [
        entry for _, entry in sorted(enumerate(entries), reverse=True, key=lambda pair: (pair[1].created, pair[0]))
    ]

    def same_space(entry: MemoryEntry) -> bool:
        return entry.embedder == embedder.name and len(entry.embedding) == len(vector)

    comparable = [entry for entry in newest_first if same_space(entry)]
    others = [entry for entry in newest_first if not same_space(entry)]
    if not comparable:
        return [(entry, None) for entry in others]
    scores = np.stack([_unit(np.asarray(entry.embedding)) for entry in comparable]) @ vector
    order = np.argsort(-scores, kind="stable")  # stable: equal scores stay newest first
    return [(comparable[i], float(scores[i])) for i in order] + [(entry, None) for entry in others]


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def _read_index(path: Path, domain: str) -> MemoryIndex:
    if not path.exists():
        return MemoryIndex(domain=domain)
    try:
        return read_artifact(path, MemoryIndex)
    except UnicodeDecodeError:
        raise ArtifactError(f"{path} is corrupt: not UTF-8 text") from None


def _memory_text(path: Path) -> str | None:
    """The text below the title line, or None when the file is gone."""
    try:
        content = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    first, _, rest = content.partition("\n")
    return rest.strip() if first.startswith("# ") else content.strip()


def _free_file_name(directory: Path, index: MemoryIndex, title: str) -> str:
    """`<slug>.md` from the title, numbered when taken (by the index or by a file on disk)."""
    stem = slug(title) or "memory"
    taken = {entry.file for entry in index.entries}
    name, number = f"{stem}.md", 1
    while name in taken or (directory / name).exists():
        number += 1
        name = f"{stem}-{number}.md"
    return name


@contextmanager
def _index_lock(directory: Path) -> Iterator[None]:
    """Exclusive across processes and threads: each call opens its own file description.

    A separate lock file, because the index itself is replaced (a new inode) on every write.
    """
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / MEMORY_LOCK).open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield  # closing the handle releases the lock, even on error
