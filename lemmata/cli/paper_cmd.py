"""`lemmata ask`: questions about a run's paper, answered as they stream in."""

from __future__ import annotations

import sys

import click

from lemmata.cli.errors import reports_errors
from lemmata.runs import Layout, validate_session_id


@click.command()
@click.argument("session_id")
@click.argument("question")
@reports_errors
def ask(session_id: str, question: str) -> None:
    """Ask QUESTION about the paper of run SESSION_ID (its latest version).

    The answer is printed as it arrives; question and answer are kept in the run's
    paper_qa_history.jsonl, and later questions see the conversation so far.
    """
    from lemmata.paper_qa_session import ask_about_paper

    run_dir = Layout.from_environment().existing_run_dir(validate_session_id(session_id))

    def show(piece: str) -> None:
        sys.stdout.write(piece)
        sys.stdout.flush()

    def start_again() -> None:
        sys.stdout.write("\n[the connection broke; the answer starts again]\n")

    ask_about_paper(run_dir, question, on_text=show, on_restart=start_again)
    sys.stdout.write("\n")
