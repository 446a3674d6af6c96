"""The scaffolding a small model builds around a proof, which the paper already gives.

The embedded 1.5B prover and assembler write a proof as a school answer (the README's main
command, 2026-12-03, printed in the PDF):

    **Restatement of the Lemma**
    An integer n is even if there exists an integer k such that n = 2k.

    To prove this, we will use the definition of even integers. ...

    ### Conclusion

    The sum of two even integers is even. [L1]

and opened the main result's sketch with "To prove the goal ..., we will use the following
lemma:", after which came no lemma but the proof. The paper prints each statement above its
proof and ends a proof with the proof environment's box, so here go:

- a heading that only names a part of such an answer (a restatement, the conclusion, the final
  answer, a summary), and the short paragraph after a restatement heading, which repeats the
  statement printed above;
- a sentence announcing "the following lemma" (result, fact) that no lemma follows;
- and a citation left after a paragraph's last sentence, "… is even. [L1]", goes into that
  sentence: "… is even, by [L1]."
"""

from __future__ import annotations

import re

_PART_TITLE = (
    r"(?:Restatement(?:\s+of\s+the\s+(?:Lemma|Theorem|Goal|Problem|Statement|Claim|Result))?"
    r"|(?:Final\s+)?Conclusions?|Final\s+(?:Answer|Remarks?|Step)|Summary)"
)
#: A line that is only such a title: `### Conclusion`, `**Restatement of the Lemma**`, `Conclusion:`.
_PART_HEADING = re.compile(
    r"^[ \t]{0,3}(?:#{1,6}[ \t]*)?(?:\*\*|__)?[ \t]*(?P<title>"
    + _PART_TITLE
    + r")[ \t]*:?[ \t]*(?:\*\*|__)?[ \t]*:?[ \t]*$",
    re.MULTILINE | re.IGNORECASE,
)
#: Such a title run in before the text of its line: `**Conclusion:** The sum …`.
_PART_RUN_IN = re.compile(
    r"^(?P<indent>[ \t]{0,3})(?:\*\*|__)[ \t]*" + _PART_TITLE + r"[ \t]*[:.]?[ \t]*(?:\*\*|__)[ \t]*[:.]?[ \t]*(?=\S)",
    re.MULTILINE | re.IGNORECASE,
)
#: The most a paragraph after a restatement heading may hold to be taken for the restatement.
MAX_RESTATEMENT_CHARS = 400
_ANNOUNCED = re.compile(
    r"(?:(?<=[.!?])\s+|^)(?P<sentence>[^.!?\n]*\bthe\s+following\s+(?:lemmas?|results?|facts?|theorems?)\s*:)[ \t]*$",
    re.IGNORECASE,
)
_A_LEMMA = re.compile(r"\[L\d+\]|\\ref\{lem:|\b(?:Lemma|Theorem)\b")
#: A paragraph whose last sentence is followed only by citations: "… is even. [L1]".
_CITATION_AFTER_SENTENCE = re.compile(r"(?P<end>[.!?])[ \t]*(?P<cites>(?:\[L\d+(?:\s*,\s*L\d+)*\][ \t]*)+)\Z")


def without_scaffolding(text: str) -> str:
    """`text`, a model's proof in markdown or LaTeX, without the parts the paper already gives."""
    blocks = re.split(r"\n[ \t]*\n", text)
    kept: list[str] = []
    after_restatement = False
    for index, block in enumerate(blocks):
        lines = block.split("\n")
        heading = _PART_HEADING.match(lines[0])
        if heading:
            after_restatement = heading.group("title").lower().startswith("restatement")
            lines = lines[1:]
            if after_restatement and lines and len("\n".join(lines)) <= MAX_RESTATEMENT_CHARS:
                lines, after_restatement = [], False
        elif after_restatement:
            after_restatement = False
            if len(block) <= MAX_RESTATEMENT_CHARS:
                continue
        block = _PART_RUN_IN.sub(r"\g<indent>", "\n".join(line for line in lines if not _PART_HEADING.match(line)))
        block = _unannounced(block, blocks[index + 1] if index + 1 < len(blocks) else "")
        block = _CITATION_AFTER_SENTENCE.sub(
            lambda found: f", by {found.group('cites').strip()}{found.group('end')}", block.rstrip()
        )
        if block.strip():
            kept.append(block)
    return "\n\n".join(kept)


def _unannounced(block: str, following: str) -> str:
    """The block without a last sentence announcing a lemma the next block does not give."""
    found = _ANNOUNCED.search(block)
    if found is None or _A_LEMMA.search(following.split("\n", 1)[0]):
        return block
    return block[: found.start("sentence")].rstrip()
