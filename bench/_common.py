"""What the benchmark scripts share: the model latency a run cannot avoid, from its call log,
and the settings that point the search tools at the fake services."""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

# The test support (tests/support: fake model and search servers, scripted sessions) is not part of
# the installed lemmata: it is imported from this checkout's tests/ directory.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.fake_search_servers import FAST_SEARCH_SETTINGS, FakeSearchServers


def critical_path(records: list[dict], depends_on: dict[str, list[str]]) -> float:
    """Sequential calls add up; a lemma job's calls start when its dependencies' jobs have ended,
    so the lemma part counts its longest dependency chain."""
    per_lemma: dict[str, float] = defaultdict(float)
    sequential = 0.0
    paper_reads: dict[str, float] = defaultdict(float)  # the paper reader reads a survey's papers at once
    for record in records:
        if record["scope"].startswith("prove_lemma:"):
            per_lemma[record["scope"].split(":", 1)[1]] += record["latency_s"]
        elif record["role"] == "extractor":
            job = record["scope"].split(":", 1)[0]
            paper_reads[job] = max(paper_reads[job], record["latency_s"])
        else:
            sequential += record["latency_s"]
    sequential += sum(paper_reads.values())
    finish: dict[str, float] = {}
    for lemma_id in depends_on:  # plan order: dependencies come first
        finish[lemma_id] = per_lemma[lemma_id] + max((finish[d] for d in depends_on[lemma_id]), default=0.0)
    return sequential + max(finish.values(), default=0.0)


def search_settings(servers: FakeSearchServers) -> dict[str, str]:
    """Settings that send every search to `servers`, without the polite spacing or backoff."""
    return {**servers.settings_values(), **{name: str(value) for name, value in FAST_SEARCH_SETTINGS.items()}}
