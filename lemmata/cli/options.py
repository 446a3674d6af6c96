"""Options several commands share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from lemmata.run.spending.budget import MAX_BUDGET_TOKENS, MAX_BUDGET_USD, budget_problem


class Dollars(click.FloatRange):
    """A budget in USD: a finite number in (0, MAX_BUDGET_USD]. click's FloatRange lets NaN
    through (no comparison with NaN is true), which then failed deep inside as a traceback."""

    name = "dollars"

    def __init__(self) -> None:
        super().__init__(min=0, min_open=True, max=MAX_BUDGET_USD)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        amount = super().convert(value, param, ctx)
        problem = budget_problem(amount, None)
        if problem:
            self.fail(f"{value!r}: {problem}", param, ctx)
        return amount


def profile_option(command: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--profile",
        "-p",
        default=None,
        metavar="PROFILE",
        help="where jobs run: the Snakemake profile `local` (default) or `slurm` (lemma proofs "
        "and experiments as cluster jobs; needs lemmata[slurm]), or the path of a folder "
        "with your own config.yaml; resume and rewrite keep the run's",
    )(command)


def budget_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--budget and --budget-tokens: the run pauses before a stage that would pass them (issue 26)."""
    command = click.option(
        "--budget-tokens",
        type=click.IntRange(min=1, max=MAX_BUDGET_TOKENS),
        default=None,
        metavar="N",
        help="the most tokens (in and out) the run may use, for a free model too (default: LEMMATA_BUDGET_TOKENS)",
    )(command)
    return click.option(
        "--budget",
        "budget_usd",
        type=Dollars(),
        default=None,
        metavar="USD",
        help="the most the run's model calls may cost, in dollars: it pauses before a stage whose "
        "forecast would pass it, or once it is spent (default: LEMMATA_BUDGET_USD)",
    )(command)
