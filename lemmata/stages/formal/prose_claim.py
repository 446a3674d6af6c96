"""The machine checks of a general claim in the paper's prose (stages/paper/prose_claims.py): the
sentence formalized as a lemma's statement is (formalize.py, its answer stored under the hash of
its input, so a rewrite that keeps the sentence asks nothing), then falsified by sampling and the
solver. Only a refutation the kernel's verdict counts (a counterexample confirmed by exact
evaluation, no checker proving the contrary) removes a sentence; anything else leaves it as it
was, unchecked prose. So does a provider that fails the call (after the client's retries), or a
replay recorded before the prose was checked: the check is lost, the paper is not."""

from __future__ import annotations

import logging
from pathlib import Path

from lemmata.agents.client import LLMClient
from lemmata.artifacts import refutation_in_words
from lemmata.errors import ProviderError
from lemmata.stages.formal.formalize import formal_check, formalization
from lemmata.stages.paper.prose_claims import ClaimRefuter, RefutedClaim

log = logging.getLogger(__name__)


def machine_refuter(client: LLMClient, cache_dir: Path) -> ClaimRefuter:
    """Refutes a sentence with the formalizer of `client` and the machine checks."""

    def refute(sentence: str) -> RefutedClaim | None:
        try:
            record = formalization(client, sentence, cache_dir)
        except ProviderError as error:
            log.warning("a claim of the prose stays unchecked: the formalizer's call failed: %s", error)
            return None
        formal = formal_check(record)
        if formal.verdict != "refuted" or formal.conflict:
            return None
        return RefutedClaim(sentence=sentence, formal=formal.text, latex=formal.latex, why=refutation_in_words(formal))

    return refute
