"""briefing: input.json -> briefing.json (skills, plugin guidance and memories, by agent role)."""

from lemmata.artifacts import TaskInput, read_artifact, write_artifact
from lemmata.run.job import StageJob
from lemmata.stages.survey.briefing import brief_run


def run(job: StageJob) -> None:
    with job.reporting():
        task = read_artifact(job.input("task"), TaskInput)
        write_artifact(job.output(), brief_run(job.home, task, job.settings))
