"""rewrite_context: revisions/v<n>.json, once paper_v<n>.pdf exists -> rewrite_context_v<n>.json."""

import time

from lemmata import layout
from lemmata.artifacts import RevisionRequest, RewriteContext, read_artifact, write_artifact
from lemmata.run.job import StageJob
from lemmata.stages.feedback import revision_feedback


def run(job: StageJob) -> None:
    with job.reporting():
        request = read_artifact(job.input("revision"), RevisionRequest)
        write_artifact(
            job.output(),
            RewriteContext(
                version=request.version,
                base_version=request.base_version,
                revision_prompt=revision_feedback(request),
                qa_summary=request.qa_summary,
                requested_at=request.requested_at,
                completed_at=time.time(),
                paper=layout.paper_tex(request.version),
            ),
        )
