"""A corpus of defective writer answers, each taken through the real writer and compiled.

Every case is a named malformed model output: the text the model wrote after its
`%%% INTRODUCTION` marker (shapes of a whole answer included: fences, chat, a whole document).
It goes through `write_paper` (part parsing, extraction, citation clean-up, lemmata's skeleton
with its markers and Limitations, the bibliography, the writer's own trial compile) with a
scripted model in one turn, then through the real compile; the test reads the compile report and
the PDF text back: zero errors, the expected words present, both lemmas stated, and exactly one
`[Unverified step]` (the one unverified lemma, L2).
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from pathlib import Path

import pytest
from pypdf import PdfReader

from lemmata.artifacts import (
    ConsistencyCheck,
    Direction,
    Directions,
    Experiment,
    PaperRecord,
    ProvedLemma,
    Survey,
    TaskInput,
    Theory,
)
from lemmata.latex.compile import LatexCompileError, compile_paper, success_report
from lemmata.stages.paper.writer import BIB_STEM, WriterInputs, write_paper
from support.scripted_backend import scripted_client

needs_tex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")

KNOWN_PAPER = PaperRecord(
    id="arXiv:2101.00001", title="Parity in rings", authors=["José Díaz"], year=2021, source="preprint_search"
)  # its key: diaz2021


def proved(lemma_id: str, verified: bool) -> ProvedLemma:
    return ProvedLemma(
        id=lemma_id,
        statement=f"Statement {lemma_id}.",
        proof_text="Proof.",
        confidence=0.95 if verified else 0.6,
        verified=verified,
        status="proved" if verified else "low_confidence",
        verification_method="auto_accepted" if verified else "failed",
        verification="auto-accepted" if verified else "verifier: uncertain (a gap)",
    )


INPUTS = WriterInputs(
    task=TaskInput(session_id="corpus", mode="prove", task="the sum of two even integers is even"),
    survey=Survey(papers=[KNOWN_PAPER]),
    directions=Directions(
        candidates=[Direction(title="Parity")], chosen=0, goal="The sum of two even integers is even."
    ),
    theory=Theory(
        goal="g",
        theorem_statement="t",
        assembled_proof="By [L1] and [L2].",
        proof_status="partial",
        consistency=ConsistencyCheck(passed=True),
        lemmas=[proved("L1", True), proved("L2", False)],
    ),
    experiment=Experiment(skipped=True, skip_reason="EXPERIMENT_MODE=false"),
)

# The model restating the lemmas with proofs of its own: lemmata drops them (it states each lemma once).
LEMMAS = (
    "\\begin{lemma}[L1] Even numbers are $2k$.\\end{lemma}\\begin{proof}By definition.\\end{proof}\n"
    "\\begin{lemma}[L2] Sums of evens are even.\\end{lemma}\\begin{proof}Add the witnesses.\\end{proof}\n"
)

# (id, writer answer, words the PDF must contain)
CORPUS = [
    (
        "fenced-latex",
        "Here is the paper:\n```latex\n\\section{Intro}\nParity matters.\n" + LEMMAS + "```\nHope it helps!",
        ["Parity matters."],
    ),
    (
        "fenced-tex-without-closing-fence",
        "```tex\n\\section{Intro}\nUnclosed fence text.\n" + LEMMAS,
        ["Unclosed fence text."],
    ),
    (
        "whole-documentclass-document",
        "\\documentclass{article}\n\\usepackage{amsmath}\n\\usepackage{tikz}\n\\begin{document}\n\\maketitle\n"
        "\\section{Intro}\nWhole document body.\n" + LEMMAS + "\\end{document}\nTrailing chat.",
        ["Whole document body."],
    ),
    (
        "document-with-own-theorem-definitions",
        "\\documentclass{article}\n\\newtheorem{theorem}{Theorem}\n\\newtheorem{prp}{Proposition}\n\\begin{document}\n"
        "\\begin{prp} Own proposition env.\\end{prp}\n\\end{document}",
        ["Proposition", "Own proposition env."],
    ),
    (
        "markdown-headings",
        "# Introduction\nHeadings in markdown.\n## Setting\nMore.\n" + LEMMAS,
        ["Introduction", "Headings in markdown."],
    ),
    (
        "markdown-bold-proof",
        "\\section{Main}\n" + LEMMAS + "**Proof:** The bold proof word. ∎\n",
        ["The bold proof word."],
    ),
    (
        "markdown-lists-and-bold",
        "\\section{Main}\n- **first** item\n- second item\n" + LEMMAS,
        ["first", "second item"],
    ),
    (
        "tikzpicture",
        "\\section{Fig}\n\\begin{tikzpicture}\\draw (0,0) -- (1,1);\\end{tikzpicture}\nAfter the picture.\n" + LEMMAS,
        ["After the picture."],
    ),
    (
        "truncated-tikzpicture",
        LEMMAS + "\\section{Fig}\nBefore it.\n\\begin{tikzpicture}\\draw (0,0) --",
        ["Before it."],
    ),
    ("alias-rem", LEMMAS + "\\begin{rem}A remark.\\end{rem}", ["Remark", "A remark."]),
    ("alias-rema", LEMMAS + "\\begin{rema}Another remark.\\end{rema}", ["Another remark."]),
    ("alias-prop", LEMMAS + "\\begin{prop}A proposition.\\end{prop}", ["Proposition", "A proposition."]),
    ("alias-defin", "\\begin{defin}An integer is even if $2 \\mid n$.\\end{defin}\n" + LEMMAS, ["Definition"]),
    ("alias-corolary", LEMMAS + "\\begin{corolary}A corollary.\\end{corolary}", ["Corollary", "A corollary."]),
    ("alias-Cor", LEMMAS + "\\begin{Cor}Capital corollary.\\end{Cor}", ["Capital corollary."]),
    ("alias-Thm", LEMMAS + "\\begin{Thm}The main theorem restated.\\end{Thm} After it.", ["After it."]),
    (
        "alias-Lem",
        "\\begin{Lem}[L1] Aliased lemma.\\end{Lem}\\begin{Lem}[L2] Second aliased.\\end{Lem} After them.",
        ["After them."],
    ),
    (
        "mis-cased-COROLLARY-and-Proof",
        LEMMAS + "\\begin{COROLLARY}Loud.\\end{COROLLARY}\\begin{Proof}Quiet.\\end{Proof}",
        ["Loud.", "Quiet."],
    ),
    ("orphan-end-tags", LEMMAS + "Text.\\end{itemize}\\end{proof}\\end{theorem} Still here.", ["Still here."]),
    (
        "missing-end-tags",
        LEMMAS + "\\begin{proposition}Never closed.\\begin{proof}Nor this.",
        ["Never closed.", "Nor this."],
    ),
    ("end-of-proof-alias-pf", LEMMAS + "\\begin{pf}An aliased proof.\\end{pf}", ["An aliased proof."]),
    (
        "boxes-inside-proofs",
        "\\begin{claim} A.\\end{claim}\\begin{proof}Done. $\\blacksquare$\\end{proof}"
        "\\begin{claim} B.\\end{claim}\\begin{proof}Also done. \\qed\\end{proof}",
        ["Done.", "Also done."],
    ),
    ("unknown-citation-keys", LEMMAS + "As shown \\cite{knuth1997, diaz2021} and \\citep{nobody2020}.", ["As shown"]),
    (
        "unescaped-percent-after-digits",
        LEMMAS + "About 50% of the trials, and 5 % of the rest.",
        ["About 50% of the trials", "5 % of the rest."],
    ),
    ("unescaped-ampersand", LEMMAS + "Rings & fields, and Smith & Jones.", ["Rings & fields"]),
    ("unescaped-underscore", LEMMAS + "The file my_data_file and the variable x_i in text.", ["my_data_file"]),
    ("unescaped-hash", LEMMAS + "Case #3 is open.", ["Case #3 is open."]),
    ("unicode-math-symbols", LEMMAS + "For all n ∈ ℤ, n ≤ n² and ∀ε > 0 we have α → β.", ["For all"]),
    ("math-command-in-text", LEMMAS + "The bound \\leq 3 holds and x_i^2 \\in \\mathbb{R}.", ["holds"]),
    ("dollar-currency", LEMMAS + "It costs $5 and then $10 more.", ["It costs"]),
    (
        "own-unverified-markers-everywhere",
        "\\unverified " + LEMMAS.replace("Add the", "\\unverified Add the") + "[Unverified step] typed by hand.",
        ["typed by hand."],
    ),
    (
        "chapter-and-appendix",
        "\\chapter{Start}\nChapter text.\n" + LEMMAS + "\\appendix\n\\section{Extra}\nAppendix.",
        ["Chapter text.", "Appendix."],
    ),
    (
        "inline-tikz-and-library",
        "\\usetikzlibrary{arrows}\n" + LEMMAS + "A dot \\tikz \\fill (0,0) circle (2pt); here.",
        ["A dot here."],
    ),
    ("undefined-operators", LEMMAS + "The trace $\\Tr(A)$ and $\\poly(n)$ time; \\QED", ["time;", "QED"]),
    (
        "macro-defined-by-the-model-and-used",
        "\\newcommand{\\Tr}{\\operatorname{tr}}\n" + LEMMAS + "Trace $\\Tr(A)$.",
        ["Trace"],
    ),
    ("protect-and-relax-untouched", LEMMAS + "\\section{A \\protect\\footnote{note}}Text\\relax{} after.", ["after."]),
    (
        "code-fence-nested-in-latex-fence",
        "```latex\n\\section{Intro}\nCode follows.\n```python\nprint(1)\n```\nAfter the code.\n" + LEMMAS + "```",
        ["Code follows.", "print(1)", "After the code."],
    ),
    (
        "qedsymbol-and-display-box-ending-proofs",
        "\\begin{claim} A.\\end{claim}\\begin{proof}First.\\qedsymbol\\end{proof}"
        "\\begin{claim} B.\\end{claim}\\begin{proof}Second. $$\\blacksquare$$\\end{proof}",
        ["First.", "Second."],
    ),
    (
        "percent-with-the-number-left-out",
        LEMMAS + "About % of the trials fail; the rest pass.",
        ["About % of the trials fail; the rest pass."],
    ),
    (
        "input-of-a-system-file",
        LEMMAS + "Before. \\input{/etc/passwd}\\include{/etc/hostname} After.",
        ["Before.", "After."],
    ),
    (
        "shell-escape-attempts",
        LEMMAS + "\\immediate\\write18{touch pwned}\\write18{touch pwned2}Text stays.",
        ["Text stays."],
    ),
    (
        "control-characters",  # issue 53: NUL, BEL, ESC, DEL, C1 and form feed stopped pdflatex
        LEMMAS + "Bell\x07 escape\x1b[31m nul\x00 del\x7f csi\x9b2J form\x0cfeed; the text stays.",
        ["the text stays."],
    ),
    (
        "shell-escape-spellings",  # harmless in the box, not where a researcher compiles with -shell-escape
        LEMMAS + "A\\ShellEscape{touch pwned3} B\\directlua{os.execute('touch pwned4')} "
        'C\\input|"touch pwned5" D\\immediate \\write 18 {touch pwned6} text stays too.',
        ["text stays too."],
    ),
    (
        "truncated-mid-sentence",
        LEMMAS + "\\section{Conclusion}\nThe sum of two even integers is $2(m + n",
        ["Conclusion"],
    ),
]

# What must not survive into the .tex, beyond the words checked in the PDF.
ABSENT_FROM_TEX = {
    "code-fence-nested-in-latex-fence": ["```"],
    "qedsymbol-and-display-box-ending-proofs": ["\\qedsymbol", "\\blacksquare"],  # amsthm prints the one box
    "input-of-a-system-file": ["/etc/passwd", "/etc/hostname"],
    "alias-Lem": ["Aliased lemma", "Second aliased"],  # lemmata states the lemmas, once
    "alias-Thm": ["The main theorem restated"],
    "chapter-and-appendix": ["\\appendix"],  # it would letter lemmata's sections
    "control-characters": ["\x07", "\x1b", "\x00", "\x7f", "\x9b", "\x0c"],
    "shell-escape-attempts": ["\\write18", "touch pwned"],
    "shell-escape-spellings": ["\\ShellEscape", "\\directlua", "\\input|", "\\write", "touch pwned"],
}


def as_answer(introduction: str) -> str:
    """The writer's answer with the case as its introduction; the other parts plain."""
    return (
        f"%%% ABSTRACT\nA corpus paper.\n%%% INTRODUCTION\n{introduction}\n%%% LEMMA L1\nUnfold.\n"
        "%%% LEMMA L2\nAdd.\n%%% CONCLUSION\nDone.\n%%% END\n"
    )


def written(introduction: str, directory: Path, version: int = 1, compiles: bool = True) -> Path:
    """The .tex (and references.bib) the writer makes from the case, saved as the stage saves them."""
    client, _ = scripted_client({"writer": [as_answer(introduction)]}, WRITER_MAX_TURNS=1, LATEX_PASS_TIMEOUT=3)
    paper = write_paper(client, INPUTS, version=version, enforce_style=True)
    assert (paper.meta.compile_errors == []) == compiles and paper.meta.lemmas_stated == 2
    (directory / f"{BIB_STEM}.bib").write_text(paper.bibtex, encoding="utf-8")
    tex_path = directory / paper.meta.tex_file
    tex_path.write_text(paper.tex, encoding="utf-8")
    return tex_path


def compiled(answer: str, directory: Path) -> tuple[object, str, str]:
    """(compile report, PDF text, tex) of the paper the writer makes from `answer`."""
    tex_path = written(answer, directory)
    report = success_report(tex_path, compile_paper(tex_path, bibliography=True))
    text = " ".join(" ".join(page.extract_text() for page in PdfReader(directory / report.pdf_file).pages).split())
    return report, text, tex_path.read_text(encoding="utf-8")


def test_the_corpus_covers_the_issue_list() -> None:
    assert len(CORPUS) >= 30 and len({case[0] for case in CORPUS}) == len(CORPUS)


@needs_tex
@pytest.mark.parametrize("answer, words", [pytest.param(a, w, id=i) for i, a, w in CORPUS])
def test_a_defective_answer_yields_a_clean_pdf(
    answer: str, words: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TEXMFVAR", str(tmp_path / "texmf-var"))
    report, text, tex = compiled(answer, tmp_path)
    assert report.ok and report.errors == []
    assert [w for w in report.warnings if "undefined" in w] == []
    for word in words:
        assert word in text, (word, text[:600])
    assert text.count("[Unverified step]") == 1  # L2, and nothing else
    assert "Lemma 1 (L1). Statement L1." in text or "(L1). Statement L1." in text
    assert "(L2). Statement L2. [Unverified step]" in text
    assert "\\cite{knuth1997" not in tex and "nobody2020" not in tex
    assert "root:" not in text and not list(tmp_path.rglob("pwned*"))  # nothing read or run outside
    for leftover in ABSENT_FROM_TEX.get(request.node.callspec.id, []):
        assert leftover not in tex, leftover


@needs_tex
def test_an_endless_macro_loop_ends_at_the_pass_timeout_and_earlier_versions_stay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    compiled(LEMMAS, tmp_path)
    earlier = {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in tmp_path.glob("paper_v1.*")}
    assert {"paper_v1.tex", "paper_v1.pdf"} <= earlier.keys()
    looping = written(LEMMAS + "\\def\\x{\\x}\\x and the text goes on.", tmp_path, version=2, compiles=False)
    with pytest.raises(
        LatexCompileError, match=r"^pdflatex timed out after 3 s on paper_v2\.tex \(an endless macro loop\?\)$"
    ) as caught:
        compile_paper(looping, bibliography=True, timeout_per_pass=3)
    assert caught.value.passes == ["pdflatex"]  # the first pass is killed; no further pass starts
    assert {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in tmp_path.glob("paper_v1.*")} == earlier
    assert "\\def\\x{\\x}\\x and" in looping.read_text(encoding="utf-8") and not (tmp_path / "paper_v2.pdf").exists()
