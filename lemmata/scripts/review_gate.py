"""A stage review gate: asked only in GATE_MODE human (auto turns human once a lemma is not
verified); otherwise it writes its own sentinel."""
from pathlib import Path

from lemmata.artifacts import Theory, read_artifact
from lemmata.run.gates import close_gate, effective_gate_mode, open_gate_automatically

theory_path = getattr(snakemake.input, "theory", None)  # noqa: F821 (injected by Snakemake)
theory = read_artifact(Path(theory_path), Theory) if theory_path else None
mode = effective_gate_mode(snakemake.config["GATE_MODE"], theory)  # noqa: F821
if mode == "human":
    close_gate(snakemake.output[0])  # noqa: F821
else:
    open_gate_automatically(snakemake.output[0], f"GATE_MODE {mode}: no review asked")  # noqa: F821
