"""formalize: directions.json -> theory/formal.json (the goal as a formal statement)."""

from lemmata import layout
from lemmata.artifacts import Directions, read_artifact, write_artifact
from lemmata.run.job import StageJob
from lemmata.stages.formal.formalize import formalize


def run(job: StageJob) -> None:
    with job.reporting():
        directions = read_artifact(job.input("directions"), Directions)
        write_artifact(job.output(), formalize(job.client(), directions.goal, job.run_dir / layout.FORMALIZER_CACHE))
