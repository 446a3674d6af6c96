"""Theorem excerpts from preprint PDFs: the regular-expression pass, and fetching through the fake arXiv."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import pytest

from lemmata.artifacts import PaperRecord
from lemmata.settings import Settings
from lemmata.tools.http_fetch import RateLimiter
from lemmata.tools.pdf_excerpt import extract_theorem_blocks, pdf_text, theorem_excerpt
from support import DATA
from support.fake_search_servers import DEFAULT_PAPERS, FAST_SEARCH_SETTINGS, FakeSearchServers, Fault, unused_port

#: Built from theorems.tex beside it with pdflatex: "Theorem 1.", its proof, "Lemma 2.", a remark.
THEOREMS_PDF = DATA / "theorems.pdf"
RECORD = PaperRecord(id="arXiv:2101.00001", title="Parity of Sums of Even Integers", source="preprint_search")


@pytest.fixture
def fake() -> Iterator[FakeSearchServers]:
    with_pdf = dataclasses.replace(DEFAULT_PAPERS[0], pdf=THEOREMS_PDF.read_bytes())
    with FakeSearchServers(papers=(with_pdf, *DEFAULT_PAPERS[1:])) as server:
        yield server


def settings_for(fake: FakeSearchServers, **overrides: object) -> Settings:
    return Settings.from_mapping({**fake.settings_values(), **FAST_SEARCH_SETTINGS, **overrides})


def excerpt(record: PaperRecord, settings: Settings) -> str | None:
    return theorem_excerpt(record, settings, limiter=RateLimiter())


def test_the_excerpt_keeps_the_statements_of_the_fake_preprint(fake: FakeSearchServers) -> None:
    text = excerpt(RECORD, settings_for(fake))
    assert text == (
        "Theorem 1. The sum of two even integers is even.\n\n"
        "Lemma 2. Every even integer n can be written as n = 2k for a unique integer k."
    )
    (request,) = fake.requests("pdf")
    assert request.path == "/arxiv/pdf/2101.00001"


def test_a_versioned_id_is_fetched_as_is(fake: FakeSearchServers) -> None:
    assert excerpt(RECORD.model_copy(update={"id": "arXiv:2101.00001v2"}), settings_for(fake))
    assert fake.requests("pdf")[0].path == "/arxiv/pdf/2101.00001v2"


def test_a_transient_failure_is_retried(fake: FakeSearchServers) -> None:
    fake.inject_fault("pdf", Fault(status=503))
    assert excerpt(RECORD, settings_for(fake))
    assert [request.status for request in fake.requests("pdf")] == [503, 200]


@pytest.mark.parametrize(
    "record",
    [
        pytest.param(PaperRecord(id="DOI:10.5555/graphs.2015.42", title="Graphs"), id="not-on-arxiv"),
        pytest.param(PaperRecord(id="S2:abc", title="Somewhere"), id="semantic-scholar-only"),
    ],
)
def test_a_record_without_an_arxiv_id_has_no_excerpt_and_asks_nothing(
    fake: FakeSearchServers, record: PaperRecord
) -> None:
    assert excerpt(record, settings_for(fake)) is None
    assert fake.requests() == []


def test_a_missing_pdf_is_none(fake: FakeSearchServers) -> None:
    assert excerpt(RECORD.model_copy(update={"id": "arXiv:1905.01234"}), settings_for(fake)) is None
    assert [request.status for request in fake.requests("pdf")] == [404]


def test_a_down_server_is_none() -> None:
    settings = Settings.from_mapping({**FAST_SEARCH_SETTINGS, "PDF_BASE_URL": f"http://127.0.0.1:{unused_port()}/pdf"})
    assert excerpt(RECORD, settings) is None


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"<html><body>Please verify you are human</body></html>", id="html-page-with-200"),
        pytest.param(THEOREMS_PDF.read_bytes()[:2000], id="truncated-pdf"),
        pytest.param(b"", id="empty-body"),
    ],
)
def test_an_unreadable_pdf_is_none(fake: FakeSearchServers, body: bytes) -> None:
    fake.inject_fault("pdf", Fault(body=body, content_type="application/pdf"))
    assert excerpt(RECORD, settings_for(fake)) is None


def test_without_pypdf_there_is_no_excerpt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pypdf", None)  # import now raises ImportError
    assert pdf_text(THEOREMS_PDF.read_bytes()) is None


def test_the_core_installs_and_runs_without_pypdf() -> None:
    """The spec's PDF extraction is the optional `pdf` extra (issue 23: pypdf was a core
    dependency, so the extra could not be left out): only the extras require it, and every
    module of lemmata imports with pypdf absent, the survey then reading abstracts."""
    requirements = importlib.metadata.requires("lemmata") or []
    for requirement in requirements:
        if requirement.startswith("pypdf"):
            assert "extra ==" in requirement, requirement
    assert any(r.startswith("pypdf") and 'extra == "pdf"' in r for r in requirements)
    code = textwrap.dedent("""
        import importlib, pkgutil, sys
        sys.modules["pypdf"] = None
        import lemmata
        for module in pkgutil.walk_packages(lemmata.__path__, "lemmata."):
            if module.name.startswith("lemmata.scripts.") or module.name == "lemmata.__main__":
                continue  # Snakemake's scripts run inside a job
            importlib.import_module(module.name)
        from lemmata.stages.survey.paper_reader import pdf_extra_installed
        print(pdf_extra_installed())
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "False"


# --- the regular-expression pass ---------------------------------------------------------------

ARTICLE_TEXT = """1 Introduction
We prove Theorem 2.1 below; see also Lemma 3.
2 Main results
Definition 2.1. A graph is even if every vertex has even degree.
Theorem 2.2 (Euler). A connected graph has an Euler circuit
if and only if it is even.
Proof. Walk until stuck.
Proposition 2.3. Every even graph is a union of cycles.
Remark 2.4. Loops count twice.
Corollary 2.5: An even graph has no bridge.
3 Applications
Lemma A.1. Trees with at least two vertices have a leaf.
Example 3.1. A path.
"""


def test_blocks_are_cut_at_proofs_remarks_examples_and_section_titles() -> None:
    assert extract_theorem_blocks(ARTICLE_TEXT) == "\n\n".join(
        [
            "Definition 2.1. A graph is even if every vertex has even degree.",
            "Theorem 2.2 (Euler). A connected graph has an Euler circuit if and only if it is even.",
            "Proposition 2.3. Every even graph is a union of cycles.",
            "Corollary 2.5: An even graph has no bridge.",
            "Lemma A.1. Trees with at least two vertices have a leaf.",
        ]
    )


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("We use Theorem 2 and Lemma 3 in passing.\nNothing else.", id="mentions-only"),
        pytest.param("1 Introduction\nJust prose here.\n", id="no-statements"),
        pytest.param("", id="empty"),
    ],
)
def test_text_without_statements_has_no_excerpt(text: str) -> None:
    assert extract_theorem_blocks(text) is None


def test_the_excerpt_keeps_whole_blocks_up_to_the_cap() -> None:
    text = "".join(f"Lemma {n}. {'x' * 90}\n" for n in range(1, 40))
    excerpt_text = extract_theorem_blocks(text, max_chars=500)
    assert excerpt_text is not None and len(excerpt_text) <= 500
    assert excerpt_text.count("Lemma") == 4 and excerpt_text.endswith("x")


def test_one_long_block_is_cut_at_the_block_cap() -> None:
    text = "Theorem 1. " + "word " * 1000
    block = extract_theorem_blocks(text, max_chars=6000, max_block=300)
    assert block is not None and block.startswith("Theorem 1. word") and len(block) <= 300
