"""theory_plan: directions.json + theory/formal.json + survey.json (+ the direction review's feedback,
and the reviewer's objection after `n` at the theory review) -> theory/plan.json (the lemma chain,
each lemma formalized and falsified, a refuted one repaired or removed; the goal's kernel proof
tried beside the planning calls)."""

from pathlib import Path

from lemmata import layout
from lemmata.artifacts import FormalStatement, Survey, TheoryRework, read_artifact, write_artifact
from lemmata.run.job import StageJob
from lemmata.stages.feedback import job_feedback
from lemmata.stages.survey.paper_reader import literature_digest
from lemmata.stages.theory.falsify import checked_plan
from lemmata.stages.theory.plan import rework_feedback


def run(job: StageJob) -> None:
    with job.reporting():
        formal = read_artifact(job.input("formal"), FormalStatement)
        survey = read_artifact(job.input("survey"), Survey)
        rework = read_artifact(Path(job.smk.input.rework[0]), TheoryRework) if job.smk.input.rework else None
        feedback = " ".join(filter(None, [job_feedback(job.smk.input), rework_feedback(rework)]))
        plan = checked_plan(
            job.client(),
            formal,
            job.run_dir / layout.FORMALIZER_CACHE,
            job.settings,
            feedback=feedback,
            literature=literature_digest(survey.papers, survey.paper_notes),
        )
        write_artifact(job.output(), plan.model_copy(update={"rework": rework}))
