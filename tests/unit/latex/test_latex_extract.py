"""extract_latex_body: each cleanup rule, realistic messy answers, and a real compile."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from lemmata.latex.compile import compile_paper, parse_latex_log
from lemmata.latex.document import render_document
from lemmata.latex.extract import extract_latex_body

needs_tex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")


def squash(text: str) -> str:
    """Whitespace-insensitive form for comparing LaTeX."""
    return " ".join(text.split())


FENCES = [
    pytest.param("Sure!\n```latex\n\\section{A}\nText.\n```\nHope this helps.", "\\section{A} Text.", id="latex-fence"),
    pytest.param("```tex\nA\n```\nthen\n```\nB\n```", "A B", id="several-fences-joined"),
    pytest.param("Intro\n```LaTeX\nX\n", "X", id="unterminated-fence"),
    pytest.param(
        "Text\n```python\nprint(1)\n```\n",
        "Text \\begin{verbatim} print(1) \\end{verbatim}",
        id="code-fence-becomes-verbatim",
    ),
]

FULL_DOCUMENTS = [
    pytest.param(
        "\\documentclass{article}\n\\usepackage{amsmath}\n\\begin{document}\n\\maketitle\nX\n"
        "\\end{document}\nLet me know!",
        "X",
        id="only-document-body",
    ),
    pytest.param(
        "\\documentclass{article}\n\\newcommand{\\D}{\\mathcal{D}}\n\\begin{document}\n$\\D$\n\\end{document}",
        "\\providecommand{\\D}{}\\renewcommand{\\D}{\\mathcal{D}} $\\D$",
        id="preamble-macros-kept",
    ),
    pytest.param(
        "\\title{A {nested} title}\\author{X \\thanks{y}}\\date{\\today}\\maketitle Body",
        "Body",
        id="front-matter-dropped",
    ),
    pytest.param("Body \\bibliographystyle{plain}\n\\bibliography{refs}", "Body", id="bibliography-dropped"),
    pytest.param(
        "A \\usepackage[utf8]{inputenc} B \\newtheorem{thm}{Theorem}[section] C \\documentclass[11pt]{article}",
        "A B C",
        id="preamble-commands-anywhere",
    ),
    pytest.param("A \\input{/etc/hostname} B \\include{x} \\input chap1.tex C", "A B C", id="file-inputs-dropped"),
]

MARKDOWN = [
    pytest.param(
        "# Intro\n## 2.1 Setup\n### Deep\n#### Deeper",
        "\\section{Intro} \\subsection{Setup} \\subsubsection{Deep} \\subsubsection{Deeper}",
        id="headings",
    ),
    pytest.param(
        "This is **important** and $f^{**}$ and **two words**.",
        "This is \\textbf{important} and $f^{**}$ and \\textbf{two words}.",
        id="bold-not-math",
    ),
    pytest.param("**Proof.** Clear. $\\blacksquare$", "\\begin{proof}Clear. \\end{proof}", id="proof-ends-at-box"),
    pytest.param(
        "**Proof:** Easy.\n\n\\section{Next}",
        "\\begin{proof}Easy. \\end{proof} \\section{Next}",
        id="proof-ends-before-section",
    ),
    pytest.param(
        "**Proof of Lemma 2.** By induction. ∎",
        "\\begin{proof}[{Proof of Lemma 2}]By induction. \\end{proof}",
        id="proof-with-title",
    ),
    pytest.param(
        "\\begin{lemma}A\\end{lemma}\n**Proof.** First.\n\\begin{lemma}B\\end{lemma}",
        "\\begin{lemma}A\\end{lemma} \\begin{proof}First. \\end{proof} \\begin{lemma}B\\end{lemma}",
        id="proof-ends-before-next-lemma",
    ),
    pytest.param(
        "\\begin{proof}\nProof. Inside already.\n\\end{proof}",
        "\\begin{proof} Proof. Inside already. \\end{proof}",
        id="no-proof-inside-proof",
    ),
    pytest.param(
        "Cases:\n- uses $n$ & $k$;\n- the rest.\nDone.",
        "Cases: \\begin{itemize} \\item uses $n$ \\& $k$; \\item the rest. \\end{itemize} Done.",
        id="list-with-ampersand-in-text",
    ),
    pytest.param(
        "\\begin{tabular}{ll}\n- a & b \\\\\n- c & d\n\\end{tabular}",
        "\\begin{tabular}{ll} - a & b \\\\ - c & d \\end{tabular}",
        id="dash-rows-of-a-table-stay",
    ),
]

ALIASES = [
    pytest.param(name, target, id=f"{name}-to-{target}")
    for name, target in [
        ("rem", "remark"),
        ("rema", "remark"),
        ("prop", "proposition"),
        ("defin", "definition"),
        ("corolary", "corollary"),
        ("Cor", "corollary"),
        ("Thm", "theorem"),
        ("Lem", "lemma"),
        ("Lemma", "lemma"),
        ("THEOREM", "theorem"),
        ("Proof", "proof"),
        ("pf", "proof"),
    ]
]

ENVIRONMENTS = [
    pytest.param("\\begin{tikzpicture}\n\\draw (0,0) -- (1,1);\n\\end{tikzpicture}Text", "Text", id="tikz-removed"),
    pytest.param("A\\begin{tikzpicture}\\draw (0,0);", "A", id="truncated-tikz-removed"),
    pytest.param(
        "\\begin{tcolorbox}[colback=red]X\\end{tcolorbox} \\begin{multicols}{2}Y\\end{multicols}",
        "X Y",
        id="unknown-wrappers-reduced-to-content",
    ),
    pytest.param(
        "\\begin{algorithm}[H]\n\\caption{A}\n\\begin{algorithmic}[1]\n\\STATE $x$ % c\n"
        "\\end{algorithmic}\n\\end{algorithm}",
        "\\begin{verbatim} \\caption{A} \\begin{algorithmic}[1] \\STATE $x$ % c \\end{algorithmic} \\end{verbatim}",
        id="algorithm-shown-verbatim",
    ),
    pytest.param(
        "\\begin{theorem*} A \\end{theorem*}",
        "\\begin{namedtheorem}{Theorem} A \\end{namedtheorem}",
        id="starred-theorem",
    ),
    pytest.param(
        "\\newtheorem{hyp}{Hypothesis}\\begin{hyp}A\\end{hyp}",
        "\\begin{nameddefinition}{Hypothesis}A\\end{nameddefinition}",
        id="declared-theorem-title",
    ),
    pytest.param(
        "\\begin{axiom}A\\end{axiom}",
        "\\begin{nameddefinition}{Axiom}A\\end{nameddefinition}",
        id="theorem-like-synonym",
    ),
    pytest.param(
        "\\begin{proofsketch}A\\end{proofsketch}", "\\begin{proof}[Proof sketch]A\\end{proof}", id="proof-sketch"
    ),
    pytest.param(
        "\\begin{figure}[H]A\\end{figure}\\begin{table}[!htbH]B\\end{table}",
        "\\begin{figure}A\\end{figure}\\begin{table}[!htb]B\\end{table}",
        id="float-placement",
    ),
    pytest.param(
        "\\begin{tabularx}{\\textwidth}{lX}a & b\\end{tabularx}",
        "\\begin{tabular}{ll}a & b\\end{tabular}",
        id="tabularx-as-tabular",
    ),
]

PROOF_ENDINGS = [
    pytest.param("\\begin{proof} A. \\qed\\end{proof}", "\\begin{proof} A. \\end{proof}", id="qed"),
    pytest.param(
        "\\begin{proof} A. \\hfill$\\square$\n\\end{proof}", "\\begin{proof} A. \\end{proof}", id="hfill-square"
    ),
    pytest.param("\\begin{proof} A. $\\blacksquare$\\end{proof}", "\\begin{proof} A. \\end{proof}", id="blacksquare"),
    pytest.param("\\begin{proof} A. □\\end{proof}", "\\begin{proof} A. \\end{proof}", id="unicode-box"),
    pytest.param("\\begin{proof} A. ∎\n\\end{proof}", "\\begin{proof} A. \\end{proof}", id="unicode-qed"),
    pytest.param(
        "\\begin{proof} \\[ x = y. \\qquad \\Box \\]\n\\end{proof}",
        "\\begin{proof} \\[ x = y. \\qedhere \\] \\end{proof}",
        id="box-in-display-becomes-qedhere",
    ),
    pytest.param(
        "\\begin{proof} $x=y. \\quad\\square$\\end{proof}",
        "\\begin{proof} $x=y.$\\end{proof}",
        id="box-inside-inline-math",
    ),
    pytest.param(
        "\\begin{proof} A $\\qed$ B \\qed\\end{proof} \\qed",
        "\\begin{proof} A B \\end{proof} \\qed",
        id="qed-only-removed-inside-proofs",
    ),
]

BALANCING = [
    pytest.param("A \\end{proof} B", "A B", id="orphan-end-removed"),
    pytest.param("\\begin{proof} A", "\\begin{proof} A \\end{proof}", id="missing-end-added"),
    pytest.param(
        "\\begin{theorem} \\begin{itemize} \\item a",
        "\\begin{theorem} \\begin{itemize} \\item a \\end{itemize} \\end{theorem}",
        id="nested-closed-innermost-first",
    ),
    pytest.param(
        "\\begin{theorem}\\begin{proof} A\\end{theorem} B\\end{proof}",
        "\\begin{theorem}\\begin{proof} A\\end{proof} \\end{theorem} B",
        id="crossing-ends",
    ),
    pytest.param(
        "\\begin{proof} A\n\\section{B}\nC", "\\begin{proof} A \\end{proof} \\section{B} C", id="section-closes-proof"
    ),
    pytest.param("A } B {C", "A B {C}", id="braces"),
    pytest.param("Let $x be real.\n\nNext $y$.", "Let $x be real.{}$ Next $y$.", id="unclosed-dollar"),
    pytest.param(
        "\\begin{align*}\na &= b\\\\\n\n c &= d\n\\end{align*}",
        "\\begin{align*} a &= b\\\\ c &= d \\end{align*}",
        id="blank-line-in-align",
    ),
    pytest.param("A.\n\n\\\\ B.", "A. B.", id="line-break-at-paragraph-start"),
    pytest.param("Text \\[ x = 1", "Text \\[ x = 1{}\\]", id="unclosed-display"),
    pytest.param(
        "\\item a\n\\item b\n\nAfter.",
        "\\begin{itemize} \\item a \\item b \\end{itemize} After.",
        id="lonely-items-wrapped",
    ),
    pytest.param(
        "\\begin{enumerate}[(a)] First \\item second \\end{enumerate}",
        "\\begin{enumerate}[(a)]\\item First \\item second \\end{enumerate}",
        id="list-gets-first-item",
    ),
    pytest.param("A \\begin{itemize} \\end{itemize} B", "A B", id="empty-list-dropped"),
    pytest.param("A \\newcommand{\\foo}{\\mathbb{R}\nB", "A B", id="unclosed-definition-dropped"),
    pytest.param("See \\cref{} and \\ref{fig:x. Next", "See and \\ref{fig:x.} Next", id="broken-reference-keys"),
    pytest.param("$\\left( a$ and $b \\right)$", "$\\left( a\\right.$ and $b )$", id="left-right-balanced"),
    pytest.param("$$ \\Pr\\left( x", "$$ \\Pr\\left( x\\right.{}$$", id="truncated-display"),
]

TRUNCATION = [
    pytest.param("Text \\nabl", "Text", id="cut-off-command"),
    pytest.param("A\n\\begin{align*}\na &\\le \\frac{\\epsilon", "A \\begin{align*} \\end{align*}", id="cut-off-line"),
    pytest.param("See \\begin{lemma}[Smoo", "See \\begin{lemma} \\end{lemma}", id="cut-off-option"),
    pytest.param("Done. \\qed", "Done. \\qed", id="complete-last-command-kept"),
    pytest.param("Done.\n\\nabl\n", "Done. \\nabl", id="clean-ending-not-trimmed"),
]

CHARACTERS = [
    pytest.param(
        "Item #3 costs $5 each, 50% off, R&D.",
        "Item \\#3 costs \\$5 each, 50\\% off, R\\&D.",
        id="stray-specials-escaped",
    ),
    pytest.param(
        "\\begin{align} a &= b \\end{align} $\\begin{cases} 1 & x \\end{cases}$",
        "\\begin{align} a &= b \\end{align} $\\begin{cases} 1 & x \\end{cases}$",
        id="alignment-ampersands-kept",
    ),
    pytest.param(
        "x ≤ y, $x_α$ and λ²",
        "x \\ensuremath{\\leq} y, $x_{\\ensuremath{\\alpha}}$ and {\\ensuremath{\\lambda}}\\ensuremath{^{2}}",
        id="unicode-math",
    ),
    pytest.param(
        "file_name and x^2 but $a_1^2$, \\(b_2\\), \\ensuremath{c_3} and $\\text{d_4 $e_5$}$",
        "file\\_name and \\ensuremath{x^2} but $a_1^2$, \\(b_2\\), \\ensuremath{c_3} and "
        "$\\text{\\ensuremath{d_4} $e_5$}$",
        id="scripts-outside-math",
    ),  # \\text{} is text mode again
    pytest.param(
        "\\[\n\\text{6 = 2 \\times 3}\n\\]",
        "\\[ \\text{\\ensuremath{6 = 2 \\times 3}} \\]",
        id="math-command-in-text-inside-display-math",
    ),  # the embedded model, run of 2026-11-21
    pytest.param(
        "where \\alpha_1 is \\frac{1}{2} of \\mathbb{R}^n, \\textbf{\\leq} and x_α",
        "where \\ensuremath{\\alpha_1} is \\ensuremath{\\frac{1}{2}} of \\ensuremath{\\mathbb{R}^n}, "
        "\\textbf{\\ensuremath{\\leq}} and \\ensuremath{x_{\\ensuremath{\\alpha}}}",
        id="math-commands-in-text-wrapped",
    ),
    pytest.param(
        "\\begin{align} x_1 \\end{align} \\label{eq_a} \\eqref{eq_a} \\cite{smith_2020}",
        "\\begin{align} x_1 \\end{align} \\label{eq_a} \\eqref{eq_a} \\cite{smith_2020}",
        id="keys-and-math-environments-untouched",
    ),
    pytest.param("A % \\begin{proof} # & not real\nB", "A % \\begin{proof} # & not real B", id="comments-untouched"),
    pytest.param(
        "\\begin{verbatim}\n# not & a $ heading\n\\end{verbatim}\n\\verb|#&$|",
        "\\begin{verbatim} # not & a $ heading \\end{verbatim} \\verb|#&$|",
        id="verbatim-untouched",
    ),
    pytest.param(
        "See \\url{http://x.org/50%#a} and \\href{http://y.org/?a=1&b=2}{R&D}.",
        "See \\url{http://x.org/50%#a} and \\href{http://y.org/?a=1&b=2}{R\\&D}.",
        id="urls-untouched",
    ),
    pytest.param(
        "\\newcommand{\\R}{\\mathbb{R}} \\DeclareMathOperator*{\\esssup}{ess\\,sup} \\def\\x#1{#1#1}",
        "\\providecommand{\\R}{}\\renewcommand{\\R}{\\mathbb{R}} "
        "\\providecommand{\\esssup}{}\\renewcommand{\\esssup}{\\operatorname*{ess\\,sup}} "
        "\\def\\x#1{#1#1}",
        id="definitions-override-safely",
    ),
]


@pytest.mark.parametrize(
    ("model_text", "expected"),
    FENCES + FULL_DOCUMENTS + MARKDOWN + ENVIRONMENTS + PROOF_ENDINGS + BALANCING + TRUNCATION + CHARACTERS,
)
def test_extraction_rule(model_text: str, expected: str) -> None:
    assert squash(extract_latex_body(model_text)) == squash(expected)


@pytest.mark.parametrize(("name", "target"), ALIASES)
def test_environment_names_are_normalized(name: str, target: str) -> None:
    body = extract_latex_body(f"\\begin{{{name}}}\nText.\n\\end{{{name}}}")
    assert squash(body) == f"\\begin{{{target}}} Text. \\end{{{target}}}"


MESSY_FULL_DOCUMENT = r"""Here is the complete paper you asked for:

```latex
\documentclass[11pt]{article}
\usepackage{amsmath, amssymb, amsthm}
\usepackage{tikz}
\newtheorem{theorem}{Theorem}
\newtheorem{lemma}[theorem]{Lemma}
\newcommand{\R}{\mathbb{R}}
\title{Bounds for Squares}
\author{AI Assistant}
\begin{document}
\maketitle
# Introduction
We show that **every** square is nonnegative, for 100% of reals & more.

## 1. Main result
\begin{Thm}\label{thm:main}
For all $x \in \R$, $x^2 \geq 0$.
\end{Thm}
**Proof:** If $x \geq 0$ the claim is clear. Otherwise $x^2 = (-x)^2 \geq 0$. $\blacksquare$

\begin{Lemma}
For all $x$, $|x| \geq 0$.
\end{Lemma}
\begin{proof}
Immediate. \qed
\end{proof}
\end{proof}

\begin{tikzpicture}
\draw (0,0) -- (1,1);
\end{tikzpicture}

\begin{theorem}
Nested: \begin{itemize}
\item first case
\item second case
\bibliographystyle{plain}
\bibliography{refs}
\end{document}
```
Let me know if you need changes."""

MESSY_MARKDOWN_ANSWER = r"""# Setup
Let ε > 0 and x ∈ ℝ². We write $\bm{x}$ and $\mathscr{F}$; see \cref{lem:a}.

**Lemma 1.** For all n ≥ 1, $a_n → 0$.

**Proof.** Suppose not. Then
\[ a_n \geq \epsilon \qquad \square \]

### Proof of the theorem
\begin{Lemma}\label{lem:a}
Crossing \begin{proof} closes \end{Lemma} early.\end{proof}
\begin{algorithm}[H]
\caption{Greedy}
\begin{algorithmic}[1]
\STATE $S \gets \emptyset$ % start empty
\end{algorithmic}
\end{algorithm}
\begin{proof}
The last step is missing its end, and $x + y
"""

MESSY_ENVIRONMENTS = r"""
\begin{PROOF} shouting \end{PROOF}
\begin{pf} alias \end{pf}
\begin{rem} remark \end{rem} \begin{rema} remark \end{rema} \begin{prop} p \end{prop}
\begin{defin} d \end{defin} \begin{corolary} c \end{corolary} \begin{Cor} c \end{Cor}
\begin{Lem} l \end{Lem} \begin{THEOREM} t \end{THEOREM}
\begin{theorem*} unnumbered \end{theorem*} \begin{hypothesis} h \end{hypothesis}
\begin{tcolorbox}[colback=red] boxed \end{tcolorbox}
\begin{figure}[H]\centering\includegraphics[width=3cm]{missing.png}\caption{Gone}\end{figure}
\begin{tabularx}{\textwidth}{lX} a & b \\ \end{tabularx}
Item #3 costs $5 and R&D is 50% of it. Ünïcödé ≤ text 张.
\begin{align}
a &= b \\

c &= d
\end{align}
\begin{enumerate}[(a)]
\item one
\end{enumerate}
Stray braces } here and { there.
"""


def test_messy_full_document_keeps_its_content() -> None:
    body = extract_latex_body(MESSY_FULL_DOCUMENT)
    assert "\\documentclass" not in body and "\\usepackage" not in body
    assert "\\maketitle" not in body and "\\bibliography" not in body and "tikzpicture" not in body
    assert "\\begin{theorem}\\label{thm:main}" in body
    assert "\\begin{lemma}" in body and "\\blacksquare" not in body and "\\qed" not in body
    assert body.count("\\begin{proof}") == body.count("\\end{proof}") == 2
    assert body.rstrip().endswith("\\end{itemize}\n\\end{theorem}")


@needs_tex
@pytest.mark.parametrize(
    "model_text",
    [
        pytest.param(MESSY_FULL_DOCUMENT, id="full-document"),
        pytest.param(MESSY_MARKDOWN_ANSWER, id="markdown-answer"),
        pytest.param(MESSY_ENVIRONMENTS, id="environments"),
        pytest.param(MESSY_MARKDOWN_ANSWER[: MESSY_MARKDOWN_ANSWER.index("a_n \\geq") + 9], id="cut-off-answer"),
    ],
)
def test_extracted_messy_bodies_compile(model_text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the private TEXMFVAR lands here
    tex_path = tmp_path / "paper.tex"
    body = extract_latex_body(model_text)
    tex_path.write_text(render_document(title="Messy", abstract="", body=body, bibliography_stem=None))
    result = compile_paper(tex_path, bibliography=False)
    errors, _ = parse_latex_log(tex_path.with_suffix(".log").read_text(encoding="latin-1"))
    assert result.pdf_path.is_file()
    assert errors == []


@needs_tex
def test_a_numbered_list_broken_by_displays_keeps_its_numbers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Malformed model output, the README's main command on the embedded model (2026-11-25): steps
    1 to 3 separated by displays came out of the PDF as 1, 1, 1."""
    from pypdf import PdfReader

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    answer = (
        "1. **Assume**: $a = 2c$.\n   \\[\n   a + b = 2c + 2d\n   \\]\n\n"
        "2. **Factor**: the sum is $2(c + d)$.\n   \\[\n   S = 2(c + d)\n   \\]\n\n3. **Conclude**: it is even.\n"
    )
    body = extract_latex_body(answer)
    assert "\\begin{enumerate}\\setcounter{enumi}{1}" in body and "\\begin{enumerate}\\setcounter{enumi}{2}" in body
    tex_path = tmp_path / "paper.tex"
    tex_path.write_text(render_document(title="Steps", abstract="", body=body, bibliography_stem=None))
    compile_paper(tex_path, bibliography=False)
    text = " ".join(PdfReader(tex_path.with_suffix(".pdf")).pages[0].extract_text().split())
    assert "1. Assume" in text and "2. Factor" in text and "3. Conclude" in text


def test_a_bold_opener_cut_off_before_its_close_is_bold_to_the_end_of_its_line() -> None:
    """Malformed model output, the embedded smoke test (2026-11-26): the assembler's answer, cut
    at its token limit, ended "**Step 5: Conclusion"; the paper printed the two stars."""
    from lemmata.latex.markdown import convert_markdown_bold

    cut = "By definition, $n = 2k$.\n\n**Step 5: Conclusion"
    assert convert_markdown_bold(cut) == "By definition, $n = 2k$.\n\n\\textbf{Step 5: Conclusion}"
    assert convert_markdown_bold("**Step 3: Conclusion**\nSince") == "\\textbf{Step 3: Conclusion}\nSince"
    assert convert_markdown_bold("$a ** b$ and x") == "$a ** b$ and x"


def test_an_items_indented_lines_stay_in_its_item() -> None:
    """Malformed model output, the embedded main command 2026-11-26: "1. **Given**:" then indented
    lines and a display; the list closed after the title and the text ran on outside it."""
    answer = (
        "1. **Given**:\n   Both are even, so we write\n   \\[\n   a = 2m\n   \\]\n2. **Sum**:\n   It is $2(m + n)$.\n"
    )
    body = extract_latex_body(answer)
    assert body.count("\\begin{enumerate}") == 1
    given, total = body.split("\\item ")[1:]
    assert "Both are even" in given and "a = 2m" in given and "It is $2(m + n)$." in total
    assert total.rstrip().endswith("\\end{enumerate}")


@needs_tex
def test_a_bulleted_list_under_a_numbered_step_is_a_list_inside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Malformed model output, the README's main command on the embedded model (2026-11-27): the
    assembler's "1. **Identify the objects:**" with three indented "- Let ..." lines under it was
    printed as one paragraph with its hyphens, "... types: - Let a and b ... - By definition, ..."."""
    from pypdf import PdfReader

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    answer = (
        "1. **Identify the objects and their types:**\n"
        "   - Let $a$ and $b$ be two even integers.\n"
        "   - By definition, $a = 2m$ for some integer $m$.\n"
        "2. **Express the sum:**\n"
        "   The sum is $a + b = 2m + 2n$.\n"
    )
    body = extract_latex_body(answer)
    assert body.count("\\begin{enumerate}") == 1 and body.count("\\begin{itemize}") == 1
    assert body.index("\\begin{itemize}") < body.index("\\item \\textbf{Express the sum:}")
    assert "   - " not in body
    tex_path = tmp_path / "paper.tex"
    tex_path.write_text(render_document(title="Steps", abstract="", body=body, bibliography_stem=None))
    compile_paper(tex_path, bibliography=False)
    text = " ".join(PdfReader(tex_path.with_suffix(".pdf")).pages[0].extract_text().split())
    assert "1. Identify the objects and their types:" in text and "2. Express the sum:" in text
    assert "- Let" not in text and "- By definition" not in text


@pytest.mark.parametrize(
    ("answer", "environments"),
    [
        pytest.param("- a\n- b\n", ["itemize"], id="flat-bullets"),
        pytest.param("1. a\n 2. b\n", ["enumerate"], id="one-space-is-not-nesting"),
        pytest.param("- a\n  1. x\n  2. y\n- b\n", ["itemize", "enumerate"], id="numbers-under-a-bullet"),
        pytest.param("1. a\n- b\n", [], id="mixed-at-one-level-left-as-text"),
    ],
)
def test_list_nesting(answer: str, environments: list[str]) -> None:
    from lemmata.latex.markdown import convert_markdown_lists

    converted = convert_markdown_lists(answer)
    assert [name for name in ("itemize", "enumerate") if f"\\begin{{{name}}}" in converted] == sorted(
        environments, key=("itemize", "enumerate").index
    )
