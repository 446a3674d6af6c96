"""The copy-out: what the researcher's output folder receives of a paper version."""

from __future__ import annotations

import shutil
from pathlib import Path

from lemmata import layout
from lemmata.latex.document import support_files
from lemmata.run.pipeline import (
    USER_FIGURES,
    delivered_formal_development,
    delivered_lemma_graph,
    figures_of,
    user_files,
)


def deliver(run_dir: Path, version: int, output: Path) -> list[str]:
    """Copy the user's files that exist to the output folder, the picture of the lemmas and the
    plots with them; the names of the user's files copied."""
    delivered = [name for name in user_files(version) if (run_dir / name).is_file()]
    if not delivered:
        return []
    output.mkdir(parents=True, exist_ok=True)
    for name in delivered:
        shutil.copy2(run_dir / name, output / name)
    for source in support_files():  # so that the delivered .tex compiles on its own
        shutil.copy2(source, output / source.name)
    graph = run_dir / layout.lemma_graph_of(version)
    if graph.is_file():
        shutil.copy2(graph, output / delivered_lemma_graph(version))
    development = run_dir / layout.formal_development_of(version)
    if development.is_file():
        shutil.copy2(development, output / delivered_formal_development(version))
    figures = sorted((run_dir / figures_of(version)).glob("*.pdf"))
    if figures:
        (output / USER_FIGURES).mkdir(exist_ok=True)
        for figure in figures:
            shutil.copy2(figure, output / USER_FIGURES / figure.name)
    return delivered
