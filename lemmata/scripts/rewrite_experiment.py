"""rewrite_experiment: version n's theory + revisions/v<n>.json -> versions/v<n>/experiment.json
and its plots in versions/v<n>/figures/ (EXPERIMENT_MODE and the agent's own skip logic apply).

If the experiment agent fails, the rewrite goes on: the version's experiment is recorded as
skipped with the reason, so the paper states that it has no numerical checks (the earlier
version's checks were about an earlier lemma chain)."""
from lemmata.artifacts import Experiment, RevisionRequest, Theory, read_artifact, write_artifact
from lemmata.errors import LemmataError
from lemmata.run.job import StageJob
from lemmata.plugins import plugin_for
from lemmata.stages.experiment import AgentLimits, domain_tools, run_experiment
from lemmata.stages.experiment_plot import add_plots
from lemmata.stages.rewrite import revision_feedback

job = StageJob(snakemake)  # noqa: F821 (injected by Snakemake)
version = int(snakemake.wildcards.n)  # noqa: F821
with job.reporting():
    request = read_artifact(job.input("revision"), RevisionRequest)
    limits = AgentLimits(job.settings.EXPERIMENT_MAX_TURNS, job.settings.CONTEXT_COMPRESS_AFTER_TURNS)
    figures_home = job.output("figures").parent  # versions/v<n>: add_plots draws into its figures/
    try:
        runner, tools_guide = domain_tools(plugin_for(job.task_input().domain))
        experiment = run_experiment(job.client(scope=f"rewrite_experiment:v{version}"),
                                    read_artifact(job.input("theory"), Theory), job.settings.EXPERIMENT_MODE,
                                    runner=runner, limits=limits, feedback=revision_feedback(request),
                                    tools_guide=tools_guide)
        experiment = add_plots(experiment, figures_home, version)
    except LemmataError as error:
        experiment = Experiment(skipped=True, skip_reason=f"the experiment agent failed during this rewrite: {error}")
        job.output("figures").mkdir(parents=True, exist_ok=True)
    write_artifact(job.output("experiment"), experiment)
