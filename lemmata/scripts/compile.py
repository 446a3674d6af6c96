"""compile (and rewrite_compile): paper_v<n>.tex + references.bib + the version's figures ->
paper_v<n>.pdf (pdflatex, bibtex, pdflatex, pdflatex), audited against the version's theory.

The compile report goes beside the PDF, with what the audit found (stages/paper/audit.py); when
the compile fails, to logs/ (Snakemake removes a failed job's outputs), so the errors stay
readable after the run stops.
"""

from lemmata import layout
from lemmata.artifacts import Theory, read_artifact, write_artifact
from lemmata.latex.compile import LatexCompileError, compile_paper, failure_report, success_report
from lemmata.run.job import StageJob
from lemmata.stages.paper.audit import audit_pdf


def run(job: StageJob) -> None:
    with job.reporting():
        tex = job.input("tex")
        try:
            result = compile_paper(
                tex,
                bibliography=job.input("bib").stat().st_size > 0,
                timeout_per_pass=job.settings.LATEX_PASS_TIMEOUT,
                figures=job.input("figures"),
            )
        except LatexCompileError as error:
            write_artifact(job.run_dir / layout.LOGS / f"{tex.stem}.compile.json", failure_report(tex, error))
            raise
        report = success_report(tex, result)
        findings = audit_pdf(read_artifact(job.input("theory"), Theory), result.pdf_path)
        write_artifact(job.output("report"), report.model_copy(update={"audit_findings": findings}))
