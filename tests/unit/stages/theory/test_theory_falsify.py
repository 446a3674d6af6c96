"""Falsify before proving (issue 34, item 2): each lemma of the plan is formalized and checked by
sampling and the solver; a counterexample refutes it, the decomposer is asked to repair the plan
with the counterexample in hand, and a lemma that cannot be repaired is removed and reported.
A refuted statement never reaches the prover and is never printed as a step."""

from __future__ import annotations

import json
from pathlib import Path

from lemmata.artifacts import Lemma, TheoryPlan
from lemmata.stages.theory.falsify import falsified_plan
from lemmata.stages.theory.prove import prove_lemma
from support.checkers import TRUSTED
from support.scripted_backend import scripted_client

GOAL = "The sum of two even integers is even."
EVEN_PLUS_EVEN = "The sum of two even integers is even, for all integers."
EVEN_PLUS_ODD = "The sum of two integers is even if one of them is even and the other is odd."
ODD_PLUS_ODD = "The sum of two odd integers is even."


def formal(hypotheses: list[str], conclusion: str = "(a + b) % 2 == 0") -> str:
    return json.dumps(
        {
            "formal_statement": "",
            "variables": [{"name": "a", "type": "integer"}, {"name": "b", "type": "integer"}],
            "hypotheses": hypotheses,
            "conclusion": conclusion,
            "not_formalizable_because": "",
        }
    )


def repair(statement: str, lemma_id: str = "L2") -> str:
    return "```json\n" + json.dumps({"lemmas": [{"id": lemma_id, "statement": statement, "depends_on": []}]}) + "\n```"


def plan_of(*statements: str) -> TheoryPlan:
    lemmas = [
        Lemma(id=f"L{n}", statement=statement, depends_on=[f"L{n - 1}"] if n > 1 else [])
        for n, statement in enumerate(statements, start=1)
    ]
    return TheoryPlan(goal=GOAL, level="full", lemmas=lemmas)


def test_a_false_lemma_is_refuted_with_its_counterexample_and_repaired(tmp_path: Path) -> None:
    client, backend = scripted_client(
        {
            "formalizer": [
                formal(["a % 2 == 0", "b % 2 == 0"]),
                formal(["a % 2 == 0", "b % 2 == 1"]),  # the false lemma, faithfully formalized
                formal(["a % 2 == 1", "b % 2 == 1"]),  # the replacement
            ],
            "decomposer": [repair(ODD_PLUS_ODD)],
        }
    )
    plan = falsified_plan(client, plan_of(EVEN_PLUS_EVEN, EVEN_PLUS_ODD), tmp_path, client.settings)
    assert [lemma.statement for lemma in plan.lemmas] == [EVEN_PLUS_EVEN, ODD_PLUS_ODD]
    assert [lemma.formal.verdict for lemma in plan.lemmas if lemma.formal] == ["machine_checked", "machine_checked"]
    [refuted] = plan.refuted
    assert (refuted.id, refuted.statement, refuted.replaced_by) == ("L2", EVEN_PLUS_ODD, ODD_PLUS_ODD)
    assert refuted.formal.refutation is not None and refuted.formal.refutation.counterexample == {"a": "0", "b": "1"}
    assert plan.repair_note == "repaired after a counterexample: L2" and plan.removed == []
    prompt = backend.calls("decomposer")[0].messages[-1].content
    assert f"The false lemma [L2]: {EVEN_PLUS_ODD}" in prompt and "Counterexample: a = 0, b = 1" in prompt


def test_a_lemma_that_cannot_be_repaired_is_removed_and_its_dependents_lose_it(tmp_path: Path) -> None:
    client, backend = scripted_client(
        {
            "formalizer": [formal(["a % 2 == 0", "b % 2 == 1"]), formal(["a % 2 == 0", "b % 2 == 0"])],
            "decomposer": [repair(EVEN_PLUS_ODD, "L1")],  # the same statement again: no repair
        }
    )
    plan = falsified_plan(client, plan_of(EVEN_PLUS_ODD, EVEN_PLUS_EVEN), tmp_path, client.settings)
    assert [(lemma.id, lemma.depends_on) for lemma in plan.lemmas] == [("L2", [])]
    assert [attempt.id for attempt in plan.removed] == ["L1"] and plan.repair_note == "refuted and removed: L1"
    assert len(backend.calls("decomposer")) == 1


def test_repairs_stop_after_the_turns_and_each_refuted_try_is_told_to_the_next(tmp_path: Path) -> None:
    client, backend = scripted_client(
        {
            "formalizer": [formal(["a % 2 == 0", "b % 2 == 1"]), formal(["a % 2 == 1"]), formal(["b % 2 == 1"])],
            "decomposer": [
                repair("The sum of an odd integer and any integer is even."),
                repair("The sum is even when b is odd."),
            ],
        },
        THEORY_STAGE_MAX_TURNS=2,
    )
    plan = falsified_plan(client, plan_of(EVEN_PLUS_ODD), tmp_path, client.settings)
    assert len(backend.calls("decomposer")) == 2  # THEORY_STAGE_MAX_TURNS repairs at most
    assert "Replacements already refuted" in backend.calls("decomposer")[1].messages[-1].content
    assert [attempt.statement for attempt in plan.refuted] == [
        EVEN_PLUS_ODD,
        "The sum of an odd integer and any integer is even.",
        "The sum is even when b is odd.",
    ]
    # Nothing is left: the plan is the goal itself, as the spec's last fallback.
    assert plan.level == "single_goal" and [lemma.id for lemma in plan.lemmas] == ["main_result"]


def test_a_refuted_statement_never_reaches_the_prover(tmp_path: Path) -> None:
    client, backend = scripted_client(
        {"formalizer": [formal(["a % 2 == 0", "b % 2 == 1"])], "decomposer": [repair("")]}
    )
    plan = falsified_plan(client, plan_of(EVEN_PLUS_ODD), tmp_path, client.settings)
    # Only the single goal is left, and it carries no formal check here: give it the refuted one.
    refuted_goal = plan.model_copy(
        update={"lemmas": [plan.lemmas[0].model_copy(update={"formal": plan.refuted[0].formal})]}
    )
    proved = prove_lemma(client, refuted_goal, "main_result", client.settings, checker=TRUSTED)
    assert backend.calls("prover") == []
    assert (proved.status, proved.verified, proved.proof_text) == ("refuted", False, "")


def test_the_single_goal_takes_the_goals_own_check_and_is_not_formalized_again(tmp_path: Path) -> None:
    from support.formal import machine_checked

    client, backend = scripted_client()
    plan = TheoryPlan(goal=GOAL, level="single_goal", lemmas=[Lemma(id="main_result", statement=GOAL)])
    checked = falsified_plan(client, plan, tmp_path, client.settings, machine_checked(GOAL))
    assert checked.lemmas[0].formal == machine_checked(GOAL) and backend.calls("formalizer") == []


def test_a_statement_a_machine_proves_gets_no_prover_and_its_proof_is_the_machines(tmp_path: Path) -> None:
    """The README's main command on the embedded model (2026-11-27): the solver had proved L3 at
    planning, yet the prover spent 26-34 s on a prose proof the paper printed as "not checked"
    beside the machine's proof. A statement a machine proves is now proved by the machine alone."""
    client, backend = scripted_client({"formalizer": [formal(["a % 2 == 0", "b % 2 == 0"])]})
    plan = falsified_plan(client, plan_of(EVEN_PLUS_EVEN), tmp_path, client.settings)
    proved = prove_lemma(client, plan, "L1", client.settings, checker=TRUSTED)
    assert backend.calls("prover") == [] and backend.calls("verifier") == []
    assert (proved.status, proved.verified, proved.attempts, proved.confidence) == ("machine_checked", True, 0, 1.0)
    assert proved.proved_by_machine_alone and proved.formal is not None
    assert proved.proof_text.startswith(("The SMT solver Z3 found no input", "The Coq proof kernel accepted"))
    assert "(unsat)" in proved.proof_text
    assert [(step.check, step.outcome) for step in proved.checks] == [("verifier", "skipped")]


ONE_EVEN = "The sum of two integers is even if one of them is even."
BOTH_EVEN = "The sum of two integers is even if both of them are even."


def test_a_lemma_formalized_as_the_goal_itself_is_removed_whatever_its_prose_says(tmp_path: Path) -> None:
    """Malformed model output, the README's main command on the embedded model (2026-11-27): L2
    "The sum of two integers is even if one of them is even" (false) was formalized as both even,
    the goal's own formal statement, and printed as machine-checked beside its false prose; L3
    said the goal again in other words. Both restate the goal formally: removed, and said so."""
    from support.formal import machine_checked

    both = formal(["a % 2 == 0", "b % 2 == 0"])
    client, backend = scripted_client({"formalizer": [formal(["a % 2 == 1", "b % 2 == 1"]), both, both]})
    plan = falsified_plan(
        client, plan_of(ODD_PLUS_ODD, ONE_EVEN, BOTH_EVEN), tmp_path, client.settings, machine_checked(GOAL)
    )
    assert [lemma.id for lemma in plan.lemmas] == ["L1"] and plan.lemmas[0].depends_on == []
    assert plan.repair_note == "removed as the goal restated (its formal statement is the goal's): L2, L3"
    assert len(backend.calls("formalizer")) == 3


def test_two_lemmas_of_different_statements_formalized_alike_are_neither_formalized(tmp_path: Path) -> None:
    """One of two formalizations that coincide does not say what its prose says, and nothing tells
    which: neither lemma may be called machine-checked on it."""
    alike = formal(["a % 2 == 0", "b % 2 == 0"], "(a * b) % 2 == 0")
    client, _ = scripted_client({"formalizer": [alike, alike]})
    plan = falsified_plan(
        client,
        plan_of("The product of two even integers is even.", "The product of an even integer and any integer is even."),
        tmp_path,
        client.settings,
    )
    reasons = [lemma.formal.not_formalized for lemma in plan.lemmas if lemma.formal]
    assert reasons == [
        "its formal statement is also that of L2, whose statement differs: one of these formalizations does not "
        "say what its statement says",
        "its formal statement is also that of L1, whose statement differs: one of these formalizations does not "
        "say what its statement says",
    ]
    assert all(lemma.formal is not None and lemma.formal.verdict == "unverified" for lemma in plan.lemmas)
    assert all(lemma.formal is not None and lemma.formal.spec is not None for lemma in plan.lemmas)  # the attempt kept


def test_a_lemmas_checks_run_while_the_next_lemma_is_formalized(tmp_path: Path, monkeypatch) -> None:
    """Issue 38: the sampling and solver of one lemma (a child process, half a second or more)
    overlap the formalizer's call for the next one instead of delaying it. L1's checks here wait
    until the formalizer has been asked for L2, which, run one after the other, never happens (the
    wait would time out)."""
    import threading

    from lemmata.stages.theory import falsify

    asked: list[str] = []
    l2_asked = threading.Event()
    l1_saw_l2_asked: list[bool] = []

    def formalization(client, statement, cache_dir):  # type: ignore[no-untyped-def]
        asked.append(statement)
        if statement == ODD_PLUS_ODD:
            l2_asked.set()
        return real_formalization(client, statement, cache_dir)

    def formal_check(record, budget):  # type: ignore[no-untyped-def]
        if record.statement == EVEN_PLUS_EVEN:
            l1_saw_l2_asked.append(l2_asked.wait(timeout=10))
        return real_check(record, budget)

    real_formalization, real_check = falsify.formalization, falsify.formal_check
    monkeypatch.setattr(falsify, "formalization", formalization)
    monkeypatch.setattr(falsify, "formal_check", formal_check)
    client, _ = scripted_client(
        {"formalizer": [formal(["a % 2 == 0", "b % 2 == 0"]), formal(["a % 2 == 1", "b % 2 == 1"])]}
    )
    plan = falsified_plan(client, plan_of(EVEN_PLUS_EVEN, ODD_PLUS_ODD), tmp_path, client.settings)
    assert asked == [EVEN_PLUS_EVEN, ODD_PLUS_ODD]
    assert l1_saw_l2_asked == [True]
    assert [lemma.formal.verdict for lemma in plan.lemmas if lemma.formal] == ["machine_checked", "machine_checked"]


def test_the_goals_kernel_proof_runs_while_the_plan_is_asked_for(tmp_path: Path, monkeypatch) -> None:
    """Issue 38: the goal's Coq check (about a second of coqc) runs beside the planning calls, not
    between the formalizer's call and the decomposer's; the plan carries its verdict. The kernel
    here waits until the decomposer has been asked, which, run one after the other, never happens."""
    import threading

    from lemmata.artifacts import FormalStatement
    from lemmata.stages.formal.formalize import formalize
    from lemmata.stages.theory import falsify

    planning = threading.Event()
    kernel_saw_planning: list[bool] = []

    def plan_theory(*args, **kwargs):  # type: ignore[no-untyped-def]
        planning.set()
        return real_plan_theory(*args, **kwargs)

    def prove_in_kernel(check, **kwargs):  # type: ignore[no-untyped-def]
        kernel_saw_planning.append(planning.wait(timeout=10))
        return real_prove_in_kernel(check, **kwargs)

    real_plan_theory, real_prove_in_kernel = falsify.plan_theory, falsify.prove_in_kernel
    monkeypatch.setattr(falsify, "plan_theory", plan_theory)
    monkeypatch.setattr(falsify, "prove_in_kernel", prove_in_kernel)
    goal_answer = formal(["a % 2 == 0", "b % 2 == 0"])
    client, backend = scripted_client(
        {
            "formalizer": [goal_answer, formal(["a % 2 == 1", "b % 2 == 1"])],
            # one lemma: not a full plan, so the simplified plan is asked for
            "decomposer": [repair(ODD_PLUS_ODD, "L1"), repair(ODD_PLUS_ODD, "L1")],
            "architect": ["not a plan"],
        }
    )
    goal: FormalStatement = formalize(client, GOAL, tmp_path)
    assert goal.check is not None and not any(c.checker == "coq" for c in goal.check.checks)  # not yet
    plan = falsify.checked_plan(client, goal, tmp_path, client.settings)
    assert kernel_saw_planning == [True]
    assert plan.goal_check is not None and plan.goal_check.verdict == "machine_checked"
    assert any(check.checker == "coq" for check in plan.goal_check.checks)  # the kernel's own entry
    assert [lemma.statement for lemma in plan.lemmas] == [ODD_PLUS_ODD]
    assert backend.pending() == 0
