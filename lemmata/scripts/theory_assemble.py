"""theory_assemble: plan + proved lemmas -> theory.json, the lemmas as a picture
(theory/lemma_graph.svg), and the tier-3 knowledge graph."""

from lemmata.artifacts import ProvedLemma, TheoryPlan, read_artifact, write_artifact
from lemmata.memory.knowledge_graph import build_graph, record_graph
from lemmata.pictures.lemma_graph import write_theory_graph
from lemmata.run.job import StageJob
from lemmata.run.job_harness import carried
from lemmata.settings import lemmata_home
from lemmata.stages.formal.development import write_development
from lemmata.stages.theory.assemble import assemble_theory


def run(job: StageJob) -> None:
    with job.reporting():
        plan = read_artifact(job.input("plan"), TheoryPlan)
        lemmas = [read_artifact(path, ProvedLemma) for path in job.smk.input.lemmas]
        session_id = job.task_input().session_id
        # Before the assembly: the lemma nodes and edges are kept even if what follows fails.
        record_graph(lemmata_home(), build_graph(session_id, plan.goal, lemmas))
        # The development's kernel check needs no sketch: it runs while the sketch is asked for.
        theory = assemble_theory(
            job.client(),
            plan,
            lemmas,
            beside_the_sketch=carried(lambda checked: write_development(job.run_dir, 1, checked)),
        )
        write_artifact(job.output(), theory)
        write_theory_graph(job.run_dir, 1, theory)
        record_graph(lemmata_home(), build_graph(session_id, plan.goal, lemmas, theory))
