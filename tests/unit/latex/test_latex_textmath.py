"""Math written in running text: named model slips, each compiled, and the identity on correct LaTeX."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from pypdf import PdfReader

from lemmata.latex import textmath
from lemmata.latex.compile import compile_paper, parse_latex_log
from lemmata.latex.document import render_document
from lemmata.latex.extract import extract_latex_body
from lemmata.latex.mathcommands import MATH_ONLY, TEXT_SAFE
from support import DATA
from unit.latex.test_latex_compile import full_body
from unit.latex.test_latex_extract import (
    BALANCING,
    CHARACTERS,
    ENVIRONMENTS,
    FENCES,
    FULL_DOCUMENTS,
    MARKDOWN,
    MESSY_ENVIRONMENTS,
    MESSY_FULL_DOCUMENT,
    MESSY_MARKDOWN_ANSWER,
    PROOF_ENDINGS,
    TRUNCATION,
    squash,
)

needs_tex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
# The answer of the embedded 1.5B model whose paper once failed with "Missing $ inserted":
# it echoes the macro list, \norm*{x}, \Var and \defeq, in running text.
EMBEDDED_RUN_1 = DATA / "embedded-run-1.writer-answer.txt"

TEXT_MATH = [
    pytest.param(
        r"Any bold symbol: \bm{x}, and \bm{x}_i.",
        r"Any bold symbol: \bm{x}, and \ensuremath{\bm{x}_i}.",
        id="bold-symbol-in-text",
    ),
    pytest.param(
        r"Delimiters \norm*{x}, \abs[\big]{x}, \inner{x, y} and \norm{x}_2^2.",
        r"Delimiters \norm*{x}, \abs[\big]{x}, \inner{x, y} and \ensuremath{\norm{x}_2^2}.",
        id="paired-delimiters-in-text",
    ),
    pytest.param(
        r"Operators \Var, \argmin_{x} f(x) and \tr A.",
        r"Operators \Var, \ensuremath{\argmin_{x} f(x)} and \tr A.",
        id="operators-in-text",
    ),
    pytest.param(
        "\\[\n\\text{6 = 2 \\times 3}\n\\]\n\\[ \\text{Here, } k = 3 \\text{ is an integer.} \\]",
        "\\[\n\\text{\\ensuremath{6 = 2 \\times 3}}\n\\]\n\\[ \\text{Here, } k = 3 \\text{ is an integer.} \\]",
        id="math-command-in-text-inside-display-math",
    ),  # the embedded model, run of 2026-11-21
    pytest.param(
        r"We have x^2 + y^2 = 1 on the circle.",
        r"We have \ensuremath{x^2 + y^2 = 1} on the circle.",
        id="sum-of-squares-in-text",
    ),
    pytest.param(r"Take $a$ and b_n together.", r"Take $a$ and \ensuremath{b_n} together.", id="dollar-then-subscript"),
    pytest.param(
        r"Half is \frac{1}{2}, a third is \tfrac13.",
        r"Half is \ensuremath{\frac{1}{2}}, a third is \ensuremath{\tfrac13}.",
        id="fraction-in-text",
    ),
    pytest.param(
        r"The integers \mathbb{Z} and the space \mathbb{R}^n.",
        r"The integers \ensuremath{\mathbb{Z}} and the space \ensuremath{\mathbb{R}^n}.",
        id="blackboard-in-text",
    ),
    pytest.param(
        r"Let \alpha, \beta and \Gamma be fixed.",
        r"Let \ensuremath{\alpha}, \ensuremath{\beta} and \ensuremath{\Gamma} be fixed.",
        id="greek-in-text",
    ),
    pytest.param(
        r"Assume x \leq y and a \leq b.", r"Assume \ensuremath{x \leq y} and \ensuremath{a \leq b}.", id="leq-in-text"
    ),
    pytest.param(
        r"The function snake_case_name reads file_name.txt.",
        r"The function snake\_case\_name reads file\_name.txt.",
        id="snake-case-name",
    ),
    pytest.param(
        r"There are 2^{k+1} leaves, 10^6 samples and 1_000_000 steps.",
        r"There are \ensuremath{2^{k+1}} leaves, \ensuremath{10^6} samples and 1\_000\_000 steps.",
        id="numeric-bases",
    ),
    pytest.param(
        r"Expand (n+1)^2 but not (see above)^2.",
        r"Expand \ensuremath{(n+1)^2} but not (see above)\textasciicircum{}2.",
        id="parenthesized-base",
    ),
    pytest.param(
        r"The size \left( \frac{a}{b} \right)^2 and a lone \left\{ brace.",
        r"The size \ensuremath{\left( \frac{a}{b} \right)^2} and a lone \{ brace.",
        id="left-right-in-text",
    ),
    pytest.param(
        "\\section{A \\left( see the text \\right) here\n\\left.\n}and \\left| x_1 \\middle| y \\right|.",
        "\\section{A ( see the text ) here\n{}\n}and \\ensuremath{\\left| x_1 \\middle| y \\right|}.",
        id="left-right-around-words-dropped",
    ),
    pytest.param(
        r"The x_max value, T_init time and x_i2 index.",
        r"The \ensuremath{x_{max}} value, \ensuremath{T_{init}} time and x\_i2 index.",
        id="words-as-scripts",
    ),
    pytest.param(
        r"So a \equiv b \pmod{2} and \forall x \in X, \exists y.",
        r"So \ensuremath{a \equiv b \pmod{2}} and \ensuremath{\forall x \in X}, \ensuremath{\exists y}.",
        id="relations-pull-in-operands",
    ),
    pytest.param(
        r"Here x_1 - a constant, x_i = a + b_2.",
        r"Here \ensuremath{x_1} - a constant, \ensuremath{x_i = a + b_2}.",
        id="article-a-left-out",
    ),
    pytest.param(
        r"Then \lim_{n \to \infty} a_n = 0 and \sum_{i=1}^n i.",
        r"Then \ensuremath{\lim_{n \to \infty} a_n = 0} and \ensuremath{\sum_{i=1}^n i}.",
        id="limits-and-sums",
    ),
    pytest.param(
        r"\section{Bounds on x_n} \textbf{x_1} and\footnote{See \mathbb{N}.}",
        r"\section{Bounds on \ensuremath{x_n}} \textbf{\ensuremath{x_1}} "
        r"and\footnote{See \ensuremath{\mathbb{N}}.}",
        id="inside-command-arguments",
    ),
    pytest.param(
        "$x_1$ \\(\\alpha\\) \\[a^2\\] \\begin{align} b_1 \\end{align} \\verb|a_b| \\url{http://x.org/a_b} "
        "\\label{eq_a} \\text{$y$} % c_d \\alpha\n\\newcommand{\\fo}{x_1} \\let\\eps\\epsilon\n",
        "$x_1$ \\(\\alpha\\) \\[a^2\\] \\begin{align} b_1 \\end{align} \\verb|a_b| \\url{http://x.org/a_b} "
        "\\label{eq_a} \\text{$y$} % c_d \\alpha \\providecommand{\\fo}{}\\renewcommand{\\fo}{x_1} "
        "\\let\\eps\\epsilon",
        id="math-verbatim-keys-comments-definitions-untouched",
    ),
    pytest.param(
        r"Scripts on \RR^n, \eps_k and \ensuremath{x}_1.",
        r"Scripts on \ensuremath{\RR^n}, \ensuremath{\eps_k} and \ensuremath{\ensuremath{x}_1}.",
        id="scripts-on-text-safe-macros",
    ),
]

# Correct LaTeX, math in every form, our macros in text with math arguments: left as it is.
CORRECT_MATH_DOCUMENT = r"""\section{Setup}
Let $x \in \RR^n$ and \(y_i \geq 0\) for $i = 1, \dots, n$; we write \RR, \eps, \abs{x_1},
\norm*{\frac{x}{2}}, \abs[\big]{x^2}, \bm{x_i}, \Var, \argmin, \defeq and \ensuremath{\mathbb{Z}^n} in text.
\[ \sum_{i=1}^{n} a_i^2 \leq \Bigl( \sum_{i=1}^{n} \abs{a_i} \Bigr)^2 \]
\begin{align}
  f(x) &= \argmin_{y \in \cX} \norm{x - y}_2^2 \label{eq:f_1} \\
  g(x) &\defeq \text{the value at $x_0$ if } x > 0
\end{align}
\begin{equation*} \Var[X] = \EE[X^2] - (\EE X)^2 \end{equation*}
$$ \int_0^1 t^{k} \, dt = \frac{1}{k+1} $$

\begin{theorem}[Bound on $\abs{x}$]\label{thm:bound}
For every $\eps > 0$ and $x\in\RR$ there is $\delta_{\eps} > 0$ with \(\abs{x} < \delta_\eps \implies f(x) < \eps\).
\end{theorem}
\begin{proof}
By \cref{eq:f_1} and \citet{smith_2020}, see \url{https://example.org/a_b?c=1} and \verb|x_1^2|.
% a comment with x_1 and \alpha
Done.
\end{proof}
A matrix $\begin{pmatrix} a & b \\ c & d \end{pmatrix}$ and
\[ \abs{x} = \begin{cases} x & x \geq 0, \\ -x & x < 0. \end{cases} \]
\begin{itemize}
\item The file \texttt{snake\_case\_name.py}, 50\% of R\&D, item \#3 and 2\textasciicircum{}10.
\item[$\bullet$] Bold \bm{\alpha}, \inner{x_1, y_2}, \set{x : x^2 < 1} and \norm{\bx}.
\end{itemize}
\begin{verbatim}
x_1^2 & \alpha # %
\end{verbatim}
"""


def expected_outputs(params: list) -> list[str]:
    """The cleaned bodies the extraction tests expect: correct LaTeX by construction."""
    return [param.values[1] for param in params]


CORRECT_SAMPLES = (
    expected_outputs(
        FENCES
        + FULL_DOCUMENTS
        + MARKDOWN
        + ENVIRONMENTS
        + PROOF_ENDINGS
        + BALANCING
        + TRUNCATION
        + CHARACTERS
        + TEXT_MATH
    )
    + [extract_latex_body(text) for text in (MESSY_FULL_DOCUMENT, MESSY_MARKDOWN_ANSWER, MESSY_ENVIRONMENTS)]
    + [full_body(["lee2020", "stone2021"]), CORRECT_MATH_DOCUMENT, EMBEDDED_RUN_1.read_text(encoding="utf-8")]
)


def compile_body(body: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Render and compile a body with real pdflatex; the PDF, after checking the log has no error."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the private TEXMFVAR lands here
    tex_path = tmp_path / "paper_v1.tex"
    tex_path.write_text(render_document(title="Text math", abstract="", body=body, bibliography_stem=None))
    result = compile_paper(tex_path, bibliography=False)
    errors, _ = parse_latex_log(tex_path.with_suffix(".log").read_text(encoding="latin-1"))
    assert errors == []
    return result.pdf_path


@pytest.mark.parametrize(("model_text", "expected"), TEXT_MATH)
def test_text_math_repair(model_text: str, expected: str) -> None:
    assert squash(extract_latex_body(model_text)) == squash(expected)


@needs_tex
@pytest.mark.parametrize(("model_text", "expected"), TEXT_MATH)
def test_text_math_cases_compile(
    model_text: str, expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert compile_body(extract_latex_body(model_text), tmp_path, monkeypatch).is_file()


@needs_tex
def test_embedded_run_1_answer_compiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = extract_latex_body(EMBEDDED_RUN_1.read_text(encoding="utf-8"))
    # The echoed macros need no rewriting: lemmata-math makes them work in text.
    assert "\\item Paired delimiters (the starred form grows with its content: \\norm*{x}): \\abs{x}" in body
    assert "\\item Operators: \\argmin \\argmax \\Var" in body
    pdf = compile_body(body, tmp_path, monkeypatch)
    text = " ".join(page.extract_text() for page in PdfReader(pdf).pages)
    assert "Any bold symbol" in text and "colon-equals" in text


@needs_tex
def test_every_math_command_compiles_in_running_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def use(name: str, spec: str) -> str:
        """The command with arguments that fit its spec."""
        optional = "[\\big]" if name in TEXT_SAFE else "[3]"
        return name + "".join({"s": "*", "o": optional, "m": "{x}", "d": "("}[kind] for kind in spec)

    lines = [
        f"Text {use(name, spec)}, then {use(name, spec)}_1^2 and x {use(name, spec)} y."
        for name, spec in {**MATH_ONLY, **TEXT_SAFE}.items()
    ]
    assert compile_body(extract_latex_body("\n\n".join(lines)), tmp_path, monkeypatch).is_file()


@pytest.mark.parametrize("document", CORRECT_SAMPLES)
def test_text_math_repair_is_the_identity_on_correct_documents(document: str, monkeypatch: pytest.MonkeyPatch) -> None:
    repaired = extract_latex_body(document)
    # The same pipeline without the text-math step: any difference would be its doing.
    monkeypatch.setattr(textmath, "wrap_math_in_text", lambda text: text)
    monkeypatch.setattr(textmath, "escape_scripts_in_text", lambda text: text)
    assert repaired == extract_latex_body(document)


def test_correct_math_document_is_unchanged_byte_for_byte() -> None:
    assert extract_latex_body(CORRECT_MATH_DOCUMENT) == CORRECT_MATH_DOCUMENT


# Not the case with a definition: extraction rewrites \renewcommand into \providecommand +
# \renewcommand each time it runs (harmless, and not the text-math step).
@pytest.mark.parametrize(("model_text", "expected"), [p for p in TEXT_MATH if "newcommand" not in p.values[0]])
def test_repaired_text_is_repaired_no_further(model_text: str, expected: str) -> None:
    once = extract_latex_body(model_text)
    assert extract_latex_body(once) == once


@needs_tex
def test_correct_math_document_compiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert compile_body(CORRECT_MATH_DOCUMENT, tmp_path, monkeypatch).is_file()
