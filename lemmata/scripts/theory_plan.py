"""theory_plan: directions.json + theory/formal.json + survey.json -> theory/plan.json (the lemma chain)."""
from lemmata.artifacts import Directions, FormalStatement, Survey, read_artifact, write_artifact
from lemmata.jobs import StageJob
from lemmata.stages.paper_reader import literature_digest
from lemmata.stages.theory_plan import plan_theory

job = StageJob(snakemake)  # noqa: F821 (injected by Snakemake)
with job.reporting():
    directions = read_artifact(job.input("directions"), Directions)
    formal = read_artifact(job.input("formal"), FormalStatement)
    survey = read_artifact(job.input("survey"), Survey)
    plan = plan_theory(job.client(), directions.goal, formal_statement=formal.formal_statement,
                       literature=literature_digest(survey.papers, survey.paper_notes))
    write_artifact(job.output(), plan)
