"""The package's shape, checked on its source: imports between packages point one way, the model
layer knows nothing of agents or runs, and every run-folder file name is spelled in one place
(lemmata/layout.py). Each test names the offending module, so a new import or literal that
breaks the shape fails here with where it is."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import lemmata
from lemmata import home_layout, layout
from lemmata.run.pipeline import REWRITE_RULES, STAGES, Stage

PACKAGE = Path(lemmata.__file__).resolve().parent
TESTS = Path(__file__).resolve().parents[2]
BENCH = TESTS.parent / "bench"


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


#: The floors of docs/architecture.md, top first: a unit imports only units on lower floors. A new
#: unit must be given its floor here (and there) before it can import or be imported.
FLOORS = (
    ("cli",),
    ("server", "scripts"),
    ("pictures",),
    ("run",),
    ("stages",),
    ("verification", "skills"),
    ("agents", "memory"),
    ("tools", "latex", "formal"),
    ("llm", "artifacts"),
    ("redaction", "os_errors"),
    ("settings", "isolation", "plugins", "profiles"),
    (
        "layout",
        "home_layout",
        "errors",
        "files",
        "jsonl",
        "credentials",
        "private_files",
        "machine_cache",
        "process_exit",
        "kernel",
        "terminal_text",
    ),
)


def floor_of(unit: str) -> int:
    """0 for the top floor; a unit on no floor is an error that names it."""
    for level, units in enumerate(FLOORS):
        if unit in units:
            return level
    raise AssertionError(f"{unit} has no floor: add it to FLOORS and to docs/architecture.md's table")


def upward_imports(edges: dict[str, dict[str, set[str]]]) -> dict[str, list[str]]:
    """'unit -> unit' for each import that does not point to a lower floor, with its files."""
    return {
        f"{unit} -> {other}": sorted(files)
        for unit, targets in edges.items()
        for other, files in targets.items()
        if floor_of(unit) >= floor_of(other)
    }


def test_every_import_points_to_a_lower_floor() -> None:
    assert not upward_imports(import_edges())


def test_the_floor_check_sees_an_import_upwards_and_a_unit_without_a_floor() -> None:
    assert upward_imports({"stages": {"run": {"stages/x.py"}}}) == {"stages -> run": ["stages/x.py"]}
    assert upward_imports({"stages": {"verification": {"stages/y.py"}}}) == {}
    try:
        upward_imports({"newcomer": {"layout": {"newcomer/z.py"}}})
    except AssertionError as error:
        assert "newcomer has no floor" in str(error)
    else:
        raise AssertionError("a unit without a floor passed")


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


def layout_aliases(source: str, where: str) -> list[str]:
    """Second names of a layout name in one file: `X = layout.Y`, `from lemmata.layout import Y as X`,
    and a layout name imported from a module that is not the layout's (which re-exports it)."""
    found = []
    owners = {"lemmata.layout": layout, "lemmata.home_layout": home_layout}
    names = {name for module in owners.values() for name in vars(module) if name.isupper()}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute):
            value = node.value
            if isinstance(value.value, ast.Name) and value.value.id in ("layout", "home_layout"):
                found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                if node.module in owners and alias.asname:
                    found.append(f"{where}:{node.lineno}: {alias.name} imported as {alias.asname}")
                elif node.module not in owners and node.module.startswith("lemmata") and alias.name in names:
                    origin = f"{node.module}.{alias.name}"
                    if not hasattr(owners.get(node.module, object()), alias.name) and _is_layout_name(origin):
                        found.append(f"{where}:{node.lineno}: {alias.name} imported from {node.module}")
    return found


def _is_layout_name(dotted: str) -> bool:
    """Whether `module.NAME` is a layout constant under another name (an alias), not a name of its own."""
    module_name, name = dotted.rsplit(".", 1)
    try:
        module = __import__(module_name, fromlist=[name])
    except ImportError:
        return False
    value = getattr(module, name, None)
    return isinstance(value, str) and any(getattr(owner, name, None) == value for owner in (layout, home_layout))


def test_no_second_name_for_a_layout_name() -> None:
    sources = [*PACKAGE.rglob("*.py"), *TESTS.rglob("*.py"), *BENCH.rglob("*.py")]
    found = [alias for path in sources for alias in layout_aliases(path.read_text(encoding="utf-8"), str(path))]
    assert not found, found


def test_the_alias_check_sees_each_kind_of_alias() -> None:
    planted = (
        "from lemmata import layout\n"
        "RUN_RECORD = layout.RUN_RECORD\n"
        "from lemmata.layout import EVENTS as EVENTS_FILE\n"
        "from lemmata.run.pipeline import STAGES\n"  # a name of its own: no alias
    )
    found = layout_aliases(planted, "planted.py")
    assert [line.split(": ", 1)[1] for line in found] == [
        "RUN_RECORD = layout.RUN_RECORD",
        "EVENTS imported as EVENTS_FILE",
    ]


#: The data directory's names, spelled where a path is joined (`home / "runs"`); each defined once,
#: in home_layout.py. `skills` is also the folder of a plugin's skills, `prices.yaml` also the
#: bundled price table's name beside its module.
DATA_HOME_NAMES = {
    value: name for name, value in vars(home_layout).items() if name.isupper() and isinstance(value, str)
}
DATA_HOME_NAME_ALLOWED = {home_layout.SKILLS: {"plugins/bandits/__init__.py"}, home_layout.PRICES: {"llm/prices.py"}}


def data_home_literals(text: str) -> set[str]:
    return {value for value in DATA_HOME_NAMES if re.search(rf"""/\s*(?:f?["']){re.escape(value)}["']""", text)}


def test_data_home_names_are_spelled_only_in_the_home_layout_module() -> None:
    spelled = defaultdict(list)
    for path in PACKAGE.rglob("*.py"):
        if path == PACKAGE / "home_layout.py":
            continue
        for value in data_home_literals(path.read_text(encoding="utf-8")):
            spelled[value].append(str(path.relative_to(PACKAGE)))
    offending = {
        value: files for value, files in spelled.items() if set(files) - DATA_HOME_NAME_ALLOWED.get(value, set())
    }
    assert not offending, offending


def test_the_data_home_scan_sees_a_path_join() -> None:
    assert data_home_literals('run_dir = home / "runs" / session_id') == {"runs"}
    assert data_home_literals('{"runs": summaries}') == set()  # a JSON key, not a path


def workflow_rules() -> set[str]:
    """Every rule and checkpoint the packaged workflow defines (Snakefile and rules/*.smk)."""
    rules = set()
    for path in [PACKAGE / "Snakefile", *PACKAGE.glob("rules/*.smk")]:
        rules |= set(re.findall(r"^(?:rule|checkpoint)\s+(\w+)\s*:", path.read_text(encoding="utf-8"), re.M))
    return rules


def stage_list_problems(rules: set[str], stages: Sequence[Stage], rewrite_rules: Sequence[str]) -> list[str]:
    """What keeps the stage list and the workflow from naming the same rules, once each."""
    owners: dict[str, list[str]] = defaultdict(list)
    for stage in stages:
        for rule in stage.rules:
            owners[rule].append(stage.name)
    for rule in rewrite_rules:
        owners[rule].append("the rewrite")
    problems = [f"{rule} belongs to {' and '.join(names)}" for rule, names in owners.items() if len(names) > 1]
    problems += [f"{rule} is in no stage of pipeline.STAGES nor in REWRITE_RULES" for rule in rules - set(owners)]
    problems += [f"{rule} is listed but the workflow has no such rule" for rule in set(owners) - rules]
    return sorted(problems)


def test_every_rule_of_the_workflow_belongs_to_exactly_one_stage_and_back() -> None:
    rules = workflow_rules() - {"all"}  # the target rule: it makes nothing
    assert "prove_lemma" in rules and "rewrite_context" in rules
    assert not stage_list_problems(rules, STAGES, REWRITE_RULES)


def test_the_stage_list_check_sees_a_rule_missing_renamed_or_listed_twice() -> None:
    stages = [Stage("survey", ("intake", "survey"), "survey.json"), Stage("theory", ("survey",), "theory.json")]
    assert stage_list_problems({"intake", "survey", "prove_lemma"}, stages, ["rewrite_theory"]) == [
        "prove_lemma is in no stage of pipeline.STAGES nor in REWRITE_RULES",
        "rewrite_theory is listed but the workflow has no such rule",
        "survey belongs to survey and theory",
    ]
