"""rewrite_theory: revisions/v<n>.json + version n-1's theory (+ the survey, the formal statement)
-> versions/v<n>/theory.json: planned again with the instructions, every lemma proved, assembled;
its lemmas as a picture (versions/v<n>/lemma_graph.svg); and the session's tier-3 knowledge graph,
now of this theory."""

from lemmata import layout
from lemmata.artifacts import FormalStatement, RevisionRequest, Survey, Theory, read_artifact, write_artifact
from lemmata.memory.knowledge_graph import build_graph, record_graph
from lemmata.pictures.lemma_graph import write_theory_graph
from lemmata.run.job import StageJob
from lemmata.run.job_harness import carried
from lemmata.settings import lemmata_home
from lemmata.stages.formal.development import write_development
from lemmata.stages.rewrite import rewrite_theory


def run(job: StageJob) -> None:
    version = int(job.smk.wildcards.n)
    with job.reporting():
        theory = rewrite_theory(
            lambda scope: job.client(scope=f"rewrite_theory:v{version}:{scope}"),
            job.settings,
            read_artifact(job.input("revision"), RevisionRequest),
            read_artifact(job.input("theory"), Theory),
            read_artifact(job.input("survey"), Survey),
            read_artifact(job.input("formal"), FormalStatement),
            checker=job.checker(job.client()),
            formalizer_cache=job.run_dir / layout.FORMALIZER_CACHE,
            # As in a first run: the new lemmas are remembered before the assembly, which may fail.
            before_assembly=lambda plan, lemmas: record_graph(
                lemmata_home(), build_graph(job.task_input().session_id, plan.goal, lemmas)
            ),
            # As in a first run: the development's kernel check runs while the sketch is asked for.
            beside_the_sketch=carried(lambda checked: write_development(job.run_dir, version, checked)),
        )
        write_artifact(job.output(), theory)
        write_theory_graph(job.run_dir, version, theory)
        # The session's knowledge graph follows its latest theory, as after the first run's.
        record_graph(lemmata_home(), build_graph(job.task_input().session_id, theory.goal, theory.lemmas, theory))
