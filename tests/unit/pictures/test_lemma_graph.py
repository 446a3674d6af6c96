"""The lemma graph (issue 26): the theory's lemmas as a layered DAG in a self-contained SVG, each
box coloured by its status, arrows from a dependency to its dependent, turns, calls and cost in
each box's title; model text escaped; unknown dependencies, cycles and large plans drawn."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from lemmata import layout
from lemmata.artifacts import Lemma, TheoryPlan, write_artifact
from lemmata.pictures.lemma_graph import (
    COLOURS,
    NODE_W,
    ROW_NODES,
    STATUSES,
    depths,
    lemma_costs,
    lemma_nodes,
    live_lemma_graph,
    render_svg,
    rows,
    run_lemma_costs,
    shortened,
    theory_nodes,
    write_theory_graph,
)
from lemmata.run.spending.costs import CostSummary
from lemmata.verification.ladder import label
from support import formal as formal_checks
from unit.run.test_cards import THEORY, lemma

SVG = "{http://www.w3.org/2000/svg}"


def planned(lemma_id: str, *depends_on: str, statement: str = "") -> Lemma:
    return Lemma(id=lemma_id, statement=statement or f"Statement of {lemma_id}.", depends_on=list(depends_on))


def parsed(svg: str) -> ET.Element:
    """The SVG as XML: it must parse, so every text in it is escaped."""
    return ET.fromstring(svg)


def boxes(root: ET.Element) -> dict[str, ET.Element]:
    return {g.get("data-lemma"): g for g in root.iter(f"{SVG}g") if g.get("class") == "lemma"}


def edges(root: ET.Element) -> list[tuple[str, str]]:
    return [(g.get("data-from"), g.get("data-to")) for g in root.iter(f"{SVG}g") if g.get("class") == "edge"]


def title_of(box: ET.Element) -> str:
    return box.find(f"{SVG}title").text or ""


PROVED = {
    "L1": lemma("L1", "verifier_pass", "proved", 0.9, attempts=3),
    "L2": lemma("L2", "flagged", "low_confidence", 0.5, attempts=6),
    "L3": lemma("L3", "failed", "failed", 0.0, attempts=2),
}
PLAN = [planned("L1"), planned("L2", "L1"), planned("L3", "L1"), planned("L4", "L2", "L3"), planned("L5", "L4")]
#: A lemma of each status of the ladder (issue 34), with one running and one pending.
EVERY_STATUS = {
    **PROVED,
    "M1": PROVED["L2"].model_copy(
        update={
            "id": "M1",
            "statement": "Statement of M1.",
            "status": "machine_checked",
            "verified": True,
            "formal": formal_checks.machine_checked(),
        }
    ),
    "T1": PROVED["L2"].model_copy(
        update={"id": "T1", "statement": "Statement of T1.", "status": "tested", "formal": formal_checks.tested()}
    ),
    "R1": PROVED["L3"].model_copy(
        update={"id": "R1", "statement": "Statement of R1.", "status": "refuted", "formal": formal_checks.refuted()}
    ),
}
EVERY_PLAN = [*PLAN, planned("M1"), planned("T1"), planned("R1")]


def test_each_status_has_its_colour_and_word_and_the_legend_counts_them() -> None:
    root = parsed(render_svg(lemma_nodes(EVERY_PLAN, EVERY_STATUS, running={"L4"})))
    drawn = boxes(root)
    statuses = {lemma_id: box.get("data-status") for lemma_id, box in drawn.items()}
    assert statuses == {
        "L1": "reviewed",
        "L2": "unverified",
        "L3": "unverified",
        "L4": "running",
        "L5": "pending",
        "M1": "machine-checked",
        "T1": "tested",
        "R1": "refuted as formalized",
    }
    for box in drawn.values():
        fill, stroke = COLOURS[box.get("data-status")]
        rect = box.find(f"{SVG}rect")
        assert (rect.get("fill"), rect.get("stroke")) == (fill, stroke)
        assert box.get("data-status") in [t.text for t in box.iter(f"{SVG}text")]
    legend = [g for g in root.iter(f"{SVG}g") if g.get("data-legend")]
    counts = {status: sum(value == status for value in statuses.values()) for status in STATUSES}
    assert [(g.get("data-legend"), g.find(f"{SVG}text").text) for g in legend] == [
        (status, f"{status} ({counts[status]})") for status in STATUSES
    ]


def test_a_running_job_and_a_proof_of_another_statement_decide_the_status() -> None:
    stale = lemma("L1", "verifier_pass", "proved", 0.9).model_copy(update={"statement": "An older statement."})
    nodes = lemma_nodes([planned("L1"), planned("L2")], {"L1": stale, "L2": PROVED["L1"]}, running={"L2"})
    assert [(n.id, n.status) for n in nodes] == [("L1", "pending"), ("L2", "running")]


def test_arrows_go_from_each_dependency_to_its_dependent_and_point_down() -> None:
    root = parsed(render_svg(lemma_nodes(PLAN, PROVED)))
    assert sorted(edges(root)) == [("L1", "L2"), ("L1", "L3"), ("L2", "L4"), ("L3", "L4"), ("L4", "L5")]
    assert depths(lemma_nodes(PLAN, {})) == {"L1": 0, "L2": 1, "L3": 1, "L4": 2, "L5": 3}
    top = {lemma_id: float(box.find(f"{SVG}rect").get("y")) for lemma_id, box in boxes(root).items()}
    assert all(top[source] < top[target] for source, target in edges(root))


def test_an_arrow_past_a_row_goes_beside_its_boxes_not_behind_them() -> None:
    chain = [planned("A"), planned("B", "A"), planned("C", "B"), planned("D", "A", "C")]
    root = parsed(render_svg(lemma_nodes(chain, {})))
    drawn = boxes(root)
    long_edge = next(g for g in root.iter(f"{SVG}g") if g.get("data-from") == "A" and g.get("data-to") == "D")
    lane = float(long_edge.find(f"{SVG}path").get("d").split(" L")[1].split(",")[0])
    for between in ("B", "C"):
        left = float(drawn[between].find(f"{SVG}rect").get("x"))
        assert not left <= lane <= left + NODE_W, between


def test_model_text_is_escaped_everywhere() -> None:
    evil = '<script>alert("x")</script> & <a href="javascript:1">\x00\x1b'
    svg = render_svg(lemma_nodes([planned("L1", statement=evil), planned("L2", "L1", statement="a < b & c")], {}))
    root = parsed(svg)
    assert "<script" not in svg and "<a " not in svg and "\x00" not in svg and "\x1b" not in svg
    assert {element.tag.removeprefix(SVG) for element in root.iter()} <= {"svg", "g", "rect", "path", "text", "title"}
    assert evil.replace("\x00\x1b", "") in title_of(boxes(root)["L1"])  # the full statement, read back as text
    attributes = {(name, value) for element in root.iter() for name, value in element.attrib.items()}
    assert not [a for a in attributes if a[0] in ("id", "style") or "href" in a[0] or a[0].startswith("on")]
    assert not [a for a in attributes if "url(" in a[1]]  # no reference to anything, in or out of the picture


def test_a_dependency_not_in_the_plan_has_no_arrow_and_is_named_in_the_title() -> None:
    root = parsed(render_svg(lemma_nodes([planned("L1"), planned("L2", "L1", "L9")], {})))
    assert edges(root) == [("L1", "L2")]
    assert "depends on: L1, L9 (not in the plan: L9)" in title_of(boxes(root)["L2"])


def test_a_cycle_is_drawn_without_looping_forever() -> None:
    cycle = [planned("L1", "L3"), planned("L2", "L1"), planned("L3", "L2"), planned("L4", "L4")]
    nodes = lemma_nodes(cycle, {})
    assert set(depths(nodes)) == {"L1", "L2", "L3", "L4"}
    root = parsed(render_svg(nodes))
    assert set(boxes(root)) == {"L1", "L2", "L3", "L4"} and ("L4", "L4") not in edges(root)


def test_one_lemma_and_an_empty_plan_are_pictures_too() -> None:
    one = parsed(render_svg(lemma_nodes([planned("L1")], {})))
    assert list(boxes(one)) == ["L1"] and edges(one) == []
    assert boxes(parsed(render_svg([]))) == {}


def test_many_lemmas_wrap_onto_rows_and_keep_plan_order() -> None:
    many = [planned(f"L{i}") for i in range(1, 14)] + [planned("L14", *(f"L{i}" for i in range(1, 14)))]
    placed = rows(lemma_nodes(many, {}))
    assert [len(row) for row in placed] == [5, 5, 3, 1]
    assert [node.id for row in placed[:3] for node in row] == [f"L{i}" for i in range(1, 14)]
    root = parsed(render_svg(lemma_nodes(many, {})))
    assert len(boxes(root)) == 14 and len(edges(root)) == 13
    assert int(root.get("width")) < ROW_NODES * (NODE_W + 60)  # wider plans grow downwards


def test_a_long_statement_is_shortened_in_its_box_and_whole_in_its_title() -> None:
    statement = "For all integers a and b, if a and b are both even then their sum a + b is even as well " * 3
    lines = shortened(statement)
    assert len(lines) == 2 and lines[-1].endswith("…") and all(len(line) <= 31 for line in lines)
    root = parsed(render_svg(lemma_nodes([planned("L1", statement=statement)], {})))
    assert " ".join(statement.split()) in " ".join(title_of(boxes(root)["L1"]).split())


def test_a_box_reads_its_mathematics_as_unicode_and_its_title_keeps_the_source() -> None:
    statement = r"For all $a, b \in \mathbb{Z}$: $a^2 \geq 0$."
    box = boxes(parsed(render_svg(lemma_nodes([planned("L1", statement=statement)], {}))))["L1"]
    assert "For all a, b ∈ ℤ: a² ≥ 0." in " ".join(t.text or "" for t in box.iter(f"{SVG}text"))
    assert title_of(box).endswith(statement)


def test_turns_calls_and_cost_of_each_lemma_are_in_its_box_and_title() -> None:
    records = [
        {"scope": "prove_lemma:L1", "role": "prover", "cost_usd": 0.25},
        {"scope": "prove_lemma:L1:attempt-2", "role": "verifier", "cost_usd": 0.05},
        {"scope": "prove_lemma:L2", "role": "prover", "cost_usd": None},
        {"scope": "rewrite_theory:v2:prove_lemma:L1", "role": "prover", "cost_usd": 9.0},
        {"scope": "theory_plan", "role": "decomposer", "cost_usd": 1.0},
    ]
    costs = lemma_costs(records)
    assert {k: (v.calls, v.text) for k, v in costs.items()} == {
        "L1": (2, "$0.3000"),
        "L2": (1, "unknown (1 call without a price)"),
    }
    assert lemma_costs(records, version=2)["L1"].known_usd == 9.0
    root = parsed(render_svg(lemma_nodes(PLAN[:2], PROVED, costs=costs)))
    first = title_of(boxes(root)["L1"])
    assert "L1: reviewed" in first and "prover turns: 3; model calls: 2; cost: $0.3000" in first
    assert "3 turns · 2 calls · $0.3000" in [t.text for t in boxes(root)["L1"].iter(f"{SVG}text")]
    assert "6 turns · 1 call · cost unknown" in [t.text for t in boxes(root)["L2"].iter(f"{SVG}text")]


def write_calls(run_dir: Path, *records: dict) -> None:
    (run_dir / layout.LLM_CALLS).write_text("".join(json.dumps(r) + "\n" for r in records))


def test_the_live_picture_reads_the_plan_and_the_proofs_written_so_far(tmp_path: Path) -> None:
    assert live_lemma_graph(tmp_path) is None  # no plan yet
    plan = TheoryPlan(goal="a + b is even", level="full", lemmas=PLAN)
    write_artifact(tmp_path / layout.PLAN, plan)
    write_artifact(tmp_path / layout.lemma("L1"), PROVED["L1"])
    (tmp_path / layout.lemma("L2")).write_text("{half a fil")  # unreadable: still pending
    write_calls(tmp_path, {"scope": "prove_lemma:L1", "role": "prover", "cost_usd": 0.5})
    root = parsed(live_lemma_graph(tmp_path, running={"L3"}) or "")
    assert {k: b.get("data-status") for k, b in boxes(root).items()} == {
        "L1": "reviewed",
        "L2": "pending",
        "L3": "running",
        "L4": "pending",
        "L5": "pending",
    }
    assert "cost: $0.5000" in title_of(boxes(root)["L1"])
    assert root.find(f"{SVG}title").text == "The lemma graph: a + b is even"


def test_an_assembled_theory_is_written_beside_it_for_each_version(tmp_path: Path) -> None:
    write_calls(
        tmp_path,
        {"scope": "prove_lemma:sum", "role": "prover", "cost_usd": 0.1},
        {"scope": "rewrite_theory:v2:prove_lemma:sum", "role": "prover", "cost_usd": 0.2},
    )
    first = write_theory_graph(tmp_path, 1, THEORY)
    second = write_theory_graph(tmp_path, 2, THEORY)
    assert first == tmp_path / "theory" / "lemma_graph.svg" and second == tmp_path / "versions/v2/lemma_graph.svg"
    statuses = {k: b.get("data-status") for k, b in boxes(parsed(first.read_text())).items()}
    assert statuses == {lemma.id: label(lemma.status) for lemma in THEORY.lemmas}
    assert "cost: $0.1000" in title_of(boxes(parsed(first.read_text()))["sum"])
    assert "cost: $0.2000" in title_of(boxes(parsed(second.read_text()))["sum"])
    assert run_lemma_costs(tmp_path / "nowhere") == {}
    assert [n.status for n in theory_nodes(THEORY)] == [label(lm.status) for lm in THEORY.lemmas]


@pytest.mark.parametrize("calls", [0, 3])
def test_a_pending_lemma_says_it_has_not_started_until_it_has_calls(calls: int) -> None:
    cost = CostSummary()
    for _ in range(calls):
        cost.add("prover", "theory", 0.0)
    node = lemma_nodes([planned("L1")], {}, costs={"L1": cost})[0]
    texts = [t.text for t in boxes(parsed(render_svg([node])))["L1"].iter(f"{SVG}text")]
    assert ("not started" in texts) == (calls == 0)
