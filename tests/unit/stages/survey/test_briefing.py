"""The run's briefing (stages/survey/briefing.py): plugin guidance, skills and domain memories per agent
role, within budgets, and the model client's hook that appends it to a role's system prompt.

No network, no model: memories are ranked by a bag-of-words embedder over a small vocabulary.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from lemmata import layout
from lemmata.agents.client import LLMClient, ModelChoice, run_briefing
from lemmata.artifacts import Briefing, TaskInput, write_artifact
from lemmata.errors import UserError
from lemmata.memory.domain_memories import Memory, domain_dir, write_memory
from lemmata.plugins import DomainPlugin
from lemmata.plugins.bandits import plugin as bandits
from lemmata.settings import Settings
from lemmata.skills.registry import SkillRegistry, load_skills
from lemmata.stages.survey.briefing import (
    EMBEDDED_BUDGET_CHARS,
    GENERAL_DOMAIN,
    MEMORY_HEADING,
    MEMORY_ROLES,
    ROLE_STAGES,
    brief_run,
    budgets,
    compose_briefing,
    memory_domain,
    render_memory,
)
from support.scripted_backend import ScriptedBackend

VOCABULARY = (
    "ucb",
    "exploration",
    "bonus",
    "hoeffding",
    "concentration",
    "thompson",
    "sampling",
    "posterior",
    "prime",
    "sieve",
    "regret",
)


class BagOfWords:
    """Deterministic: one coordinate per vocabulary word (plus one for every other word), unit norm."""

    name = "bag-of-words-test"

    def __init__(self, fail_on_query: bool = False) -> None:
        self.fail_on_query = fail_on_query
        self.queries: list[str] = []

    def embed(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        if query:
            self.queries.extend(texts)
            if self.fail_on_query:
                raise UserError("no embedding model on this platform")
        rows = np.zeros((len(texts), len(VOCABULARY) + 1))
        for row, text in zip(rows, texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                row[VOCABULARY.index(word) if word in VOCABULARY else len(VOCABULARY)] += 1.0
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms == 0, 1.0, norms)


def task(domain: str, text: str = "Bound the regret of UCB1 with Hoeffding concentration.") -> TaskInput:
    return TaskInput(session_id="s-now", mode="prove", task=text, domain=domain)


def memory(
    title: str,
    text: str = "It worked because of a careful union bound.",
    kind: str = "strategy",
    session_id: str = "s-old",
    similarity: float | None = None,
    file: str = "",
) -> Memory:
    return Memory(
        domain="bandits",
        file=file or f"{title.lower().replace(' ', '-')}.md",
        title=title,
        kind=kind,
        session_id=session_id,
        created=1.0,
        text=text,
        similarity=similarity,
    )


def compose(
    registry: SkillRegistry | None = None,
    memories: list[Memory] = (),
    *,
    domain: str = "multi-armed bandits",
    plugin: DomainPlugin | None = bandits,
    skills_budget: int = 6000,
    memory_budget: int = 2400,
    memory_count: int = 4,
    notes: tuple[str, ...] = (),
) -> Briefing:
    return compose_briefing(
        task(domain),
        plugin,
        registry or SkillRegistry(),
        list(memories),
        skills_budget=skills_budget,
        memory_budget=memory_budget,
        memory_count=memory_count,
        notes=notes,
    )


@pytest.fixture
def bandit_skills(tmp_path: Path) -> SkillRegistry:
    return load_skills(tmp_path / "home", [bandits.skills_dir])


# --- memory_domain -------------------------------------------------------------------------------


def test_memory_domain_is_the_plugins_name_when_a_plugin_serves_the_domain() -> None:
    assert memory_domain("Multi-Armed Bandits", bandits) == "bandits"
    assert memory_domain("online learning", bandits) == "bandits"


def test_memory_domain_without_a_plugin_is_the_domain_as_a_slug() -> None:
    assert memory_domain("Number Theory", None) == "number-theory"
    assert memory_domain("  graph_theory / extremal ", None) == "graph-theory-extremal"


def test_memory_domain_of_no_domain_or_only_punctuation_is_general() -> None:
    assert memory_domain("", None) == GENERAL_DOMAIN == "general"
    assert memory_domain("?!--//", None) == "general"


def test_memory_domain_folds_accents_to_ascii() -> None:
    assert memory_domain("Erdős problems", None) == "erdos-problems"


def test_memory_domain_cuts_long_names_without_a_trailing_dash() -> None:
    slug = memory_domain("combinatorics " * 20, None)
    assert 0 < len(slug) <= 60
    assert slug.startswith("combinatorics-combinatorics")
    assert not slug.endswith("-")
    # The slug names a memory directory: the store must accept it.
    assert domain_dir(Path("/nonexistent"), slug).name == slug


# --- compose_briefing: guidance and skills --------------------------------------------------------


def test_plugin_guidance_goes_only_to_the_roles_it_has_guidance_for() -> None:
    briefing = compose()
    assert briefing.plugin == "bandits" and briefing.memory_domain == "bandits"
    assert bandits.guidance["decomposer"] in briefing.by_role["decomposer"]
    assert bandits.guidance["experiment"] in briefing.by_role["experiment"]
    assert "## Domain guidance: " + bandits.description in briefing.by_role["decomposer"]
    for role in ("verifier", "planner", "refiner", "survey"):
        assert "Domain guidance" not in briefing.by_role.get(role, "")
    # No skills, no memories: the roles without guidance get nothing at all.
    assert set(briefing.by_role) == set(bandits.guidance)


def test_no_plugin_means_no_guidance_and_an_empty_plugin_name() -> None:
    briefing = compose(domain="number theory", plugin=None)
    assert briefing.plugin == "" and briefing.memory_domain == "number-theory"
    assert briefing.by_role == {}


def test_guidance_for_a_role_lemmata_does_not_have_is_noted_not_used() -> None:
    plugin = DomainPlugin(
        name="odd", description="odd", domains=("odd",), guidance={"prover": "Use parity.", "oracle": "Ask the oracle."}
    )
    briefing = compose(domain="odd", plugin=plugin)
    assert "Use parity." in briefing.by_role["prover"]
    assert not any("Ask the oracle." in text for text in briefing.by_role.values())
    assert any("'oracle'" in note for note in briefing.notes)


def test_a_plugin_skill_is_selected_for_its_domain_only(bandit_skills: SkillRegistry) -> None:
    assert "regret-bounds" in bandit_skills.skills
    in_domain = compose(bandit_skills, domain="multi-armed bandits")
    assert "regret-bounds" in in_domain.skills["prover"]
    assert "### regret-bounds" in in_domain.by_role["prover"]
    elsewhere = compose(bandit_skills, domain="number theory", plugin=None)
    assert "regret-bounds" not in elsewhere.skills.get("prover", [])
    assert "### regret-bounds" not in elsewhere.by_role.get("prover", "")
    # The bundled, domain-free skills still apply there.
    assert elsewhere.skills["prover"]


def test_a_skills_budget_of_zero_selects_no_skills(bandit_skills: SkillRegistry) -> None:
    briefing = compose(bandit_skills, skills_budget=0)
    assert briefing.skills == {}
    assert not any("## Skills" in text for text in briefing.by_role.values())
    assert bandits.guidance["prover"] in briefing.by_role["prover"]  # guidance has no budget


def test_malformed_skill_files_become_notes(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    skills.mkdir()
    (skills / "broken.md").write_text("no front matter here\n", encoding="utf-8")
    registry = load_skills(tmp_path / "home", [skills])
    assert registry.problems
    briefing = compose(registry)
    assert any(note.startswith("skill file skipped: ") and "broken.md" in note for note in briefing.notes)


# --- compose_briefing: memories -------------------------------------------------------------------


def test_memories_go_only_to_the_roles_that_plan_and_prove() -> None:
    briefing = compose(memories=[memory("Hoeffding then union bound")], plugin=None, domain="number theory")
    for role in MEMORY_ROLES:
        assert MEMORY_HEADING.strip() in briefing.by_role[role]
        assert "[worked] Hoeffding then union bound" in briefing.by_role[role]
    for role in ("verifier", "writer", "survey", "qa", "experiment"):
        assert role not in briefing.by_role
    assert "compress" not in ROLE_STAGES and "compress" not in briefing.by_role
    assert set(briefing.by_role) == set(MEMORY_ROLES)


def test_failure_memories_are_labelled_failed() -> None:
    briefing = compose(memories=[memory("Naive union bound", "Lost a log factor.", kind="failure")])
    assert "- [failed] Naive union bound: Lost a log factor." in briefing.by_role["prover"]


def test_memory_text_is_put_on_one_line() -> None:
    assert render_memory(memory("T", "first line\n\n  second   line")) == "\n- [worked] T: first line second line\n"


def test_memory_budget_keeps_whole_memories_only_and_says_some_were_left_out() -> None:
    found = [memory(f"Memory {n}", f"Lesson number {n} about confidence intervals.") for n in (1, 2, 3)]
    exactly_two = len(MEMORY_HEADING) + len(render_memory(found[0])) + len(render_memory(found[1]))
    briefing = compose(memories=found, memory_budget=exactly_two)
    assert [m.title for m in briefing.memories] == ["Memory 1", "Memory 2"]
    assert "Memory 3" not in briefing.by_role["prover"]
    assert any(
        "2 of the 3 memories" in note and f"MEMORY_BUDGET_CHARS={exactly_two}" in note for note in briefing.notes
    )
    # One character less and the second no longer fits, whole.
    shorter = compose(memories=found, memory_budget=exactly_two - 1)
    assert [m.title for m in shorter.memories] == ["Memory 1"]


def test_all_memories_fitting_leaves_no_note() -> None:
    briefing = compose(memories=[memory("A"), memory("B")])
    assert [m.title for m in briefing.memories] == ["A", "B"]
    assert not any("memories found" in note for note in briefing.notes)


def test_a_budget_smaller_than_the_heading_gives_no_memory_block() -> None:
    briefing = compose(memories=[memory("A")], memory_budget=len(MEMORY_HEADING))
    assert briefing.memories == []
    assert "Lessons from earlier runs" not in briefing.by_role.get("prover", "")


def test_memory_count_limits_how_many_are_given() -> None:
    found = [memory(f"Memory {n}") for n in range(5)]
    briefing = compose(memories=found, memory_count=2)
    assert [m.title for m in briefing.memories] == ["Memory 0", "Memory 1"]
    assert briefing.by_role["prover"].count("- [worked]") == 2
    assert compose(memories=found, memory_count=0).memories == []


def test_a_repeated_memory_is_given_once() -> None:
    same = dict(title="Hoeffding then union bound", text="Worked for UCB1.", kind="strategy")
    found = [
        memory(**same, session_id="s-1", file="a.md"),
        memory(**same, session_id="s-2", file="b.md"),
        memory("Another lesson"),
    ]
    briefing = compose(memories=found, memory_count=3)
    assert [m.file for m in briefing.memories] == ["a.md", "another-lesson.md"]
    assert briefing.by_role["prover"].count("Hoeffding then union bound") == 1
    # Same words but another kind is another lesson.
    both = compose(memories=[memory(**{**same, "kind": "failure"}), memory(**same)])
    assert len(both.memories) == 2


def test_briefed_memories_record_where_they_came_from() -> None:
    found = [
        memory("Ranked", kind="failure", session_id="s-7", similarity=0.123456789, file="ranked.md"),
        memory("Unranked", file="unranked.md"),
    ]
    briefing = compose(memories=found)
    first, second = briefing.memories
    assert (first.file, first.title, first.kind, first.session_id) == ("ranked.md", "Ranked", "failure", "s-7")
    assert first.similarity == 0.1235
    assert second.similarity is None
    # A briefing is a valid artifact: it survives a write and a read.
    assert Briefing.model_validate_json(briefing.model_dump_json()) == briefing


def test_given_notes_are_kept_first() -> None:
    assert compose(notes=("memories not ranked: x",)).notes[0] == "memories not ranked: x"


# --- budgets --------------------------------------------------------------------------------------


def test_budgets_default_to_the_settings() -> None:
    assert budgets(Settings()) == (6000, 2400)


def test_the_embedded_backend_caps_both_budgets() -> None:
    assert budgets(Settings(LLM_BACKEND="embedded")) == (EMBEDDED_BUDGET_CHARS, EMBEDDED_BUDGET_CHARS)


def test_a_budget_below_the_embedded_cap_is_kept() -> None:
    settings = Settings(LLM_BACKEND="embedded", SKILLS_BUDGET_CHARS=500, MEMORY_BUDGET_CHARS=300)
    assert budgets(settings) == (500, 300)
    # Other backends are not capped.
    assert budgets(Settings(LLM_BACKEND="local", SKILLS_BUDGET_CHARS=9000)) == (9000, 2400)


# --- brief_run ------------------------------------------------------------------------------------


@pytest.fixture
def home_with_memories(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    embedder = BagOfWords()
    for title, text in (
        ("UCB exploration bonus", "The exploration bonus of UCB bounds the pulls."),
        ("Hoeffding concentration", "Hoeffding concentration gives the regret bound."),
        ("Thompson sampling", "A Thompson sampling posterior argument."),
    ):
        write_memory(home, "bandits", title=title, text=text, kind="strategy", session_id="s-b", embedder=embedder)
    write_memory(
        home,
        "number-theory",
        title="Prime sieve",
        text="A sieve bounded the primes.",
        kind="failure",
        session_id="s-n",
        embedder=embedder,
    )
    return home


def test_brief_run_gives_the_domains_memories_most_similar_to_the_task_first(home_with_memories: Path) -> None:
    embedder = BagOfWords()
    briefing = brief_run(
        home_with_memories,
        task("multi-armed bandits", "Hoeffding concentration for regret"),
        Settings(),
        embedder=embedder,
    )
    assert briefing.memory_domain == "bandits" and briefing.plugin == "bandits"
    titles = [m.title for m in briefing.memories]
    assert sorted(titles) == ["Hoeffding concentration", "Thompson sampling", "UCB exploration bonus"]
    assert titles[0] == "Hoeffding concentration"
    assert "Prime sieve" not in briefing.by_role["prover"]
    assert briefing.memories[0].similarity > briefing.memories[-1].similarity
    assert embedder.queries == ["Hoeffding concentration for regret"]
    # The plugin's skill and guidance come with them.
    assert "regret-bounds" in briefing.skills["prover"]
    assert bandits.guidance["decomposer"] in briefing.by_role["decomposer"]
    other = brief_run(
        home_with_memories,
        task("multi-armed bandits", "Thompson sampling posterior"),
        Settings(),
        embedder=BagOfWords(),
    )
    assert other.memories[0].title == "Thompson sampling"


def test_brief_run_reads_another_domains_memories_only(home_with_memories: Path) -> None:
    briefing = brief_run(home_with_memories, task("Number Theory", "A prime sieve"), Settings(), embedder=BagOfWords())
    assert briefing.memory_domain == "number-theory" and briefing.plugin == ""
    assert [m.title for m in briefing.memories] == ["Prime sieve"]
    assert "regret-bounds" not in briefing.skills.get("prover", [])


def test_brief_run_with_memory_top_k_zero_gives_no_memories(home_with_memories: Path) -> None:
    embedder = BagOfWords()
    briefing = brief_run(home_with_memories, task("bandits"), Settings(MEMORY_TOP_K=0), embedder=embedder)
    assert briefing.memories == []
    assert not any("Lessons from earlier runs" in text for text in briefing.by_role.values())
    assert embedder.queries == []


def test_brief_run_top_k_limits_the_memories(home_with_memories: Path) -> None:
    briefing = brief_run(
        home_with_memories, task("bandits", "Thompson sampling"), Settings(MEMORY_TOP_K=1), embedder=BagOfWords()
    )
    assert [m.title for m in briefing.memories] == ["Thompson sampling"]


def test_brief_run_without_a_query_embedding_gives_the_memories_unranked(home_with_memories: Path) -> None:
    briefing = brief_run(
        home_with_memories, task("multi-armed bandits"), Settings(), embedder=BagOfWords(fail_on_query=True)
    )
    assert [m.title for m in briefing.memories] == [
        "UCB exploration bonus",
        "Hoeffding concentration",
        "Thompson sampling",
    ]
    assert all(m.similarity is None for m in briefing.memories)
    assert any(note.startswith("memories not ranked:") and "no embedding model" in note for note in briefing.notes)
    assert "UCB exploration bonus" in briefing.by_role["prover"]


def test_brief_run_in_an_empty_home_gives_no_memories(tmp_path: Path) -> None:
    briefing = brief_run(tmp_path / "empty", task(""), Settings(), embedder=BagOfWords())
    assert briefing.memory_domain == "general" and briefing.memories == []


# --- the model client's hook ----------------------------------------------------------------------


def client(briefing: dict[str, str] | None) -> tuple[LLMClient, ScriptedBackend]:
    backend = ScriptedBackend({"prover": ["proof", "proof again"], "verifier": ["valid"]})
    settings = Settings.from_mapping({"LLM_RETRY_WAIT_MIN": 0, "LLM_RETRY_WAIT_MAX": 0})
    return LLMClient(backend, settings, ModelChoice("scripted-active", "scripted-fast"), briefing=briefing), backend


def test_the_client_appends_a_roles_briefing_to_its_system_prompt_only() -> None:
    llm, backend = client({"prover": "EXTRA"})
    assert llm.complete("prover", "You prove.  \n", "Prove it.") == "proof"
    llm.complete("verifier", "You check.", "Check it.")
    (prover,) = backend.calls("prover")
    (verifier,) = backend.calls("verifier")
    assert prover.system == "You prove.\n\nEXTRA"
    assert verifier.system == "You check."


def test_a_scoped_client_keeps_the_briefing() -> None:
    llm, backend = client({"prover": "EXTRA"})
    scoped = llm.scoped("lemma-1")
    assert scoped.briefing == {"prover": "EXTRA"}
    scoped.complete("prover", "You prove.", "Prove it.")
    assert backend.calls("prover")[0].system.endswith("\n\nEXTRA")


def test_the_client_without_a_briefing_sends_the_system_prompt_unchanged() -> None:
    llm, backend = client(None)
    llm.complete("prover", "You prove.", "Prove it.")
    assert backend.calls("prover")[0].system == "You prove."


def test_the_client_copies_the_briefing_it_is_given() -> None:
    given = {"prover": "EXTRA"}
    llm, backend = client(given)
    given["prover"] = "CHANGED"
    llm.complete("prover", "You prove.", "Prove it.")
    assert backend.calls("prover")[0].system.endswith("EXTRA")


def test_run_briefing_is_empty_without_a_briefing_file(tmp_path: Path) -> None:
    assert run_briefing(tmp_path) == {}


def test_run_briefing_reads_the_text_by_role(tmp_path: Path) -> None:
    write_artifact(
        tmp_path / layout.BRIEFING,
        Briefing(domain="bandits", memory_domain="bandits", by_role={"prover": "EXTRA", "decomposer": "SPLIT"}),
    )
    assert run_briefing(tmp_path) == {"prover": "EXTRA", "decomposer": "SPLIT"}


def test_a_composed_briefing_reaches_the_prover_through_the_run_directory(tmp_path: Path) -> None:
    composed = compose(memories=[memory("Hoeffding then union bound")])
    write_artifact(tmp_path / layout.BRIEFING, composed)
    llm, backend = client(run_briefing(tmp_path))
    llm.complete("prover", "You prove.", "Prove it.")
    llm.complete("verifier", "You check.", "Check it.")
    assert "[worked] Hoeffding then union bound" in backend.calls("prover")[0].system
    assert bandits.guidance["prover"] in backend.calls("prover")[0].system
    assert backend.calls("verifier")[0].system == "You check."


def test_a_job_reads_and_writes_memories_in_the_data_directory_its_run_lives_in(tmp_path, monkeypatch):
    from lemmata.settings import data_home_of

    monkeypatch.setenv("LEMMATA_HOME", str(tmp_path / "elsewhere"))
    assert data_home_of(tmp_path / "home" / "runs" / "20261121-1") == tmp_path / "home"
    # A workflow run by hand in any directory uses $LEMMATA_HOME, not two folders up.
    assert data_home_of(tmp_path / "work" / "my-run") == tmp_path / "elsewhere"
