"""What a run's model calls cost, from its call log: in all, per role and per stage (issue 26).

Each call's cost is in `llm_calls.jsonl` (`cost_usd`, llm/prices.py). A call whose cost is not
known (a model without a price, a failed call, a record older than costs) is counted apart and
said so: a total is never shown as complete when it is not.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lemmata import layout
from lemmata.artifacts import ModelCosts
from lemmata.llm.calllog import read_call_records
from lemmata.llm.prices import usd
from lemmata.run.pipeline import STAGES, stage_of_rule

#: The stage of a rule that no first-run stage has: a rewrite's.
REWRITE_STAGE = "rewrite"
STAGE_NAMES = frozenset(stage.name for stage in STAGES)


@dataclass
class CostSummary:
    calls: int = 0
    known_usd: float = 0.0
    unknown_calls: int = 0
    by_role: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    by_stage: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    def add_record(self, record: Mapping[str, Any]) -> None:
        """One call of `llm_calls.jsonl` (a record older than costs has none: unknown)."""
        cost = record.get("cost_usd")
        self.add(
            str(record.get("role", "?")),
            stage_of_scope(str(record.get("scope", ""))),
            float(cost) if isinstance(cost, int | float) else None,
        )

    def add(self, role: str, stage: str, cost: float | None) -> None:
        self.calls += 1
        if cost is None:
            self.unknown_calls += 1
            return
        self.known_usd += cost
        self.by_role[role] += cost
        self.by_stage[stage] += cost

    @property
    def text(self) -> str:
        """ "$0.0421"; "$0.0421 + 2 calls of unknown cost"; "unknown (3 calls without a price)"; "$0 (no call)"."""
        if self.calls == 0:
            return "$0 (no call)"
        if self.unknown_calls == self.calls:
            plural = "s" if self.calls != 1 else ""
            return f"unknown ({self.calls} call{plural} without a price)"
        unknown = ""
        if self.unknown_calls:
            unknown = f" + {self.unknown_calls} call{'s' if self.unknown_calls != 1 else ''} of unknown cost"
        return usd(self.known_usd) + unknown

    def record(self) -> ModelCosts:
        """The summary as the research output keeps it (amounts to a millionth of a dollar)."""
        return ModelCosts(
            calls=self.calls,
            usd=round(self.known_usd, 6),
            unknown_calls=self.unknown_calls,
            by_role={role: round(amount, 6) for role, amount in self.by_role.items()},
            by_stage={stage: round(amount, 6) for stage, amount in self.by_stage.items()},
        )


def stage_of_scope(scope: str) -> str:
    """The stage whose rule made a call: the scope starts with the rule ("prove_lemma:L1")."""
    stage = stage_of_rule(scope.split(":", 1)[0])  # a rule of no first-run stage comes back as itself
    return stage if stage in STAGE_NAMES else REWRITE_STAGE


def run_costs(run_dir: Path) -> CostSummary:
    summary = CostSummary()
    calls = Path(run_dir) / layout.LLM_CALLS
    if not calls.is_file():
        return summary
    for record in read_call_records(calls):
        summary.add_record(record)
    return summary
