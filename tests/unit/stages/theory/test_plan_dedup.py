"""Lemma plans without duplicates (issue 21, item 5).

The small embedded model (Qwen2.5-Coder-1.5B) planned "Prove that the sum of two even integers
is even." with ten lemmas, five of them one statement with renamed variables and two the goal
itself. Copies are merged into their first occurrence, goal restatements dropped, dependencies
rewired; a full plan left with fewer than 4 lemmas is simplified, one left with none is the
single goal. Statements are the same only when their canonical forms are equal.
"""

from __future__ import annotations

import difflib
import json

import pytest

from lemmata.artifacts import Lemma
from lemmata.llm.base import ChatRequest
from lemmata.stages.theory.plan import MAIN_RESULT, plan_theory
from lemmata.stages.theory.plan_dedup import deduplicate_lemmas, normalise_statement
from support.scripted_backend import scripted_client

GOAL = "Prove that the sum of two even integers is even."
FORMAL = "$\\forall a, b \\in \\mathbb{Z}: 2 \\mid a \\wedge 2 \\mid b \\Rightarrow 2 \\mid a + b$"

# The embedded model's plan: L3, L5, L7, L8, L9 are one statement, L4 and L10 are the goal.
EMBEDDED_PLAN = [
    Lemma(id="L1", statement="An integer $n$ is even if and only if $n = 2k$ for some integer $k$."),
    Lemma(
        id="L2", statement="If $a = 2k$ and $b = 2l$ for integers $k, l$, then $a + b = 2(k + l)$.", depends_on=["L1"]
    ),
    Lemma(id="L3", statement="If $a$ and $b$ are even integers then $a+b$ is even.", depends_on=["L1", "L2"]),
    Lemma(id="L4", statement="The sum of two even integers is even.", depends_on=["L3"]),
    Lemma(id="L5", statement="For even integers $x, y$, the sum $x + y$ is even.", depends_on=["L3"]),
    Lemma(id="L6", statement="The sum $k + l$ of two integers is an integer.", depends_on=["L4", "L5"]),
    Lemma(id="L7", statement="Let m and n be even. Then m+n is even.", depends_on=["L5", "L6"]),
    Lemma(id="L8", statement="For all even integers $a$ and $b$, $a + b$ is even.", depends_on=["L7"]),
    Lemma(id="L9", statement="If $p$ and $q$ are even integers, then $p + q$ is even.", depends_on=["L8", "L2"]),
    Lemma(id="L10", statement="Prove that the sum of two even integers is even.", depends_on=["L9", "L6", "L4"]),
]
EMBEDDED_NOTE = (
    "merged L5, L7, L8, L9 into L3 (same statement up to renamed variables); dropped L4, L10 (restate the goal)"
)
DEDUPLICATED_PLAN = [
    EMBEDDED_PLAN[0],
    EMBEDDED_PLAN[1],
    EMBEDDED_PLAN[2],
    EMBEDDED_PLAN[5].model_copy(update={"depends_on": ["L3"]}),  # L4 was the goal, L5 a copy of L3
]


def plan_answer(lemmas: list[Lemma]) -> str:
    items = [lemma.model_dump(exclude={"approach"}) for lemma in lemmas]
    return "```json\n" + json.dumps({"lemmas": items}) + "\n```"


def user_text(request: ChatRequest) -> str:
    return request.messages[-1].content


def lemmas_of(*statements: str) -> list[Lemma]:
    return [Lemma(id=f"L{i}", statement=statement) for i, statement in enumerate(statements, start=1)]


# =========================================================================== normalise_statement


@pytest.mark.parametrize(
    "statement, canonical",
    [
        pytest.param(
            "If $a$ and $b$ are even integers then $a+b$ is even.",
            "#1 #2 even #1 + #2 even",
            id="hypothesis-then-conclusion",
        ),
        pytest.param(
            "For even integers $x, y$, the sum $x + y$ is even.",
            "#1 #2 even #1 + #2 even",
            id="for-declaration-put-variables-first",
        ),
        pytest.param(
            "Prove that the sum of two even integers is even.",
            "sum of two even even",
            id="prove-that-article-plural-dropped",
        ),
        pytest.param("$x^{2} \\geq 0$", "#1 ^ 2 \\ge 0", id="single-token-braces-and-leq-synonym"),
        pytest.param("$\\left(x\\right)^2\\,\\ge\\ 0$", "( #1 ) ^ 2 \\ge 0", id="sizing-and-spacing-commands"),
        pytest.param("$f(x) \\ge \\sin x$", "f ( #1 ) \\ge \\sin #1", id="function-names-kept"),
        pytest.param("$n(n+1)$ is even", "#1 ( #1 + 1 ) even", id="letter-also-used-alone-is-a-variable"),
        pytest.param("$\\operatorname{gcd}(a, b) = 1$", "\\gcd ( #1 #2 ) = 1", id="operatorname-as-command"),
        pytest.param(
            "$a_{1} + a_2' \\in \\mathbb Z$", "#1 _ 1 + #1 _ 2 ' \\in \\mathbb{Z}", id="subscripts-primes-named-sets"
        ),
        pytest.param("For a prime $p$, $p \\mid ab$.", "#1 prime #1 \\mid ab", id="article-dropped-words-kept"),
        pytest.param("If $a$ divides $b$, then $a \\le b$.", "#1 divide #2 #1 \\le #2", id="variable-a-kept"),
        pytest.param("∀ ε > 0 ∃ δ > 0", "#1 > 0 exists #2 > 0", id="unicode-quantifiers-and-greek"),
    ],
)
def test_canonical_form(statement: str, canonical: str) -> None:
    assert normalise_statement(statement) == canonical


def test_variables_can_be_left_unrenamed() -> None:
    as_written = normalise_statement("Let m and n be even. Then m+n is even.", rename_variables=False)
    assert as_written == "m n even m + n even"


@pytest.mark.parametrize(
    "first, second",
    [
        pytest.param(
            "If $a$ and $b$ are even then $a+b$ is even.",
            "If $x$ and $y$ are even then $x+y$ is even.",
            id="renamed-variables",
        ),
        pytest.param(
            "If $a$ and $b$ are even integers then $a+b$ is even.",
            "Let m and n be even. Then m+n is even.",
            id="let-then-and-even-integers",
        ),
        pytest.param(
            "For all even integers $a$ and $b$, $a + b$ is even.",
            "If $p$ and $q$ are even integers, then $p + q$ is even.",
            id="for-all-declaration",
        ),
        pytest.param("$x^{2} \\geq 0$.", "\\(y^2\\,\\ge\\ 0\\)", id="latex-delimiters-and-spacing"),
        pytest.param("$n \\leq m$ for $n, m \\in \\mathbb{N}$", "n ≤ m for n, m ∈ ℕ", id="unicode-symbols"),
        pytest.param(
            "THE SUM OF TWO EVEN INTEGERS IS EVEN!", "the sum of two even integers is even", id="case-and-punctuation"
        ),
        pytest.param("Show that $3 \\mid n^3 - n$.", "We have $3 \\mid k^3 - k$.", id="show-that-we-have"),
        pytest.param("$a_1 + a_2 = a_2 + a_1$", "$b_{1}+b_{2}=b_{2}+b_{1}$", id="subscripted-variables"),
        pytest.param(
            "For every $\\varepsilon > 0$ there is $N$ with $1/N < \\varepsilon$.",
            "For all $\\delta > 0$ there exists $M$ with $1/M < \\delta$.",
            id="greek-variables",
        ),
        pytest.param("$f(x) \\ge 0$", "$f(t) \\geq 0$", id="function-argument-renamed"),
        pytest.param("$n(n+1)$ is even.", "The product $m(m+1)$ is even.", id="apposition-noun"),
        pytest.param("$\\gcd(a, b) = 1$", "$\\operatorname{gcd}(x,y)=1$", id="operatorname"),
        pytest.param("For a prime $p$, $p \\ge 2$.", "Let $p$ be a prime. Then $p \\geq 2$.", id="article"),
    ],
)
def test_same_statement_same_form(first: str, second: str) -> None:
    assert normalise_statement(first) == normalise_statement(second)


@pytest.mark.parametrize(
    "first, second",
    [
        pytest.param(
            "If $a$ and $b$ are even then $a+b$ is even.",
            "If $a$ and $b$ are even then $a \\cdot b$ is even.",
            id="sum-vs-product",
        ),
        pytest.param("$a \\le b$", "$a < b$", id="le-vs-lt"),
        pytest.param(
            "If $a$ and $b$ are even then $a+b$ is even.",
            "If $a$ and $b$ are odd then $a+b$ is even.",
            id="even-vs-odd",
        ),
        pytest.param(
            "If $a$ and $b$ are even integers then $a+b$ is even.",
            "If $a$ and $b$ are even and positive integers then $a+b$ is even.",
            id="added-hypothesis",
        ),
        pytest.param(
            "If $a$ and $b$ are even then $a+b$ is even.",
            "If $a$ and $b$ are even and $a > b$ then $a+b$ is even.",
            id="added-inequality-hypothesis",
        ),
        pytest.param("Statement 1.", "Statement 2.", id="different-numbers"),
        pytest.param("$n^2 \\ge n$", "$n^3 \\ge n$", id="different-exponent"),
        pytest.param("$a + b$ is even", "$a + a$ is even", id="two-variables-vs-one"),
        pytest.param("$a_1 + a_2 = 0$", "$a_1 + b_2 = 0$", id="one-sequence-vs-two"),
        pytest.param("$f(x) \\ge 0$", "$g(x) \\ge 0$", id="function-names-not-renamed"),
        pytest.param("$\\sin x \\le 1$", "$\\cos x \\le 1$", id="sin-vs-cos"),
        pytest.param("$\\gcd(a, b) = 1$", "$\\operatorname{lcm}(a, b) = 1$", id="gcd-vs-lcm"),
        pytest.param("$x \\in \\mathbb{Z}$", "$x \\in \\mathbb{N}$", id="named-sets-not-renamed"),
        pytest.param("$a$ is even or $b$ is even", "$a$ is even and $b$ is even", id="or-vs-and"),
        pytest.param("$n$ is even if and only if $n^2$ is even", "If $n$ is even then $n^2$ is even", id="iff-vs-if"),
        pytest.param("$n$ is even", "$n$ is not even", id="negation"),
        pytest.param("${a+b}^2 \\ge 0$", "$a+b^2 \\ge 0$", id="braces-around-more-than-one-token"),
        pytest.param("$n = 2k$ for some integer $k$", "$n = 2k$ for every integer $k$", id="some-vs-every"),
        pytest.param(
            "For every integer $n \\ge 1$, $n^2 \\ge n$.",
            "For every $n \\ge 1$, $n^2 \\ge n$.",
            id="type-of-a-variable-is-not-an-apposition",
        ),
    ],
)
def test_different_statements_different_forms(first: str, second: str) -> None:
    assert normalise_statement(first) != normalise_statement(second)
    # Both ways in one plan: the different statement stays, a verbatim copy of the first merges.
    result = deduplicate_lemmas(lemmas_of(first, second, first), goal_statements=[])
    assert [lemma.id for lemma in result.lemmas] == ["L1", "L2"]
    assert result.in_words() == "merged L3 into L1 (same statement up to wording)"


def test_no_similarity_threshold_could_tell_copies_from_different_statements() -> None:
    copy_one = "If $a$ and $b$ are even integers then $a+b$ is even."
    copy_two = "For even integers $x, y$, the sum $x + y$ is even."
    product = "If $a$ and $b$ are even integers then $a \\cdot b$ is even."
    # Why equality and not a ratio: as text, the copies are far less alike (0.63) than the
    # different statements (0.93),
    assert difflib.SequenceMatcher(None, copy_one, copy_two).ratio() < 0.65
    assert difflib.SequenceMatcher(None, copy_one, product).ratio() > 0.9
    # and the canonical forms of the different statements differ by one token of seven.
    forms = [normalise_statement(statement).split() for statement in (copy_one, product)]
    assert difflib.SequenceMatcher(None, *forms).ratio() > 0.85
    result = deduplicate_lemmas(lemmas_of(copy_one, copy_two, product), goal_statements=[])
    assert [lemma.id for lemma in result.lemmas] == ["L1", "L3"]


# =========================================================================== deduplicate_lemmas


def test_the_embedded_plan_loses_its_copies_and_goal_restatements() -> None:
    result = deduplicate_lemmas(EMBEDDED_PLAN, goal_statements=[GOAL, FORMAL])
    assert result.lemmas == DEDUPLICATED_PLAN
    assert result.in_words() == EMBEDDED_NOTE


@pytest.mark.parametrize(
    "lemmas, expected",
    [
        pytest.param(
            [
                Lemma(id="L1", statement="$a \\mid a$"),
                Lemma(id="L2", statement="$x \\mid x$"),
                Lemma(id="L3", statement="$a \\mid 0$", depends_on=["L2"]),
            ],
            {"L1": [], "L3": ["L1"]},
            id="dependency-on-a-copy-rewired-to-the-kept",
        ),
        pytest.param(
            [
                Lemma(id="L1", statement="$a \\mid a$"),
                Lemma(id="L2", statement="$a \\mid 0$"),
                Lemma(id="L3", statement="$y \\mid y$"),
                Lemma(id="L4", statement="$a \\mid a^2$", depends_on=["L3", "L2", "L1"]),
            ],
            {"L1": [], "L2": [], "L4": ["L1", "L2"]},
            id="duplicate-dependencies-collapsed-order-kept",
        ),
        pytest.param(
            [Lemma(id="L1", statement="$a \\mid a$", depends_on=["L2"]), Lemma(id="L2", statement="$b \\mid b$")],
            {"L1": []},
            id="dependency-on-own-copy-removed",
        ),
        pytest.param(
            [
                Lemma(id="L1", statement="The sum of two even integers is even."),
                Lemma(id="L2", statement="$a \\mid 0$", depends_on=["L1"]),
            ],
            {"L2": []},
            id="dependency-on-the-goal-removed",
        ),
        pytest.param(
            [
                Lemma(id="L1", statement="$a \\mid a$"),
                Lemma(id="L2", statement="$a \\mid 0$"),
                Lemma(id="L3", statement="$b \\mid b$"),
                Lemma(id="L4", statement="$a \\mid 0$ and $a \\mid a$", depends_on=["L2", "L3"]),
            ],
            {"L1": [], "L2": [], "L4": ["L2", "L1"]},
            id="only-the-dependency-on-a-copy-rewired",
        ),
    ],
)
def test_dependencies_follow_the_kept_lemma(lemmas: list[Lemma], expected: dict[str, list[str]]) -> None:
    result = deduplicate_lemmas(lemmas, goal_statements=[GOAL])
    assert {lemma.id: lemma.depends_on for lemma in result.lemmas} == expected


@pytest.mark.parametrize(
    "statements, note",
    [
        pytest.param(
            ["$a \\mid a$", "$b \\mid b$"], "merged L2 into L1 (same statement up to renamed variables)", id="renamed"
        ),
        pytest.param(
            ["Let $a$ be even.", "$a$ is even"], "merged L2 into L1 (same statement up to wording)", id="reworded"
        ),
        pytest.param(
            ["The sum of two even integers is even.", "$a \\mid a$"],
            "dropped L1 (restates the goal)",
            id="one-restatement",
        ),
        pytest.param(
            ["$x, y \\in \\mathbb{Z}$: $2 \\mid x \\wedge 2 \\mid y \\Rightarrow 2 \\mid x + y$", "$a \\mid a$"],
            "dropped L1 (restates the goal)",
            id="restates-the-formal-statement",
        ),
    ],
)
def test_the_note_says_what_was_merged_and_dropped(statements: list[str], note: str) -> None:
    result = deduplicate_lemmas(lemmas_of(*statements), goal_statements=[GOAL, FORMAL])
    assert result.in_words() == note
    assert result.changed


def test_a_statement_of_filler_words_only_is_not_a_copy_of_another() -> None:
    result = deduplicate_lemmas(lemmas_of("Let.", "Then.", "$a \\mid a$", "$b \\mid b$"), goal_statements=[GOAL])
    assert normalise_statement("Let.") == normalise_statement("Then.") == ""
    assert [lemma.id for lemma in result.lemmas] == ["L1", "L2", "L3"]


# =========================================================================== plan_theory


def test_the_embedded_plan_through_plan_theory() -> None:
    client, backend = scripted_client({"decomposer": [plan_answer(EMBEDDED_PLAN)], "architect": ["The plan is sound."]})
    plan = plan_theory(client, GOAL, formal_statement=FORMAL)
    assert plan.level == "full"  # four distinct lemmas are still a full plan
    assert plan.lemmas == DEDUPLICATED_PLAN
    assert plan.dedup_note == f"decomposer's plan: {EMBEDDED_NOTE}"
    assert plan.architect_note == "answer unusable: the decomposer's plan is kept"
    # The architect reviewed the plan without its copies.
    shown = user_text(backend.calls("architect")[0])
    assert "the sum $x + y$" not in shown and '"id": "L6"' in shown


def test_copies_the_architect_reintroduces_are_merged_again() -> None:
    reintroduced = Lemma(id="L7", statement="Suppose $u$ and $v$ are even. Then $u + v$ is even.", depends_on=["L3"])
    assert normalise_statement(reintroduced.statement) == normalise_statement(EMBEDDED_PLAN[2].statement)
    dependent = Lemma(id="L8", statement="$2 \\mid a + b$ for even $a$ and $b$.", depends_on=["L7", "L6"])
    client, _ = scripted_client(
        {
            "decomposer": [plan_answer(EMBEDDED_PLAN)],
            "architect": [plan_answer([*DEDUPLICATED_PLAN, reintroduced, dependent])],
        }
    )
    plan = plan_theory(client, GOAL, formal_statement=FORMAL)
    assert [lemma.id for lemma in plan.lemmas] == ["L1", "L2", "L3", "L6", "L8"]
    assert plan.lemma("L8").depends_on == ["L3", "L6"]
    assert plan.dedup_note == (
        f"decomposer's plan: {EMBEDDED_NOTE}. "
        "architect's plan: merged L7 into L3 (same statement up to renamed variables)"
    )
    assert plan.architect_note.startswith("applied:")


def test_a_full_plan_left_with_three_lemmas_is_simplified() -> None:
    statements = ["$a \\mid a$", "$b \\mid b$", "$a \\mid 0$", "$1 \\mid a$", "$x \\mid 0$"]
    client, backend = scripted_client(
        {"decomposer": [plan_answer(lemmas_of(*statements))], "architect": [plan_answer(lemmas_of(*statements[:4]))]}
    )
    plan = plan_theory(client, GOAL)
    assert plan.level == "simplified"
    assert [lemma.statement for lemma in plan.lemmas] == ["$a \\mid a$", "$a \\mid 0$", "$1 \\mid a$"]
    assert plan.dedup_note == (
        "decomposer's plan: merged L2 into L1 (same statement up to renamed variables); "
        "merged L5 into L3 (same statement up to renamed variables); "
        "3 distinct lemmas are a simplified plan, not a full one (4 to 10)"
    )
    # The architect is held to the simplified plan's size: its four lemmas are refused.
    assert plan.architect_note == "proposed 4 lemmas, outside 1-3: the decomposer's plan is kept"
    assert len(backend.calls("decomposer")) == 1


def test_a_plan_of_goal_restatements_is_the_single_goal() -> None:
    statements = [
        "The sum of two even integers is even.",
        "Show that the sum of two even integers is even.",
        "A sum of two even integers is even.",
        "For all $x, y \\in \\mathbb{Z}$: $2 \\mid x \\wedge 2 \\mid y \\Rightarrow 2 \\mid x + y$.",
    ]
    client, backend = scripted_client({"decomposer": [plan_answer(lemmas_of(*statements))]})
    plan = plan_theory(client, GOAL, formal_statement=FORMAL)
    assert plan.level == "single_goal"
    assert plan.lemmas == [Lemma(id=MAIN_RESULT, statement=FORMAL)]
    assert plan.dedup_note == (
        "decomposer's plan: dropped L1, L2, L3, L4 (restate the goal); "
        "no lemma left: the plan is the single goal main_result"
    )
    assert plan.architect_note == "not consulted: the plan is the single goal"
    assert backend.calls("architect") == []


def test_a_simplified_plan_keeps_its_level_with_fewer_lemmas() -> None:
    client, _ = scripted_client(
        {
            "decomposer": ["no plan", plan_answer(lemmas_of("$a \\mid a$", "$c \\mid c$", "$a \\mid 0$"))],
            "architect": ["Looks right."],
        }
    )
    plan = plan_theory(client, GOAL)
    assert plan.level == "simplified"
    assert [lemma.id for lemma in plan.lemmas] == ["L1", "L3"]
    assert plan.dedup_note == "decomposer's plan: merged L2 into L1 (same statement up to renamed variables)"
