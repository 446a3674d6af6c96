"""Text a model wrote for one slot of the paper (a prover's proof, a lemma statement), as LaTeX
that stands on its own inside the environment lemmata puts it in.

A prover writes markdown as often as LaTeX: `### Proof of Lemma [L2]: <the statement again>`,
`**Proof.**`, `**Step 1:**`, a closing `QED`, and cites lemmas as `[L1]`. The proof environment is
lemmata's, so every opening "Proof" heading and proof tag goes, headings inside become bold run-in
titles (a \\section would end the proof environment), and `[L1]` becomes `Lemma~\\ref{lem:L1}`.
The rest is the shared clean-up (extract.py): markdown, Unicode math, environments closed.

A prover also copies the formal and Coq statements of its prompt into its prose ("#### Coq
Statement", then `\\[\\text{Theorem lemmata_goal : ... 2%Z ...\\]`, whose `%` comments out the
rest of the line: the embedded main command, 2026-11-26); the paper prints the formal statement
itself, so those sections go.

`plain_text_latex` is the fallback for a fragment whose LaTeX still breaks the compile: its words,
escaped, so that one broken proof cannot sink the paper. `latex_paragraphs` splits a proof so
that the fallback takes one paragraph, not the whole proof.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from lemmata.latex.document import escape_latex_text
from lemmata.latex.extract import extract_latex_body
from lemmata.latex.scaffolding import without_scaffolding

_OPENERS = r"(?:\*\*|__|\\textbf\{|\\textit\{|\\emph\{|\*|_)?"
_CLOSERS = r"(?:\*\*|__|\}|\*|_)?"
# A leading markdown heading about the proof: the whole line goes (it restates the lemma).
_PROOF_HEADING_LINE = re.compile(r"\A\s*#{1,6}[ \t]*" + _OPENERS + r"[ \t]*(?:Proof|PROOF)\b[^\n]*(?:\n|\Z)")
# A leading "Proof.", "**Proof:**", "Proof of Lemma [L2]:" run-in title: only the title goes.
_PROOF_TITLE = re.compile(
    r"\A\s*"
    + _OPENERS
    + r"[ \t]*(?:Proof|PROOF)(?:[ \t]+(?:of|sketch|idea)\b[^.:\n]{0,80})?[ \t]*"
    + _CLOSERS
    + r"[ \t]*[.:]"
    + r"[ \t]*"
    + _CLOSERS
    + r"[ \t]*"
)
_PROOF_TAGS = re.compile(r"\\begin[ \t]*\{proof\}(?:[ \t]*\[[^\]\n]*\])?|\\end[ \t]*\{proof\}")
# The title of a `\begin{proof}[...]` tag, without the braces that protect it: `[{Proof of ...}]`.
_TAG_TITLE = re.compile(r"\[(?:\{(?P<wrapped>[^\n]*)\}|(?P<bare>[^\]\n]*))\]\Z")
_QED_TAIL = re.compile(
    r"(?:\s|\\hfill|\\quad)*(?:\$\s*\\(?:blacksquare|square|Box|qed)\s*\$|\\(?:qed|blacksquare|square|Box)\b"
    r"|\(?Q\.?E\.?D\.?\)?|∎|□|■)\s*\Z"
)
# A markdown heading, also behind the "Proof:" label of the assembler's prompt, which the model
# copies with the lemma proof after it ("Proof: ### Proof of Lemma [L1]: ...", the embedded model).
_MARKDOWN_HEADING = re.compile(r"^[ \t]{0,3}(?:Proof:[ \t]*)?#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_SECTIONING = re.compile(r"\\(?:section|subsection|subsubsection|paragraph|chapter)\*?[ \t]*\{([^{}\n]*)\}")
# A markdown section that restates the prompt's formal or Coq statement, to the next heading.
_ECHOED_FORMAL_SECTION = re.compile(
    r"^[ \t]{0,3}#{1,6}[ \t]*(?:\*\*)?[ \t]*(?:Formal|Coq|Lean)[ \t]+(?:Statement|Theorem|Goal)\b[^\n]*(?:\n|\Z)"
    r"(?:(?![ \t]{0,3}#{1,6}[ \t]).*(?:\n|\Z))*",
    re.MULTILINE | re.IGNORECASE,
)
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
# A display holding only a framed sentence: the embedded model's "final answer" closing a proof,
# `\[ \boxed{\text{The sum of two even integers is even.}} \]`: four of its recorded answers end
# so (the prover's, the assembler's, the sketch's and the crystallizer's; the main command's PDF,
# 2026-11-29).
_BOXED_SENTENCE = re.compile(r"(?:\\\[|\$\$)\s*\\boxed\s*\{\s*\\text\s*\{(?P<words>[^{}$\n]*)\}\s*\}\s*(?:\\\]|\$\$)")
_WORD = re.compile(r"[a-z0-9]+")
#: How far back a framed sentence is looked for in the text before it, to be dropped as a repeat.
BOXED_REPEAT_WINDOW = 400
# What nests across a blank line: environments, \\[ \\] and $$ displays (an escape is skipped whole).
_NESTING_TOKEN = re.compile(
    r"(?P<begin>\\begin[ \t]*\{)|(?P<end>\\end[ \t]*\{)|(?P<open>\\\[)|(?P<close>\\\])"
    r"|\\(?:[A-Za-z@]+|[\s\S])|(?P<dollars>\$\$)"
)
_UNESCAPED_PERCENT = re.compile(r"(?<!\\)%")
#: A lemmata command lemmata names in a sentence (`lemmata calibrate --backend ...`): typewriter,
#: its `--` kept two hyphens (LaTeX would print an en dash, and a reader could not type it).
_COMMAND_SPAN = re.compile(r"`(lemmata [^`$\n]+)`")
_CITATION_GROUP = re.compile(r"(?:\b[Ll]emmas?[ \t~]*)?(?<![}\]A-Za-z@*\\])\[(?P<ids>[^\[\]\n]{1,80})\]")
_ID_SEPARATORS = re.compile(r"[ \t]*(?:,|;|\band\b)[ \t]*")


def lemma_label(lemma_id: str) -> str:
    """The \\label key of a lemma: `lem:` and its id, with characters a key cannot hold replaced."""
    return "lem:" + re.sub(r"[^A-Za-z0-9_.:-]", "-", lemma_id)


def cite_lemmas(text: str, lemma_ids: Iterable[str]) -> str:
    """`[L1]`, `Lemma [L1]`, `[L1, L3]` and `Lemma L1` as `Lemma~\\ref{lem:L1}` (known ids only)."""
    known = {lemma_id.casefold(): lemma_id for lemma_id in lemma_ids}
    if not known:
        return text

    def group(match: re.Match[str]) -> str:
        names = [name.strip() for name in _ID_SEPARATORS.split(match.group("ids")) if name.strip()]
        if not names or any(name.casefold() not in known for name in names):
            return match.group(0)  # [GAP: ...], a markdown link, an interval: not a citation
        return _lemma_references([known[name.casefold()] for name in names])

    text = _CITATION_GROUP.sub(group, text)
    bare = "|".join(re.escape(lemma_id) for lemma_id in sorted(known.values(), key=len, reverse=True))
    return re.sub(
        rf"\b[Ll]emma[ \t~]+(?:{bare})(?![A-Za-z0-9_])",
        lambda m: _lemma_references([known[m.group(0).split()[-1].split("~")[-1].casefold()]]),
        text,
    )


def _lemma_references(ids: list[str]) -> str:
    refs = [f"\\ref{{{lemma_label(lemma_id)}}}" for lemma_id in ids]
    if len(refs) == 1:
        return f"Lemma~{refs[0]}"
    return "Lemmas~" + ", ".join(refs[:-1]) + f" and~{refs[-1]}"


def strip_proof_opening(text: str) -> str:
    """Without the leading "### Proof of Lemma [L2]: ..." heading line or "**Proof.**" title."""
    previous = None
    while previous != text:
        previous = text
        text = _PROOF_HEADING_LINE.sub("", text, count=1)
        text = _PROOF_TITLE.sub("", text, count=1)
    return text


def strip_closing_qed(text: str) -> str:
    """Without the QED, \\qed or box that ends the text: the proof environment prints its own."""
    return _QED_TAIL.sub("", text.rstrip()).rstrip()


def unframed_sentences(text: str) -> str:
    """A framed sentence in a display as a plain sentence, or nothing when the text just before
    it already says it: a proof ends in words, not with its claim again, centred in a box."""

    def sentence(match: re.Match[str]) -> str:
        words = " ".join(match.group("words").split())
        before = _WORD.findall(text[max(0, match.start() - BOXED_REPEAT_WINDOW) : match.start()].lower())
        said = " ".join(_WORD.findall(words.lower()))
        return "" if not said or said in " ".join(before) else words

    return _BOXED_SENTENCE.sub(sentence, text)


def drop_echoed_formal_statements(text: str) -> str:
    """Without the prompt's formal and Coq statements copied into the prose: the sections headed
    so, and any paragraph that names the Coq theorem `lemmata_goal`."""
    text = _ECHOED_FORMAL_SECTION.sub("", text)
    paragraphs = _PARAGRAPH_BREAK.split(text)
    return "\n\n".join(paragraph for paragraph in paragraphs if "lemmata_goal" not in paragraph)


def latex_paragraphs(latex: str) -> list[str]:
    """The paragraphs of `latex`, split only at blank lines outside every environment and display,
    so that each part compiles on its own when the whole did."""
    paragraphs: list[str] = []
    current: list[str] = []
    depth, in_dollars = 0, False
    for block in _PARAGRAPH_BREAK.split(latex.strip()):
        current.append(block)
        for token in _NESTING_TOKEN.finditer(block):
            if token.group("begin") or token.group("open"):
                depth += 1
            elif token.group("end") or token.group("close"):
                depth -= 1
            elif token.group("dollars"):
                in_dollars = not in_dollars
        if depth <= 0 and not in_dollars:
            paragraphs.append("\n\n".join(current).strip())
            current, depth = [], 0
    if current:
        paragraphs.append("\n\n".join(current).strip())
    return [paragraph for paragraph in paragraphs if paragraph]


def headings_as_run_in_titles(text: str) -> str:
    """Markdown headings and \\section commands inside a proof as bold run-in titles."""
    text = _MARKDOWN_HEADING.sub(lambda m: "\n\\textbf{" + m.group(1).replace("**", "").strip() + "}", text)
    return _SECTIONING.sub(lambda m: "\n\\textbf{" + m.group(1).strip() + "}", text)


def proof_latex(text: str, lemma_ids: Iterable[str]) -> str:
    """A prover's proof text as the LaTeX inside lemmata's proof environment."""
    text = drop_echoed_formal_statements(unframed_sentences(text.replace("\r\n", "\n")))
    text = without_scaffolding(text)
    text = strip_closing_qed(strip_proof_opening(text))
    text = _PROOF_TAGS.sub("", headings_as_run_in_titles(text))
    text = cite_lemmas(text, lemma_ids)
    # The clean-up may turn a "**Proof:**" line further down into a proof environment: ours is
    # enough, but a title it took keeps its words as a run-in title. A heading "#### Proof of the
    # Implication \( \Rightarrow \)" half-way through a proof became such a title, and the tag's
    # removal took it along: the two directions of the proof lost their headings (the embedded
    # main command, 2026-11-29).
    return _PROOF_TAGS.sub(_kept_title, extract_latex_body(text.strip() + "\n")).strip()


def _kept_title(tag: re.Match[str]) -> str:
    found = _TAG_TITLE.search(tag.group(0))
    title = found and (found.group("wrapped") if found.group("wrapped") is not None else found.group("bare"))
    return f"\\textbf{{{title}}}" if title else ""


def fragment_latex(text: str, lemma_ids: Iterable[str]) -> str:
    """A statement or other short text a model wrote, as LaTeX that compiles on its own."""
    return extract_latex_body(cite_lemmas(text.replace("\r\n", "\n"), lemma_ids).strip() + "\n").strip()


def plain_text_latex(text: str) -> str:
    """The text printed literally (paragraphs kept): for a fragment whose LaTeX breaks the compile.
    A markdown heading keeps its words, not its hashes: "### Proof of Lemma [L1]: ..." opened a
    paragraph of an assembled proof printed this way as "\\#\\#\\# Proof of Lemma ..." (a replay
    of the embedded model's AM-GM run, 2026-11-27)."""
    text = _MARKDOWN_HEADING.sub(lambda match: match.group(1), text)
    paragraphs = [part.strip() for part in re.split(r"\n[ \t]*\n", text.strip()) if part.strip()]
    return "\n\n".join(escape_latex_text(paragraph) for paragraph in paragraphs)


def sentence_latex(text: str) -> str:
    """A sentence lemmata wrote around model text (a status line, a reason, a refusal quoting the
    formalizer's expression) as LaTeX. A `%` in it is a percent or Python's modulo, never a
    comment: `'or(a % 2 == 1, b % 2 == 0)'` cut a status line off at its `%` (the embedded main
    command, 2026-11-26). A lemmata command in backticks is set in typewriter type."""
    latex = fragment_latex(_UNESCAPED_PERCENT.sub(r"\\%", text), ())
    return _COMMAND_SPAN.sub(lambda match: "\\texttt{" + match.group(1).replace("--", "-{}-") + "}", latex)
