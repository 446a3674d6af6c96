"""experiment: theory.json (after review; the review's feedback goes to the agent) -> experiment.json,
and figures/ with a plot per check. The run's domain plugin, if any, lends its numerical tools."""
from lemmata.artifacts import GateDecision, Theory, read_artifact, write_artifact
from lemmata.run.job import StageJob
from lemmata.plugins import plugin_for
from lemmata.stages.experiment import AgentLimits, domain_tools, run_experiment
from lemmata.stages.experiment_plot import add_plots

job = StageJob(snakemake)  # noqa: F821 (injected by Snakemake)
with job.reporting():
    theory = read_artifact(job.input("theory"), Theory)
    review = read_artifact(job.input("review"), GateDecision)
    limits = AgentLimits(job.settings.EXPERIMENT_MAX_TURNS, job.settings.CONTEXT_COMPRESS_AFTER_TURNS)
    runner, tools_guide = domain_tools(plugin_for(job.task_input().domain))
    experiment = run_experiment(job.client(), theory, job.settings.EXPERIMENT_MODE, runner=runner, limits=limits,
                                feedback=review.feedback, tools_guide=tools_guide)
    write_artifact(job.output("experiment"), add_plots(experiment, job.run_dir))
