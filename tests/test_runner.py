"""The driver's choices that need no workflow: how many jobs, and what a stopped Snakemake means."""

from __future__ import annotations

import os

import pytest

from lemmata.events import JobBoard
from lemmata.runner import EMBEDDED_JOBS, PROVIDER_JOBS, STOP_NOTICE, Invocation, default_jobs


@pytest.mark.parametrize("backend", ["vendora", "router", "local", "vendorx", "replay"])
def test_provider_backends_prove_a_full_plan_at_once(backend: str) -> None:
    assert default_jobs(backend) == max(PROVIDER_JOBS, os.cpu_count() or 1) >= 10  # the largest full plan


def test_the_embedded_model_gets_two_jobs() -> None:
    assert default_jobs("embedded") == EMBEDDED_JOBS == 2


def board(*failed_rules: str) -> JobBoard:
    return JobBoard(failed_rules=list(failed_rules))


@pytest.mark.parametrize(
    "invocation, stopped",
    [
        pytest.param(Invocation(1, board(), log_text=f"...\n{STOP_NOTICE} (scheduler).\n"), True,
                     id="signalled-from-outside"),
        pytest.param(Invocation(1, board(), paused=True, log_text=STOP_NOTICE), False, id="our-own-pause"),
        pytest.param(Invocation(1, board("prove_lemma"), log_text=STOP_NOTICE), False, id="a-job-failed-too"),
        pytest.param(Invocation(1, board(), log_text="WorkflowError: MissingInputException"), False,
                     id="an-ordinary-failure"),
    ],
)
def test_a_workflow_stopped_by_a_signal_is_told_from_a_failure(invocation: Invocation, stopped: bool) -> None:
    assert invocation.stopped_from_outside() is stopped
