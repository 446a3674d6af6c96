"""The theory's lemmas as a picture (issue 26): a layered DAG drawn as a self-contained SVG.

Each lemma is a box coloured by its status, in the words of the status ladder
(verification/ladder.py: machine-checked, reviewed, tested, unverified, refuted as formalized),
or running, pending;
an arrow goes from a lemma to each lemma that depends on it. A lemma's depth is the length of
the longest chain of dependencies below it, so every arrow points down; a layer wider than
ROW_NODES lemmas wraps onto more rows, so a plan of many lemmas grows downwards and stays
readable. Within a layer the lemmas keep the plan's order, moved only to sit under what they
depend on (the mean position of their dependencies).

The SVG has no script, no style sheet, no reference (not even an id: arrowheads are drawn, not
markers), and every text of the plan or of the model is XML-escaped: the browser shows it inline
and the run directory keeps it as `theory/lemma_graph.svg` (`versions/v<n>/lemma_graph.svg` for
a rewrite), which a paper may include as a figure. A box's statement shows its mathematics as
plain Unicode (latex/readable.py: `$a \\in \\mathbb{Z}$` reads `a ∈ ℤ`); its `<title>` (a tooltip)
has the id, status, prover turns, model calls, cost and the full statement as written.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from lemmata import layout
from lemmata.artifacts import Lemma, ProvedLemma, Theory, TheoryPlan, atomic_write_text, read_artifact
from lemmata.errors import ArtifactError
from lemmata.latex.readable import readable_math
from lemmata.llm.calllog import read_call_records
from lemmata.run.spending.costs import CostSummary
from lemmata.verification.ladder import label

MACHINE_CHECKED, REVIEWED, TESTED = label("machine_checked"), label("reviewed"), label("tested")
UNVERIFIED, REFUTED = label("unverified"), label("refuted")
RUNNING, PENDING = "running", "pending"
STATUSES = (MACHINE_CHECKED, REVIEWED, TESTED, UNVERIFIED, REFUTED, RUNNING, PENDING)
#: (fill, stroke) of a status: the browser UI's colours, told apart in grey too by the status word.
COLOURS = {
    MACHINE_CHECKED: ("#c9ecd3", "#0f6b2c"),
    REVIEWED: ("#e2f3e6", "#3d8b52"),
    TESTED: ("#fbefd5", "#9a6400"),
    UNVERIFIED: ("#fbe3d3", "#b4540e"),
    REFUTED: ("#f8dcda", "#b3261e"),
    RUNNING: ("#dce8fb", "#1f5fbf"),
    PENDING: ("#eef0f3", "#7a838e"),
}
FONT = "system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif"
TEXT, MUTED = "#1d232b", "#5d6773"

NODE_W, NODE_H = 210, 74
H_GAP, V_GAP, MARGIN, LEGEND_H = 34, 46, 14, 30
SIDE = MARGIN + H_GAP  # room beside the widest row for an arrow that goes round it
ROW_NODES = 5  # at most this many boxes side by side: the picture stays about 1,200 px wide
STATEMENT_CHARS, STATEMENT_LINES = 31, 2
CHAR_W = 6.4  # an estimate of a 12 px character's width, for the legend's spacing

#: Characters XML 1.0 does not allow, even escaped: a model's answer may hold them.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


@dataclass(frozen=True)
class LemmaNode:
    id: str
    statement: str
    depends_on: tuple[str, ...]
    status: str
    turns: int | None = None  # prover turns (ProvedLemma.attempts): known once the lemma is proved
    cost: CostSummary = field(default_factory=CostSummary)  # its prover's and checkers' calls


def lemma_nodes(
    planned: Sequence[Lemma | ProvedLemma],
    proved: Mapping[str, ProvedLemma],
    running: Collection[str] = (),
    costs: Mapping[str, CostSummary] | None = None,
) -> list[LemmaNode]:
    """The plan's lemmas with their statuses: running while a job proves it (again), else the
    status its proof has (verification/ladder.py), else pending. A proof of another statement (the plan was
    made again) is not this lemma's. A lemma id planned twice is drawn once."""
    nodes: dict[str, LemmaNode] = {}
    for lemma in planned:
        if lemma.id in nodes:
            continue
        proof = proved.get(lemma.id)
        if proof is not None and proof.statement != lemma.statement:
            proof = None
        status = RUNNING if lemma.id in running else label(proof.status) if proof else PENDING
        nodes[lemma.id] = LemmaNode(
            id=lemma.id,
            statement=lemma.statement,
            depends_on=tuple(lemma.depends_on),
            status=status,
            turns=proof.attempts if proof else None,
            cost=(costs or {}).get(lemma.id, CostSummary()),
        )
    return list(nodes.values())


def theory_nodes(theory: Theory, costs: Mapping[str, CostSummary] | None = None) -> list[LemmaNode]:
    """An assembled theory's lemmas, each as its proof left it."""
    return lemma_nodes(theory.lemmas, {lemma.id: lemma for lemma in theory.lemmas}, (), costs)


def proof_scope(version: int = 1) -> str:
    """How the call log's scope of a lemma's calls starts: `prove_lemma:<id>` in the first run,
    `rewrite_theory:v<n>:prove_lemma:<id>` in the rewrite to version n."""
    return "prove_lemma:" if version == 1 else f"rewrite_theory:v{version}:prove_lemma:"


def lemma_costs(records: Iterable[Mapping[str, Any]], version: int = 1) -> dict[str, CostSummary]:
    """The calls of each lemma's proof (prover, checkers) in call-log records, by lemma id."""
    prefix = proof_scope(version)
    costs: dict[str, CostSummary] = {}
    for record in records:
        scope = str(record.get("scope", ""))
        if scope.startswith(prefix):
            lemma_id = scope[len(prefix) :].split(":", 1)[0]
            costs.setdefault(lemma_id, CostSummary()).add_record(dict(record))
    return costs


def run_lemma_costs(run_dir: Path, version: int = 1) -> dict[str, CostSummary]:
    calls = Path(run_dir) / layout.LLM_CALLS
    return lemma_costs(read_call_records(calls), version) if calls.is_file() else {}


# --- layout -------------------------------------------------------------------------------------


def depths(nodes: Sequence[LemmaNode]) -> dict[str, int]:
    """Each lemma's depth: 0 without a dependency, else one more than its deepest dependency.
    A dependency that is not a lemma of the plan is left out; on a cycle (a plan should have
    none) the dependency that closes it is left out, so this always ends."""
    known = {node.id: node for node in nodes}
    depth: dict[str, int] = {}
    visiting: set[str] = set()

    def visit(lemma_id: str) -> int:
        if lemma_id in depth:
            return depth[lemma_id]
        visiting.add(lemma_id)
        below = [visit(d) for d in known[lemma_id].depends_on if d in known and d not in visiting]
        visiting.discard(lemma_id)
        depth[lemma_id] = 1 + max(below) if below else 0
        return depth[lemma_id]

    for node in nodes:
        visit(node.id)
    return depth


def rows(nodes: Sequence[LemmaNode]) -> list[list[LemmaNode]]:
    """The boxes row by row, top to bottom: the layers by depth, each in plan order moved under
    its dependencies, a layer of more than ROW_NODES lemmas wrapped onto several rows."""
    depth = depths(nodes)
    order = {node.id: index for index, node in enumerate(nodes)}
    position: dict[str, float] = {}  # a placed lemma's horizontal position within its row, 0 to 1
    placed: list[list[LemmaNode]] = []
    for level in range(max(depth.values(), default=-1) + 1):
        layer = [node for node in nodes if depth[node.id] == level]

        def under_dependencies(node: LemmaNode) -> tuple[float, int]:
            seen = [position[d] for d in node.depends_on if d in position]
            return (sum(seen) / len(seen) if seen else -1.0, order[node.id])

        layer.sort(key=under_dependencies)
        for start in range(0, len(layer), ROW_NODES):
            row = layer[start : start + ROW_NODES]
            for index, node in enumerate(row):
                position[node.id] = (index + 0.5) / len(row)
            placed.append(row)
    return placed


# --- the SVG ------------------------------------------------------------------------------------


def xml_text(text: str) -> str:
    """Model-written text as XML character data or an attribute value: escaped, and without the
    characters XML cannot hold."""
    return escape(_NOT_XML.sub("", text), quote=True)


def shortened(statement: str) -> list[str]:
    """The statement on at most STATEMENT_LINES lines of STATEMENT_CHARS, '…' where it is cut."""
    words = " ".join(statement.split())
    lines = textwrap.wrap(words, STATEMENT_CHARS, break_long_words=True) or [""]
    if len(lines) > STATEMENT_LINES:
        last = lines[STATEMENT_LINES - 1]
        lines = [*lines[: STATEMENT_LINES - 1], last[: STATEMENT_CHARS - 1].rstrip() + "…"]
    return lines


def facts(node: LemmaNode) -> str:
    """The box's last line: turns, calls, cost."""
    parts = []
    if node.turns is not None:
        parts.append(f"{node.turns} turn{'s' if node.turns != 1 else ''}")
    if node.cost.calls:
        parts.append(f"{node.cost.calls} call{'s' if node.cost.calls != 1 else ''}")
        parts.append(node.cost.text if node.cost.unknown_calls < node.cost.calls else "cost unknown")
    elif node.status in (PENDING, RUNNING):
        parts.append("not started" if node.status == PENDING else "first call under way")
    return " · ".join(parts)


def tooltip(node: LemmaNode, known: Collection[str]) -> str:
    turns = "not yet" if node.turns is None else str(node.turns)
    cost = node.cost.text if node.cost.calls else "no call yet"
    lines = [f"{node.id}: {node.status}", f"prover turns: {turns}; model calls: {node.cost.calls}; cost: {cost}"]
    if node.depends_on:
        unknown = [d for d in node.depends_on if d not in known]
        said = ", ".join(node.depends_on) + (f" (not in the plan: {', '.join(unknown)})" if unknown else "")
        lines.append(f"depends on: {said}")
    return "\n".join([*lines, "", node.statement])


def render_svg(nodes: Sequence[LemmaNode], title: str = "The lemma graph") -> str:
    """The picture of `nodes` as an SVG document (text, no XML declaration needed)."""
    placed = rows(nodes)
    widest = max((len(row) for row in placed), default=0)
    counts = {status: sum(node.status == status for node in nodes) for status in STATUSES}
    legend, legend_w = _legend(counts)
    width = int(max(2 * SIDE + widest * NODE_W + max(widest - 1, 0) * H_GAP, legend_w + 2 * MARGIN))
    height = MARGIN + LEGEND_H + len(placed) * (NODE_H + V_GAP) - (V_GAP if placed else 0) + MARGIN

    boxes: dict[str, tuple[float, float]] = {}  # the top-left corner of each box
    for r, row in enumerate(placed):
        row_w = len(row) * NODE_W + (len(row) - 1) * H_GAP
        left = (width - row_w) / 2
        for index, node in enumerate(row):
            boxes[node.id] = (left + index * (NODE_W + H_GAP), MARGIN + LEGEND_H + r * (NODE_H + V_GAP))

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="{FONT}" font-size="12" role="img" '
        f'data-lemmas="{len(nodes)}">',
        f"<title>{xml_text(title)}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        legend,
        *_edges(placed, boxes, width),
        *(_box(node, *boxes[node.id], boxes) for node in nodes),
        "</svg>",
    ]
    return "\n".join(parts) + "\n"


def _legend(counts: Mapping[str, int]) -> tuple[str, float]:
    items, x = [], float(MARGIN)
    for status in STATUSES:
        fill, stroke = COLOURS[status]
        label = f"{status} ({counts[status]})"
        items.append(
            f'<g data-legend="{status}"><rect x="{x:.0f}" y="{MARGIN}" width="12" height="12" rx="2" '
            f'fill="{fill}" stroke="{stroke}"{_dashes(status)}/>'
            f'<text x="{x + 17:.0f}" y="{MARGIN + 10.5}" fill="{TEXT}">{label}</text></g>'
        )
        x += 17 + len(label) * CHAR_W + 18
    return '<g class="legend">' + "".join(items) + "</g>", x - MARGIN - 18


def _dashes(status: str) -> str:
    return ' stroke-dasharray="4 3"' if status == PENDING else ""


def _edges(placed: Sequence[Sequence[LemmaNode]], boxes: Mapping[str, tuple[float, float]], width: float) -> list[str]:
    """An arrow from each dependency to its dependent; the ends of several arrows at one box are
    spread along its edge. An arrow past rows between its ends goes down a free lane beside their
    boxes, never behind one. A dependency that is not in the plan has no arrow."""
    row_of = {node.id: r for r, row in enumerate(placed) for node in row}
    pairs = [
        (d, node.id)
        for row in placed
        for node in row
        for d in dict.fromkeys(node.depends_on)
        if d in boxes and d != node.id
    ]
    leaving: dict[str, list[str]] = {}
    arriving: dict[str, list[str]] = {}
    for source, target in pairs:
        leaving.setdefault(source, []).append(target)
        arriving.setdefault(target, []).append(source)
    for ends in (leaving, arriving):  # left to right, so that neighbouring arrows do not cross
        for others in ends.values():
            others.sort(key=lambda other: boxes[other][0])

    def spread(ends: list[str], other: str) -> float:
        return (ends.index(other) - (len(ends) - 1) / 2) * min(14.0, (NODE_W - 40) / max(len(ends), 1))

    lanes_taken: dict[float, int] = {}
    drawn = []
    for source, target in pairs:
        x1 = boxes[source][0] + NODE_W / 2 + spread(leaving[source], target)
        y1 = boxes[source][1] + NODE_H
        x2 = boxes[target][0] + NODE_W / 2 + spread(arriving[target], source)
        y2 = boxes[target][1]
        tip = y2 - 7  # the arrowhead, 7 px long, ends at the box
        between = [boxes[n.id][0] for r in range(row_of[source] + 1, row_of[target]) for n in placed[r]]
        lane = _lane(between, (x1 + x2) / 2, width) if between else None
        if lane is None:
            bend = max(abs(tip - y1) / 2, 20)
            path = f"M{x1:.1f},{y1:.1f} C{x1:.1f},{y1 + bend:.1f} {x2:.1f},{tip - bend:.1f} {x2:.1f},{tip:.1f}"
        else:
            base = round(lane, 1)  # arrows down the same lane are drawn 5 px apart
            taken = lanes_taken.get(base, 0)
            lanes_taken[base] = taken + 1
            lane = base + 5 * ((taken + 1) // 2) * (1 if taken % 2 else -1)
            # The lane runs from the row below the source to the row above the target.
            top, bottom = y1 + V_GAP, y2 - V_GAP
            down, into = y1 + V_GAP / 2, (bottom + tip) / 2
            path = (
                f"M{x1:.1f},{y1:.1f} C{x1:.1f},{down:.1f} {lane:.1f},{down:.1f} {lane:.1f},{top:.1f} "
                f"L{lane:.1f},{bottom:.1f} C{lane:.1f},{into:.1f} {x2:.1f},{into:.1f} {x2:.1f},{tip:.1f}"
            )
        drawn.append(
            f'<g class="edge" data-from="{xml_text(source)}" data-to="{xml_text(target)}">'
            f'<path d="{path}" fill="none" stroke="#8a939e" stroke-width="1.5"/>'
            f'<path d="M{x2 - 4.5:.1f},{tip:.1f} L{x2 + 4.5:.1f},{tip:.1f} L{x2:.1f},{y2:.1f} Z" fill="#8a939e"/></g>'
        )
    return drawn


def _lane(lefts: Sequence[float], wanted: float, width: float) -> float | None:
    """The x nearest `wanted` of a vertical line that passes beside every box whose left side is
    in `lefts`: the middle of a gap between two boxes, or beside a row; None if there is none."""
    blocked = [(left - 8, left + NODE_W + 8) for left in lefts]
    candidates = [wanted] + [x for left in lefts for x in (left - H_GAP / 2, left + NODE_W + H_GAP / 2)]
    free = [x for x in candidates if 4 <= x <= width - 4 and not any(a < x < b for a, b in blocked)]
    return min(free, key=lambda x: (abs(x - wanted), x)) if free else None


def _box(node: LemmaNode, x: float, y: float, boxes: Collection[str]) -> str:
    fill, stroke = COLOURS.get(node.status, COLOURS[PENDING])
    width = "2.5" if node.status == RUNNING else "1.5"
    lines = "".join(
        f'<text x="{x + 9:.0f}" y="{y + 35 + 14 * i:.0f}" font-size="11" fill="{TEXT}">{xml_text(line)}</text>'
        for i, line in enumerate(shortened(readable_math(node.statement)))
    )
    return (
        f'<g class="lemma" data-lemma="{xml_text(node.id)}" data-status="{node.status}">'
        f"<title>{xml_text(tooltip(node, boxes))}</title>"
        f'<rect x="{x:.0f}" y="{y:.0f}" width="{NODE_W}" height="{NODE_H}" rx="6" fill="{fill}" '
        f'stroke="{stroke}" stroke-width="{width}"{_dashes(node.status)}/>'
        f'<text x="{x + 9:.0f}" y="{y + 18:.0f}" font-weight="bold" font-size="13" fill="{TEXT}">'
        f"{xml_text(_clipped(node.id, 16))}</text>"
        f'<text x="{x + NODE_W - 9:.0f}" y="{y + 18:.0f}" text-anchor="end" font-size="11" fill="{stroke}">'
        f"{node.status}</text>"
        f"{lines}"
        f'<text x="{x + 9:.0f}" y="{y + NODE_H - 8:.0f}" font-size="10.5" fill="{MUTED}">{xml_text(facts(node))}</text>'
        "</g>"
    )


def _clipped(text: str, length: int) -> str:
    return text if len(text) <= length else text[: length - 1] + "…"


# --- a run's pictures ---------------------------------------------------------------------------


def live_lemma_graph(
    run_dir: Path, running: Collection[str] = (), costs: Mapping[str, CostSummary] | None = None
) -> str | None:
    """The first run's picture as it stands: the plan's lemmas, the proofs written so far, the
    lemmas whose job runs; None before the plan exists. A proof that cannot be read (yet) leaves
    its lemma pending."""
    run_dir = Path(run_dir)
    if not (run_dir / layout.PLAN).is_file():
        return None
    plan = read_artifact(run_dir / layout.PLAN, TheoryPlan)
    proved = {}
    for lemma in plan.lemmas:
        path = run_dir / layout.lemma(lemma.id)
        if path.is_file():
            try:
                proved[lemma.id] = read_artifact(path, ProvedLemma)
            except ArtifactError:
                pass
    nodes = lemma_nodes(plan.lemmas, proved, running, run_lemma_costs(run_dir) if costs is None else costs)
    return render_svg(nodes, f"The lemma graph: {plan.goal}")


def write_theory_graph(run_dir: Path, version: int, theory: Theory) -> Path:
    """The picture of a version's assembled theory, with each lemma's calls from the call log,
    written beside it (layout.lemma_graph_of)."""
    path = Path(run_dir) / layout.lemma_graph_of(version)
    nodes = theory_nodes(theory, run_lemma_costs(run_dir, version))
    atomic_write_text(path, render_svg(nodes, f"The lemma graph: {theory.goal}"))
    return path
