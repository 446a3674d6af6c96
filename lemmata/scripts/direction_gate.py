"""direction_gate: directions/ideas.json -> gates/direction.json, asked only when ideation proposed nothing."""

from lemmata.artifacts import DirectionIdeas, read_artifact
from lemmata.run.gates import close_gate, open_gate_automatically
from lemmata.run.job import StageJob


def run(job: StageJob) -> None:
    with job.reporting():
        ideas = read_artifact(job.input("ideas"), DirectionIdeas)
        if ideas.candidates:
            open_gate_automatically(job.output(), f"ideation proposed {len(ideas.candidates)} directions")
        else:
            close_gate(job.output())
