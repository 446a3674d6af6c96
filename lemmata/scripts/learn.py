"""learn: theory.json + experiment.json (+ the reviewer's objection, if any) -> memories of the
run's domain, and learned.json listing them."""

from pathlib import Path

from lemmata.artifacts import Experiment, TaskInput, Theory, TheoryRework, read_artifact, write_artifact
from lemmata.run.job import StageJob
from lemmata.stages.learning import distil, learning_domain, record_memories


def run(job: StageJob) -> None:
    with job.reporting():
        task = read_artifact(job.input("task"), TaskInput)
        rework = [read_artifact(Path(path), TheoryRework) for path in job.smk.input.rework]
        drafts = distil(
            read_artifact(job.input("theory"), Theory),
            read_artifact(job.input("experiment"), Experiment),
            rework[0] if rework else None,
        )
        write_artifact(
            job.output(), record_memories(job.home, learning_domain(job.run_dir, task), task.session_id, drafts)
        )
