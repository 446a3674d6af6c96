"""writer: every artifact -> paper_v1.tex, references.bib (saved before compiling), paper_v1.json."""
from lemmata.artifacts import atomic_write_text, write_artifact
from lemmata.jobs import StageJob
from lemmata.stages.writer import read_writer_inputs, write_paper

job = StageJob(snakemake)  # noqa: F821 (injected by Snakemake)
with job.reporting():
    inputs = read_writer_inputs(snakemake.input)  # noqa: F821
    paper = write_paper(job.client(), inputs, version=1, enforce_style=job.settings.ENFORCE_PROOF_STYLE)
    atomic_write_text(job.output("bib"), paper.bibtex)
    atomic_write_text(job.output("tex"), paper.tex)
    write_artifact(job.output("meta"), paper.meta)
