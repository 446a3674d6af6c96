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
