"""theory_assemble: plan + proved lemmas -> theory.json."""
from lemmata.artifacts import ProvedLemma, TheoryPlan, read_artifact, write_artifact
from lemmata.jobs import StageJob
from lemmata.stages.theory_assemble import assemble_theory

job = StageJob(snakemake)  # noqa: F821 (injected by Snakemake)
with job.reporting():
    plan = read_artifact(job.input("plan"), TheoryPlan)
    lemmas = [read_artifact(path, ProvedLemma) for path in snakemake.input.lemmas]  # noqa: F821
    write_artifact(job.output(), assemble_theory(job.client(), plan, lemmas))
