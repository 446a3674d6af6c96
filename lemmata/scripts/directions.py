"""directions: input.json + survey.json -> directions.json."""
from lemmata.artifacts import Survey, TaskInput, read_artifact, write_artifact
from lemmata.jobs import StageJob
from lemmata.stages.directions import run_directions

job = StageJob(snakemake)  # noqa: F821 (injected by Snakemake)
with job.reporting():
    task = read_artifact(job.input("task"), TaskInput)
    survey = read_artifact(job.input("survey"), Survey)
    write_artifact(job.output(), run_directions(job.client(), task, survey))
