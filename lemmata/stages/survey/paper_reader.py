"""The paper reader: the key results of the papers a survey kept, for the stages after it.

Each paper is read by the `extractor` role, from its abstract; with the optional `pdf` extra,
from the theorem and lemma blocks of its preprint PDF instead (`tools/pdf_excerpt.py`), which
state results exactly where an abstract only names them. A paper with nothing to read, or whose
reading fails, gets no note: the survey stands without it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from lemmata.agents.answers import ExtractorAnswer
from lemmata.agents.client import LLMClient
from lemmata.agents.parsing import parse_json_answer
from lemmata.agents.prompts import render_prompt
from lemmata.artifacts import PaperNote, PaperRecord, Survey
from lemmata.errors import LemmataError

#: Papers read per survey, in the survey's order: each is a model call (and a PDF download).
READ_AT_MOST = 5
READERS = 4
ABSTRACT_CHARS = 3000

Excerpt = Callable[[PaperRecord], "str | None"]


def pdf_extra_installed() -> bool:
    """The `pdf` extra provides pypdf; without it papers are read from their abstracts."""
    return importlib.util.find_spec("pypdf") is not None


def with_paper_notes(survey: Survey, client: LLMClient, excerpt: Excerpt | None) -> Survey:
    """The survey with what the reader took from its papers, and a note of how many it read."""
    if not survey.papers:
        return survey
    notes = read_papers(client, survey.papers, excerpt)
    tried = min(len(survey.papers), READ_AT_MOST)
    read = f"paper reader: {len(notes)} of {tried} papers read" + (
        " (the first ones)" if len(survey.papers) > tried else ""
    )
    note = "; ".join(part for part in (survey.note, read) if part)
    return survey.model_copy(update={"paper_notes": notes, "note": note})


def read_papers(client: LLMClient, papers: list[PaperRecord], excerpt: Excerpt | None) -> list[PaperNote]:
    """Notes for the first READ_AT_MOST papers, concurrently, in the papers' order."""
    with ThreadPoolExecutor(max_workers=READERS) as pool:
        notes = list(pool.map(lambda paper: read_paper(client.scoped(paper.id), paper, excerpt), papers[:READ_AT_MOST]))
    return [note for note in notes if note is not None]


def read_paper(client: LLMClient, paper: PaperRecord, excerpt: Excerpt | None) -> PaperNote | None:
    text = excerpt(paper) if excerpt is not None else None
    source = "pdf" if text else "abstract"
    text = text or paper.abstract[:ABSTRACT_CHARS]
    if not text.strip():
        return None
    label = "theorem and lemma statements from its PDF" if source == "pdf" else "abstract"
    prompt = render_prompt("extractor", paper_id=paper.id, title=paper.title, source=label, text=text)
    try:
        answer = parse_json_answer(
            client.complete("extractor", prompt.system, prompt.user, json_answer=True), ExtractorAnswer, "extractor"
        )
    except LemmataError:
        return None
    results = [r.strip() for r in answer.results if r.strip()]
    techniques = [t.strip() for t in answer.techniques if t.strip()]
    if not results and not techniques:
        return None
    return PaperNote(paper_id=paper.id, source=source, results=results, techniques=techniques)


def literature_digest(papers: list[PaperRecord], notes: list[PaperNote]) -> str:
    """The known results as later prompts show them: `[id] title: result; result`."""
    titles = {paper.id: paper.title for paper in papers}
    lines = [
        f"[{note.paper_id}] {titles.get(note.paper_id, '')}: " + "; ".join(note.results)
        for note in notes
        if note.results
    ]
    return "\n".join(lines)
