"""Authors the prose names that the survey never retrieved (issue 54: "H. Silverman and J. T." in
the Introduction of a run that retrieved no paper)."""

from __future__ import annotations

import pytest

from lemmata.stages.paper.named_works import known_names, names_unretrieved_author
from lemmata.stages.paper.prompt_echo import PromptEcho
from lemmata.stages.paper.prose import clean_parts

RETRIEVED = known_names(["José Díaz", "Lee, Ann", "Tao T."], "Prove the Cauchy–Schwarz inequality")
ECHO = PromptEcho("Write the paper.\n", allowed=[], statements=[])


@pytest.mark.parametrize(
    "sentence",
    [
        "This problem was studied by H. Silverman and J. T. in their book.",
        "Divisibility of n^3 - n is classical (see J. H. Silverman).",
        "Hardy and Wright (1979) give a proof.",
        "Silverman et al. proved a general form.",
        "The bound is known (Knuth, 1997).",
        "As Díaz and Silverman (2021) showed, parity is invariant.",
    ],
)
def test_a_sentence_naming_an_author_no_tool_returned_is_caught(sentence: str) -> None:
    assert names_unretrieved_author(sentence, RETRIEVED)


@pytest.mark.parametrize(
    "sentence",
    [
        "Díaz et al. studied parity in rings.",
        "As Lee (2021) notes, the ideal 2Z is closed under addition.",
        "Tao and Díaz (2020) prove more.",
        "By Fermat's little theorem, n^3 is congruent to n modulo 3.",
        "The Cauchy–Schwarz inequality gives the bound.",
        "Write $a = 2m$ and $b = 2n$. Then $a + b = 2(m + n)$.",
        "The proof ends here. Q.E.D.",
        "Lemma 2 holds for n = 3.",
    ],
)
def test_a_retrieved_author_or_a_named_result_is_kept(sentence: str) -> None:
    assert not names_unretrieved_author(sentence, RETRIEVED)


def test_the_introduction_loses_only_its_sentence_naming_an_unretrieved_author() -> None:
    introduction = (
        "Divisibility properties of polynomials are classical. The problem was studied by H. Silverman and "
        "J. T. in their textbook. We prove that $n^3 - n$ is divisible by 6."
    )
    parts = clean_parts({"introduction": introduction}, ECHO, ["L1"], set(), names_known=frozenset())
    assert parts.fragments["introduction"].latex == (
        "Divisibility properties of polynomials are classical. We prove that $n^3 - n$ is divisible by 6."
    )
    assert parts.unretrieved_names == 1
