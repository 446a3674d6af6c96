"""Citation keys, BibTeX rendering (checked by real bibtex) and removal of unknown citations."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import pytest
from pypdf import PdfReader

from lemmata.artifacts import PaperRecord
from lemmata.latex.bibliography import (
    assign_citation_keys,
    citation_key_base,
    cited_keys,
    escape_bibtex,
    remove_unknown_citations,
    render_bibtex,
)
from lemmata.latex.compile import compile_paper
from lemmata.latex.document import render_document

needs_tex = pytest.mark.skipif(shutil.which("bibtex") is None, reason="bibtex is not installed")


def paper(
    title: str = "A title", authors: list[str] | None = None, year: int | None = 2020, **extra: str
) -> PaperRecord:
    return PaperRecord(
        id=title, title=title, authors=authors if authors is not None else ["John Smith"], year=year, **extra
    )


@pytest.mark.parametrize(
    ("authors", "year", "expected"),
    [
        pytest.param(["José Díaz"], 2020, "diaz2020", id="accent"),
        pytest.param(["Müller, Hans"], 2019, "muller2019", id="umlaut-last-first"),
        pytest.param(["Łukasz Nowak"], 2021, "nowak2021", id="first-middle-last"),
        pytest.param(["Smith, John"], 2020, "smith2020", id="last-comma-first"),
        pytest.param(["Hans Strauß"], 2018, "strauss2018", id="eszett"),
        pytest.param(["Ørsted, H. C."], 1820, "orsted1820", id="o-slash"),
        pytest.param(["Novak Đoković"], 2011, "dokovic2011", id="d-stroke"),
        pytest.param(["Þóra Þórsdóttir"], 2001, "thorsdottir2001", id="thorn"),
        pytest.param(["Jean Bœuf"], 1999, "boeuf1999", id="oe-ligature"),
        pytest.param(["Cathy O'Neil"], 2016, "oneil2016", id="apostrophe"),
        pytest.param(["Martin Luther King Jr."], 1963, "king1963", id="suffix-skipped"),
        pytest.param(["", "Bob Stone"], 2000, "stone2000", id="blank-author-skipped"),
        pytest.param([], 2020, "unknown2020", id="no-authors"),
        pytest.param(["Ann Lee"], None, "lee", id="no-year"),
        pytest.param([], None, "unknown", id="nothing"),
        pytest.param(["张伟"], 2022, "unknown2022", id="no-latin-letters"),
    ],
)
def test_citation_key_base(authors: list[str], year: int | None, expected: str) -> None:
    assert citation_key_base(authors, year) == expected


def test_duplicate_keys_get_letter_suffixes_in_order() -> None:
    records = [paper("A"), paper("B", ["Ann Lee"]), paper("C"), paper("D"), paper("E", ["Smith, J."], 2021)]
    keys = [key for key, _ in assign_citation_keys(records)]
    assert keys == ["smith2020", "lee2020", "smith2020a", "smith2020b", "smith2021"]


def test_keys_stay_unique_when_a_suffix_collides_with_a_real_name() -> None:
    records = [paper("A", ["Smith"], None), paper("B", ["Smitha"], None), paper("C", ["Smith"], None)]
    keys = [key for key, _ in assign_citation_keys(records)]
    assert keys == ["smith", "smitha", "smithb"]


def test_keys_pair_with_their_records() -> None:
    records = [paper("A"), paper("B")]
    assert [record.title for _, record in assign_citation_keys(records)] == ["A", "B"]


def test_escape_bibtex_never_leaves_raw_specials_or_unbalanced_braces() -> None:
    escaped = escape_bibtex("50% of {odd} #1 & $x_1$ ~ ^ \\ end}")
    assert escaped.count("{") == escaped.count("}")
    assert re.search(r"(?<!\\)[%#&$_]", escaped) is None
    assert "\\textbraceleft{}odd\\textbraceright{}" in escaped


def test_render_bibtex_article_and_misc() -> None:
    keyed = assign_citation_keys(
        [
            paper(
                "Deep {Nets} & 100% Results",
                ["Ann Lee", "Research and Development Team"],
                2020,
                venue="J. Math & Stats",
                url="https://example.org/a b",
            ),
            paper("Preprint", ["Bob Stone"], None, url="https://arxiv.org/abs/2101.00001"),
        ]
    )
    bib = render_bibtex(keyed)
    article, misc = bib.strip().split("\n\n")
    assert article.startswith("@article{lee2020,")
    assert "author = {Ann Lee and {Research and Development Team}}," in article
    assert "journal = {J. Math \\& Stats}," in article and "year = {2020}," in article
    assert "url = {https://example.org/a%20b}," in article
    assert "title = {{Deep \\textbraceleft{}Nets\\textbraceright{} \\& 100\\% Results}}," in article
    assert misc.startswith("@misc{stone,") and "howpublished = {\\url{https://arxiv.org/abs/2101.00001}}" in misc
    assert "year" not in misc and "journal" not in misc
    for entry in (article, misc):
        assert entry.count("{") == entry.count("}")


@pytest.mark.parametrize(
    ("latex", "expected", "removed"),
    [
        pytest.param("See \\cite{a,zz, b}.", "See \\cite{a,b}.", ["zz"], id="mixed-keys"),
        pytest.param("See~\\citep[see][p.~3]{zz,a}.", "See~\\citep[see][p.~3]{a}.", ["zz"], id="optional-args"),
        pytest.param("Known \\citet{zz, yy}.", "Known.", ["zz", "yy"], id="all-removed"),
        pytest.param(
            "As in~\\cite{zz} and \\citeauthor{a} (\\citeyear{b}).",
            "As in and \\citeauthor{a} (\\citeyear{b}).",
            ["zz"],
            id="tilde-dropped-with-command",
        ),
        pytest.param("\\citealp{zz} \\citeyear{zz} \\cite{a}", " \\cite{a}", ["zz"], id="reported-once"),
        pytest.param("\\citep*{a} and \\cite{}", "\\citep*{a} and", [], id="starred-and-empty"),
        pytest.param("No citations here.", "No citations here.", [], id="nothing-to-do"),
    ],
)
def test_remove_unknown_citations(latex: str, expected: str, removed: list[str]) -> None:
    result, removed_keys = remove_unknown_citations(latex, {"a", "b"})
    assert result == expected
    assert removed_keys == removed


@needs_tex
def test_bibtex_accepts_rendered_bib_and_resolves_citations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the private TEXMFVAR lands here
    keyed = assign_citation_keys(
        [
            paper(
                "Nasty {Title} & 50% #1 $x$",
                ["José Díaz", "Smith, John"],
                2020,
                venue="Annals & Co",
                url="https://example.org/paper?id=1&x=50%25#sec",
            ),
            paper("Author-less preprint", [], 2021, url="https://arxiv.org/abs/2101.00001"),
        ]
    )
    (tmp_path / "refs.bib").write_text(render_bibtex(keyed), encoding="utf-8")
    body = " ".join(f"See \\citet{{{key}}}." for key, _ in keyed)
    tex_path = tmp_path / "paper.tex"
    tex_path.write_text(render_document(title="T", abstract="", body=body, bibliography_stem="refs"))
    result = compile_paper(tex_path, bibliography=True)
    final_log = tex_path.with_suffix(".log").read_text(encoding="latin-1")
    for key, _ in keyed:
        assert key not in final_log
    assert "Warning" not in "\n".join(line for line in final_log.splitlines() if "undefined" in line)
    assert result.warnings == []
    text = " ".join(page.extract_text() for page in PdfReader(result.pdf_path).pages)
    assert "Díaz" in text and "Author-less preprint" in text


@pytest.mark.parametrize(
    "latex, keys",
    [
        pytest.param(
            "See \\cite{smith2020a} and \\citep[p.~3]{lee2019, smith2020a}.",
            ["smith2020a", "lee2019"],
            id="each-key-once-in-order",
        ),
        pytest.param("\\cite{smith2020a}", ["smith2020a"], id="suffixed-key-does-not-count-its-base"),
        pytest.param("smith2020 is mentioned in prose only.", [], id="a-key-in-prose-is-not-a-citation"),
        pytest.param("\\nocite{*}", [], id="nocite-star-names-no-key"),
    ],
)
def test_cited_keys(latex: str, keys: list[str]) -> None:
    assert cited_keys(latex) == keys
