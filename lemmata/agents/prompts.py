"""Prompts are data: `prompts/<name>.md` templates with strict `{{variable}}` slots.

A template file holds the system prompt, a line `=== user ===`, then the user prompt. The
system part is fixed text (no slots) so consecutive calls of a role share their longest
prefix and a provider's prompt cache is reused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PROMPT_DIR = Path(__file__).parent / "prompts"
SLOT = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}")
SEPARATOR = "\n=== user ===\n"


@dataclass(frozen=True)
class Prompt:
    system: str
    user: str


@cache
def _template(name: str) -> tuple[str, str]:
    text = (PROMPT_DIR / f"{name}.md").read_text(encoding="utf-8")
    system, separator, user = text.partition(SEPARATOR)
    if not separator:
        raise ValueError(f"prompt template {name}.md lacks the '=== user ===' line")
    if SLOT.search(system):
        raise ValueError(f"prompt template {name}.md: the system part must be fixed text")
    return system.strip() + "\n", user.strip() + "\n"


def render_prompt(name: str, **values: object) -> Prompt:
    """Fill the user part; a missing or unused value is an error, not a silent blank."""
    system, user = _template(name)
    slots = set(SLOT.findall(user))
    missing, unused = slots - values.keys(), values.keys() - slots
    if missing or unused:
        raise ValueError(f"prompt {name}: missing {sorted(missing)}, unused {sorted(unused)}")
    return Prompt(system, SLOT.sub(lambda m: str(values[m.group(1)]), user))
