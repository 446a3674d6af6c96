"""Whether a message typed in the paper's chat asks a question or orders a revision.

The spec: revision instructions typed in the Q&A chat trigger a full rewrite. lemmata decides
by rule, not by asking a model: the researcher must be able to predict what a message does, and
the two mistakes cost differently. An instruction read as a question costs one answer (and the
researcher can say it again, or use the rewrite form); a question read as an instruction costs a
rewrite, minutes of model time and a new version nobody asked for. So a message is an
instruction only when it reads as one:

- it begins with `rewrite:`, `revise:` or `revision:`; what follows is the instructions;
- its first word (after an optional "please") is an editing verb — "Shorten the introduction",
  "Please add a remark after Lemma 2" — and it is not itself a question (no final "?");
- it asks for an edit: "Can you shorten …?", "Could you please remove …?", "Would you add …".

Everything else is a question: "Why does L2 hold?", "Explain the proof of L3", "Is the bound
sharp?". The editing verbs are those that only make sense of a text ("explain", "prove" and
"clarify" are left out: a researcher types them to understand the paper, not to change it).
"""

from __future__ import annotations

import re

EXPLICIT_PREFIX = re.compile(r"\s*(?:rewrite|revise|revision)\s*:\s*", re.IGNORECASE)
EDITING_VERBS = frozenset(
    {
        "add", "remove", "delete", "drop", "cut", "omit", "change", "replace", "rewrite", "revise",
        "rephrase", "reword", "restructure", "reorganize", "reorganise", "reorder", "move", "shorten",
        "condense", "trim", "expand", "extend", "simplify", "fix", "correct", "rename", "insert",
        "include", "mention", "cite", "split", "merge", "combine", "update", "edit", "make", "use",
        "strengthen", "weaken", "generalize", "generalise", "retitle", "renumber", "tighten", "stress",
        "emphasize", "emphasise", "highlight",
    }
)  # fmt: skip
POLITE_REQUEST = re.compile(r"(?:can|could|would|will)\s+you\s+(?:please\s+)?", re.IGNORECASE)
PLEASE = re.compile(r"please[,\s]+", re.IGNORECASE)
FIRST_WORD = re.compile(r"[A-Za-z]+")


def revision_instructions(message: str) -> str | None:
    """The instructions a chat message gives, or None when it is a question (see above). An
    explicit prefix with nothing after it gives "", which a rewrite refuses as empty."""
    explicit = EXPLICIT_PREFIX.match(message)
    if explicit:
        return message[explicit.end() :].strip()  # empty: refused as empty instructions, not asked
    text = message.strip()
    polite = POLITE_REQUEST.match(text)
    if polite:
        text = text[polite.end() :]
    elif text.endswith("?"):
        return None
    please = PLEASE.match(text)
    if please:
        text = text[please.end() :]
    verb = FIRST_WORD.match(text)
    if verb is None or verb.group().lower() not in EDITING_VERBS:
        return None
    return message.strip()
