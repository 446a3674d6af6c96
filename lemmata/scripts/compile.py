"""compile: paper_v1.tex + references.bib -> paper_v1.pdf (pdflatex, bibtex, pdflatex, pdflatex)."""
from lemmata.artifacts import CompileReport, write_artifact
from lemmata.jobs import StageJob
from lemmata.latex.compile import compile_paper

job = StageJob(snakemake)  # noqa: F821 (injected by Snakemake)
with job.reporting():
    has_bibliography = job.input("bib").stat().st_size > 0
    result = compile_paper(job.input("tex"), bibliography=has_bibliography)
    write_artifact(job.output("report"), CompileReport(
        pdf_file=result.pdf_path.name, passes=list(result.passes), seconds=round(result.seconds, 3),
        warnings=list(result.warnings)))
