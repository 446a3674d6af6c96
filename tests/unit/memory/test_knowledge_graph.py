"""Tier-3 memory and the assembly's failure paths.

Spec, theory stage rule 8: knowledge-graph writes happen whenever `proven_count` > 0, not only
when the full consistency check passes; lemma nodes and dependency edges are kept even if
crystallization fails. Issue 4: a checker that could not run is a failure, not a pass.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lemmata.artifacts import Lemma, ProvedLemma, TheoryPlan
from lemmata.errors import ProviderError
from lemmata.memory.knowledge_graph import KnowledgeGraph, build_graph, graph_path, record_graph
from lemmata.stages.theory.assemble import assemble_theory
from support.scripted_backend import scripted_client

GOAL = "The sum of two even integers is even."
SESSION = "s-20261121-graph"


def proved(lemma_id: str, status: str, depends_on: tuple[str, ...] = ()) -> ProvedLemma:
    verified = status == "proved"
    return ProvedLemma(
        id=lemma_id,
        statement=f"Statement {lemma_id}.",
        depends_on=list(depends_on),
        proof_text="" if status == "failed" else f"By definition; see [{lemma_id}].",
        confidence={"proved": 0.95, "low_confidence": 0.6, "failed": 0.0}[status],
        verified=verified,
        status=status,  # type: ignore[arg-type]
        verification_method="auto_accepted" if verified else "failed" if status == "failed" else "flagged",
    )


LEMMAS = [proved("L1", "proved"), proved("L2", "low_confidence", ("L1",)), proved("L3", "failed", ("L1", "L2"))]
PLAN = TheoryPlan(
    goal=GOAL, level="full", lemmas=[Lemma(id=p.id, statement=p.statement, depends_on=p.depends_on) for p in LEMMAS]
)
ASSEMBLED = "By [L1] and [L2] the sum is $2(m+n)$."
CONSISTENT = json.dumps({"consistent": True, "issues": []})


def edges(graph: KnowledgeGraph) -> set[tuple[str, str, str]]:
    return {(edge.source, edge.target, edge.kind) for edge in graph.edges}


def test_no_graph_when_no_lemma_has_a_proof() -> None:
    assert build_graph(SESSION, GOAL, [proved("L1", "failed"), proved("L2", "failed", ("L1",))]) is None


def test_lemma_nodes_and_dependency_edges_before_any_assembly() -> None:
    graph = build_graph(SESSION, GOAL, LEMMAS)
    assert graph is not None
    assert [(n.id, n.kind, n.status, n.verified) for n in graph.nodes] == [
        ("L1", "lemma", "reviewed", True),
        ("L2", "lemma", "unverified", False),
        ("L3", "lemma", "unverified", False),
    ]
    assert edges(graph) == {("L2", "L1", "depends_on"), ("L3", "L1", "depends_on"), ("L3", "L2", "depends_on")}


def test_theorem_node_once_crystallized() -> None:
    client, _ = scripted_client(
        {
            "assembler": [ASSEMBLED],
            "consistency": [CONSISTENT],
            "crystallizer": ["For all even $a, b$, $a + b$ is even."],
        }
    )
    theory = assemble_theory(client, PLAN, LEMMAS)
    graph = build_graph(SESSION, GOAL, LEMMAS, theory)
    theorem = graph.nodes[-1]
    assert (theorem.id, theorem.kind, theorem.statement) == (
        "theorem",
        "theorem",
        "For all even $a, b$, $a + b$ is even.",
    )
    assert {e for e in edges(graph) if e[2] == "supports"} == {
        ("L1", "theorem", "supports"),
        ("L2", "theorem", "supports"),
    }


def test_a_failed_crystallization_keeps_nodes_and_edges_and_states_the_goal() -> None:
    client, _ = scripted_client(
        {
            "assembler": [ASSEMBLED],
            "consistency": [CONSISTENT],
            "crystallizer": [ProviderError("HTTP 529: overloaded, retries exhausted")],
        }
    )
    theory = assemble_theory(client, PLAN, LEMMAS)
    assert theory.theorem_statement == GOAL
    assert theory.crystallization_error.startswith("the crystallizer failed, the goal is stated instead")
    graph = build_graph(SESSION, GOAL, LEMMAS, theory)
    assert [n.id for n in graph.nodes] == ["L1", "L2", "L3"]  # no theorem node for an uncrystallized theorem
    assert ("L2", "L1", "depends_on") in edges(graph)


def test_the_graph_is_written_under_the_memory_directory(tmp_path: Path) -> None:
    path = record_graph(tmp_path, build_graph(SESSION, GOAL, LEMMAS))
    assert path == graph_path(tmp_path, SESSION) == tmp_path / "memory" / "knowledge_graph" / f"{SESSION}.json"
    assert KnowledgeGraph.model_validate_json(path.read_text(encoding="utf-8")).session_id == SESSION
    assert record_graph(tmp_path, None) is None


@pytest.mark.parametrize(
    "checker_answer",
    [
        pytest.param(ProviderError("HTTP 500 after 5 retries"), id="checker-call-fails"),
        pytest.param("Looks consistent to me!", id="checker-answer-not-json"),
    ],
)
def test_a_consistency_checker_that_cannot_run_does_not_pass(checker_answer: object) -> None:
    client, backend = scripted_client(
        {"assembler": [ASSEMBLED], "consistency": [checker_answer], "crystallizer": ["T1"]}
    )
    theory = assemble_theory(client, PLAN, LEMMAS)
    assert theory.consistency.passed is False
    assert theory.consistency.issues[0].startswith("the consistency check could not run")
    assert theory.proof_status == "partial"
    # Not citation-related: no re-assembly; the one crystallizer call is told the reason.
    assert len(backend.calls("assembler")) == 1
    assert len(backend.calls("crystallizer")) == 1
    assert "could not run" in backend.calls("crystallizer")[0].messages[-1].content
