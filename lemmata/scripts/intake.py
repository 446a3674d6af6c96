"""intake: the task from the workflow config becomes input.json."""

from lemmata.artifacts import write_artifact
from lemmata.run.job import StageJob


def run(job: StageJob) -> None:
    with job.reporting():
        write_artifact(job.output(), job.task_from_config())
