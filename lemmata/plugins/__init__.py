"""Domain plugins: what a research domain adds to a run — prompt guidance per agent role,
skills, and numerical tools for the experiment stage.

A plugin is a `DomainPlugin` published under the entry-point group `lemmata.plugins` (the one
lemmata ships, `bandits`, is registered the same way in pyproject.toml), so a third-party
package plugs in by declaring, in its own pyproject.toml:

    [project.entry-points."lemmata.plugins"]
    queueing = "lemmata_queueing:plugin"

where `plugin` is a DomainPlugin (or a function returning one). A run finds its plugin from the
`domain` field of its input: the first plugin that names that domain (case, spaces and
underscores aside) among its `domains`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from lemmata.errors import UserError

ENTRY_POINT_GROUP = "lemmata.plugins"


@dataclass(frozen=True)
class DomainPlugin:
    name: str
    description: str
    #: The domains it serves, as a researcher would write them ("multi-armed bandits", "bandits").
    domains: tuple[str, ...]
    #: Prompt guidance by agent role (lemmata.agents.roles names): domain conventions and pitfalls.
    guidance: Mapping[str, str] = field(default_factory=dict)
    #: A folder of skills (markdown with front matter) loaded into the skill registry.
    skills_dir: Path | None = None
    #: Pure-Python modules (name -> file) the experiment agent's code may import in the sandbox:
    #: the plugin's numerical tools. They may import numpy and the standard library only.
    sandbox_modules: Mapping[str, Path] = field(default_factory=dict)
    #: How the experiment agent calls those tools: shown in its prompt.
    tools_guide: str = ""

    def serves(self, domain: str) -> bool:
        return normalised_domain(domain) in {normalised_domain(d) for d in self.domains}


def normalised_domain(domain: str) -> str:
    """ "Multi-Armed_Bandits " -> "multi-armed bandits"."""
    return re.sub(r"[\s_]+", " ", domain).strip().casefold()


def installed_plugins(points: Callable[[], list[EntryPoint]] | None = None) -> list[DomainPlugin]:
    """Every plugin published under ENTRY_POINT_GROUP, by name; a plugin that fails to load is
    a clear error naming its entry point (a broken plugin must not pass for an absent one)."""
    found = []
    for point in sorted(points() if points else entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        try:
            loaded = point.load()
            plugin = loaded() if callable(loaded) and not isinstance(loaded, DomainPlugin) else loaded
        except Exception as error:  # a third party's import error, named, not a traceback
            raise UserError(f"domain plugin {point.name!r} ({point.value}) failed to load: {error}") from None
        if not isinstance(plugin, DomainPlugin):
            raise UserError(
                f"domain plugin {point.name!r} ({point.value}) is a {type(plugin).__name__}, "
                "not a lemmata.plugins.DomainPlugin"
            )
        found.append(plugin)
    return found


def plugin_for(domain: str, plugins: list[DomainPlugin] | None = None) -> DomainPlugin | None:
    """The plugin of a run's `domain` (its input's field), or None: no domain, or none serves it."""
    if not domain.strip():
        return None
    return next((p for p in (installed_plugins() if plugins is None else plugins) if p.serves(domain)), None)
