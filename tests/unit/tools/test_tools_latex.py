"""`latex_section_read`: finding a section by name or number and cutting it at the right heading."""

from __future__ import annotations

import pytest

from lemmata.tools.latex_sections import MAX_SECTION_CHARS, LatexSectionRead, parse_sections, plain_title

PAPER = r"""\documentclass{article}
\begin{document}
\maketitle
\section{Introduction}\label{sec:intro}
We study sums.
% \section{An old section left in a comment}
\section{Preliminaries}
Notation first.
\subsection{Notation}
Let $n$ be an integer.
\subsubsection{Parity}
Even means divisible by $2$.
\paragraph{A remark.} Zero is even.
\subsection{Known results}
Sums of evens are even.
\section{The \emph{main} theorem\label{sec:main}}
\begin{theorem}Main.\end{theorem}
\section*{Acknowledgements}
We thank the referee.
\section{\texorpdfstring{$L^2$}{L2} bounds}
Bounds.
\appendix
\section{Proofs of the lemmas}
Proof details.
\subsection{Proof of Lemma 1}
Details of lemma one.
\bibliographystyle{plain}
\bibliography{references}
\end{document}
"""


def read(name: str, source: str = PAPER) -> str:
    result = LatexSectionRead(source).run(name)
    assert result.ok, result.text
    return result.text


def test_section_names_and_numbers_follow_latex() -> None:
    labels = [section.label for section in parse_sections(PAPER)]
    assert labels == [
        "1 Introduction",
        "2 Preliminaries",
        "2.1 Notation",
        "2.1.1 Parity",
        "A remark.",
        "2.2 Known results",
        "3 The main theorem",
        "Acknowledgements",
        "4 L^2 bounds",
        "A Proofs of the lemmas",
        "A.1 Proof of Lemma 1",
    ]


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("Preliminaries", id="title"),
        pytest.param("preliminaries", id="any-case"),
        pytest.param("2 Preliminaries", id="numbered"),
        pytest.param("2. Preliminaries", id="numbered-with-dot"),
        pytest.param("7 Preliminaries", id="wrong-number-right-title"),
        pytest.param("2", id="number-only"),
        pytest.param("Section 2", id="section-prefix"),
        pytest.param("  Preliminaries. ", id="padding-and-punctuation"),
        pytest.param("prelim", id="unique-partial-title"),
    ],
)
def test_a_section_is_found_by_title_or_number(name: str) -> None:
    assert read(name).startswith(r"\section{Preliminaries}")


def test_a_section_runs_up_to_the_next_heading_and_names_its_subsections() -> None:
    """The spec: "from its section heading up to the next heading" (issue 23: subsections were
    included); the answer names them so that the agent can read each."""
    assert read("Preliminaries") == (
        "\\section{Preliminaries}\nNotation first.\n[Its subsections, each read by its "
        "name or number: 2.1 Notation; 2.1.1 Parity; A remark.; 2.2 Known results]"
    )
    assert read("2.1 Notation") == (
        "\\subsection{Notation}\nLet $n$ be an integer.\n[Its subsections, each read by "
        "its name or number: 2.1.1 Parity; A remark.]"
    )
    assert read("2.2") == "\\subsection{Known results}\nSums of evens are even."


def test_a_paragraph_ends_at_the_next_heading_of_any_higher_level() -> None:
    assert read("A remark") == r"\paragraph{A remark.} Zero is even."


def test_a_starred_section_is_found_by_title() -> None:
    assert read("acknowledgements") == "\\section*{Acknowledgements}\nWe thank the referee."


@pytest.mark.parametrize(
    ("name", "opening"),
    [
        pytest.param("The main theorem", r"\section{The \emph{main} theorem", id="emph-and-label"),
        pytest.param("3", r"\section{The \emph{main} theorem", id="its-number"),
        pytest.param("L^2 bounds", r"\section{\texorpdfstring", id="texorpdfstring"),
        pytest.param("L2 bounds", r"\section{\texorpdfstring", id="texorpdfstring-loosely"),
    ],
)
def test_titles_with_markup_match_their_plain_text(name: str, opening: str) -> None:
    assert read(name).startswith(opening)


def test_a_section_before_the_appendix_ends_there_and_appendix_sections_have_letters() -> None:
    assert read("L^2 bounds") == "\\section{\\texorpdfstring{$L^2$}{L2} bounds}\nBounds."
    assert read("A Proofs of the lemmas").startswith("\\section{Proofs of the lemmas}\nProof details.\n")
    text = read("A.1")
    assert text == "\\subsection{Proof of Lemma 1}\nDetails of lemma one."
    assert "bibliography" not in text  # the bibliography is not part of the last section


def test_the_last_section_runs_to_the_end_of_a_source_without_end_document() -> None:
    source = "\\section{One}\nFirst.\n\\section{Two}\nSecond.\nStill two."
    assert read("Two", source) == "\\section{Two}\nSecond.\nStill two."


def test_the_last_section_stops_at_end_document() -> None:
    source = "\\begin{document}\n\\section{Only}\nBody.\n\\end{document}\nTrailing junk."
    assert read("only", source) == "\\section{Only}\nBody."


def test_a_heading_in_a_comment_is_not_a_section() -> None:
    assert "An old section" not in [section.title for section in parse_sections(PAPER)]
    assert "An old section left in a comment" in read("Introduction")  # the comment is still the intro's text


def test_an_unknown_section_lists_the_available_ones() -> None:
    result = LatexSectionRead(PAPER).run("Experiments")
    assert not result.ok
    assert "no section named 'Experiments'" in result.error
    assert "1 Introduction; 2 Preliminaries; 2.1 Notation" in result.text and "A.1 Proof of Lemma 1" in result.text


def test_an_ambiguous_partial_name_is_not_guessed() -> None:
    result = LatexSectionRead(PAPER).run("proof")  # "Proofs of the lemmas" and "Proof of Lemma 1"
    assert not result.ok and "available sections" in result.text


def test_a_source_without_headings_is_an_error() -> None:
    result = LatexSectionRead("Just text, no sections.").run("Introduction")
    assert not result.ok and "no section headings" in result.error


def test_a_huge_section_is_cut() -> None:
    source = "\\section{Long}\n" + "word " * (MAX_SECTION_CHARS // 2)
    text = read("Long", source)
    assert len(text) < MAX_SECTION_CHARS + 100 and text.endswith(f"[… section cut at {MAX_SECTION_CHARS} characters]")


def test_optional_short_titles_and_chapters() -> None:
    source = "\\chapter{Basics}\nIntro.\n\\section[Short]{A long title}\nText.\n\\chapter{More}\nLater."
    labels = [section.label for section in parse_sections(source)]
    assert labels == ["1 Basics", "1.1 A long title", "2 More"]
    assert read("Basics", source) == (
        "\\chapter{Basics}\nIntro.\n[Its subsections, each read by its name or number: 1.1 A long title]"
    )
    assert read("A long title", source) == "\\section[Short]{A long title}\nText."


@pytest.mark.parametrize(
    ("raw", "plain"),
    [
        pytest.param(r"Main \textbf{results}", "Main results", id="bold"),
        pytest.param(r"Proof of Theorem~\ref{thm:main}", "Proof of Theorem", id="ref"),
        pytest.param(r"Sums \& products", "Sums & products", id="escaped-ampersand"),
        pytest.param(r"Erd\H{o}s and R\'enyi", "Erdos and Renyi", id="accents"),
    ],
)
def test_plain_title(raw: str, plain: str) -> None:
    assert plain_title(raw) == plain
