"""survey (the first survey) and survey_final (after the survey-papers gate): input.json ->
survey/first.json, then survey.json. The survey agent searches with the literature tools, then
the paper reader reads the papers it kept. survey_final keeps a first survey that has papers; with
none, it runs the survey once more with the papers the researcher named at the gate."""

import os

from lemmata.artifacts import GateDecision, Survey, TaskInput, read_artifact, write_artifact
from lemmata.run.job import StageJob
from lemmata.stages.survey.literature import final_survey, paper_excerpt, run_survey, survey_limits
from lemmata.stages.survey.paper_reader import with_paper_notes
from lemmata.tools import make_tools


def run(job: StageJob) -> None:
    with job.reporting():
        task = read_artifact(job.input("task"), TaskInput)

        def survey_with(papers: list[str] | None = None) -> Survey:
            client = job.client()
            tools = make_tools(job.settings, os.environ)
            survey = run_survey(client, task, tools, survey_limits(job.settings), user_papers=papers)
            return with_paper_notes(survey, client, paper_excerpt(job.settings))

        if hasattr(job.smk.input, "first"):  # survey_final
            first = read_artifact(job.input("first"), Survey)
            survey = final_survey(first, read_artifact(job.input("papers"), GateDecision), survey_with)
        else:
            survey = survey_with()
        write_artifact(job.output(), survey)
