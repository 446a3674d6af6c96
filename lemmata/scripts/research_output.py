"""research_output: the run's artifacts -> research_output.json (theorem, chain, papers, bibliography,
and what the model calls cost)."""

from lemmata.artifacts import CompileReport, PaperMeta, Survey, Theory, read_artifact, write_artifact
from lemmata.run.job import StageJob
from lemmata.run.spending.costs import run_costs
from lemmata.stages.paper.research_output import research_output


def run(job: StageJob) -> None:
    with job.reporting():
        record = research_output(
            job.task_input(),
            read_artifact(job.input("survey"), Survey),
            read_artifact(job.input("theory"), Theory),
            [(read_artifact(job.input("meta"), PaperMeta), read_artifact(job.input("report"), CompileReport))],
            run_costs(job.run_dir).record(),  # every call is made: the compile makes none
        )
        write_artifact(job.output(), record)
