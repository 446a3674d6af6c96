"""writer: every artifact -> paper_v1.tex, references.bib (saved before compiling), paper_v1.json.

The .tex is written even when the writer's own compile check still fails after its turns: the
compile step then fails with pdflatex's error, and the run keeps the .tex (Snakemake would delete
the outputs of a failed job)."""
import sys

from lemmata.artifacts import atomic_write_text, write_artifact
from lemmata.run.job import StageJob
from lemmata.stages.writer import read_writer_inputs, write_paper

job = StageJob(snakemake)  # noqa: F821 (injected by Snakemake)
with job.reporting():
    inputs = read_writer_inputs(snakemake.input)  # noqa: F821
    paper = write_paper(job.client(), inputs, version=1, enforce_style=job.settings.ENFORCE_PROOF_STYLE,
                        max_turns=job.settings.WRITER_MAX_TURNS)
    atomic_write_text(job.output("bib"), paper.bibtex)
    atomic_write_text(job.output("tex"), paper.tex)
    write_artifact(job.output("meta"), paper.meta)
    for error in paper.meta.compile_errors:
        print(f"writer: after {paper.meta.writer_turns} turn(s) the paper still does not compile: {error}", file=sys.stderr)
