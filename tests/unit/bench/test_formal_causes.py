"""bench/formal_causes.py: each "not formalized" reason lemmata gives, as the bench kept them on
the embedded model (2026-12-03), sorted into its cause."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from unit.bench import load_bench

causes = load_bench("formal_causes")
REFUSED = "the formal statement was refused: "


@pytest.mark.parametrize(
    "reason, cause, detail",
    [
        pytest.param("an asymptotic bound", causes.DECLINED, "an asymptotic bound", id="declined"),
        pytest.param(
            REFUSED + "the conclusion: 'f(3*z) == 7': unknown function 'f' (the language knows abs, all, ...)",
            causes.LACKS,
            "the function f",
            id="unknown-function",
        ),
        pytest.param(
            REFUSED + "a hypothesis: 'p is prime' is not an expression: invalid syntax (it holds words: prime, "
            "number; write only a Python expression)",
            causes.LACKS,
            "primes",
            id="words-prime",
        ),
        pytest.param(
            REFUSED + "the conclusion: 'There exists x' is not an expression: invalid syntax (it holds words: "
            "There, exists, least; write only a Python expression)",
            causes.LACKS,
            "existence",
            id="words-existence",
        ),
        pytest.param(
            REFUSED + "a hypothesis: 't_{n} = 5*t_{n-1}' is not an expression: invalid syntax",
            causes.LACKS,
            "a sequence (an indexed name such as t_{n-1})",
            id="indexed-name",
        ),
        pytest.param(
            REFUSED + "a hypothesis: 'the first term' is not an expression: invalid syntax (it holds words: "
            "are, the, first; write only a Python expression)",
            causes.MALFORMED,
            "words in an expression: are, first, the",
            id="words-of-no-construct",
        ),
        pytest.param(
            REFUSED + "the formal statement leaves out 942, 15 of the statement: every number of the statement "
            "must appear in it",
            causes.FAITHFULNESS,
            "a number of the prose left out",
            id="number-left-out",
        ),
        pytest.param(
            REFUSED + "the domain of x is nonnegative real, which the statement does not say of x: declare ...",
            causes.FAITHFULNESS,
            "a domain the prose does not state",
            id="domain",
        ),
        pytest.param(
            REFUSED + "no input satisfies its hypotheses (the solver proved them contradictory), so it would "
            "hold vacuously",
            causes.FAITHFULNESS,
            "vacuous: no input satisfies the hypotheses",
            id="vacuous",
        ),
        pytest.param(
            REFUSED + '\'x\' is not declared: add {"name": "x", "type": ...} to the variables',
            causes.MALFORMED,
            "a letter not declared",
            id="undeclared",
        ),
        pytest.param(
            "the formalizer's answer could not be read: the formalizer answer is not the JSON asked for: ...",
            causes.MALFORMED,
            "an answer not read",
            id="unread",
        ),
        pytest.param(REFUSED + "something new", causes.OTHER, "something new", id="other-is-shown-whole"),
    ],
)
def test_each_reason_has_its_cause(reason: str, cause: str, detail: str) -> None:
    assert causes.cause_of(reason) == (cause, detail)


def test_the_refusals_are_read_from_the_benchs_kept_results(tmp_path: Path) -> None:
    for name, kind, reason in [("a", "true", "an asymptotic bound"), ("a", "twin", None), ("b", "twin", "x")]:
        folder = tmp_path / "items" / name / kind
        folder.mkdir(parents=True)
        formal = {"not_formalized": reason} if reason else {"statement": "n == n"}
        (folder / "result.json").write_text(json.dumps({"result": {"formal": formal}}))
    assert causes.refusals(tmp_path) == {"true": [("a", "an asymptotic bound")], "twin": [("b", "x")]}
