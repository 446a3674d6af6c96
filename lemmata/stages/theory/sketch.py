"""The theory review's sketch: the shape of the main result's argument in a few sentences (the
spec's `sketch` role, at most MAX_TOKENS_SKETCH tokens), shown at the review gate above the lemma
chain and again after a rejection's re-run. A model's summary could claim more than was checked,
so it is labelled as the model's, each lemma's status stands beside it, and the paper never
prints it: the paper has the assembled proof and the statuses."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from lemmata.agents.client import LLMClient
from lemmata.agents.parsing import strip_fences
from lemmata.agents.prompts import render_prompt
from lemmata.artifacts import Theory
from lemmata.errors import ProviderError
from lemmata.verification.ladder import label

#: How much of the assembled proof the sketcher reads: its head carries the argument's shape.
PROOF_CHARS = 3000
#: A sketch this much of which is the assembled proof's text is a copy, not a sketch: the embedded
#: model answered the README's task with the assembled proof, headings and all (2026-11-27).
COPIED_SHARE = 0.8
COPIED_RUN = 24
#: Markdown a sketch must not show: heading lines (a title is no part of a sketch), bold marks.
_MARKDOWN = re.compile(r"(?m)^\s*#{1,6}[^\n]*$|\*\*|__")
#: A first line that introduces the answer instead of sketching ("Sure! Here is a sketch:").
_PREAMBLE = re.compile(
    r"^\s*(?:sure|certainly|of course|okay|here(?:'s| is)|below is|proof sketch|sketch)\b[^\n]{0,80}[:.!]\s*\n",
    re.IGNORECASE,
)


def sketch_theory(client: LLMClient, theory: Theory) -> tuple[str, str]:
    """(the sketch, "") or ("", why there is none): a sketch that cannot be had never stops the theory."""
    if not theory.assembled_proof.strip():
        return "", "no proof of the main result was assembled"
    lemmas = "\n".join(f"[{lemma.id}] ({label(lemma.status)}) {lemma.statement}" for lemma in theory.lemmas)
    prompt = render_prompt(
        "sketch", theorem=theory.theorem_statement, lemmas=lemmas, proof=theory.assembled_proof[:PROOF_CHARS]
    )
    try:
        reply = client.complete_reply("sketch", prompt.system, prompt.user)
    except ProviderError as error:
        return "", f"the sketch could not be written: {error}"
    sketch = " ".join(_MARKDOWN.sub(" ", _PREAMBLE.sub("", strip_fences(reply.text), count=1)).split())
    if not sketch and reply.finish_reason == "echo":  # the backend ended the copy and left it out
        return "", "the model repeated the assembled proof instead of sketching it"
    if not sketch:
        return "", "the model's sketch was empty"
    if copied_share(sketch, " ".join(_MARKDOWN.sub(" ", theory.assembled_proof).split())) >= COPIED_SHARE:
        return "", "the model repeated the assembled proof instead of sketching it"
    return sketch, ""


def copied_share(sketch: str, proof: str) -> float:
    """How much of `sketch` (characters) stands in `proof` word for word, in order, in runs of at
    least COPIED_RUN characters (shorter common runs are shared words and formulas, not copying)."""
    matcher = SequenceMatcher(None, proof, sketch, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks() if block.size >= COPIED_RUN) / len(sketch)
