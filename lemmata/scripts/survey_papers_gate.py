"""survey_papers_gate: survey/first.json -> gates/survey_papers.json, asked only when the survey
kept no paper although it could search (with SEARCH_TOOLS false, papers named by the researcher
could not be looked up either)."""

from lemmata.artifacts import Survey, read_artifact
from lemmata.run.gates import close_gate, open_gate_automatically
from lemmata.run.job import StageJob


def run(job: StageJob) -> None:
    with job.reporting():
        survey = read_artifact(job.input("survey"), Survey)
        if survey.papers:
            open_gate_automatically(job.output(), f"the survey kept {len(survey.papers)} papers")
        elif not survey.tools_available:
            open_gate_automatically(job.output(), "no search tools in this run (SEARCH_TOOLS=false)")
        else:
            close_gate(job.output())
