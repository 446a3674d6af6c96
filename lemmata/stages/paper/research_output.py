"""The research output record: what a run produced, in one artifact, for tools and the server:
including, for each lemma, who checked it and how, and whether the main result is established."""

from __future__ import annotations

import json
from collections.abc import Sequence

from lemmata.artifacts import (
    ChainEntry,
    CompileReport,
    ModelCosts,
    PaperMeta,
    PaperVersion,
    ResearchOutput,
    Survey,
    TaskInput,
    Theory,
)
from lemmata.latex.bibliography import assign_citation_keys


def research_output(
    task: TaskInput,
    survey: Survey,
    theory: Theory,
    papers: Sequence[tuple[PaperMeta, CompileReport]],
    costs: ModelCosts | None = None,
) -> ResearchOutput:
    """The record; `bibliography_json` carries the entries under the keys the paper cites them by
    (the same algorithm as references.bib); `costs`, what the run's model calls cost."""
    bibliography = [
        {
            "key": key,
            "id": record.id,
            "title": record.title,
            "authors": record.authors,
            "year": record.year,
            "url": record.url,
            "source": record.source,
        }
        for key, record in assign_citation_keys(survey.papers)
    ]
    return ResearchOutput(
        session_id=task.session_id,
        goal=theory.goal,
        theorem_statement=theory.theorem_statement,
        proof_status=theory.proof_status,
        lemma_chain=[
            ChainEntry(
                id=lemma.id,
                statement=lemma.statement,
                status=lemma.status,
                verified=lemma.verified,
                verification_method=lemma.verification_method,
                confidence=lemma.confidence,
                verification=lemma.verification,
                checked_by=lemma.checked_by,
                checks=lemma.checks,
                formal=lemma.formal,
            )
            for lemma in theory.lemmas
        ],
        main_result_established=theory.main_result_established,
        main_result_issues=theory.main_result_issues(),
        main_result_status=theory.main_result_status,
        goal_check=theory.goal_check,
        refuted=theory.refuted,
        papers=[
            PaperVersion(version=meta.version, title=meta.title, tex_file=meta.tex_file, pdf_file=report.pdf_file)
            for meta, report in papers
        ],
        bibliography_json=json.dumps(bibliography, ensure_ascii=False),
        model_costs=costs,
    )
