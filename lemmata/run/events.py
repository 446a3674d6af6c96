"""Reading a run's event log (from the Snakemake logger plugin) and call log incrementally."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lemmata.jsonl import parse_line
from lemmata.llm.calllog import call_tokens
from lemmata.run.spending.budget import Budget
from lemmata.run.spending.costs import CostSummary


class TailReader:
    """Yields complete new JSON lines of a growing file, remembering where it stopped."""

    def __init__(self, path: Path, start_at_end: bool = False) -> None:
        self.path = Path(path)
        self.offset = self.path.stat().st_size if start_at_end and self.path.exists() else 0

    def read_new(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        with open(self.path, "rb") as handle:
            handle.seek(self.offset)
            chunk = handle.read()
        complete = chunk[: chunk.rfind(b"\n") + 1]
        start, self.offset = self.offset, self.offset + len(complete)
        entries = []
        for line in complete.decode("utf-8", errors="replace").splitlines():
            entry = parse_line(line, f"{self.path} (after byte {start})")  # logged when not JSON: a torn record
            if entry is not None:
                entries.append(entry)
        return entries


@dataclass
class JobBoard:
    """What the workflow is doing, folded from events: running jobs, progress, failures."""

    rules_by_job: dict[int, str] = field(default_factory=dict)
    labels_by_job: dict[int, str] = field(default_factory=dict)
    wildcards_by_job: dict[int, dict[str, str]] = field(default_factory=dict)
    running: set[int] = field(default_factory=set)
    finished: list[int] = field(default_factory=list)
    failed_rules: list[str] = field(default_factory=list)
    done: int = 0
    total: int = 0

    def apply(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        job = event.get("jobid", event.get("job_id"))
        if kind == "job_info" and job is not None:
            rule = str(event.get("rule_name", "?"))
            self.rules_by_job[int(job)] = rule
            wildcards = event.get("wildcards") or {}
            self.wildcards_by_job[int(job)] = {str(k): str(v) for k, v in wildcards.items()}
            self.labels_by_job[int(job)] = rule + ("" if not wildcards else " " + " ".join(wildcards.values()))
            self.running.add(int(job))
        elif kind == "job_finished" and job is not None:
            self.running.discard(int(job))
            self.finished.append(int(job))
        elif kind == "job_error" and job is not None:
            self.running.discard(int(job))
            self.failed_rules.append(self.rules_by_job.get(int(job), str(event.get("rule_name", "?"))))
        elif kind == "progress":
            self.done, self.total = int(event.get("done", 0)), int(event.get("total", 0))

    def running_rules(self) -> set[str]:
        return {self.rules_by_job[j] for j in self.running if j in self.rules_by_job}

    def running_labels(self) -> list[str]:
        return sorted(self.labels_by_job.get(j, "?") for j in self.running)

    def running_wildcards(self, rule: str, name: str) -> set[str]:
        """Wildcard `name` of each running job of `rule`: ("prove_lemma", "lemma") -> the lemmas being proved."""
        return {
            self.wildcards_by_job[j][name]
            for j in self.running
            if self.rules_by_job.get(j) == rule and name in self.wildcards_by_job.get(j, {})
        }


@dataclass
class TokenTally:
    """What the run's calls used so far, and the budget they are held to (the progress line)."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    by_role: dict[str, list[int]] = field(default_factory=dict)
    cost: CostSummary = field(default_factory=CostSummary)
    budget: Budget = field(default_factory=Budget)

    def apply(self, record: dict[str, Any]) -> None:
        self.cost.add_record(record)
        self.calls += 1
        tokens_in, tokens_out = call_tokens(record)
        self.tokens_in += tokens_in
        self.tokens_out += tokens_out
        calls, total_in, total_out = self.by_role.get(record.get("role", "?"), [0, 0, 0])
        self.by_role[record.get("role", "?")] = [calls + 1, total_in + tokens_in, total_out + tokens_out]
