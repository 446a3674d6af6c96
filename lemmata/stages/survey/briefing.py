"""The run's briefing: what its agents are told beyond their own prompts, decided once at the start.

Three sources, each within a budget: the domain plugin's guidance for a role; the skills that
apply to the role, its stage and the run's domain (whole skills only, SKILLS_BUDGET_CHARS); and
for the planning and proving roles, the memories of earlier runs in the run's domain most similar
to its task (MEMORY_TOP_K, whole memories only, MEMORY_BUDGET_CHARS). The text for each role is
appended to that role's system prompt by the model client (llm/client.py), the same in every
call of the run, so a provider's prompt cache still serves consecutive calls.

Memories of a run are read and written under one memory domain: the plugin's name when a plugin
serves the input's domain (so "bandits" and "multi-armed bandits" share what they learn), else
the domain itself, else `general`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lemmata.artifacts import BriefedMemory, Briefing, TaskInput
from lemmata.errors import UserError
from lemmata.memory.domain_memories import Memory, load_memories, slug
from lemmata.memory.embeddings import Embedder
from lemmata.plugins import DomainPlugin, plugin_for
from lemmata.settings import Settings
from lemmata.skills.registry import SkillRegistry, load_skills, render_skills

#: The pipeline stage each agent role works in (skills name stages). `compress` folds an agent's
#: history: a briefing would only make it longer.
ROLE_STAGES = {
    "survey": "survey",
    "extractor": "survey",
    "ideation": "directions",
    "planner": "directions",
    "formalizer": "theory",
    "decomposer": "theory",
    "architect": "theory",
    "prover": "theory",
    "verifier": "theory",
    "refiner": "theory",
    "counterexample": "theory",
    "sketch": "theory",
    "assembler": "theory",
    "consistency": "theory",
    "crystallizer": "theory",
    "analyst": "theory",
    "experiment": "experiment",
    "writer": "writer",
    "qa": "qa",
}
#: Roles that choose or prove: what earlier runs learned is about them. The verifier is left
#: out on purpose: it judges the proof in front of it, not what worked elsewhere.
MEMORY_ROLES = ("ideation", "planner", "decomposer", "architect", "prover", "refiner", "counterexample")
#: The embedded model reads prompts at ~100 tokens/s on a CPU: its budgets are capped.
EMBEDDED_BUDGET_CHARS = 1800
GENERAL_DOMAIN = "general"
MEMORY_HEADING = (
    "## Lessons from earlier runs in this domain\n"
    "Lemmata's memory of its past runs: approaches that worked, and approaches that failed with "
    "the reason. Use what fits this task; they are not results you may cite.\n"
)
KIND_LABELS = {"strategy": "worked", "failure": "failed"}


def memory_domain(domain: str, plugin: DomainPlugin | None) -> str:
    """The memory directory's domain: the plugin's name, else the domain as a slug, else `general`."""
    return slug(plugin.name if plugin is not None else domain) or GENERAL_DOMAIN


def render_memory(memory: Memory) -> str:
    return f"\n- [{KIND_LABELS[memory.kind]}] {memory.title}: {' '.join(memory.text.split())}\n"


def fitting_memories(memories: Sequence[Memory], budget_chars: int, limit: int) -> list[Memory]:
    """Up to `limit`, in the given order (most similar first), each whole while the block stays
    within budget; what an earlier memory said already (runs of one task learn the same) once."""
    chosen: list[Memory] = []
    used, said = len(MEMORY_HEADING), set()
    for memory in memories:
        if len(chosen) == limit:
            break
        line = render_memory(memory)
        if line in said:
            continue
        said.add(line)
        if used + len(line) <= budget_chars:
            chosen.append(memory)
            used += len(line)
    return chosen


def compose_briefing(
    task: TaskInput,
    plugin: DomainPlugin | None,
    registry: SkillRegistry,
    memories: Sequence[Memory],
    *,
    skills_budget: int,
    memory_budget: int,
    memory_count: int,
    notes: Sequence[str] = (),
) -> Briefing:
    """Pure: the text each role gets, from what was found (`memories`, most relevant first)."""
    kept = fitting_memories(memories, memory_budget, memory_count)
    memory_block = MEMORY_HEADING + "".join(render_memory(m) for m in kept) if kept else ""
    notes = list(notes) + [f"skill file skipped: {problem}" for problem in registry.problems]
    if len(kept) < min(memory_count, len(memories)):
        notes.append(
            f"{len(kept)} of the {len(memories)} memories found fit MEMORY_BUDGET_CHARS={memory_budget} "
            "(repeated ones count once)"
        )
    guidance = dict(plugin.guidance) if plugin is not None else {}
    notes += [f"plugin guidance for unknown role {role!r} not used" for role in guidance if role not in ROLE_STAGES]
    by_role: dict[str, str] = {}
    skills: dict[str, list[str]] = {}
    for role, stage in ROLE_STAGES.items():
        chosen = registry.select(role, stage, task.domain or None, skills_budget) if skills_budget else []
        parts = []
        if plugin is not None and guidance.get(role, "").strip():
            parts.append(f"## Domain guidance: {plugin.description}\n{guidance[role].strip()}\n")
        if chosen:
            skills[role] = [skill.name for skill in chosen]
            parts.append(render_skills(chosen))
        if memory_block and role in MEMORY_ROLES:
            parts.append(memory_block)
        if parts:
            by_role[role] = "\n".join(part.strip() + "\n" for part in parts)
    return Briefing(
        domain=task.domain,
        memory_domain=memory_domain(task.domain, plugin),
        plugin=plugin.name if plugin else "",
        memories=[
            BriefedMemory(
                file=m.file,
                title=m.title,
                kind=m.kind,
                session_id=m.session_id,
                similarity=None if m.similarity is None else round(m.similarity, 4),
            )
            for m in kept
        ],
        skills=skills,
        by_role=by_role,
        notes=notes,
    )


def budgets(settings: Settings) -> tuple[int, int]:
    """(skills, memories) characters per role's prompt."""
    skills, memory = settings.SKILLS_BUDGET_CHARS, settings.MEMORY_BUDGET_CHARS
    if settings.LLM_BACKEND == "embedded":
        skills, memory = min(skills, EMBEDDED_BUDGET_CHARS), min(memory, EMBEDDED_BUDGET_CHARS)
    return skills, memory


def brief_run(home: Path, task: TaskInput, settings: Settings, embedder: Embedder | None = None) -> Briefing:
    """Find the run's plugin, skills and memories (the memories ranked by similarity to its task)."""
    plugin = plugin_for(task.domain)
    registry = load_skills(home, [plugin.skills_dir] if plugin is not None and plugin.skills_dir else [])
    domain, notes = memory_domain(task.domain, plugin), []
    memories: list[Memory] = []
    # Twice k found, so that repeated memories (the same task run twice) do not crowd out others.
    found = 2 * settings.MEMORY_TOP_K
    if found:
        try:
            memories = load_memories(home, domain, found, query=task.task, embedder=embedder)
        except UserError as error:  # no embedding model on this platform: the memories, unranked
            notes.append(f"memories not ranked: {error}")
            memories = load_memories(home, domain, found)
    skills_budget, memory_budget = budgets(settings)
    return compose_briefing(
        task,
        plugin,
        registry,
        memories,
        skills_budget=skills_budget,
        memory_budget=memory_budget,
        memory_count=settings.MEMORY_TOP_K,
        notes=notes,
    )
