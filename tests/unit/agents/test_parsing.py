"""Lenient readers for model answers (lemmata.agents.parsing).

Spec, theory stage: lemma-list parsing tries four passes in order — (1) JSON in a code
fence, json-labelled or plain; (2) the first JSON object, checked for the keys lemmas,
steps, subgoals, proof_steps, lemma_list, components, parts; (3) the first JSON array;
(4) a plain-text numbered or bulleted list. A null `source` is an empty string; ids and
statements have alternative field names.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from lemmata.agents.answers import ConsistencyAnswer, IdeationAnswer, PlannerAnswer, VerifierAnswer
from lemmata.agents.parsing import (
    ID_KEYS,
    LIST_KEYS,
    STATEMENT_KEYS,
    close_truncated_json,
    first_json_value,
    normalise_lemma_items,
    parse_json_answer,
    parse_lemma_list,
)
from lemmata.errors import ModelOutputError

TWO = [
    {"id": "L1", "statement": "Every even number is a sum of two odd numbers.", "depends_on": [], "source": ""},
    {"id": "L2", "statement": "The sum of two even numbers is even.", "depends_on": ["L1"], "source": "folklore"},
]


def item(
    id_: str, statement: str, depends_on: list[str] | None = None, source: str = "", approach: str = ""
) -> dict[str, Any]:
    """One lemma exactly as `normalise_lemma_items` returns it."""
    return {"id": id_, "statement": statement, "depends_on": depends_on or [], "source": source, "approach": approach}


EXPECTED_TWO = [
    item("L1", "Every even number is a sum of two odd numbers."),
    item("L2", "The sum of two even numbers is even.", ["L1"], "folklore"),
]


# --------------------------------------------------------------------------- pass 1: fences


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("```json\n" + json.dumps({"lemmas": TWO}) + "\n```", id="fence-json-labelled"),
        pytest.param("```JSON\n" + json.dumps({"lemmas": TWO}) + "\n```", id="fence-JSON-uppercase-label"),
        pytest.param("```\n" + json.dumps({"lemmas": TWO}) + "\n```", id="fence-unlabelled"),
        pytest.param("```json\n" + json.dumps(TWO) + "\n```", id="fence-holding-bare-array"),
        pytest.param(
            "Here is my plan.\n\n```json\n" + json.dumps({"lemmas": TWO}, indent=2) + "\n```\n\nI hope it helps!",
            id="fence-with-prose-around",
        ),
    ],
)
def test_pass1_fenced_json(text: str) -> None:
    assert parse_lemma_list(text) == EXPECTED_TWO


# Real answers around a fence: prose, LaTeX (escaped in JSON), null sources, other fences.
FENCED_ANSWERS = [
    pytest.param(
        r"""I will split the proof into two lemmas.

```
{"lemmas": [
  {"id": "L1", "statement": "For all $a, b \\in \\mathbb{R}$, $2ab \\le a^2 + b^2$.", "depends_on": [], "source": null},
  {"id": "L2", "statement": "$\\sqrt{ab} \\le \\frac{a+b}{2}$ for $a, b \\ge 0$.", "depends_on": ["L1"], "source": "AM-GM"}
]}
```

The second lemma is the crux; the first is routine algebra.""",
        [
            item("L1", r"For all $a, b \in \mathbb{R}$, $2ab \le a^2 + b^2$."),
            item("L2", r"$\sqrt{ab} \le \frac{a+b}{2}$ for $a, b \ge 0$.", ["L1"], "AM-GM"),
        ],
        id="fence-without-language-tag-between-prose-with-latex",
    ),
    pytest.param(
        "```json \n"  # a trailing space after the language tag
        '{"lemmas": [{"id": "L1", "statement": "Every prime $p > 2$ is odd.", "source": null}]}\n'
        "```",
        [item("L1", "Every prime $p > 2$ is odd.")],
        id="fence-json-tag-with-trailing-space",
    ),
    pytest.param(
        "Plan:\n"
        "1. Decompose:\n"
        "   ```json\n"
        '   {"steps": [{"id": "S1", "statement": "Reduce to the case $\\\\gcd(a, m) = 1$."}]}\n'
        "   ```\n"
        "2. Prove each step.",
        [item("S1", r"Reduce to the case $\gcd(a, m) = 1$.")],
        id="fence-indented-inside-a-markdown-list",
    ),
    pytest.param(
        "First a quick check:\n```python\nprint(sum(range(10)))\n```\nAnd the plan:\n"
        '```json\n[{"id": "L1", "statement": "$\\\\sum_{k=0}^{n} k = n(n+1)/2$."}]\n```',
        [item("L1", r"$\sum_{k=0}^{n} k = n(n+1)/2$.")],
        id="python-fence-then-json-fence-holding-an-array",
    ),
    pytest.param(
        '```json\r\n{"lemmas": [{"id": "L1", "statement": "$|x + y| \\\\le |x| + |y|$."}]}\r\n```\r\n',
        [item("L1", r"$|x + y| \le |x| + |y|$.")],
        id="fence-with-windows-line-endings",
    ),
]


@pytest.mark.parametrize("text, expected", FENCED_ANSWERS)
def test_pass1_fenced_answers(text: str, expected: list[dict[str, Any]]) -> None:
    assert parse_lemma_list(text) == expected


@pytest.mark.parametrize("label", ["json", "JSON", "Json", ""])
def test_pass1_wins_over_an_earlier_bare_object_with_a_known_key(label: str) -> None:
    """Fences are tried first, even when an unfenced object comes earlier in the text."""
    decoy = json.dumps({"steps": [{"id": "X1", "statement": "a decoy statement"}]})
    text = f"Draft: {decoy}\nFinal:\n```{label}\n{json.dumps({'lemmas': TWO})}\n```"
    assert parse_lemma_list(text) == EXPECTED_TWO


def test_pass1_ignores_fences_of_other_languages() -> None:
    """A ```python fence is not a JSON fence; the object in it is still found by pass 2."""
    text = "```python\n" + json.dumps({"lemmas": TWO}) + "\n```"
    # pass 2 reads the first JSON object anywhere in the text
    assert parse_lemma_list(text) == EXPECTED_TWO


def test_pass1_skips_a_broken_fence_for_a_later_good_fence() -> None:
    text = '```json\n{"lemmas": [oops\n```\nretry:\n```json\n' + json.dumps({"lemmas": TWO}) + "\n```"
    assert parse_lemma_list(text) == EXPECTED_TWO


# --------------------------------------------------------------------------- pass 2: first object


def test_list_keys_are_the_seven_of_the_spec() -> None:
    assert set(LIST_KEYS) == {"lemmas", "steps", "subgoals", "proof_steps", "lemma_list", "components", "parts"}


# One unfenced answer per key of the spec, each in a shape a model has produced.
KEYED_OBJECTS = [
    pytest.param(
        r"""Sure! Here is the decomposition of the theorem into lemmas:

{
  "lemmas": [
    {"id": "L1", "statement": "For every $n \\in \\mathbb{Z}$, $n^2 - n$ is even.", "depends_on": [], "source": null},
    {"id": "L2", "statement": "If $n$ is odd then $n^2 \\equiv 1 \\pmod 8$.", "depends_on": ["L1"], "source": "folklore"}
  ]
}

Let me know if you want me to refine any step.""",
        [
            item("L1", r"For every $n \in \mathbb{Z}$, $n^2 - n$ is even."),
            item("L2", r"If $n$ is odd then $n^2 \equiv 1 \pmod 8$.", ["L1"], "folklore"),
        ],
        id="key-lemmas-pretty-printed-between-prose",
    ),
    pytest.param(
        r"""The proof has three steps. {"goal": "$\\sqrt{2} \\notin \\mathbb{Q}$", "steps": [
"Assume $\\sqrt{2} = p/q$ with $\\gcd(p, q) = 1$.", "Then $p^2 = 2q^2$, so $p$ is even.",
"Writing $p = 2r$ makes $q$ even too: a contradiction."]} Each step uses parity only.""",
        [
            item("", r"Assume $\sqrt{2} = p/q$ with $\gcd(p, q) = 1$."),
            item("", "Then $p^2 = 2q^2$, so $p$ is even."),
            item("", "Writing $p = 2r$ makes $q$ even too: a contradiction."),
        ],
        id="key-steps-as-strings-after-a-goal-key",
    ),
    pytest.param(
        r"""Subgoals:
{"subgoals": [
  {"name": "compactness", "hypothesis": "The closed ball $\\overline{B}(0,1) \\subset \\mathbb{R}^n$ is compact."},
  {"name": "extreme-value", "hypothesis": "A continuous $f \\colon K \\to \\mathbb{R}$ has a maximum on compact $K$.",
   "requires": ["compactness"]}
]}""",
        [
            item("compactness", r"The closed ball $\overline{B}(0,1) \subset \mathbb{R}^n$ is compact."),
            item(
                "extreme-value",
                r"A continuous $f \colon K \to \mathbb{R}$ has a maximum on compact $K$.",
                ["compactness"],
            ),
        ],
        id="key-subgoals-with-name-and-hypothesis-fields",
    ),
    pytest.param(
        "Proof outline (JSON):\r\n"
        '{\r\n  "proof_steps": [\r\n'
        '    {"lemma_id": "P1", "content": "$f$ is Lipschitz with constant $L < 1$.", "uses": []},\r\n'
        '    {"lemma_id": "P2", "content": "$(f^n(x_0))$ is Cauchy.", "uses": ["P1"]}\r\n'
        "  ]\r\n}\r\n",
        [
            item("P1", "$f$ is Lipschitz with constant $L < 1$."),
            item("P2", "$(f^n(x_0))$ is Cauchy.", ["P1"]),
        ],
        id="key-proof_steps-with-windows-line-endings",
    ),
    pytest.param(
        '{"theorem": "Every finite integral domain is a field.", "strategy": "multiplication by $a$ is injective", '
        '"lemma_list": [{"id": "L1", "statement": "In an integral domain, $x \\\\mapsto ax$ is injective for $a \\\\neq 0$."}, '
        '{"id": "L2", "statement": "An injective map of a finite set to itself is surjective.", "source": "pigeonhole"}]}\n'
        "Note: L2 is where finiteness is used.",
        [
            item("L1", r"In an integral domain, $x \mapsto ax$ is injective for $a \neq 0$."),
            item("L2", "An injective map of a finite set to itself is surjective.", [], "pigeonhole"),
        ],
        id="key-lemma_list-after-other-keys-with-trailing-note",
    ),
    pytest.param(
        "Components of the argument:\n"
        '{"components": [{"id": "C1", "statement": "$\\\\mathbb{E}[X] = \\\\sum_k P(X \\\\ge k)$ for $X \\\\in \\\\mathbb{N}$.", '
        '"source": null}, {"id": "C2", "statement": "Markov: $P(X \\\\ge a) \\\\le \\\\mathbb{E}[X]/a$.", '
        '"dependencies": ["C1"], "source": null}]}',
        [
            item("C1", r"$\mathbb{E}[X] = \sum_k P(X \ge k)$ for $X \in \mathbb{N}$."),
            item("C2", r"Markov: $P(X \ge a) \le \mathbb{E}[X]/a$.", ["C1"]),
        ],
        id="key-components-with-null-sources-and-dependencies",
    ),
    pytest.param(
        '{"parts": [{"title": "base case", "statement": "$P(1)$ holds."}, '
        '{"title": "inductive step", "statement": "$P(n) \\\\Rightarrow P(n+1)$."}]}\n\n'
        "Here {n} ranges over the positive integers and [0, 1] is not used.",
        [item("base case", "$P(1)$ holds."), item("inductive step", r"$P(n) \Rightarrow P(n+1)$.")],
        id="key-parts-with-braces-and-brackets-in-trailing-commentary",
    ),
]


@pytest.mark.parametrize("text, expected", KEYED_OBJECTS)
def test_pass2_first_object_with_each_known_key(text: str, expected: list[dict[str, Any]]) -> None:
    assert parse_lemma_list(text) == expected


def test_pass2_cases_cover_every_key_of_the_spec() -> None:
    covered = {case.id.split("-")[1] for case in KEYED_OBJECTS}
    assert covered == set(LIST_KEYS)


@pytest.mark.parametrize("key", ["lemmas", "steps", "subgoals", "proof_steps", "lemma_list", "components", "parts"])
def test_pass1_fenced_object_with_each_known_key(key: str) -> None:
    assert parse_lemma_list(f"```json\n{json.dumps({key: TWO})}\n```") == EXPECTED_TWO


def test_pass2_object_with_an_unknown_key_is_not_a_lemma_list() -> None:
    text = json.dumps({"theorems": TWO})
    # pass 2 finds no known key; pass 3 then takes the first array (the value of "theorems")
    assert parse_lemma_list(text) == EXPECTED_TWO
    # ... and with no array at all, nothing
    assert parse_lemma_list(json.dumps({"theorems": "L1 then L2"})) == []


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(
            # the fence's JSON is missing its final brace: pass 1 fails; pass 2's first object
            # is the outer one (invalid), then an item without a list key; pass 3 reads the array
            '```json\n{"lemmas": ' + json.dumps(TWO) + "\n```",
            id="broken-fence-falls-through-to-pass3-array",
        ),
        pytest.param(
            "```json\n{lemmas: [L1, L2]}\n```\nCorrected: " + json.dumps({"lemmas": TWO}),
            id="broken-fence-falls-through-to-pass2-object",
        ),
        pytest.param(
            "```\nnot json at all\n```\n" + json.dumps(TWO),
            id="non-json-fence-falls-through-to-pass3",
        ),
    ],
)
def test_broken_fence_falls_through_to_a_later_pass(text: str) -> None:
    assert parse_lemma_list(text) == EXPECTED_TWO


# --------------------------------------------------------------------------- pass 3: first array


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(json.dumps(TWO), id="bare-array"),
        pytest.param("The lemmas are:\n" + json.dumps(TWO, indent=1) + "\nDone.", id="array-with-prose"),
        pytest.param(
            json.dumps(["Every even number is a sum of two odd numbers.", "The sum of two even numbers is even."]),
            id="array-of-strings",
        ),
    ],
)
def test_pass3_first_array(text: str) -> None:
    items = parse_lemma_list(text)
    assert [i["statement"] for i in items] == [
        "Every even number is a sum of two odd numbers.",
        "The sum of two even numbers is even.",
    ]


def test_pass3_array_of_strings_gets_empty_ids() -> None:
    assert parse_lemma_list('["A statement.", "Another statement."]') == [
        item("", "A statement."),
        item("", "Another statement."),
    ]


ARRAY_ANSWERS = [
    pytest.param(
        r"""I propose the following lemmas, ordered by dependency:
[
  {"id": "L1", "statement": "$\\|x\\|_2 \\le \\sqrt{n}\\,\\|x\\|_\\infty$ for $x \\in \\mathbb{R}^n$.", "source": null},
  {"id": "L2", "statement": "$\\|Ax\\|_2 \\le \\|A\\|_F \\|x\\|_2$.", "depends_on": ["L1"], "source": "Cauchy-Schwarz"}
]
(The Frobenius bound in L2 is standard.)""",
        [
            item("L1", r"$\|x\|_2 \le \sqrt{n}\,\|x\|_\infty$ for $x \in \mathbb{R}^n$."),
            item("L2", r"$\|Ax\|_2 \le \|A\|_F \|x\|_2$.", ["L1"], "Cauchy-Schwarz"),
        ],
        id="array-between-prose-with-latex-and-null-source",
    ),
    pytest.param(
        '[\r\n  "Every bounded monotone sequence converges.",\r\n  "$a_n = (1 + 1/n)^n$ is increasing and bounded by $3$."\r\n]\r\n',
        [
            item("", "Every bounded monotone sequence converges."),
            item("", "$a_n = (1 + 1/n)^n$ is increasing and bounded by $3$."),
        ],
        id="array-of-strings-with-windows-line-endings",
    ),
    pytest.param(
        '[{"id": "L1", "statement": "$G$ acts transitively on $X$."}, "Orbit-stabiliser: $|G| = |X|\\\\,|G_x|$.", 7, null, '
        '{"id": "L3", "statement": ""}]\nThe last entry is a placeholder.',
        [item("L1", "$G$ acts transitively on $X$."), item("", r"Orbit-stabiliser: $|G| = |X|\,|G_x|$.")],
        id="array-mixing-objects-strings-numbers-nulls-and-an-empty-statement",
    ),
]


@pytest.mark.parametrize("text, expected", ARRAY_ANSWERS)
def test_pass3_array_answers(text: str, expected: list[dict[str, Any]]) -> None:
    assert parse_lemma_list(text) == expected


# --------------------------------------------------------------------------- pass 4: text list


@pytest.mark.parametrize(
    "text, expected",
    [
        pytest.param(
            "The plan:\n- First lemma statement.\n* Second lemma statement.\n• Third lemma statement.\nThat's all.",
            ["First lemma statement.", "Second lemma statement.", "Third lemma statement."],
            id="bulleted-list",
        ),
        pytest.param(
            "Plan:\n1. First lemma statement.\n2) Second lemma statement.\n  10. Tenth, indented.\n",
            ["First lemma statement.", "Second lemma statement.", "Tenth, indented."],
            id="numbered-list",
        ),
        pytest.param(
            r"""To prove $\sum_{k=1}^n k^3 = \left(\frac{n(n+1)}{2}\right)^2$ I would establish:

1. $\sum_{k=1}^n k = \frac{n(n+1)}{2}$ (Gauss).
2. The identity holds for $n = 1$.
3. If it holds for $n$, it holds for $n + 1$, using step 1.

Together these give the result by induction.""",
            [
                r"$\sum_{k=1}^n k = \frac{n(n+1)}{2}$ (Gauss).",
                "The identity holds for $n = 1$.",
                "If it holds for $n$, it holds for $n + 1$, using step 1.",
            ],
            id="numbered-prose-with-latex-braces-between-intro-and-outro",
        ),
        pytest.param(
            "Lemmas needed:\r\n1) $p \\mid ab \\Rightarrow p \\mid a$ or $p \\mid b$.\r\n2) Factorisations are unique up to order.\r\n",
            [r"$p \mid ab \Rightarrow p \mid a$ or $p \mid b$.", "Factorisations are unique up to order."],
            id="numbered-prose-with-parentheses-and-windows-line-endings",
        ),
        pytest.param(
            "Here is a plan.\n\n*   Show $f$ is continuous on $[a, b]$.\n*   Apply the extreme value theorem.\n\nThe rest follows.",
            ["Show $f$ is continuous on $[a, b]$.", "Apply the extreme value theorem."],
            id="bulleted-prose-with-asterisks-and-extra-spaces",
        ),
        pytest.param(
            # [0, 1] is valid JSON: pass 3 reads it, finds no lemma in it, and the list heuristic runs
            "Let $f \\colon [0, 1] \\to \\mathbb{R}$ be convex.\n- $f$ is continuous on $(0, 1)$.\n- $f$ has one-sided derivatives.",
            ["$f$ is continuous on $(0, 1)$.", "$f$ has one-sided derivatives."],
            id="bulleted-prose-after-a-numeric-interval-in-latex",
        ),
        pytest.param(
            "Sketch:\n\n• Reduce to $n$ prime.\n• Use Fermat's little theorem.\n\n(Both are standard.)",
            ["Reduce to $n$ prime.", "Use Fermat's little theorem."],
            id="bulleted-prose-with-unicode-bullets",
        ),
    ],
)
def test_pass4_text_list(text: str, expected: list[str]) -> None:
    assert parse_lemma_list(text) == [item("", s) for s in expected]


def test_pass4_not_used_when_an_earlier_pass_succeeds() -> None:
    text = "- a bullet that is not a lemma\n```json\n" + json.dumps({"lemmas": TWO}) + "\n```"
    assert parse_lemma_list(text) == EXPECTED_TWO


# --------------------------------------------------------------------------- order of the passes

DRAFT = [item("D1", "A draft lemma the model later replaced.")]
FINAL = [item("F1", "The final lemma.")]
DRAFT_JSON = json.dumps([{"id": "D1", "statement": "A draft lemma the model later replaced."}])
FINAL_JSON = json.dumps([{"id": "F1", "statement": "The final lemma."}])

# Each answer holds two candidate lists; the spec's pass order, not their position, picks one.
PASS_ORDER = [
    pytest.param(
        f"Rough list: {DRAFT_JSON}\nFinal:\n```json\n{FINAL_JSON}\n```",
        FINAL,
        id="fence-wins-over-an-earlier-bare-array",
    ),
    pytest.param(
        f'Candidate ids: ["L-parity", "L-sum"].\nPlan: {{"lemmas": {FINAL_JSON}}}',
        FINAL,
        id="object-with-a-list-key-wins-over-an-earlier-array",
    ),
    pytest.param(
        f"- A draft lemma the model later replaced.\n- Another draft bullet.\nAs JSON:\n{FINAL_JSON}",
        FINAL,
        id="array-wins-over-earlier-bulleted-prose",
    ),
    pytest.param(
        f'1. A draft lemma the model later replaced.\n2. Another numbered draft.\nStructured: {{"steps": {FINAL_JSON}}}',
        FINAL,
        id="object-wins-over-earlier-numbered-prose",
    ),
    pytest.param(
        f'First attempt: {{"lemmas": {DRAFT_JSON}}}\nRevised: {{"lemmas": {FINAL_JSON}}}',
        DRAFT,
        id="first-of-two-keyed-objects-wins-even-when-the-second-is-a-revision",
    ),
    pytest.param(f"{DRAFT_JSON}\nAlternatively:\n{FINAL_JSON}", DRAFT, id="first-of-two-bare-arrays-wins"),
    pytest.param(
        f"```json\n{DRAFT_JSON}\n```\nor, better:\n```json\n{FINAL_JSON}\n```",
        DRAFT,
        id="first-of-two-json-fences-wins",
    ),
    pytest.param(
        f'Draft: {{"lemmas": {DRAFT_JSON}}}\r\nFinal:\r\n```json\r\n{FINAL_JSON}\r\n```\r\n',
        FINAL,
        id="fence-with-windows-line-endings-wins-over-an-earlier-bare-object",
    ),
]


@pytest.mark.parametrize("text, expected", PASS_ORDER)
def test_the_four_passes_are_tried_in_the_spec_order(text: str, expected: list[dict[str, Any]]) -> None:
    assert parse_lemma_list(text) == expected


# --------------------------------------------------------------------------- garbage


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("I am sorry, I cannot decompose this theorem.", id="refusal-prose"),
        pytest.param("{not json} and [also not json", id="broken-json-no-list"),
        pytest.param('{"lemmas": []}', id="empty-lemma-list"),
        pytest.param('{"lemmas": [{"id": "L1"}, {"id": "L2", "statement": ""}]}', id="items-without-statements"),
        pytest.param("[1, 2, 3]", id="array-of-numbers"),
        pytest.param('```json\n{"lemmas": "L1 and L2"}\n```', id="lemmas-is-a-string"),
    ],
)
def test_garbage_gives_an_empty_list(text: str) -> None:
    assert parse_lemma_list(text) == []


# --------------------------------------------------------------------------- item fields


# One answer per accepted field name of the lemma record (spec: 4 id names, 4 statement names).
FIELD_NAMES = [
    pytest.param(
        r"""```json
{"lemmas": [{"id": "lem:young",
             "statement": "$ab \\le \\frac{a^p}{p} + \\frac{b^q}{q}$ for conjugate exponents $p, q$.",
             "source": "Young"}]}
```""",
        [item("lem:young", r"$ab \le \frac{a^p}{p} + \frac{b^q}{q}$ for conjugate exponents $p, q$.", [], "Young")],
        id="id-field-id",
    ),
    pytest.param(
        r"""Here are the lemmas:
[{"lemma_id": "L1", "statement": "$\\det(AB) = \\det A \\det B$."},
 {"lemma_id": "L2", "statement": "$\\det A^{-1} = 1/\\det A$.", "depends_on": ["L1"]}]""",
        [item("L1", r"$\det(AB) = \det A \det B$."), item("L2", r"$\det A^{-1} = 1/\det A$.", ["L1"])],
        id="id-field-lemma_id",
    ),
    pytest.param(
        r"""{"components": [{"name": "Hoelder", "statement": "$\\|fg\\|_1 \\le \\|f\\|_p \\|g\\|_q$."}]}
-- I named each component.""",
        [item("Hoelder", r"$\|fg\|_1 \le \|f\|_p \|g\|_q$.")],
        id="id-field-name",
    ),
    pytest.param(
        "```\n"
        '{"parts": [{"title": "Existence", "statement": "A minimiser exists by compactness."}, '
        '{"title": "Uniqueness", "statement": "Strict convexity rules out two minimisers.", "depends_on": ["Existence"]}]}\n'
        "```",
        [
            item("Existence", "A minimiser exists by compactness."),
            item("Uniqueness", "Strict convexity rules out two minimisers.", ["Existence"]),
        ],
        id="id-field-title",
    ),
    pytest.param(
        '{"steps": [{"id": "S1", "statement": "The kernel of a homomorphism is a normal subgroup.", '
        '"proof_sketch": "conjugate an element of the kernel"}]}',
        [item("S1", "The kernel of a homomorphism is a normal subgroup.")],
        id="statement-field-statement-beside-an-unknown-field",
    ),
    pytest.param(
        '{"lemmas": [{"id": "L1", "formal_statement": "∀ ε > 0, ∃ N, ∀ n ≥ N, |a_n - L| < ε", '
        '"informal": "a_n converges to L"}]}',
        [item("L1", "∀ ε > 0, ∃ N, ∀ n ≥ N, |a_n - L| < ε")],
        id="statement-field-formal_statement-with-unicode-quantifiers",
    ),
    pytest.param(
        r"""{"subgoals": [
    {"id": "H1", "hypothesis": "$\\mu(A) < \\infty$ for every $A$ in the generating $\\pi$-system."}
]}""",
        [item("H1", r"$\mu(A) < \infty$ for every $A$ in the generating $\pi$-system.")],
        id="statement-field-hypothesis",
    ),
    pytest.param(
        '[{"id": "C1", "content": "\\n  Every Cauchy sequence in $\\\\mathbb{R}$ is bounded.\\n  "}]',
        [item("C1", r"Every Cauchy sequence in $\mathbb{R}$ is bounded.")],
        id="statement-field-content-padded-with-newlines",
    ),
]


@pytest.mark.parametrize("text, expected", FIELD_NAMES)
def test_alternative_field_names(text: str, expected: list[dict[str, Any]]) -> None:
    assert parse_lemma_list(text) == expected


def test_field_name_cases_cover_every_name_of_the_spec() -> None:
    covered = {tuple(case.id.split("-")[:3]) for case in FIELD_NAMES}
    expected = {("id", "field", k) for k in ID_KEYS} | {("statement", "field", k) for k in STATEMENT_KEYS}
    assert covered == expected


def test_field_name_priority_follows_the_spec_order() -> None:
    raw = [{"title": "T", "name": "N", "lemma_id": "LI", "id": "I", "content": "c", "statement": "s"}]
    assert normalise_lemma_items(raw) == [item("I", "s")]
    raw = [{"title": "T", "name": "N", "content": "c", "hypothesis": "h"}]
    assert normalise_lemma_items(raw) == [item("N", "h")]
    # an empty preferred field falls through to the next one
    raw = [{"id": "", "lemma_id": "LI", "statement": "", "formal_statement": "f"}]
    assert normalise_lemma_items(raw) == [item("LI", "f")]


@pytest.mark.parametrize(
    "entry, expected_source",
    [
        pytest.param({"source": None}, "", id="null-source"),
        pytest.param({}, "", id="missing-source"),
        pytest.param({"source": "Bezout"}, "Bezout", id="named-source"),
    ],
)
def test_source(entry: dict[str, Any], expected_source: str) -> None:
    items = parse_lemma_list(json.dumps({"lemmas": [{"id": "L1", "statement": "s", **entry}]}))
    assert items[0]["source"] == expected_source


# Architect answers where `source` is null: the spec turns it into "", in every pass.
NULL_SOURCES = [
    pytest.param(
        "The architect's plan:\n```json\n"
        '{"lemmas": [\n'
        '  {"id": "L1", "statement": "Every subgroup of a cyclic group is cyclic.", "depends_on": [], "source": null},\n'
        '  {"id": "L2", "statement": "A group of prime order is cyclic.", "depends_on": [], "source": "Lagrange"},\n'
        '  {"id": "L3", "statement": "A group of order $p^2$ is abelian.", "depends_on": ["L1", "L2"], "source": null}\n'
        "]}\n```\nL3 is new; L1 and L2 are textbook.",
        [
            item("L1", "Every subgroup of a cyclic group is cyclic."),
            item("L2", "A group of prime order is cyclic.", [], "Lagrange"),
            item("L3", "A group of order $p^2$ is abelian.", ["L1", "L2"]),
        ],
        id="null-source-beside-a-named-source-in-a-fenced-plan",
    ),
    pytest.param(
        '[{"id": "L1", "statement": "$\\\\pi$ is irrational.", "source": null, "depends_on": null}]',
        [item("L1", r"$\pi$ is irrational.")],
        id="null-source-and-null-depends_on-in-a-bare-array",
    ),
    pytest.param(
        '{"proof_steps": [{"id": "P1", "statement": "The series $\\\\sum 1/n^2$ converges.", "source": null}]}\r\n',
        [item("P1", r"The series $\sum 1/n^2$ converges.")],
        id="null-source-in-an-unfenced-object-with-windows-line-ending",
    ),
]


@pytest.mark.parametrize("text, expected", NULL_SOURCES)
def test_null_source_becomes_empty_string(text: str, expected: list[dict[str, Any]]) -> None:
    assert parse_lemma_list(text) == expected


@pytest.mark.parametrize(
    "entry, expected",
    [
        pytest.param({"depends_on": ["L1", "L2"]}, ["L1", "L2"], id="depends_on"),
        pytest.param({"dependencies": ["L1"]}, ["L1"], id="dependencies"),
        pytest.param({"uses": ["L2"]}, ["L2"], id="uses"),
        pytest.param({"requires": ["L1"]}, ["L1"], id="requires"),
        pytest.param({"depends_on": "L1"}, ["L1"], id="single-string"),
        pytest.param({"depends_on": [1, 2]}, ["1", "2"], id="numbers-become-strings"),
        pytest.param({"depends_on": None}, [], id="null"),
        pytest.param({}, [], id="missing"),
    ],
)
def test_depends_on_alternatives(entry: dict[str, Any], expected: list[str]) -> None:
    items = parse_lemma_list(json.dumps({"lemmas": [{"id": "L3", "statement": "s", **entry}]}))
    assert items[0]["depends_on"] == expected


def test_numeric_id_becomes_a_string_and_non_dict_items_are_dropped() -> None:
    raw = [{"id": 7, "statement": "seven"}, 42, None, ["nested"], {"id": "L2", "statement": "two"}]
    assert normalise_lemma_items(raw) == [item("7", "seven"), item("L2", "two")]


def test_normalise_rejects_a_non_list() -> None:
    assert normalise_lemma_items({"lemmas": TWO}) == []
    assert normalise_lemma_items(None) == []


# --------------------------------------------------------------------------- parse_json_answer


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('{"verdict": "valid", "issues": ["minor"]}', id="bare-json"),
        pytest.param('```json\n{"verdict": "valid", "issues": ["minor"]}\n```', id="fenced-json"),
        pytest.param('```\n{"verdict": "valid", "issues": ["minor"]}\n```', id="fenced-unlabelled"),
        pytest.param('My verdict follows.\n{"verdict": "valid", "issues": ["minor"]}', id="prose-before"),
        pytest.param(
            '{"verdict": "valid", "issues": ["minor"]}\n\nNote: the proof of step {2} is terse.',
            id="trailing-commentary",
        ),
        pytest.param(
            'Here:\n```json\n{"verdict": "valid", "issues": ["minor"]}\n```\nThanks {for} reading.',
            id="fence-inside-prose",
        ),
        pytest.param('{"verdict": "valid", "issues": ["minor"], "score": 3}', id="extra-keys-ignored"),
    ],
)
def test_parse_json_answer_accepts(text: str) -> None:
    answer = parse_json_answer(text, VerifierAnswer, "verifier")
    assert answer == VerifierAnswer(verdict="valid", issues=["minor"])


def test_parse_json_answer_skips_a_first_object_of_the_wrong_shape_for_a_fenced_one() -> None:
    text = 'Consider {"x": 1}.\n```json\n{"consistent": false, "issues": ["circular"]}\n```'
    answer = parse_json_answer(text, ConsistencyAnswer, "consistency")
    assert answer.consistent is False and answer.issues == ["circular"]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("The proof looks fine to me.", id="prose-only"),
        pytest.param('{"verdict": "valid"', id="truncated-json"),
        pytest.param('{"issues": []}', id="missing-required-field"),
        pytest.param('["valid"]', id="array-not-object"),
        pytest.param("```json\n{verdict: valid}\n```", id="fenced-invalid-json"),
    ],
)
def test_parse_json_answer_rejects_with_the_role_in_the_message(text: str) -> None:
    with pytest.raises(ModelOutputError, match="the verifier answer"):
        parse_json_answer(text, VerifierAnswer, "verifier")


def test_parse_json_answer_error_excerpt_is_short() -> None:
    with pytest.raises(ModelOutputError) as info:
        parse_json_answer("blah " * 500, VerifierAnswer, "verifier")
    assert len(str(info.value)) < 260
    assert "…" in str(info.value)


# --------------------------------------------------------------------------- first_json_value


@pytest.mark.parametrize(
    "text, opener, expected",
    [
        pytest.param('note {"a": "x}{y", "b": "{"} tail }', "{", {"a": "x}{y", "b": "{"}, id="braces-inside-strings"),
        pytest.param('set {1, 2} then {"k": [1, {"n": "]"}]}', "{", {"k": [1, {"n": "]"}]}, id="skips-invalid-first"),
        pytest.param('see [L1] and ["a]", "b"] end', "[", ["a]", "b"], id="array-brackets-inside-strings"),
        pytest.param('{"outer": {"inner": 1}} {"second": 2}', "{", {"outer": {"inner": 1}}, id="nested-takes-outer"),
        pytest.param('escaped {"q": "say \\"}\\" ok"}', "{", {"q": 'say "}" ok'}, id="escaped-quote-and-brace"),
        pytest.param("nothing here", "{", None, id="none"),
        pytest.param("{ never closed", "{", None, id="unclosed"),
    ],
)
def test_first_json_value(text: str, opener: str, expected: Any) -> None:
    assert first_json_value(text, opener) == expected


# --- answers cut off by their token limit (met on the embedded model with capped tokens) ---

TRUNCATED_IDEATION = (
    '{"directions": [{"title": "Direct parity", "summary": "write n = 2k and m = 2l", "rationale": "elementary"}, '
    '{"title": "Modular arithmetic", "summary": "work in Z/2Z, where the sum of two zeros is'
)


def test_a_truncated_ideation_answer_keeps_its_complete_directions() -> None:
    """Malformed model output met on the embedded model: ideation JSON cut at MAX_TOKENS_PLANNER."""
    answer = parse_json_answer(TRUNCATED_IDEATION, IdeationAnswer, "ideation")
    assert [d.title for d in answer.directions] == ["Direct parity"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param('{"a": 1, "b": "x\\"y", "c": [1, 2', {"a": 1, "b": 'x"y', "c": [1]}, id="escaped-quote-then-cut"),
        pytest.param(
            '{"lemmas": [{"id": "L1", "statement": "s1"}, {"id": "L2", "statem',
            {"lemmas": [{"id": "L1", "statement": "s1"}]},
            id="half-item-dropped",
        ),
        pytest.param(
            '{"summary": "a, b and c", "open_problems": ["p1", "p2',
            {"summary": "a, b and c", "open_problems": ["p1"]},
            id="comma-inside-a-string-is-not-a-cut",
        ),
        pytest.param('{"a": 1}', None, id="complete-object-is-not-repaired"),
        pytest.param('{"a": "never closed', None, id="nothing-complete-survives"),
        pytest.param("no json here", None, id="no-object"),
    ],
)
def test_close_truncated_json(text: str, expected: object) -> None:
    assert close_truncated_json(text) == expected


def test_a_truncated_answer_that_lost_a_required_field_is_still_an_error() -> None:
    with pytest.raises(ModelOutputError, match="planner"):
        parse_json_answer('{"chosen": 1, "research_brief": "Use Z/2Z", "goal": "For all even', PlannerAnswer, "planner")


@pytest.mark.parametrize(
    "text, expected",
    [
        pytest.param(
            'As shown in [1], we need:\n[{"id": "L1", "statement": "$a$ even."}]',
            [item("L1", "$a$ even.")],
            id="citation-number-before-the-array",
        ),
        pytest.param(
            'On $[0, 1]$ the plan is\n[{"id": "L1", "statement": "$f$ is bounded."}]',
            [item("L1", "$f$ is bounded.")],
            id="interval-before-the-array",
        ),
        pytest.param(
            '[{"id": "L1", "statement": "s", "steps": ["expand", "simplify"]}]',
            [item("L1", "s")],
            id="steps-key-inside-an-item-is-not-the-list",
        ),
    ],
)
def test_brackets_and_items_that_are_not_the_lemma_list(text: str, expected: list[dict[str, Any]]) -> None:
    assert parse_lemma_list(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(
            '```json\n{"lemmas": [{"id": "L1", "statement": "For $\\beta = \\frac{1}{2}$, $\\theta \\neq \\nu$."}]}\n```',
            id="fenced",
        ),
        pytest.param(
            '{"lemmas": [{"id": "L1", "statement": "For $\\beta = \\frac{1}{2}$, $\\theta \\neq \\nu$."}]}', id="bare"
        ),
        pytest.param('[{"id": "L1", "statement": "For $\\beta = \\frac{1}{2}$, $\\theta \\neq \\nu$."}]', id="array"),
    ],
)
def test_a_plan_with_single_backslashes_keeps_its_latex(text: str) -> None:
    """Issue 53, item 7: `\\beta` and `\\frac` in a JSON string read as backspace + "eta" and form
    feed + "rac": the lemma printed "eta = rac{1}{2}", a wrong lemma nothing reported."""
    (item,) = parse_lemma_list(text)
    assert item["statement"] == "For $\\beta = \\frac{1}{2}$, $\\theta \\neq \\nu$."


def test_a_plan_with_its_backslashes_escaped_is_read_as_before() -> None:
    text = json.dumps({"lemmas": [{"id": "L1", "statement": "For $\\beta = \\frac{1}{2}$.\nThen $n \\geq 1$."}]})
    (item,) = parse_lemma_list(text)
    assert item["statement"] == "For $\\beta = \\frac{1}{2}$.\nThen $n \\geq 1$."


#: 3,000 `[` before an answer: deeper than Python's JSON parser recurses (issue 53, item 6).
DEEP = "[" * 3000 + '{"lemmas": [{"id": "L1", "statement": "S."}], "confidence": 0.9}'


def test_nesting_too_deep_for_the_parser_is_a_malformed_answer_not_a_crash() -> None:
    from lemmata.agents.answers import VerifierAnswer as Checked
    from lemmata.agents.proof_attempt import find_assessment
    from lemmata.stages.theory.assemble import proof_of_json_answer
    from lemmata.verification.checks import strict_answer

    with pytest.raises(ModelOutputError, match="not the JSON asked for"):
        parse_json_answer(DEEP, PlannerAnswer, "planner")
    with pytest.raises(ModelOutputError):
        strict_answer(DEEP, Checked, "verifier")
    assert parse_lemma_list("[" * 3000) == []
    assert close_truncated_json("[" * 3000 + "1,") is None
    deep_object = "{" + '"a": {' * 3000 + "}" * 3001
    assert proof_of_json_answer(deep_object) == deep_object  # not a proof object: the answer as it is
    assert find_assessment('{"confidence": ' + "[" * 3000)[0] is None
    assert isinstance(parse_lemma_list("[" * 3000 + '[{"id": "L1", "statement": "S."}]'), list)  # no RecursionError
