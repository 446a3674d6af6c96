"""A stand-in for the embedding model in tests: deterministic, instant, no model file."""

from __future__ import annotations

import re
import zlib

import numpy as np


class HashedWords:
    """Each word hashed onto one of `dim` coordinates, counted, unit norm: texts that share words
    are similar. Records every call as (texts, query)."""

    name = "hashed-words"

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.calls: list[tuple[list[str], bool]] = []

    def embed(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        self.calls.append((list(texts), query))
        rows = np.zeros((len(texts), self.dim))
        for row, text in zip(rows, texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                row[zlib.crc32(word.encode()) % self.dim] += 1.0
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms == 0, 1.0, norms)
