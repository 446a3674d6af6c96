"""prove_lemma: theory/plan.json -> theory/lemmas/<id>.json, one job per lemma."""
from lemmata.artifacts import TheoryPlan, read_artifact, write_artifact
from lemmata.jobs import StageJob
from lemmata.stages.theory_prove import prove_lemma

job = StageJob(snakemake)  # noqa: F821 (injected by Snakemake)
lemma_id = snakemake.wildcards.lemma  # noqa: F821
with job.reporting():
    plan = read_artifact(job.input("plan"), TheoryPlan)
    client = job.client(scope=f"prove_lemma:{lemma_id}")
    write_artifact(job.output(), prove_lemma(client, plan, lemma_id, job.settings))
