"""rewrite_writer: version n's theory and experiment (+ the run's task, survey, direction) and
revisions/v<n>.json -> paper_v<n>.tex and paper_v<n>.json. The bibliography is the run's
references.bib: the survey is not redone, so the keys are the same. The same writer as the first
version's, its turns and compile check included, with the revision instructions as feedback."""
import sys

from lemmata.artifacts import (
    Directions, Experiment, RevisionRequest, Survey, TaskInput, Theory, atomic_write_text, read_artifact,
    write_artifact,
)
from lemmata.run.job import StageJob
from lemmata.stages.rewrite import revision_feedback
from lemmata.stages.writer import WriterInputs, write_paper

job = StageJob(snakemake)  # noqa: F821 (injected by Snakemake)
version = int(snakemake.wildcards.n)  # noqa: F821
with job.reporting():
    inputs = WriterInputs(
        task=read_artifact(job.input("task"), TaskInput),
        survey=read_artifact(job.input("survey"), Survey),
        directions=read_artifact(job.input("directions"), Directions),
        theory=read_artifact(job.input("theory"), Theory),
        experiment=read_artifact(job.input("experiment"), Experiment),
        feedback=revision_feedback(read_artifact(job.input("revision"), RevisionRequest)),
    )
    paper = write_paper(job.client(scope=f"rewrite_writer:v{version}"), inputs, version=version,
                        enforce_style=job.settings.ENFORCE_PROOF_STYLE, max_turns=job.settings.WRITER_MAX_TURNS)
    atomic_write_text(job.output("tex"), paper.tex)
    write_artifact(job.output("meta"), paper.meta)
    for error in paper.meta.compile_errors:
        print(f"rewrite_writer: after {paper.meta.writer_turns} turn(s) the paper still does not compile: {error}",
              file=sys.stderr)
