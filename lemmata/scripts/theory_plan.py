"""theory_plan: directions.json -> theory/plan.json (the lemma chain)."""
from lemmata.artifacts import Directions, read_artifact, write_artifact
from lemmata.jobs import StageJob
from lemmata.stages.theory_plan import plan_theory

job = StageJob(snakemake)  # noqa: F821 (injected by Snakemake)
with job.reporting():
    directions = read_artifact(job.input("directions"), Directions)
    write_artifact(job.output(), plan_theory(job.client(), directions.goal))
