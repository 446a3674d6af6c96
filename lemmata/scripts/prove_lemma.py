"""prove_lemma: theory/plan.json + the lemmas it depends on -> theory/lemmas/<id>.json."""

from pathlib import Path

from lemmata.artifacts import ProvedLemma, TheoryPlan, read_artifact, write_artifact
from lemmata.run.job import StageJob
from lemmata.stages.theory.prove import prove_lemma


def run(job: StageJob) -> None:
    lemma_id = job.smk.wildcards.lemma
    with job.reporting():
        plan = read_artifact(job.input("plan"), TheoryPlan)
        dependencies = [read_artifact(Path(path), ProvedLemma) for path in job.smk.input.dependencies]
        client = job.client(scope=f"prove_lemma:{lemma_id}")
        write_artifact(
            job.output(), prove_lemma(client, plan, lemma_id, job.settings, dependencies, checker=job.checker(client))
        )
