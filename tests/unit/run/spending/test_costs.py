"""A run's costs from its call log (issue 26): the total, per stage and per role, and calls of
unknown cost counted apart, so that a total is never shown as complete when it is not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lemmata import layout
from lemmata.llm.prices import usd
from lemmata.run.spending.costs import run_costs, stage_of_scope


def write_calls(run_dir: Path, *calls: tuple[str, str, float | None]) -> None:
    lines = [json.dumps({"role": role, "scope": scope, "cost_usd": cost}) for role, scope, cost in calls]
    (run_dir / layout.LLM_CALLS).write_text("".join(line + "\n" for line in lines))


def test_costs_add_up_per_stage_and_per_role(tmp_path: Path) -> None:
    write_calls(
        tmp_path,
        ("survey", "survey", 0.01),
        ("prover", "prove_lemma:L1", 0.25),
        ("verifier", "prove_lemma:L1", 0.05),
        ("prover", "prove_lemma:L2", 0.25),
        ("writer", "rewrite_writer:v2", 0.5),
    )
    costs = run_costs(tmp_path)
    assert (costs.calls, costs.unknown_calls) == (5, 0)
    assert costs.known_usd == pytest.approx(1.06) and costs.text == "$1.06"
    assert costs.by_stage == pytest.approx({"survey": 0.01, "theory": 0.55, "rewrite": 0.5})
    assert costs.by_role == pytest.approx({"survey": 0.01, "prover": 0.5, "verifier": 0.05, "writer": 0.5})


def test_calls_of_unknown_cost_are_said_so(tmp_path: Path) -> None:
    write_calls(tmp_path, ("survey", "survey", 0.0123), ("prover", "prove_lemma:L1", None))
    assert run_costs(tmp_path).text == "$0.0123 + 1 call of unknown cost"
    write_calls(tmp_path, ("prover", "prove_lemma:L1", None), ("prover", "prove_lemma:L2", None))
    assert run_costs(tmp_path).text == "unknown (2 calls without a price)"


def test_a_record_older_than_costs_is_of_unknown_cost(tmp_path: Path) -> None:
    (tmp_path / layout.LLM_CALLS).write_text(json.dumps({"role": "survey", "scope": "survey"}) + "\n")
    assert run_costs(tmp_path).unknown_calls == 1


def test_a_run_without_calls_costs_nothing(tmp_path: Path) -> None:
    assert run_costs(tmp_path).text == "$0 (no call)"


def test_scopes_name_their_stage_and_amounts_read_as_money() -> None:
    assert [stage_of_scope(s) for s in ("survey:paper-2", "theory_assemble", "compile", "nonsense")] == [
        "survey",
        "theory",
        "compile",
        "rewrite",
    ]
    assert (usd(0.00012), usd(0.5), usd(1234.5)) == ("$0.0001", "$0.5000", "$1,234.50")


def test_the_progress_line_shows_the_cost_once_something_cost_money() -> None:
    from lemmata.cli.console import status_line
    from lemmata.run.events import JobBoard, TokenTally
    from lemmata.run.spending.budget import Budget

    tally = TokenTally()
    tally.apply({"role": "survey", "scope": "survey", "tokens_in": 90, "tokens_out": 10, "cost_usd": 0.0})
    assert status_line(JobBoard(), tally, 5.0).endswith("| 1 calls, 100 tokens")  # the embedded model: free
    tally.apply({"role": "prover", "scope": "prove_lemma:L1", "tokens_in": 90, "tokens_out": 10, "cost_usd": 0.0421})
    assert status_line(JobBoard(), tally, 5.0).endswith("| 2 calls, 200 tokens, $0.0421")
    tally.budget = Budget(usd=0.5, tokens=10_000)  # a run with a budget: the progress line sets the use against it
    assert status_line(JobBoard(), tally, 5.0).endswith("| 2 calls, 200 of 10000 tokens, $0.0421 of the $0.5000 budget")


def test_the_research_outputs_record_of_the_costs(tmp_path: Path) -> None:
    write_calls(
        tmp_path, ("survey", "survey", 0.0100004), ("prover", "prove_lemma:L1", 0.25), ("writer", "writer", None)
    )
    record = run_costs(tmp_path).record()
    assert (record.calls, record.usd, record.unknown_calls) == (3, 0.26, 1)
    assert record.by_role == {"survey": 0.01, "prover": 0.25} and record.by_stage == {"survey": 0.01, "theory": 0.25}
