"""experiment (the first run) and rewrite_experiment (paper version n): the theory (after its
review, or with the revision instructions) -> experiment.json and a plot per check in figures/
(versions/v<n>/ for a rewrite). The run's domain plugin, if any, lends its numerical tools."""

from lemmata.artifacts import Theory, read_artifact, write_artifact
from lemmata.plugins import plugin_for
from lemmata.run.job import StageJob
from lemmata.stages.experiment.job import experiment_stage
from lemmata.stages.feedback import job_feedback


def run(job: StageJob) -> None:
    with job.reporting():
        experiment = experiment_stage(
            job.client(),
            read_artifact(job.input("theory"), Theory),
            job.settings,
            plugin_for(job.task_input().domain),
            job_feedback(job.smk.input),
            figures_home=job.run_dir / job.output("figures").parent,
            version=job.version,
        )
        write_artifact(job.output("experiment"), experiment)
