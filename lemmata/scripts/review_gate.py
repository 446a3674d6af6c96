"""A stage review gate: asked only in GATE_MODE human (auto turns human once a lemma is not
verified), and then only when someone can answer; otherwise it writes its own sentinel."""

from pathlib import Path

from lemmata.artifacts import Theory, read_artifact
from lemmata.run.gates import ask_or_take_the_default, effective_gate_mode, open_gate_automatically
from lemmata.run.job import StageJob


def run(job: StageJob) -> None:
    with job.reporting():
        theory_path = getattr(job.smk.input, "theory", None)
        theory = read_artifact(Path(theory_path), Theory) if theory_path else None
        mode = effective_gate_mode(job.settings.GATE_MODE, theory)
        if mode == "human":
            ask_or_take_the_default(job.output())
        else:
            open_gate_automatically(job.output(), f"GATE_MODE {mode}: no review asked")
