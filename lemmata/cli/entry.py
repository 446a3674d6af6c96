"""The `lemmata` command and `python -m lemmata`: before the CLI is imported, a command that will
run the workflow starts Snakemake's interpreter, which imports Snakemake meanwhile
(run/early_workflow.py)."""

from __future__ import annotations

import sys

from lemmata.run import early_workflow
from lemmata.terminal_text import escape_the_standard_streams


def main() -> None:
    # Model, provider and client text reaches this process's terminal shown, never obeyed.
    escape_the_standard_streams()
    early_workflow.start_for(sys.argv[1:])
    from lemmata.cli.main import cli

    cli()
