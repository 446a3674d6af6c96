"""experiment: theory.json (after review; the review's feedback goes to the agent) -> experiment.json,
and figures/ with a plot per check."""
from lemmata.artifacts import GateDecision, Theory, read_artifact, write_artifact
from lemmata.jobs import StageJob
from lemmata.stages.experiment import AgentLimits, run_experiment
from lemmata.stages.experiment_plot import add_plots

job = StageJob(snakemake)  # noqa: F821 (injected by Snakemake)
with job.reporting():
    theory = read_artifact(job.input("theory"), Theory)
    review = read_artifact(job.input("review"), GateDecision)
    limits = AgentLimits(job.settings.EXPERIMENT_MAX_TURNS, job.settings.CONTEXT_COMPRESS_AFTER_TURNS)
    experiment = run_experiment(job.client(), theory, job.settings.EXPERIMENT_MODE, limits=limits,
                                feedback=review.feedback)
    write_artifact(job.output("experiment"), add_plots(experiment, job.run_dir))
