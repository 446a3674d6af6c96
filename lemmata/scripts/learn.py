"""learn: theory.json + experiment.json (+ the reviewer's objection, if any) -> memories of the
run's domain, and learned.json listing them."""
from pathlib import Path

from lemmata.artifacts import BRIEFING_FILE, Briefing, Experiment, TaskInput, Theory, TheoryRework, read_artifact, write_artifact
from lemmata.run.job import StageJob
from lemmata.plugins import plugin_for
from lemmata.stages.briefing import memory_domain
from lemmata.stages.learning import distil, record_memories

job = StageJob(snakemake)  # noqa: F821 (injected by Snakemake)
with job.reporting():
    task = read_artifact(job.input("task"), TaskInput)
    briefing = job.run_dir / BRIEFING_FILE  # where the run read its memories is where it writes them
    domain = (read_artifact(briefing, Briefing).memory_domain if briefing.is_file()
              else memory_domain(task.domain, plugin_for(task.domain)))
    rework = [read_artifact(Path(path), TheoryRework) for path in snakemake.input.rework]  # noqa: F821
    drafts = distil(read_artifact(job.input("theory"), Theory), read_artifact(job.input("experiment"), Experiment),
                    rework[0] if rework else None)
    write_artifact(job.output(), record_memories(job.home, domain, task.session_id, drafts))
