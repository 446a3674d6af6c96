"""Options several commands share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click


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
        type=click.IntRange(min=1),
        default=None,
        metavar="N",
        help="the most tokens (in and out) the run may use, for a free model too (default: LEMMATA_BUDGET_TOKENS)",
    )(command)
    return click.option(
        "--budget",
        "budget_usd",
        type=click.FloatRange(min=0, min_open=True),
        default=None,
        metavar="USD",
        help="the most the run's model calls may cost, in dollars: it pauses before a stage whose "
        "forecast would pass it, or once it is spent (default: LEMMATA_BUDGET_USD)",
    )(command)
