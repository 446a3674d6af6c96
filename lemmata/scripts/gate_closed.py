"""A gate whose decision sentinel is missing: fail on purpose, recognisably."""
import sys

from lemmata.gates import gate_closed_message

sys.stderr.write(gate_closed_message(snakemake.output[0]) + "\n")  # noqa: F821
sys.exit(1)
