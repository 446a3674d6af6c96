"""survey: input.json -> survey.json."""
from lemmata.artifacts import TaskInput, read_artifact, write_artifact
from lemmata.jobs import StageJob
from lemmata.stages.survey import run_survey

job = StageJob(snakemake)  # noqa: F821 (injected by Snakemake)
with job.reporting():
    task = read_artifact(job.input("task"), TaskInput)
    write_artifact(job.output(), run_survey(job.client(), task))
