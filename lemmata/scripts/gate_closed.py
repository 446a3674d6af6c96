"""A gate whose decision sentinel is missing: fail on purpose, recognisably."""
from pathlib import Path

from lemmata.run.gates import close_gate

close_gate(Path(snakemake.output[0]))  # noqa: F821
