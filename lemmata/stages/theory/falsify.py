"""Theory, step one and a half: every lemma of the plan is falsified before it is proved.

Each lemma is formalized (stages/formal/formalize.py) and checked by sampling and the SMT solver
(formal/checking.py), the checks of one lemma running while the formalizer writes the next
lemma's statement; the repairs come after the plan's statements are all formalized. A counterexample
refutes the lemma as formalized, and the refuted statement never reaches the prover. The
decomposer is asked to repair the plan with the counterexample in hand: a replacement statement
under the same id, so the lemmas that depend on it keep their place, itself formalized and
falsified; up to REPAIR_TURNS tries per lemma (fewer when THEORY_STAGE_MAX_TURNS is lower). A
lemma that cannot be repaired is removed: its dependents lose the dependency, and the plan keeps
it in `refuted`, which the paper reports ("Lemma L2 was refuted as formalized by a = 0, b = 1 and
removed; the argument that used it is incomplete"). Only the lemmas whose statement changed are
proved anew: a lemma job's rerun trigger is its own statement (rules/common.smk).
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from lemmata.agents.client import LLMClient
from lemmata.agents.parsing import parse_lemma_list
from lemmata.agents.prompts import render_prompt
from lemmata.artifacts import FormalCheck, FormalStatement, Lemma, RefutedLemma, TheoryPlan
from lemmata.formal.checking import DEFAULT_BUDGET, Budget, prove_in_kernel
from lemmata.settings import Settings
from lemmata.stages.formal.formalize import formal_check, formalization
from lemmata.stages.theory.plan import MAIN_RESULT, plan_theory

#: Replacements the decomposer may propose for one refuted lemma.
REPAIR_TURNS = 3


def checked_plan(
    client: LLMClient,
    formal: FormalStatement,
    cache_dir: Path,
    settings: Settings,
    *,
    feedback: str = "",
    literature: str = "",
    budget: Budget = DEFAULT_BUDGET,
) -> TheoryPlan:
    """The lemma plan of the formalized goal (plan.py), every lemma falsified (falsified_plan), and
    the goal's own check (`goal_check`) with its kernel proof, which runs while the planning calls
    wait on the model: a goal's Coq check is about a second of CPU (coqc), and nothing in the plan
    needs it before the plan is falsified."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="goal-kernel") as kernel:
        goal_proof = kernel.submit(prove_in_kernel, formal.check, budget=budget) if formal.check is not None else None
        plan = plan_theory(
            client, formal.goal, feedback=feedback, formal_statement=formal.formal_statement, literature=literature
        )
    goal_check = goal_proof.result() if goal_proof is not None else None
    plan = falsified_plan(client, plan, cache_dir, settings, goal_check, budget)
    return plan.model_copy(update={"goal_check": goal_check})


def falsified_plan(
    client: LLMClient,
    plan: TheoryPlan,
    cache_dir: Path,
    settings: Settings,
    goal_check: FormalCheck | None = None,
    budget: Budget = DEFAULT_BUDGET,
) -> TheoryPlan:
    """`plan` with each lemma's formal check, refuted lemmas repaired or removed. The single goal
    `main_result` takes the goal's own check (`goal_check`): it is the goal, and is never repaired."""
    turns = min(REPAIR_TURNS, settings.THEORY_STAGE_MAX_TURNS)
    lemmas: list[Lemma] = []
    refuted: list[RefutedLemma] = []
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="lemma-checks") as checker:
        first_checks = _checked_while_formalizing(client, plan, cache_dir, budget, goal_check, checker)
    for lemma in plan.lemmas:
        if lemma.id == MAIN_RESULT and goal_check is not None:
            lemmas.append(lemma.model_copy(update={"formal": goal_check}))
            continue
        checked = lemma.model_copy(update={"formal": first_checks[lemma.id].result()})
        tries: list[RefutedLemma] = []
        while checked.formal is not None and checked.formal.verdict == "refuted" and len(tries) < turns:
            tries.append(RefutedLemma(id=lemma.id, statement=checked.statement, formal=checked.formal))
            replacement = repair(client, plan, lemmas, tries)
            if not replacement:
                break
            checked = checked.model_copy(
                update={"statement": replacement, "formal": check_statement(client, replacement, cache_dir, budget)}
            )
        if checked.formal is not None and checked.formal.verdict == "refuted":
            if not tries or tries[-1].statement != checked.statement:
                tries.append(RefutedLemma(id=lemma.id, statement=checked.statement, formal=checked.formal))
            refuted += tries
            continue  # removed: never proved, never printed as a step
        refuted += [attempt.model_copy(update={"replaced_by": checked.statement}) for attempt in tries]
        lemmas.append(checked)
    lemmas, restating = without_goal_restatements(lemmas, goal_check)
    return _without_removed(plan, doubtful_twins(lemmas), refuted, goal_check, restating)


def _checked_while_formalizing(
    client: LLMClient,
    plan: TheoryPlan,
    cache_dir: Path,
    budget: Budget,
    goal_check: FormalCheck | None,
    checker: ThreadPoolExecutor,
) -> dict[str, Future[FormalCheck]]:
    """Each lemma's statement formalized, in the plan's order, its machine checks (a second of
    sampling and solver in a child process) run on `checker` while the formalizer writes the next
    one: the checks of one lemma need nothing from another's."""
    return {
        lemma.id: checker.submit(formal_check, formalization(client, lemma.statement, cache_dir), budget)
        for lemma in plan.lemmas
        if not (lemma.id == MAIN_RESULT and goal_check is not None)
    }


def without_goal_restatements(lemmas: list[Lemma], goal_check: FormalCheck | None) -> tuple[list[Lemma], list[str]]:
    """The lemmas whose formal statement is not the goal's own, and the ids of those that are: the
    goal restated, whatever their prose says. "The sum of two integers is even if one of them is
    even" (false) came formalized as both even, the goal's statement, and was machine-checked
    beside the paper's false prose (the README's main command on the embedded model, 2026-11-27)."""
    goal = _formal_text(goal_check)
    if not goal:
        return lemmas, []
    restating = [lemma.id for lemma in lemmas if lemma.id != MAIN_RESULT and _formal_text(lemma.formal) == goal]
    return [lemma for lemma in lemmas if lemma.id not in restating], restating


def doubtful_twins(lemmas: list[Lemma]) -> list[Lemma]:
    """Lemmas of different statements whose formal statements are the same: at least one of the
    formalizations does not say what its prose says, and nothing tells which, so neither counts
    as formalized (each says why, naming the other)."""
    by_text: dict[str, list[Lemma]] = {}
    for lemma in lemmas:
        if text := _formal_text(lemma.formal):
            by_text.setdefault(text, []).append(lemma)
    doubted: dict[str, str] = {}
    for twins in by_text.values():
        if len({" ".join(lemma.statement.casefold().split()) for lemma in twins}) < 2:
            continue
        for lemma in twins:
            others = ", ".join(other.id for other in twins if other.id != lemma.id)
            doubted[lemma.id] = (
                f"its formal statement is also that of {others}, whose statement differs: one of these "
                "formalizations does not say what its statement says"
            )
    return [
        lemma.model_copy(
            update={"formal": lemma.formal.model_copy(update={"not_formalized": doubted[lemma.id], "checks": []})}
        )
        if lemma.id in doubted and lemma.formal is not None
        else lemma
        for lemma in lemmas
    ]


def _formal_text(check: FormalCheck | None) -> str:
    """The formal statement as checked, when there is one ("" when none was made or it was refused)."""
    if check is None or check.spec is None or check.not_formalized:
        return ""
    return check.text


def check_statement(client: LLMClient, statement: str, cache_dir: Path, budget: Budget) -> FormalCheck:
    return formal_check(formalization(client, statement, cache_dir), budget)


def repair(client: LLMClient, plan: TheoryPlan, kept: list[Lemma], tries: list[RefutedLemma]) -> str:
    """A replacement statement for the refuted lemma; "" when the decomposer has none."""
    last = tries[-1]
    assert last.formal.refutation is not None and last.formal.refutation.counterexample is not None
    listing = "\n".join(f"[{lemma.id}] {lemma.statement}" for lemma in (*kept, *plan.lemmas[len(kept) :]))
    earlier = ""
    if len(tries) > 1:
        earlier = "Replacements already refuted, do not propose them again:\n" + "\n".join(
            f"- {attempt.statement} (counterexample {counterexample_text(attempt.formal)})" for attempt in tries[:-1]
        )
    prompt = render_prompt(
        "plan_repair",
        goal=plan.goal,
        plan=listing,
        lemma_id=last.id,
        statement=last.statement,
        formal=last.formal.text,
        counterexample=counterexample_text(last.formal),
        earlier=earlier,
    )
    items = parse_lemma_list(client.complete("decomposer", prompt.system, prompt.user, json_answer=True))
    statement = items[0]["statement"].strip() if items else ""
    return "" if statement in {attempt.statement for attempt in tries} else statement


def counterexample_text(formal: FormalCheck) -> str:
    """`a = 0, b = 1`; for a statement without variables, that it computes to false."""
    refutation = formal.refutation
    if refutation is None or refutation.counterexample is None:
        return ""
    if not refutation.counterexample:
        return "the statement computes to false"
    return ", ".join(f"{name} = {value}" for name, value in refutation.counterexample.items())


def _without_removed(
    plan: TheoryPlan,
    lemmas: list[Lemma],
    refuted: list[RefutedLemma],
    goal_check: FormalCheck | None,
    restating: list[str] | None = None,
) -> TheoryPlan:
    kept = {lemma.id for lemma in lemmas}
    removed = sorted({attempt.id for attempt in refuted} - kept)
    lemmas = [lemma.model_copy(update={"depends_on": [d for d in lemma.depends_on if d in kept]}) for lemma in lemmas]
    notes = []
    repaired = sorted({attempt.id for attempt in refuted} & kept)
    if repaired:
        notes.append(f"repaired after a counterexample: {', '.join(repaired)}")
    if removed:
        notes.append(f"refuted and removed: {', '.join(removed)}")
    if restating:
        notes.append(f"removed as the goal restated (its formal statement is the goal's): {', '.join(restating)}")
    update: dict[str, object] = {"lemmas": lemmas, "refuted": refuted, "repair_note": "; ".join(notes)}
    if not lemmas:
        # Every lemma was refuted: the plan is the goal itself, as the spec's last fallback.
        update["lemmas"] = [Lemma(id=MAIN_RESULT, statement=plan.formal_statement or plan.goal, formal=goal_check)]
        update["level"] = "single_goal"
    return plan.model_copy(update=update)
