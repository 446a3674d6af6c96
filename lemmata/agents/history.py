"""The running history of an agent loop, compressed every CONTEXT_COMPRESS_AFTER_TURNS turns.

Each turn adds one entry (notes between turns, such as a refined strategy, add entries that are
not turns). Once `every` turns have gathered since the last compression, the next rendering first
lets the `compress` role fold the summary so far and those entries into one new summary, so a
long loop's prompt stays short while what was tried, and why it failed, survives. Compressing
on demand spends no call on a history nobody reads again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lemmata.agents.client import LLMClient
from lemmata.agents.prompts import render_prompt
from lemmata.errors import LemmataError

#: Kept of each entry when the compress call itself fails: the loop goes on with a crude summary.
FALLBACK_ENTRY_CHARS = 300


@dataclass
class AgentHistory:
    client: LLMClient
    every: int
    summary: str = ""
    entries: list[str] = field(default_factory=list)
    turns_since_compression: int = 0

    def add(self, entry: str, is_turn: bool = True) -> None:
        self.entries.append(entry.strip())
        self.turns_since_compression += is_turn

    def render(self, empty: str = "(none)") -> str:
        if self.turns_since_compression >= self.every:
            self._compress()
        parts = ([f"Summary of earlier turns: {self.summary}"] if self.summary else []) + self.entries
        return "\n\n".join(parts) or empty

    def _compress(self) -> None:
        turns = "\n\n".join(self.entries)
        prompt = render_prompt("compress", summary=self.summary or "(none)", turns=turns)
        try:
            summary = self.client.complete("compress", prompt.system, prompt.user).strip()
        except LemmataError:
            summary = ""
        if not summary:
            # Losing the history would make the agent repeat itself; keep a mechanical digest.
            summary = " ".join(filter(None, [self.summary, *(e[:FALLBACK_ENTRY_CHARS] for e in self.entries)]))
        self.summary, self.entries, self.turns_since_compression = summary, [], 0
