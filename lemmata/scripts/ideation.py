"""ideation: input.json + survey.json -> directions/ideas.json (the divergent step)."""
import os

from lemmata.artifacts import Survey, TaskInput, read_artifact, write_artifact
from lemmata.jobs import StageJob
from lemmata.stages.directions import run_ideation
from lemmata.tools import make_tools

job = StageJob(snakemake)  # noqa: F821 (injected by Snakemake)
with job.reporting():
    task = read_artifact(job.input("task"), TaskInput)
    survey = read_artifact(job.input("survey"), Survey)
    tools = make_tools(job.settings, os.environ)
    write_artifact(job.output(), run_ideation(job.client(), task, survey, tools, job.settings.CONTEXT_COMPRESS_AFTER_TURNS))
