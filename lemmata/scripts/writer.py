"""writer (paper version 1) and rewrite_writer (version n): the run's artifacts -> paper_v<n>.tex
and paper_v<n>.json; the first version also writes references.bib (saved before compiling), which
every rewrite shares (the survey is not redone, so the keys stay the same). A rewrite's writer is
the first's, its turns and compile check included, with the revision instructions as feedback.
The prose's general claims go to the formalizer and the machine checks (stages/formal/prose_claim.py),
whose answers the theory's formalizer store keeps.

The .tex is written even when the writer's own compile check still fails after its turns: the
compile step then fails with pdflatex's error, and the run keeps the .tex (Snakemake would delete
the outputs of a failed job)."""

import sys

from lemmata import layout
from lemmata.artifacts import atomic_write_text, write_artifact
from lemmata.run.job import StageJob
from lemmata.stages.formal.prose_claim import machine_refuter
from lemmata.stages.paper.writer import read_writer_inputs, write_paper


def run(job: StageJob) -> None:
    with job.reporting():
        client = job.client()
        paper = write_paper(
            client,
            read_writer_inputs(job.smk.input),
            version=job.version,
            enforce_style=job.settings.ENFORCE_PROOF_STYLE,
            max_turns=job.settings.WRITER_MAX_TURNS,
            refute_claim=machine_refuter(client, job.run_dir / layout.FORMALIZER_CACHE),
            claim_limit=job.settings.PROSE_CLAIM_CHECKS,
        )
        if job.version == 1:
            atomic_write_text(job.output("bib"), paper.bibtex)
        atomic_write_text(job.output("tex"), paper.tex)
        write_artifact(job.output("meta"), paper.meta)
        for error in paper.meta.compile_errors:
            print(
                f"{job.rule}: after {paper.meta.writer_turns} turn(s) the paper still does not compile: {error}",
                file=sys.stderr,
            )
