"""The writer model's parts as LaTeX for lemmata's skeleton, and lemmata's own text for a part the
model never wrote.

A part is cleaned in this order: the model's `[Unverified step]` markers go (lemmata places
them), lines that echo the prompt go (prompt_echo), `[L1]` becomes `Lemma~\\ref{lem:L1}`, the
shared clean-up converts markdown and repairs the LaTeX, a heading the model put first goes
(the skeleton has it) and a remaining \\section becomes a \\subsection (it would renumber the
paper). A lemma or theorem the model restates, with
the proof after it, goes: lemmata prints every lemma and the main result once, from the theory.
An abstract keeps only its text, a lemma's explanation its first paragraph without environments.
Unknown citations are removed. A paragraph that repeats (nearly) one of an earlier part goes: the
embedded model (2026-11-25) gave its introduction again as the discussion, the conclusion and a
lemma's idea. The abstract may be repeated by the introduction. When the main result is not
established, a sentence claiming it is ("This result is established by showing ...", "we have
proved", "the checks showed that the proof was correct") goes: the embedded model wrote such
sentences in the abstract, the conclusion and the discussion of papers whose every lemma was
unverified (2026-11-25, 2026-11-26). Whatever the status, a sentence naming a proof method no
proof of the record uses ("using mathematical induction") goes, so does one crediting the result
with applications nothing of the run looked into (claims.claims_unfounded_significance), one
naming an author no tool retrieved ("H. Silverman", see named_works), one calling proved (or
saying holds) a lemma that is not verified, one stating a general claim the machine checks refute
(prose_claims), a sentence leaning back on one that went ("This is a well-known property"), and
a part's last sentence when the part stops in the middle of it (the backend cut the answer).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

from lemmata.artifacts import Theory
from lemmata.latex.bibliography import remove_unknown_citations
from lemmata.latex.extract import extract_latex_body
from lemmata.latex.proof_text import cite_lemmas, fragment_latex, lemma_label
from lemmata.stages.paper.claims import (
    CLAIMS_PROOF,
    claims_an_unverified_lemma,
    claims_unfounded_significance,
    names_an_unused_method,
    numbers_vouch,
)
from lemmata.stages.paper.fragments import Fragment
from lemmata.stages.paper.named_works import names_unretrieved_author
from lemmata.stages.paper.parts import LEMMA_PREFIX, part_keys
from lemmata.stages.paper.prompt_echo import PromptEcho, alike, normalised, without_dangling
from lemmata.stages.paper.prose_claims import SENTENCE_END as _SENTENCE_END
from lemmata.stages.paper.prose_claims import ProseClaimChecks, RefutedClaim
from lemmata.stages.paper.render import MAIN_LABEL
from lemmata.stages.paper.unverified_marks import remove_model_markers

_LEADING_HEADING = re.compile(r"\A\s*\\(?:section|subsection|subsubsection|paragraph)\*?\{[^{}\n]*\}[ \t]*\n?")
_ABSTRACT_TAGS = re.compile(r"\\(?:begin|end)\{abstract\}")
_ANY_HEADING = re.compile(r"\\(?:section|subsection|subsubsection|paragraph)\*?\{[^{}\n]*\}")
_BLOCK = re.compile(r"\\begin\{(?P<name>[A-Za-z*]+)\}.*?\\end\{(?P=name)\}", re.DOTALL)
_APPENDIX = re.compile(r"\\appendix(?![A-Za-z@])[ \t]*")  # inside a part it would letter lemmata's sections
#: Paragraphs shorter than this (normalised) are never taken for a repetition: "Proof." or "See below."
MIN_REPEATED_CHARS = 40
#: How alike (difflib ratio) a paragraph must be to an earlier one to count as its repetition.
REPEAT_SIMILARITY = 0.85
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_DISPLAY_START = re.compile(r"^[ \t]*(?=\\\[|\$\$)", re.MULTILINE)
_FLATTENED_HEADING = re.compile(r"(?:\\#){2,}")
_MATH_SPAN = re.compile(r"\\\[.*?\\\]|\$\$.*?\$\$|\\\(.*?\\\)|\$[^$]*\$", re.DOTALL)

#: A part that stops in the middle of a sentence: its last character a letter, a digit or a comma.
#: "The idea is to prove that the sum of two even integers is", the embedded model's explanation
#: of L1 for the README's task, where the backend stopped the answer as repetitive (2026-12-03).
#: A LaTeX command ends nothing mid-sentence ("... time; \\QED", "\\end{itemize}", "\\par").
_UNFINISHED = re.compile(r"(?<![\\A-Za-z])[A-Za-z]*[A-Za-z0-9,;]\Z")


def _without_unfinished_sentence(text: str) -> tuple[str, int]:
    """`text` without a last sentence that stops unfinished (see _UNFINISHED)."""
    stripped = text.rstrip()
    if not _UNFINISHED.search(stripped):
        return text, 0
    head, _, last_line = stripped.rpartition("\n")
    sentences = _SENTENCE_END.split(last_line)
    kept_line = " ".join(sentences[:-1])
    return (head + "\n" + kept_line if head else kept_line).rstrip(), 1


_RESTATED = re.compile(
    r"\\begin\{(?P<name>lemma|theorem|maintheorem)\}.*?\\end\{(?P=name)\}"
    r"(?:\s*\\begin\{proof\}.*?\\end\{proof\})?",
    re.DOTALL,
)


@dataclass
class CleanParts:
    """The model's parts as fragments, with what the clean-up removed."""

    fragments: dict[str, Fragment] = field(default_factory=dict)
    removed_citations: list[str] = field(default_factory=list)
    echoed_lines: int = 0
    repeated_paragraphs: int = 0
    unfounded_claims: int = 0
    unfinished_sentences: int = 0
    unretrieved_names: int = 0
    refuted_claims: list[RefutedClaim] = field(default_factory=list)

    def repairs(self) -> dict[str, int]:
        """What the clean-up removed, by kind, the kinds it removed something of; the run's
        record (PaperMeta.prose_repairs) and the writer's card show it."""
        counts = {
            "prompt lines": self.echoed_lines,
            "repeated paragraphs": self.repeated_paragraphs,
            "unfounded claims": self.unfounded_claims,
            "refuted claims": len(self.refuted_claims),
            "unretrieved authors": self.unretrieved_names,
            "unfinished sentences": self.unfinished_sentences,
            "unknown citations": len(self.removed_citations),
        }
        return {kind: count for kind, count in counts.items() if count}


def clean_parts(
    raw: Mapping[str, str],
    echo: PromptEcho,
    lemma_ids: Sequence[str],
    known_keys: set[str],
    *,
    established: bool = True,
    methods_used: frozenset[str] = frozenset(),
    names_known: frozenset[str] = frozenset(),
    unverified_lemmas: frozenset[str] = frozenset(),
    claim_checks: ProseClaimChecks | None = None,
) -> CleanParts:
    """Every part with text left after cleaning, as a fragment the writer model owns; claims of a
    proof are kept only when the main result is `established`, and a proof method may be named
    only when it is one of `methods_used` (see claims.methods_used_by), an author only when
    `names_known` holds the name (named_works), and no lemma of `unverified_lemmas` is called
    proved or said to hold; a general claim `claim_checks` finds refuted goes (and is kept in
    `refuted_claims` for Limitations); a part that stops mid-sentence loses that sentence."""
    cleaned = CleanParts()
    order = {key: index for index, key in enumerate(part_keys(lemma_ids))}
    seen: set[str] = set()
    for key, text in sorted(raw.items(), key=lambda item: order.get(item[0], len(order))):
        without_echo, echoed = echo.remove(remove_model_markers(text))
        # The abstract summarises what follows: the introduction may say it again.
        without_echo, repeated = _without_repeated_paragraphs(without_echo, set() if key == "abstract" else seen)
        cleaned.repeated_paragraphs += repeated
        if not established and not key.startswith(LEMMA_PREFIX):
            without_echo, claims = _without_claims(without_echo, CLAIMS_PROOF.search)
            cleaned.unfounded_claims += claims
        without_echo, vouched = _without_claims(without_echo, numbers_vouch)
        cleaned.unfounded_claims += vouched
        without_echo, puffed = _without_claims(without_echo, claims_unfounded_significance)
        cleaned.unfounded_claims += puffed
        without_echo, methods = _without_claims(without_echo, lambda s: names_an_unused_method(s, methods_used))
        cleaned.unfounded_claims += methods
        without_echo, lemma_claims = _without_claims(
            without_echo, lambda s: claims_an_unverified_lemma(s, unverified_lemmas, lemma_ids)
        )
        cleaned.unfounded_claims += lemma_claims
        without_echo, names = _without_claims(without_echo, lambda s: names_unretrieved_author(s, names_known))
        cleaned.unretrieved_names += names
        if claim_checks is not None:
            refuted = claim_checks.refuted_in(without_echo)
            wrong = {claim.sentence for claim in refuted}  # split as _without_claims splits
            without_echo, _ = _without_claims(without_echo, partial(_is_one_of, wrong))
            cleaned.refuted_claims += [claim for claim in refuted if claim not in cleaned.refuted_claims]
        without_echo, unfinished = _without_unfinished_sentence(without_echo)
        cleaned.unfinished_sentences += unfinished
        latex, removed = remove_unknown_citations(_part_latex(key, without_echo, lemma_ids), known_keys)
        latex = without_empty_pieces(latex)
        cleaned.echoed_lines += echoed
        cleaned.removed_citations += [k for k in removed if k not in cleaned.removed_citations]
        if latex.strip():
            cleaned.fragments[key] = Fragment(f"part:{key}", latex.strip(), without_echo, by_writer=True)
    return cleaned


#: Display math with nothing in it, and a heading with nothing after it (before the next heading
#: or the part's end): the README's task on the embedded model (2026-11-27) printed an empty
#: "1.1 Proof" in its introduction and a Conclusion of one empty display.
_EMPTY_DISPLAY = re.compile(r"\\\[\s*\\\]|\$\$\s*\$\$|\\begin\{(equation|align|gather|multline)(\*?)\}\s*\\end\{\1\2\}")
_EMPTY_HEADING = re.compile(r"\\(?:sub)*section\*?\{[^{}]*\}\s*(?=\\(?:sub)*section\*?\{|\Z)")


def without_empty_pieces(latex: str) -> str:
    """`latex` without empty displays and without headings that head nothing."""
    return _EMPTY_HEADING.sub("", _EMPTY_DISPLAY.sub("", latex)).strip()


def _without_claims(text: str, claim: Callable[[str], object]) -> tuple[str, int]:
    """`text` without its sentences that make `claim` (CLAIMS_PROOF, numbers_vouch), line by line,
    and without a sentence that leans back on one that went ("This shows ...": prompt_echo.without_dangling)."""
    kept_lines, dropped = [], 0
    for line in text.splitlines():
        sentences = _SENTENCE_END.split(line)
        kept = without_dangling(sentences, [bool(claim(sentence)) for sentence in sentences])
        dropped += len(sentences) - len(kept)
        if kept or not line.strip():
            kept_lines.append(" ".join(kept))
    return "\n".join(kept_lines), dropped


def _is_one_of(sentences: set[str], sentence: str) -> bool:
    return sentence.strip() in sentences


def _without_repeated_paragraphs(text: str, seen: set[str]) -> tuple[str, int]:
    """`text` without the paragraphs already in `seen` (normalised), which it then joins."""
    kept, repeated = [], 0
    for paragraph in _PARAGRAPH_BREAK.split(text):
        key = normalised(paragraph)
        if len(key) >= MIN_REPEATED_CHARS and (key in seen or any(alike(key, old, REPEAT_SIMILARITY) for old in seen)):
            repeated += 1
            continue
        if len(key) >= MIN_REPEATED_CHARS:
            seen.add(key)
        kept.append(paragraph)
    return "\n\n".join(kept), repeated


def _part_latex(key: str, text: str, lemma_ids: Sequence[str]) -> str:
    latex = extract_latex_body(cite_lemmas(_ABSTRACT_TAGS.sub("", text), lemma_ids).strip() + "\n")
    latex = _LEADING_HEADING.sub("", _RESTATED.sub("", _APPENDIX.sub("", latex)).strip())
    if key == "abstract":
        return _ANY_HEADING.sub("", latex)
    if key.startswith(LEMMA_PREFIX):
        return _explanation(latex)
    return re.sub(r"\\section(?=\*?\{)", r"\\subsection", latex)


def _explanation(latex: str) -> str:
    """The first paragraph of prose: no statement, no proof, no heading, no display (lemmata prints
    the lemma and its proof). A heading or a display ends the paragraph, and so does a run of
    escaped hashes: the embedded model (2026-11-25) went on after its idea with the request's
    shortened proof, whose markdown headings the request had flattened into one line."""
    latex = _ANY_HEADING.sub("\n\n", _BLOCK.sub("\n\n", latex))
    latex = _DISPLAY_START.sub("\n\n", latex)
    for paragraph in re.split(r"\n[ \t]*\n", latex):
        prose = _without_dangling_introduction(_FLATTENED_HEADING.split(paragraph, maxsplit=1)[0].strip())
        if _has_prose(prose):
            return prose
    return ""


def _has_prose(latex: str) -> bool:
    """Words outside math: a display alone ("\\[ \\]", the embedded model, 2026-11-25: printed as
    an empty Idea) is no explanation."""
    return bool(re.search(r"[A-Za-z]{2,}", re.sub(r"\\[A-Za-z]+", " ", _MATH_SPAN.sub(" ", latex))))


def _without_dangling_introduction(prose: str) -> str:
    """Without its last sentence when that ends with a colon: it introduced the display the
    explanation stops before ("... there exists an integer $k_a$ such that:", the README's main
    command on the embedded model, 2026-11-25, after issue 24)."""
    if not prose.endswith(":"):
        return prose
    sentences = _SENTENCE_END.split(prose)
    return " ".join(sentences[:-1]).strip()


# --- lemmata's text for a part the model never wrote ------------------------------------------


def fallback_parts(missing: Sequence[str], theory: Theory, goal: str, brief: str) -> dict[str, Fragment]:
    """lemmata's own text for each missing part that has one (preliminaries and discussion may stay out)."""
    ids = [lemma.id for lemma in theory.lemmas]
    fragments = {}
    for key in missing:
        source = _fallback_source(key, theory, goal, brief)
        if source:
            fragments[key] = Fragment(f"part:{key}", _fallback_latex(key, source, ids), source)
    return fragments


def _fallback_latex(key: str, source: str, ids: Sequence[str]) -> str:
    if key.startswith(LEMMA_PREFIX) or key == "conclusion":
        return source  # made of references only: LaTeX already
    return fragment_latex(source, ids)


def _fallback_source(key: str, theory: Theory, goal: str, brief: str) -> str:
    count, verified = len(theory.lemmas), sum(lemma.verified for lemma in theory.lemmas)
    lemmas = f"{count} lemma" if count == 1 else f"{count} lemmas"
    if key == "abstract":
        return (
            f"We study the following statement. {goal.strip()} Its proof is organised as a chain of {lemmas}, "
            f"{verified} of them verified."
        )
    if key == "introduction":
        # The brief is the planning model's, checked by nothing: said so, not made lemmata's own
        # claim ("the sum of any two integers is odd if and only if at least one of the integers is
        # odd", the README's task on the embedded model, 2026-11-27, printed as the introduction).
        return f"This paper addresses the following goal. {goal.strip()}" + (
            f"\n\nThe approach, in the words of the planning model (not checked): {brief.strip()}"
            if brief.strip()
            else ""
        )
    if key == "preliminaries":
        return (
            # Not "Formally": the paper keeps that word for the statement the machines checked.
            f"Stated precisely, the result reads: {theory.formal_statement.strip()}"
            if theory.formal_statement.strip()
            else ""
        )
    if key == "conclusion":
        if theory.main_result_established and verified == count:
            return f"We proved the main result, Theorem~\\ref{{{MAIN_LABEL}}}, from {lemmas}, each verified."
        if theory.main_result_established:
            # Established by a machine on the goal's own formal statement: the chain of the prose
            # proof may hold unverified lemmas (the README's task: L1 unverified, 2026-11-27).
            chain = (
                "1 lemma, which is not verified; the Limitations section says why"
                if count == 1
                else f"{lemmas}, {verified} of them verified; the Limitations section lists the others"
            )
            return (
                f"The main result, Theorem~\\ref{{{MAIN_LABEL}}}, is machine-checked. Its prose proof rests on {chain}."
            )
        return (
            f"The main result, stated as Conjecture~\\ref{{{MAIN_LABEL}}}, is not established; the Limitations "
            "section lists what remains to be verified."
        )
    if key.startswith(LEMMA_PREFIX):
        return _dependency_sentence(theory, key[len(LEMMA_PREFIX) :])
    return ""


def _dependency_sentence(theory: Theory, lemma_id: str) -> str:
    """What the lemma builds on: the one explanation lemmata can give without the model."""
    lemma = next(lemma for lemma in theory.lemmas if lemma.id == lemma_id)
    known = {other.id for other in theory.lemmas}
    used = [f"Lemma~\\ref{{{lemma_label(d)}}}" for d in lemma.depends_on if d in known]
    if not used:
        return "This lemma does not rely on an earlier lemma of the chain."
    return "This lemma builds on " + (used[0] if len(used) == 1 else ", ".join(used[:-1]) + " and " + used[-1]) + "."


def required_parts(lemma_ids: Sequence[str], enforce_style: bool) -> list[str]:
    """The parts the model is asked for until it writes them (explanations under the style rules)."""
    return [key for key in part_keys(lemma_ids) if enforce_style or not key.startswith(LEMMA_PREFIX)]
