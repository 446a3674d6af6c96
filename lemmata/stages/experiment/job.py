"""The experiment stage as its job runs it: the agent with the domain plugin's tools, a plot per
check that ran, and a rewrite's policy on failure."""

from __future__ import annotations

from pathlib import Path

from lemmata.agents.client import LLMClient
from lemmata.artifacts import Experiment, Theory
from lemmata.errors import LemmataError
from lemmata.layout import FIGURES
from lemmata.plugins import DomainPlugin
from lemmata.settings import Settings
from lemmata.stages.experiment.lemma_checks import AgentLimits, domain_tools, run_experiment
from lemmata.stages.experiment.plot import PlotDrawer


def experiment_stage(
    client: LLMClient,
    theory: Theory,
    settings: Settings,
    plugin: DomainPlugin | None,
    feedback: str,
    figures_home: Path,
    version: int = 1,
) -> Experiment:
    """The numerical checks of `theory` and their plots in `figures_home`/figures.

    The first run's experiment fails its job when the agent fails. A rewrite's goes on: its
    experiment is recorded as skipped with the reason, so the paper states that it has no
    numerical checks (the earlier version's checks were about an earlier lemma chain)."""
    limits = AgentLimits(settings.EXPERIMENT_MAX_TURNS, settings.CONTEXT_COMPRESS_AFTER_TURNS)
    try:
        runner, tools_guide = domain_tools(plugin)
        with PlotDrawer(figures_home, version) as plots:  # each plot drawn while the agent goes on
            try:
                experiment = run_experiment(
                    client,
                    theory,
                    settings.EXPERIMENT_MODE,
                    runner=runner,
                    limits=limits,
                    feedback=feedback,
                    tools_guide=tools_guide,
                    on_check=plots.submit,
                )
            except BaseException:
                plots.discard()  # no plot of a failed experiment stays among the version's figures
                raise
            return plots.finish(experiment)
    except LemmataError as error:
        if version == 1:
            raise
        (Path(figures_home) / FIGURES).mkdir(parents=True, exist_ok=True)
        return Experiment(skipped=True, skip_reason=f"the experiment agent failed during this rewrite: {error}")
