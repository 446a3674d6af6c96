"""survey_final: survey/first.json + gates/survey_papers.json -> survey.json (re-run once with
the researcher's papers when the first survey kept none and the researcher named some)."""

import os

from lemmata.artifacts import GateDecision, Survey, TaskInput, read_artifact, write_artifact
from lemmata.run.job import StageJob
from lemmata.stages.paper_reader import with_paper_notes
from lemmata.stages.survey import final_survey, paper_excerpt, run_survey, survey_limits
from lemmata.tools import make_tools

job = StageJob(snakemake)  # noqa: F821 (injected by Snakemake)
with job.reporting():
    task = read_artifact(job.input("task"), TaskInput)

    def rerun(papers: list[str]) -> Survey:
        client = job.client()
        survey = run_survey(
            client, task, make_tools(job.settings, os.environ), survey_limits(job.settings), user_papers=papers
        )
        return with_paper_notes(survey, client, paper_excerpt(job.settings))

    first = read_artifact(job.input("first"), Survey)
    write_artifact(job.output(), final_survey(first, read_artifact(job.input("papers"), GateDecision), rerun))
