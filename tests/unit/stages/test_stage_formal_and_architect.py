"""The formalizer (re-run only when its input changed) and the proof architect.

Spec, theory stage: lemma-list parsing in the decomposer AND the proof architect tries four
passes (fenced JSON, first object with a list key, first array, text list); a null `source` in
an architect item is an empty string; the formalizer is re-run only when its input changed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lemmata.artifacts import Formalization, FormalSpec, FormalVariable
from lemmata.formal.faithfulness import CIRCULAR, ONE_DIRECTION
from lemmata.stages.formal.formalize import both_directions_hint, formal_check, formalization, formalize
from lemmata.stages.theory.plan import plan_theory
from support import DATA
from support.scripted_backend import scripted_client

GOAL = "The sum of two even integers is even."
FORMAL = "$\\forall a, b \\in \\mathbb{Z}: 2 \\mid a \\wedge 2 \\mid b \\Rightarrow 2 \\mid a + b$"


def decomposer_plan(count: int = 4) -> str:
    lemmas = [
        {"id": f"L{i}", "statement": f"Statement {i}.", "depends_on": [f"L{i - 1}"] if i > 1 else [], "source": ""}
        for i in range(1, count + 1)
    ]
    return "```json\n" + json.dumps({"lemmas": lemmas}) + "\n```"


def user_text(request) -> str:
    return request.messages[-1].content


# =========================================================================== formalizer

EVEN_SUM = {
    "variables": [{"name": "a", "type": "integer"}, {"name": "b", "type": "integer"}],
    "hypotheses": ["a % 2 == 0", "b % 2 == 0"],
    "conclusion": "(a + b) % 2 == 0",
}


def formal_answer(statement: str = FORMAL, **spec: object) -> str:
    return json.dumps({"formal_statement": statement, **EVEN_SUM, "not_formalizable_because": "", **spec})


def test_formalizer_states_the_goal_formally_and_the_machines_check_it(tmp_path: Path) -> None:
    client, backend = scripted_client({"formalizer": [formal_answer()]})
    formal = formalize(client, GOAL, tmp_path)
    assert formal.formal_statement == FORMAL
    assert formal.goal == GOAL
    assert backend.calls("formalizer")[0].json_schema is not None
    assert formal.check is not None and formal.check.spec is not None
    assert formal.check.text == "∀ a, b ∈ ℤ: a mod 2 = 0 ∧ b mod 2 = 0 ⇒ (a + b) mod 2 = 0"
    assert formal.check.verdict == "machine_checked"
    assert {check.checker for check in formal.check.proofs} >= {"z3"}


def test_formalizer_is_not_asked_again_for_the_same_input(tmp_path: Path) -> None:
    client, backend = scripted_client({"formalizer": [formal_answer()]})
    first = formalization(client, GOAL, tmp_path)
    again = formalization(client, GOAL, tmp_path)
    assert again == first
    assert len(backend.calls("formalizer")) == 1


def test_formalizer_is_asked_again_when_the_goal_changed(tmp_path: Path) -> None:
    changed = formal_answer(
        "$\\forall n: n + 0 = n$", variables=[{"name": "n", "type": "integer"}], hypotheses=[], conclusion="n + 0 == n"
    )
    client, backend = scripted_client({"formalizer": [formal_answer(), changed]})
    formalization(client, GOAL, tmp_path)
    record = formalization(client, "For every integer $n$, $n + 0 = n$.", tmp_path)
    assert record.restatement == "$\\forall n: n + 0 = n$"
    assert len(backend.calls("formalizer")) == 2


def test_a_corrupt_cache_entry_is_asked_again_not_trusted(tmp_path: Path) -> None:
    client, backend = scripted_client({"formalizer": [formal_answer(), formal_answer()]})
    formalization(client, GOAL, tmp_path)
    [entry] = tmp_path.glob("*.json")
    entry.write_text('{"goal": "truncated', encoding="utf-8")
    assert formalization(client, GOAL, tmp_path).restatement == FORMAL
    assert len(backend.calls("formalizer")) == 2
    Formalization.model_validate_json(entry.read_text(encoding="utf-8"))  # repaired


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param("The goal is already formal.", id="prose"),
        pytest.param('{"assumptions": []}', id="no-formal-fields"),
    ],
)
def test_an_unusable_formalizer_answer_is_asked_again_then_keeps_the_goal_and_says_so(
    tmp_path: Path, answer: str
) -> None:
    client, backend = scripted_client({"formalizer": [answer, answer]})
    formal = formalize(client, GOAL, tmp_path)
    assert formal.formal_statement == GOAL
    assert len(backend.calls("formalizer")) == 2
    assert "Answer again" in user_text(backend.calls("formalizer")[1])
    assert formal.check is not None and formal.check.verdict == "unverified" and formal.check.not_formalized
    assert formal.note.startswith("not formalized:")


def test_a_formalization_that_drops_a_number_of_the_prose_is_refused_and_asked_again(tmp_path: Path) -> None:
    """A model that knows the answer writes it instead of the statement's number (the false twin of
    "Show that it is 218" formalized as `== 217`): refused, asked again with the reason."""
    prose = "Given that $x+y = 7$ and $3x+y = 45$, show that $x^2-y^2 = 218$."
    reals = [{"name": "x", "type": "real"}, {"name": "y", "type": "real"}]
    wrong = formal_answer(
        prose, variables=reals, hypotheses=["x + y == 7", "3*x + y == 45"], conclusion="x**2 - y**2 == 217"
    )
    client, backend = scripted_client({"formalizer": [wrong, wrong]})
    record = formalization(client, prose, tmp_path)
    assert "leaves out 218" in record.not_formalized
    assert "leaves out 218" in user_text(backend.calls("formalizer")[1])
    check = formal_check(record)
    assert check.verdict == "unverified" and check.checks == [] and check.spec is not None


def test_a_statement_the_formalizer_cannot_write_keeps_the_model_checks_and_says_why(tmp_path: Path) -> None:
    answer = formal_answer(
        "regret", variables=[], hypotheses=[], conclusion="", not_formalizable_because="an asymptotic bound"
    )
    client, backend = scripted_client({"formalizer": [answer]})
    record = formalization(client, "The regret of UCB is $O(\\sqrt{T \\log T})$.", tmp_path)
    assert record.spec is None and record.not_formalized == "an asymptotic bound"
    assert len(backend.calls("formalizer")) == 1  # it said why: not asked again
    assert formal_check(record).verdict == "unverified"


def test_the_formal_statement_reaches_the_decomposer_and_the_architect() -> None:
    client, backend = scripted_client({"decomposer": [decomposer_plan()], "architect": ["fine"]})
    plan = plan_theory(client, GOAL, formal_statement=FORMAL)
    assert plan.formal_statement == FORMAL
    assert f"Formal statement: {FORMAL}" in user_text(backend.calls("decomposer")[0])
    assert f"Formal statement: {FORMAL}" in user_text(backend.calls("architect")[0])


# =========================================================================== proof architect

ARCHITECT_LEMMAS = [
    {
        "id": "L1",
        "statement": "Statement 1, with $n \\in \\mathbb{Z}$.",
        "depends_on": [],
        "source": None,
        "approach": "Unfold the definition.",
    },
    {
        "id": "L2",
        "statement": "Statement 2.",
        "depends_on": ["L1"],
        "source": "Euclid, Elements VII",
        "approach": "Cite [L1].",
    },
    {"id": "L3", "statement": "Statement 3.", "depends_on": [], "source": None, "approach": ""},
    {"id": "L4", "statement": "Statement 4.", "depends_on": ["L2", "L3"], "source": "", "approach": "Combine."},
]


def _numbered_prose() -> str:
    lines = [f"{i}. {item['statement']}" for i, item in enumerate(ARCHITECT_LEMMAS, start=1)]
    return "Here is the reviewed plan:\n" + "\n".join(lines) + "\nEach step is elementary."


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param("Reviewed.\n```json\n" + json.dumps({"lemmas": ARCHITECT_LEMMAS}) + "\n```", id="json-fence"),
        pytest.param("```\n" + json.dumps({"proof_steps": ARCHITECT_LEMMAS}) + "\n```", id="plain-fence-proof_steps"),
        pytest.param(
            "My review: " + json.dumps({"components": ARCHITECT_LEMMAS}) + " Done.", id="bare-object-components"
        ),
        pytest.param("The lemmas:\n" + json.dumps(ARCHITECT_LEMMAS, indent=2), id="bare-array"),
    ],
)
def test_architect_answers_are_read_in_the_json_passes(answer: str) -> None:
    client, _ = scripted_client({"decomposer": [decomposer_plan()], "architect": [answer]})
    plan = plan_theory(client, GOAL)
    assert [lemma.statement for lemma in plan.lemmas] == [item["statement"] for item in ARCHITECT_LEMMAS]
    assert [lemma.source for lemma in plan.lemmas] == ["", "Euclid, Elements VII", "", ""]  # null -> ""
    assert [lemma.depends_on for lemma in plan.lemmas] == [[], ["L1"], [], ["L2", "L3"]]
    assert plan.lemmas[1].approach == "Cite [L1]."
    assert plan.architect_note == "applied: changed L1, L2, L3, L4; routes suggested for 3 of 4 lemmas"


def test_architect_text_list_is_read_by_the_fourth_pass() -> None:
    client, _ = scripted_client({"decomposer": [decomposer_plan()], "architect": [_numbered_prose()]})
    plan = plan_theory(client, GOAL)
    assert [lemma.id for lemma in plan.lemmas] == ["L1", "L2", "L3", "L4"]
    assert plan.lemmas[0].statement == "Statement 1, with $n \\in \\mathbb{Z}$."
    assert all(lemma.depends_on == [] for lemma in plan.lemmas)


@pytest.mark.parametrize(
    "alternative",
    [
        pytest.param(
            {"lemma_id": "L1", "formal_statement": "S1.", "strategy": "Direct."},
            id="lemma_id-formal_statement-strategy",
        ),
        pytest.param({"name": "L1", "hypothesis": "S1.", "proof_idea": "Direct."}, id="name-hypothesis-proof_idea"),
        pytest.param({"title": "L1", "content": "S1.", "method": "Direct."}, id="title-content-method"),
    ],
)
def test_architect_items_with_alternative_field_names(alternative: dict[str, str]) -> None:
    items = [alternative] + ARCHITECT_LEMMAS[1:]
    client, _ = scripted_client({"decomposer": [decomposer_plan()], "architect": [json.dumps({"lemmas": items})]})
    plan = plan_theory(client, GOAL)
    assert (plan.lemmas[0].id, plan.lemmas[0].statement, plan.lemmas[0].approach) == ("L1", "S1.", "Direct.")


@pytest.mark.parametrize(
    "answer, reason",
    [
        pytest.param("The plan looks right to me.", "answer unusable", id="no-list-at-all"),
        pytest.param(json.dumps({"lemmas": ARCHITECT_LEMMAS[:2]}), "proposed 2 lemmas, outside 4-10", id="too-few"),
        pytest.param(json.dumps({"lemmas": ARCHITECT_LEMMAS * 3}), "proposed 12 lemmas, outside 4-10", id="too-many"),
    ],
)
def test_an_unusable_architect_answer_keeps_the_decomposer_plan(answer: str, reason: str) -> None:
    client, _ = scripted_client({"decomposer": [decomposer_plan()], "architect": [answer]})
    plan = plan_theory(client, GOAL)
    assert [lemma.statement for lemma in plan.lemmas] == [f"Statement {i}." for i in range(1, 5)]
    assert plan.architect_note.startswith(reason)


def test_the_simplified_plan_is_architected_within_three_lemmas() -> None:
    client, _ = scripted_client(
        {"decomposer": ["no plan", decomposer_plan(3)], "architect": [json.dumps({"lemmas": ARCHITECT_LEMMAS})]}
    )
    plan = plan_theory(client, GOAL)
    assert plan.level == "simplified"
    assert plan.architect_note == "proposed 4 lemmas, outside 1-3: the decomposer's plan is kept"


def test_the_single_goal_is_not_sent_to_the_architect() -> None:
    client, backend = scripted_client({"decomposer": ["no plan", "still none"]})
    plan = plan_theory(client, GOAL, formal_statement=FORMAL)
    assert plan.level == "single_goal"
    assert plan.lemmas[0].statement == FORMAL  # the most precise statement of the goal we have
    assert backend.calls("architect") == []


def test_feedback_reaches_the_architect() -> None:
    client, backend = scripted_client({"decomposer": [decomposer_plan()], "architect": ["fine"]})
    plan_theory(client, GOAL, feedback="L3 is too strong")
    assert "Reviewer feedback to take into account: L3 is too strong" in user_text(backend.calls("architect")[0])


def test_latex_backslashes_in_the_formalizers_json_are_kept(tmp_path: Path) -> None:
    """miniF2F's mathd_algebra_89 (the embedded model, 2026-11-26): `\\frac{49}{64}` written with one
    backslash inside a JSON string read as a form feed and "rac{49}{64}", and the answer was refused."""
    prose = "Simplify $(7b^3)^2 \\cdot (4b^2)^{-3},$ given that $b$ is non-zero. Show that it is \\frac{49}{64}."
    answer = (
        '{"formal_statement": "", "variables": [{"name": "b", "type": "real"}], "hypotheses": ["b != 0"], '
        '"conclusion": "(7b^3)^2 \\times (4b^2)^{-3} = \\frac{49}{64}", "not_formalizable_because": ""}'
    )
    client, backend = scripted_client({"formalizer": [answer]})
    record = formalization(client, prose, tmp_path)
    assert record.spec is not None and record.not_formalized == "" and len(backend.calls("formalizer")) == 1
    check = formal_check(record)
    assert check.verdict == "machine_checked", check.checks


def test_a_hypothesis_that_only_types_variables_becomes_their_domain(tmp_path: Path) -> None:
    """The embedded model wrote "x, y, and z are positive reals" as a hypothesis (miniF2F, 2026-11-26)."""
    answer = formal_answer(
        "x y z",
        variables=[{"name": "x", "type": "real"}],
        hypotheses=["x, y, and z are positive reals", "n is a natural number", "x + y + z == 1"],
        conclusion="x*y*z + n >= 0",
    )
    client, _ = scripted_client({"formalizer": [answer]})
    record = formalization(client, "For positive reals $x, y, z$ with $x + y + z = 1$ and a natural $n$, ...", tmp_path)
    assert record.spec is not None and record.spec.hypotheses == ["x + y + z == 1"]
    assert [(v.name, v.type) for v in record.spec.variables] == [
        ("x", "positive real"),
        ("y", "positive real"),
        ("z", "positive real"),
        ("n", "natural"),
    ]


def test_the_second_answer_is_asked_with_the_first_and_why_it_was_refused(tmp_path: Path) -> None:
    wrong = formal_answer("", hypotheses=["a % 2 == 0", "b is a multiple of two"])
    client, backend = scripted_client({"formalizer": [wrong, formal_answer()]})
    record = formalization(client, GOAL, tmp_path)
    assert record.spec is not None and record.attempts == 2
    retry = user_text(backend.calls("formalizer")[1])
    assert "Your previous answer:\n{" in retry and '"b is a multiple of two"' in retry
    assert "It was refused: a hypothesis: 'b is a multiple of two'" in retry


def test_a_circular_statement_is_refused_without_asking_again(tmp_path: Path) -> None:
    """L1 of the README's main command restated the definition of even ("An integer is even if it
    can be written as 2k for some integer k"): read, its conclusion is its hypothesis. Asked again,
    the embedded formalizer answered with the conclusion negated, `x is not even` (2026-11-29),
    a statement sampling would "refute". So the refusal stands, and says why."""
    prose = "An integer is even if it can be written as 2k for some integer k."
    recorded = (DATA / "embedded_outputs" / "formalizer-multiple-for-some-integer.txt").read_text(encoding="utf-8")
    negated = recorded.replace('"x is even"', '"x is not even"')
    client, backend = scripted_client({"formalizer": [recorded, negated]})
    record = formalization(client, prose, tmp_path)
    assert len(backend.calls("formalizer")) == 1
    assert record.not_formalized == "the formal statement was refused: " + CIRCULAR and record.attempts == 1
    assert formal_check(record).verdict == "unverified"


def test_a_claimed_equivalence_written_as_one_direction_is_handed_back_joined_by_iff(tmp_path: Path) -> None:
    """`lemmata check` of the writer's false Preliminaries claim (the README's main command,
    2026-11-29): the embedded formalizer wrote one direction, and wrote it again after being told
    to write both, so the claim stayed unformalized though a = 0, b = 1 refutes it. The second ask
    now hands back the two sides joined by iff(...). The embedded formalizer then wrote them so,
    but with no variables: its first answer's declarations hold. Written so, the claim is refuted."""
    prose = "The sum of two integers is even if and only if at least one of them is even."
    one_direction = (DATA / "embedded_outputs" / "formalizer-iff-as-one-direction.txt").read_text(encoding="utf-8")
    joined = (DATA / "embedded_outputs" / "formalizer-iff-joined-without-variables.txt").read_text(encoding="utf-8")
    assert json.loads(joined)["variables"] == []
    client, backend = scripted_client({"formalizer": [one_direction, joined]})
    record = formalization(client, prose, tmp_path)
    retry = user_text(backend.calls("formalizer")[1])
    assert f"It was refused: {ONE_DIRECTION}." in retry
    assert (
        "Keep your variables as they are, write no hypotheses, and write the conclusion "
        "iff(a % 2 == 0 or b % 2 == 0, (a + b) % 2 == 0)." in retry
    )
    assert record.spec is not None and [v.name for v in record.spec.variables] == ["a", "b"]
    check = formal_check(record)
    assert check.verdict == "refuted" and check.refutation is not None and check.refutation.counterexample


@pytest.mark.parametrize(
    "prose, hypotheses, hinted",
    [
        pytest.param("For all reals a and b, a^2 + b^2 = 2ab if and only if a = b.", ["a == b"], True, id="claim"),
        pytest.param("n is even exactly when n^2 is even.", ["n % 2 == 0"], True, id="exactly-when"),
        pytest.param(
            "For every positive integer n, n is even iff n^2 is even.",
            ["n > 0", "n % 2 == 0"],
            False,
            id="a-domain-among-the-hypotheses",
        ),
        pytest.param(
            "For every positive integer n, n^2 + n is even iff n = n.", ["n > 0"], False, id="a-bound-is-no-side"
        ),
        pytest.param(
            "Let n be an integer such that n is even iff m is odd. Then n + m is odd.",
            ["n % 2 == 0"],
            False,
            id="equivalence-among-the-conditions",
        ),
        pytest.param("If x > 0 then x^2 > 1 iff x > 1.", ["x > 1"], False, id="a-condition-beside-it"),
        pytest.param("a = b if and only if a - b = 0.", [], False, id="no-hypothesis-to-join"),
    ],
)
def test_the_iff_hint_is_given_only_for_an_equivalence_that_is_the_whole_claim(
    prose: str, hypotheses: list[str], hinted: bool
) -> None:
    spec = FormalSpec(
        variables=[FormalVariable(name=name, type="integer") for name in ("a", "b", "n", "m", "x")],
        hypotheses=hypotheses,
        conclusion="a * 0 == 0",
    )
    hint = both_directions_hint(prose, spec, ONE_DIRECTION)
    assert bool(hint) == hinted
    if hinted:
        assert f"iff({hypotheses[0]}, a * 0 == 0)." in hint
    assert both_directions_hint(prose, spec, "another refusal") == ""
