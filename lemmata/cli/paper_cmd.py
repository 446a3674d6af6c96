"""`lemmata ask` and `lemmata rewrite`: questions about a run's paper, answered as they stream
in, and new versions of it."""

from __future__ import annotations

import sys

import click

from lemmata.cli.errors import reports_errors
from lemmata.cli.options import profile_option
from lemmata.run.record import DataHome, validate_session_id


@click.command()
@click.argument("session_id")
@click.argument("question")
@click.option("--question", "as_question", is_flag=True, help="answer it, even when it reads as revision instructions")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=None, help="parallel jobs of a rewrite")
@profile_option
@reports_errors
def ask(session_id: str, question: str, as_question: bool, jobs: int | None, profile: str | None) -> None:
    """Ask QUESTION about the paper of run SESSION_ID (its latest version), or have it revised.

    The answer is printed as it arrives; question and answer are kept in the run's
    paper_qa_history.jsonl, and later questions see the conversation so far. A message that
    reads as revision instructions ("Shorten the introduction", "Can you add a remark after
    Lemma 2?", anything after "rewrite:") starts a rewrite instead, as `lemmata rewrite` does.
    """
    from lemmata.run.chat_intent import revision_instructions
    from lemmata.run.qa import ask_about_paper

    run_dir = DataHome.from_environment().existing_run_dir(validate_session_id(session_id))
    instructions = None if as_question else revision_instructions(question)
    if instructions is not None:
        from lemmata.cli.driving import drive

        click.echo(
            "this reads as revision instructions: a rewrite into the next version starts "
            "(lemmata ask --question asks it instead)",
            err=True,
        )
        drive(run_dir, jobs, rewrite=True, instructions=instructions, profile=profile)
        return

    def show(piece: str) -> None:
        sys.stdout.write(piece)
        sys.stdout.flush()

    def start_again() -> None:
        sys.stdout.write("\n[the connection broke; the answer starts again]\n")

    ask_about_paper(run_dir, question, on_text=show, on_restart=start_again)
    sys.stdout.write("\n")


@click.command()
@click.argument("session_id")
@click.argument("instructions")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=None, help="parallel jobs")
@profile_option
@reports_errors
def rewrite(session_id: str, instructions: str, jobs: int | None, profile: str | None) -> None:
    """Make the next version of the paper of run SESSION_ID, following INSTRUCTIONS.

    The theory runs again, then the experiment, then the writer, each with the instructions as
    feedback; success saves paper_v<n>.tex/.pdf and rewrite_context_v<n>.json, n the next
    version. Earlier versions are never changed; a failure keeps the latest one current.
    """
    from lemmata.cli.driving import drive

    drive(
        DataHome.from_environment().existing_run_dir(validate_session_id(session_id)),
        jobs,
        rewrite=True,
        instructions=instructions,
        profile=profile,
    )


@click.command()
@click.argument("session_id")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=None, help="parallel jobs of a rewrite")
@profile_option
@reports_errors
def review(session_id: str, jobs: int | None, profile: str | None) -> None:
    """Questions and rewrites of the paper of run SESSION_ID, in a loop, until you accept.

    Question (Enter to accept), then What next? [a]ccept [q]uestion [r]ewrite. Any run with a
    paper, finished today or long ago; the same loop `lemmata prove` offers when it completes.
    """
    from lemmata.cli.driving import rewriter
    from lemmata.cli.review_loop import review_loop
    from lemmata.run.versions import current_paper

    run_dir = DataHome.from_environment().existing_run_dir(validate_session_id(session_id))
    version, _ = current_paper(run_dir)
    click.echo(f"run {session_id}: paper version {version}", err=True)
    review_loop(run_dir, rewriter(run_dir, jobs, profile))
