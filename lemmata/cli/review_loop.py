"""The paper review loop in the terminal: questions about the paper and rewrites of it.

    Review the paper? [y/N]                      (after `lemmata prove` completes on a terminal)
    Question (Enter to accept):                  a question, answered as it streams in; revision
                                                 instructions ("Shorten the introduction", see
                                                 run/chat_intent) make the next version instead
    What next? [a]ccept [q]uestion [r]ewrite     q: another question; r: instructions, then the
                                                 next version; a: done

`lemmata review SESSION_ID` opens the same loop on any run that has a paper. Enter at the
question prompt accepts the paper as it is. A rewrite that fails leaves the latest version
current and the loop goes on; so does a question that got no answer.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click

from lemmata.errors import LemmataError
from lemmata.run.chat_intent import revision_instructions
from lemmata.run.versions import paper_versions

REVIEW_PROMPT = "Review the paper?"
QUESTION_PROMPT = "Question (Enter to accept)"
NEXT_PROMPT = "What next? [a]ccept [q]uestion [r]ewrite"
INSTRUCTIONS_PROMPT = "Revision instructions"


def offer_review(run_dir: Path, rewrite: Callable[[str], None]) -> None:
    """After a completed run, on a terminal: `Review the paper? [y/N]`."""
    if sys.stdin.isatty() and click.confirm(REVIEW_PROMPT, default=False):
        review_loop(run_dir, rewrite)


def review_loop(run_dir: Path, rewrite: Callable[[str], None]) -> None:
    """Questions and rewrites until the researcher accepts; Ctrl+C leaves the loop too (all that
    was asked and made is already saved)."""
    try:
        question = _text(QUESTION_PROMPT)
        while question:
            instructions = revision_instructions(question)
            if instructions is None:
                _answer(run_dir, question)
            else:
                click.echo("this reads as revision instructions: a rewrite into the next version starts", err=True)
                _revise(rewrite, instructions)
            choice = click.prompt(
                NEXT_PROMPT, type=click.Choice(["a", "q", "r"]), show_choices=False, default="a", show_default=False
            )
            if choice == "a":
                break
            if choice == "r":
                _rewrite(run_dir, rewrite)
            question = _text(QUESTION_PROMPT)
    except (click.Abort, KeyboardInterrupt):  # Ctrl+C at a prompt or while an answer streams
        click.echo()
        click.echo(f"review left: version {paper_versions(run_dir)[-1]} of the paper is current", err=True)
        return
    click.echo(f"accepted: version {paper_versions(run_dir)[-1]} of the paper", err=True)


def _text(prompt: str) -> str:
    return click.prompt(prompt, default="", show_default=False).strip()


def _answer(run_dir: Path, question: str) -> None:
    from lemmata.run.qa import ask_about_paper

    def show(piece: str) -> None:
        click.echo(piece, nl=False)

    try:
        ask_about_paper(
            run_dir,
            question,
            on_text=show,
            on_restart=lambda: click.echo("\n[the connection broke; the answer starts again]"),
        )
        click.echo()
    except LemmataError as error:
        click.echo(f"\nno answer: {error}", err=True)


def _rewrite(run_dir: Path, rewrite: Callable[[str], None]) -> None:
    instructions = _text(INSTRUCTIONS_PROMPT)
    if not instructions:
        click.echo("no instructions: nothing rewritten", err=True)
        return
    _revise(rewrite, instructions)


def _revise(rewrite: Callable[[str], None], instructions: str) -> None:
    try:
        rewrite(instructions)
    except LemmataError as error:
        click.echo(f"lemmata: {error}", err=True)
