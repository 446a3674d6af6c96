"""ideation: input.json + survey.json (+ the survey review's feedback) -> directions/ideas.json (the divergent step)."""

import os

from lemmata.artifacts import Survey, TaskInput, read_artifact, write_artifact
from lemmata.run.job import StageJob
from lemmata.stages.directions import run_ideation
from lemmata.stages.feedback import job_feedback
from lemmata.tools import make_tools


def run(job: StageJob) -> None:
    with job.reporting():
        task = read_artifact(job.input("task"), TaskInput)
        survey = read_artifact(job.input("survey"), Survey)
        tools = make_tools(job.settings, os.environ)
        feedback = job_feedback(job.smk.input)
        ideas = run_ideation(job.client(), task, survey, tools, job.settings.CONTEXT_COMPRESS_AFTER_TURNS, feedback)
        write_artifact(job.output(), ideas)
