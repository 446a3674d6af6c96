"""Tier-3 memory: each run's lemmas as a knowledge graph, one file per session.

Nodes are lemmas (with status, confidence and how they were verified) and, once crystallized,
the theorem; edges are the lemma dependencies and each usable lemma's support of the theorem.
The graph is written whenever at least one lemma has a proof (`proven_count` > 0), before the
assembly starts, so lemma nodes and dependency edges survive a failed assembly or crystallization.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import Field

from lemmata.artifacts import Artifact, ProvedLemma, Theory, proven_count, write_artifact
from lemmata.home_layout import knowledge_graphs

THEOREM_NODE = "theorem"


class GraphNode(Artifact):
    id: str
    kind: Literal["lemma", "theorem"]
    statement: str
    status: str
    verified: bool
    confidence: float | None = None
    verification_method: str = ""
    source: str = ""


class GraphEdge(Artifact):
    source: str
    target: str
    kind: Literal["depends_on", "supports"]


class KnowledgeGraph(Artifact):
    session_id: str
    goal: str
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    updated: float = Field(default_factory=time.time)


def build_graph(
    session_id: str, goal: str, lemmas: Sequence[ProvedLemma], theory: Theory | None = None
) -> KnowledgeGraph | None:
    """The run's graph, or None when no lemma has a proof (nothing worth remembering)."""
    if proven_count(lemmas) == 0:
        return None
    nodes = [
        GraphNode(
            id=lemma.id,
            kind="lemma",
            statement=lemma.statement,
            status=lemma.status,
            verified=lemma.verified,
            confidence=lemma.confidence,
            verification_method=lemma.verification_method,
            source=lemma.source,
        )
        for lemma in lemmas
    ]
    edges = [
        GraphEdge(source=lemma.id, target=dependency, kind="depends_on")
        for lemma in lemmas
        for dependency in lemma.depends_on
    ]
    if theory is not None and theory.assembled_proof and not theory.crystallization_error:
        nodes.append(
            GraphNode(
                id=THEOREM_NODE,
                kind="theorem",
                statement=theory.theorem_statement,
                status=theory.proof_status,
                verified=theory.proof_status == "proved",
            )
        )
        edges += [
            GraphEdge(source=lemma.id, target=THEOREM_NODE, kind="supports")
            for lemma in lemmas
            if lemma.verified or not lemma.proof_failed
        ]
    return KnowledgeGraph(session_id=session_id, goal=goal, nodes=nodes, edges=edges)


def graph_path(home: Path, session_id: str) -> Path:
    return knowledge_graphs(home) / f"{session_id}.json"


def record_graph(home: Path, graph: KnowledgeGraph | None) -> Path | None:
    """Write (or replace) the session's graph atomically; None when there was nothing to write."""
    if graph is None:
        return None
    path = graph_path(home, graph.session_id)
    write_artifact(path, graph)
    return path
