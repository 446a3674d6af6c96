"""The `lemmata` command and `python -m lemmata`: before the CLI is imported, a command that will
run the workflow starts Snakemake's interpreter, which imports Snakemake meanwhile
(run/early_workflow.py)."""

from __future__ import annotations

import sys

from lemmata.run import early_workflow


def main() -> None:
    early_workflow.start_for(sys.argv[1:])
    from lemmata.cli.main import cli

    cli()
