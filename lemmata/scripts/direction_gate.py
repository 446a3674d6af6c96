"""direction_gate: directions/ideas.json -> gates/direction.json, asked only when ideation proposed nothing."""
from lemmata.artifacts import DirectionIdeas, read_artifact
from lemmata.run.gates import close_gate, open_gate_automatically

ideas = read_artifact(snakemake.input.ideas, DirectionIdeas)  # noqa: F821 (injected by Snakemake)
if ideas.candidates:
    open_gate_automatically(snakemake.output[0], f"ideation proposed {len(ideas.candidates)} directions")  # noqa: F821
else:
    close_gate(snakemake.output[0])  # noqa: F821
