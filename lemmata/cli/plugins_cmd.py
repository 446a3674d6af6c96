"""`lemmata plugins`: the installed domain plugins, the domains they serve and what they add."""

from __future__ import annotations

import click

from lemmata.cli.errors import reports_errors
from lemmata.plugins import installed_plugins
from lemmata.skills.registry import skill_files


@click.command("plugins")
@reports_errors
def plugins() -> None:
    """List the domain plugins (entry points `lemmata.plugins`): a run whose domain one of them
    serves (`prove --domain`, `explore DOMAIN`) gets its guidance, skills and numerical tools."""
    found = installed_plugins()
    if not found:
        click.echo("no domain plugins installed")
        return
    for plugin in found:
        skills = len(skill_files(plugin.skills_dir)) if plugin.skills_dir else 0
        click.echo(f"{plugin.name}: {plugin.description}")
        click.echo(f"  domains: {', '.join(plugin.domains)}")
        click.echo(
            f"  guidance for: {', '.join(plugin.guidance) or 'none'}; skills: {skills}; "
            f"sandbox modules: {', '.join(plugin.sandbox_modules) or 'none'}"
        )
