"""experiment: theory.json (after review) -> experiment.json."""
from lemmata.artifacts import Theory, read_artifact, write_artifact
from lemmata.jobs import StageJob
from lemmata.stages.experiment import run_experiment

job = StageJob(snakemake)  # noqa: F821 (injected by Snakemake)
with job.reporting():
    theory = read_artifact(job.input("theory"), Theory)
    write_artifact(job.output(), run_experiment(job.client(), theory, job.settings.EXPERIMENT_MODE))
