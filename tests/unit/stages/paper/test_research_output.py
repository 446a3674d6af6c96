"""The research output record carries `bibliography_json` (spec: resources) beside the paper
versions and the lemma chain; its keys are the ones references.bib uses. Each lemma says who
checked it and how, and the record whether the main result is established."""

from __future__ import annotations

import json

from lemmata.artifacts import (
    CompileReport,
    ConsistencyCheck,
    ModelCosts,
    PaperMeta,
    PaperRecord,
    ProvedLemma,
    ResearchOutput,
    Survey,
    TaskInput,
    Theory,
)
from lemmata.latex.bibliography import assign_citation_keys, render_bibtex
from lemmata.stages.paper.research_output import research_output
from unit.run.test_cards import CALIBRATED, PARTLY_VERIFIED_THEORY, VERIFIED_THEORY

PAPERS = [
    PaperRecord(
        id="arXiv:2101.00001",
        title="Parity in rings",
        authors=["José Díaz"],
        year=2021,
        url="https://arxiv.org/abs/2101.00001",
        source="preprint_search",
    ),
    PaperRecord(id="s2:77", title="More parity", authors=["Díaz, Ana"], year=2021, source="scholar_search"),
]
LEMMA = ProvedLemma(
    id="L1",
    statement="s",
    proof_text="p",
    confidence=0.6,
    verified=False,
    status="low_confidence",
    verification_method="not_checked",
)
THEORY = Theory(
    goal="g",
    theorem_statement="t",
    lemmas=[LEMMA],
    assembled_proof="By [L1].",
    consistency=ConsistencyCheck(passed=True),
    proof_status="partial",
)
META = PaperMeta(version=1, title="Parity", tex_file="paper_v1.tex", bib_entries=2)
REPORT = CompileReport(tex_file="paper_v1.tex", ok=True, pdf_file="paper_v1.pdf")


def test_the_record_holds_the_chain_the_papers_and_the_bibliography_under_the_bib_keys() -> None:
    task = TaskInput(session_id="s-1", mode="prove", task="x")
    record = research_output(task, Survey(papers=PAPERS), THEORY, [(META, REPORT)])
    entries = json.loads(record.bibliography_json)
    assert [entry["key"] for entry in entries] == ["diaz2021", "diaz2021a"]
    bib = render_bibtex(assign_citation_keys(PAPERS))
    assert all(f"{{{entry['key']}," in bib for entry in entries)  # the same keys as references.bib
    assert entries[0] == {
        "key": "diaz2021",
        "id": "arXiv:2101.00001",
        "title": "Parity in rings",
        "authors": ["José Díaz"],
        "year": 2021,
        "url": "https://arxiv.org/abs/2101.00001",
        "source": "preprint_search",
    }
    assert [(c.id, c.verified, c.verification_method) for c in record.lemma_chain] == [("L1", False, "not_checked")]
    assert [(p.version, p.tex_file, p.pdf_file) for p in record.papers] == [(1, "paper_v1.tex", "paper_v1.pdf")]


def test_no_papers_means_an_empty_json_list() -> None:
    record = research_output(TaskInput(session_id="s-2", mode="prove", task="x"), Survey(), THEORY, [(META, REPORT)])
    assert record.bibliography_json == "[]"


def test_each_chain_entry_says_who_checked_it_how_and_the_record_whether_the_main_result_is_established() -> None:
    task = TaskInput(session_id="s-3", mode="prove", task="x")
    record = research_output(task, Survey(), PARTLY_VERIFIED_THEORY, [(META, REPORT)])
    first, second = record.lemma_chain
    assert (first.verified, first.checked_by, first.verification) == (True, CALIBRATED, "verifier: valid")
    assert [(step.check, step.outcome) for step in second.checks] == [("structure", "passed"), ("verifier", "objected")]
    assert (record.main_result_established, record.main_result_issues) == (False, ["lemma L2 is not verified"])
    established = research_output(task, Survey(), VERIFIED_THEORY, [(META, REPORT)])
    assert (established.main_result_established, established.main_result_issues) == (True, [])


def test_a_record_written_before_checkers_and_main_results_were_recorded_is_still_readable() -> None:
    older = research_output(TaskInput(session_id="s-4", mode="prove", task="x"), Survey(), THEORY, [(META, REPORT)])
    fields = older.model_dump(exclude={"main_result_established", "main_result_issues"})
    for entry in fields["lemma_chain"]:
        for name in ("verification", "checked_by", "checks"):
            del entry[name]
    record = ResearchOutput.model_validate_json(json.dumps(fields))
    assert record.main_result_established is False and record.lemma_chain[0].checked_by is None


def test_the_record_keeps_what_the_calls_cost_and_older_records_still_read() -> None:
    costs = ModelCosts(calls=3, usd=0.26, unknown_calls=1, by_role={"prover": 0.26}, by_stage={"theory": 0.26})
    record = research_output(
        TaskInput(session_id="s-5", mode="prove", task="x"), Survey(), THEORY, [(META, REPORT)], costs
    )
    assert ResearchOutput.model_validate_json(record.model_dump_json()).model_costs == costs
    older = json.loads(record.model_dump_json())
    del older["model_costs"]
    assert ResearchOutput.model_validate(older).model_costs is None
