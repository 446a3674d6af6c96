"""The package's shape, checked on its source: imports between packages point one way, the model
layer knows nothing of agents or runs, and every run-folder file name is spelled in one place
(lemmata/layout.py). Each test names the offending module, so a new import or literal that
breaks the shape fails here with where it is."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import lemmata
from lemmata import layout

PACKAGE = Path(lemmata.__file__).resolve().parent


def unit_of(module: str) -> str | None:
    """The architectural unit of a dotted module name: a subpackage of lemmata, or a root module."""
    parts = module.split(".")
    if parts[0] != "lemmata" or len(parts) == 1:
        return None
    return parts[1]


def import_edges() -> dict[str, dict[str, set[str]]]:
    """unit -> imported unit -> the files that import it (imports inside functions count too)."""
    edges: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        source = unit_of(".".join(relative.parts))
        if source in (None, "scripts", "__main__"):  # the scripts are the top: Snakemake runs them
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            for name in names:
                target = unit_of(name)
                if (
                    target
                    and target != source
                    and ((PACKAGE / target).is_dir() or (PACKAGE / f"{target}.py").is_file())
                ):
                    edges[source][target].add(str(path.relative_to(PACKAGE)))
    return edges


def cycles(edges: dict[str, dict[str, set[str]]]) -> list[list[str]]:
    """The strongly connected components with more than one unit (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(unit: str) -> None:
        index[unit] = low[unit] = len(index)
        stack.append(unit)
        for other in edges.get(unit, {}):
            if other not in index:
                visit(other)
                low[unit] = min(low[unit], low[other])
            elif other in stack:
                low[unit] = min(low[unit], index[other])
        if low[unit] == index[unit]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == unit:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for unit in list(edges):
        if unit not in index:
            visit(unit)
    return found


def test_no_import_cycle_between_packages() -> None:
    edges = import_edges()
    found = cycles(edges)
    detail = [
        {
            unit: {other: sorted(files) for other, files in edges[unit].items() if other in component}
            for unit in component
        }
        for component in found
    ]
    assert not found, detail


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b": {"x"}}, "b": {"c": {"y"}}, "c": {"a": {"z"}}, "d": {"a": {"w"}}}) == [["a", "b", "c"]]


def test_the_model_layer_knows_neither_agents_nor_runs() -> None:
    """lemmata/llm is the backends: it must not import the agents, the stages, the run lifecycle,
    the artifacts of a run or the run folder's layout."""
    imported = import_edges()["llm"]
    forbidden = {"agents", "stages", "run", "artifacts", "layout", "verification", "server", "cli"}
    assert not forbidden & set(imported), {unit: sorted(imported[unit]) for unit in forbidden & set(imported)}


def run_folder_names() -> set[str]:
    """The file names lemmata/layout.py defines, as they would be spelled as literals elsewhere."""
    names = {value for name, value in vars(layout).items() if name.isupper() and isinstance(value, str)}
    names |= {layout.paper_tex(1), layout.paper_pdf(1), layout.paper_meta(1), layout.compile_report(1)}
    names -= {layout.LOGS, layout.GATES, layout.FIGURES, layout.VERSIONS, layout.REVISIONS}  # words, too common
    return names


def test_run_folder_names_are_spelled_only_in_the_layout_module() -> None:
    sources = [*PACKAGE.rglob("*.py"), *PACKAGE.glob("rules/*.smk"), PACKAGE / "Snakefile"]
    spelled = defaultdict(list)
    for path in sources:
        if path == PACKAGE / "layout.py":
            continue
        text = path.read_text(encoding="utf-8")
        for name in run_folder_names():
            if re.search(rf"""["']{re.escape(name)}["']""", text):
                spelled[name].append(str(path.relative_to(PACKAGE)))
    # config.yaml: also the name of the package's default config and of each cluster profile's.
    allowed = {layout.CONFIG: {"Snakefile", "settings.py", "profiles/__init__.py"}}
    offending = {name: files for name, files in spelled.items() if set(files) - allowed.get(name, set())}
    assert not offending, offending


def test_the_literal_scan_sees_a_literal() -> None:
    assert layout.THEORY in run_folder_names() and layout.LLM_CALLS in run_folder_names()
