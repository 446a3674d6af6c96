"""survey: input.json -> survey/first.json (the survey agent with the literature tools, then the
paper reader on the papers it kept)."""

import os

from lemmata.artifacts import TaskInput, read_artifact, write_artifact
from lemmata.run.job import StageJob
from lemmata.stages.paper_reader import with_paper_notes
from lemmata.stages.survey import paper_excerpt, run_survey, survey_limits
from lemmata.tools import make_tools

job = StageJob(snakemake)  # noqa: F821 (injected by Snakemake)
with job.reporting():
    task = read_artifact(job.input("task"), TaskInput)
    client = job.client()
    survey = run_survey(client, task, make_tools(job.settings, os.environ), survey_limits(job.settings))
    write_artifact(job.output(), with_paper_notes(survey, client, paper_excerpt(job.settings)))
