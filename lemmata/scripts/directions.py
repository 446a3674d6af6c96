"""directions: ideas + the direction gate -> directions.json (the convergent step)."""

from lemmata.artifacts import DirectionIdeas, GateDecision, TaskInput, read_artifact, write_artifact
from lemmata.run.job import StageJob
from lemmata.stages.directions import run_directions


def run(job: StageJob) -> None:
    with job.reporting():
        task = read_artifact(job.input("task"), TaskInput)
        ideas = read_artifact(job.input("ideas"), DirectionIdeas)
        decision = read_artifact(job.input("direction"), GateDecision)
        write_artifact(job.output(), run_directions(job.client(), task, ideas, decision))
