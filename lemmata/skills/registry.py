"""Skills: markdown guidance with a YAML front matter, loaded from ordered sources and selected
per agent role, stage and domain within a character budget.

Sources, later replacing earlier by name: the bundled `lemmata/skills/*.md`, the installed
`$LEMMATA_HOME/skills/` (`*.md` at its top, `SKILL.md` in any folder below), then any domain
directories (same layout). A malformed file is skipped and reported as a `SkillProblem`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from lemmata.agents.roles import ROLES
from lemmata.home_layout import SKILLS
from lemmata.plugins import normalised_domain

Stage = Literal["survey", "directions", "theory", "experiment", "writer", "qa"]
STAGES: tuple[str, ...] = get_args(Stage)
BUNDLED_DIR = Path(__file__).parent
SKILL_FILE = "SKILL.md"
#: Markdown files that document a skills folder rather than being a skill.
NOT_SKILLS = frozenset({"readme.md"})
#: Characters of prompt the skills of one call may take, heading included.
DEFAULT_BUDGET_CHARS = 6000
HEADING = "## Skills\nGuidance that applies to this task; follow it where it fits.\n"
SLUG = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
#: Near misses of our plural keys: silently ignored, they would widen a skill to every stage.
SINGULAR_KEYS = {"role": "roles", "stage": "stages", "domain": "domains"}


class SkillFrontMatter(BaseModel):
    """The fields of a skill's front matter; keys of other skill formats are ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    name: str = Field(description="slug: lowercase letters, digits, '-', '_', '.'")
    description: str = Field(description="one line: what the guidance is for")
    roles: tuple[str, ...] = Field(min_length=1, description="agent roles whose prompts get the skill")
    stages: tuple[Stage, ...] = Field((), description="pipeline stages; empty: every stage")
    domains: tuple[str, ...] = Field((), description="research domains; empty: every domain")
    priority: int = Field(0, description="higher first when the budget is short")

    @model_validator(mode="before")
    @classmethod
    def _no_singular_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for wrong, right in SINGULAR_KEYS.items():
                if wrong in data:
                    raise ValueError(f"unknown field {wrong!r}: the field is {right!r} (a list)")
        return data

    @field_validator("roles", "stages", "domains", mode="before")
    @classmethod
    def _one_is_a_list(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("name")
    @classmethod
    def _slug(cls, value: str) -> str:
        if not SLUG.fullmatch(value):
            raise ValueError(f"{value!r} is not a slug (lowercase letters, digits, '-', '_', '.'; at most 64)")
        return value

    @field_validator("description")
    @classmethod
    def _one_line(cls, value: str) -> str:
        value = value.strip()
        if not value or "\n" in value:
            raise ValueError("must be one non-empty line")
        return value

    @field_validator("roles")
    @classmethod
    def _known_roles(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [r for r in value if r not in ROLES]
        if unknown:
            raise ValueError(f"unknown agent role {unknown[0]!r} (roles: {', '.join(ROLES)})")
        return value

    @field_validator("domains")
    @classmethod
    def _normalised_domains(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(normalised_domain(d) for d in value)


class Skill(SkillFrontMatter):
    body: str
    path: Path


@dataclass(frozen=True)
class SkillProblem:
    """A skill file that could not be used, and why."""

    path: Path
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class SkillError(ValueError):
    """A skill file is malformed; the message says what is wrong."""


def parse_skill(text: str, path: Path) -> Skill:
    """The skill in `text` (the content of `path`); SkillError says what is wrong."""
    front, body = split_front_matter(text)
    try:
        meta = SkillFrontMatter.model_validate(front)
    except ValidationError as exc:
        raise SkillError(_validation_message(exc)) from None
    if not body.strip():
        raise SkillError("the body is empty: a skill needs guidance text after its front matter")
    return Skill(**meta.model_dump(), body=body.strip(), path=path)


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """The YAML mapping between the opening and closing `---` lines, and the rest."""
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise SkillError("no front matter: the file must begin with a '---' line, the YAML fields, then '---'")
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() in ("---", "...")), None)
    if end is None:
        raise SkillError("the front matter is not closed: no '---' line after the opening one")
    try:
        front = yaml.safe_load("".join(lines[1:end]))
    except yaml.YAMLError as exc:
        raise SkillError(f"the front matter is not valid YAML: {_yaml_message(exc)}") from None
    if not isinstance(front, dict):
        raise SkillError("the front matter is not a mapping of fields (name: ..., roles: [...])")
    return front, "".join(lines[end + 1 :])


def _yaml_message(exc: yaml.YAMLError) -> str:
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    mark = getattr(exc, "problem_mark", None)
    return f"{problem} (line {mark.line + 2})" if mark is not None else problem  # +2: 0-based, after '---'


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"]).lstrip(".")
        message = error["msg"].removeprefix("Value error, ")
        parts.append(
            f"field {where!r} is missing" if error["type"] == "missing" else f"{where}: {message}" if where else message
        )
    return "; ".join(parts)


def skill_files(directory: Path, top_level_only: bool = False) -> list[Path]:
    """The skill files of a folder: `*.md` at its top, and (unless bundled) `SKILL.md` below."""
    if not directory.is_dir():
        return []
    files = {p for p in directory.glob("*.md") if p.is_file() and p.name.lower() not in NOT_SKILLS}
    if not top_level_only:
        files |= {p for p in directory.rglob(SKILL_FILE) if p.is_file()}
    return sorted(files)


def load_file(path: Path) -> Skill:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SkillError(f"cannot be read: {exc}") from None
    return parse_skill(text, path)


@dataclass(frozen=True)
class SkillRegistry:
    """The usable skills by name, and the files that were skipped."""

    skills: dict[str, Skill] = field(default_factory=dict)
    problems: tuple[SkillProblem, ...] = ()

    def select(
        self, role: str, stage: str, domain: str | None = None, budget_chars: int = DEFAULT_BUDGET_CHARS
    ) -> list[Skill]:
        return select_skills(self.skills.values(), role, stage, domain, budget_chars)

    def prompt_block(
        self, role: str, stage: str, domain: str | None = None, budget_chars: int = DEFAULT_BUDGET_CHARS
    ) -> str:
        return render_skills(self.select(role, stage, domain, budget_chars))


def load_registry(sources: Sequence[Iterable[Path]]) -> SkillRegistry:
    """Skills from `sources` (lists of files, in order): a later source replaces an earlier
    skill of the same name; within one source the first file of a name is kept."""
    skills: dict[str, Skill] = {}
    problems: list[SkillProblem] = []
    for files in sources:
        seen: dict[str, Path] = {}
        for path in files:
            try:
                skill = load_file(path)
            except SkillError as exc:
                problems.append(SkillProblem(path, str(exc)))
                continue
            if skill.name in seen:
                problems.append(
                    SkillProblem(path, f"skipped: the skill {skill.name!r} is already in {seen[skill.name]}")
                )
                continue
            seen[skill.name] = path
            skills[skill.name] = skill
    return SkillRegistry(skills, tuple(problems))


def default_sources(home: Path, domain_dirs: Sequence[Path] = ()) -> list[list[Path]]:
    """Bundled, then installed in `home/skills`, then each domain directory."""
    return [
        skill_files(BUNDLED_DIR, top_level_only=True),
        skill_files(home / SKILLS),
        *(skill_files(d) for d in domain_dirs),
    ]


def load_skills(home: Path, domain_dirs: Sequence[Path] = ()) -> SkillRegistry:
    return load_registry(default_sources(home, domain_dirs))


def applies(skill: Skill, role: str, stage: str, domain: str | None) -> bool:
    """For this role; for this stage unless it names none; for this domain unless it names none."""
    if role not in skill.roles or (skill.stages and stage not in skill.stages):
        return False
    return not skill.domains or (domain is not None and normalised_domain(domain) in skill.domains)


def select_skills(
    skills: Iterable[Skill], role: str, stage: str, domain: str | None, budget_chars: int = DEFAULT_BUDGET_CHARS
) -> list[Skill]:
    """The skills that apply, higher priority first then by name, each taken whole while the
    rendered block stays within `budget_chars`; one that does not fit is left out entirely."""
    if role not in ROLES:
        raise ValueError(f"unknown agent role {role!r}")
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r} (stages: {', '.join(STAGES)})")
    candidates = sorted((s for s in skills if applies(s, role, stage, domain)), key=lambda s: (-s.priority, s.name))
    chosen, used = [], len(HEADING)
    for skill in candidates:
        cost = len(render_skill(skill))
        if used + cost <= budget_chars:
            chosen.append(skill)
            used += cost
    return chosen


def render_skill(skill: Skill) -> str:
    return f"\n### {skill.name}\n{skill.body}\n"


def render_skills(skills: Sequence[Skill]) -> str:
    """The prompt block of `skills`: a heading, then each skill's name and body; empty if none."""
    return HEADING + "".join(render_skill(s) for s in skills) if skills else ""
