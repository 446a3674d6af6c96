"""A gate whose decision sentinel is missing: fail on purpose, recognisably."""

from lemmata.run.gates import close_gate
from lemmata.run.job import StageJob

job = StageJob(snakemake)  # noqa: F821 (injected by Snakemake)
with job.reporting():
    close_gate(job.output())
