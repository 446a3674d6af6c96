"""theory_plan: directions.json + theory/formal.json -> theory/plan.json (the lemma chain)."""
from lemmata.artifacts import Directions, FormalStatement, read_artifact, write_artifact
from lemmata.jobs import StageJob
from lemmata.stages.theory_plan import plan_theory

job = StageJob(snakemake)  # noqa: F821 (injected by Snakemake)
with job.reporting():
    directions = read_artifact(job.input("directions"), Directions)
    formal = read_artifact(job.input("formal"), FormalStatement)
    write_artifact(job.output(), plan_theory(job.client(), directions.goal, formal_statement=formal.formal_statement))
