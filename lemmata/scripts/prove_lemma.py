"""prove_lemma: theory/plan.json + the lemmas it depends on -> theory/lemmas/<id>.json."""

from pathlib import Path

from lemmata.artifacts import ProvedLemma, TheoryPlan, read_artifact, write_artifact
from lemmata.run.job import StageJob
from lemmata.stages.theory_prove import prove_lemma

job = StageJob(snakemake)  # noqa: F821 (injected by Snakemake)
lemma_id = snakemake.wildcards.lemma  # noqa: F821
with job.reporting():
    plan = read_artifact(job.input("plan"), TheoryPlan)
    dependencies = [read_artifact(Path(path), ProvedLemma) for path in snakemake.input.dependencies]  # noqa: F821
    client = job.client(scope=f"prove_lemma:{lemma_id}")
    write_artifact(
        job.output(), prove_lemma(client, plan, lemma_id, job.settings, dependencies, checker=job.checker(client))
    )
