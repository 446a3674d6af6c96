"""Theory, step one: the lemma plan, with three fallback layers, then the proof architect.

The decomposer proposes a full plan of 4 to 10 lemmas; failing that, a simplified plan of 3;
failing that, the single goal `main_result`. The proof architect then reviews the plan: it may
sharpen statements, fix dependencies, name sources and suggest each lemma's route. Its answer is
read with the same four parsing passes; if it is unusable, or breaks the plan size of the
level, the decomposer's plan is kept and the plan says why. Both plans lose their duplicates
(plan_dedup): copies of a lemma are merged, restatements of the goal dropped; a full plan left
with fewer than 4 lemmas is a simplified one, a plan left with none is the single goal.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from lemmata.agents.client import LLMClient
from lemmata.agents.parsing import parse_lemma_list
from lemmata.agents.prompts import render_prompt
from lemmata.artifacts import Lemma, TheoryPlan, TheoryRework
from lemmata.stages.theory.plan_dedup import deduplicate_lemmas

FULL_PLAN = range(4, 11)
SIMPLIFIED_SIZE = 3
SAFE_ID = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,31}")
MAIN_RESULT = "main_result"
ARCHITECT_SIZES = {"full": FULL_PLAN, "simplified": range(1, SIMPLIFIED_SIZE + 1)}
NOT_CONSULTED = "not consulted: the plan is the single goal"


def plan_theory(
    client: LLMClient, goal: str, feedback: str = "", formal_statement: str = "", literature: str = ""
) -> TheoryPlan:
    """The lemma chain; `literature` (the survey's known results, `[id] title: result; ...`)
    lets the decomposer and the architect build on published results, named in a lemma's source."""
    statement = formal_statement or goal
    known = literature_block(literature)
    items = _decompose(client, goal, statement, "4 to 10 lemmas", feedback, known)
    if len(items) in FULL_PLAN:
        plan = TheoryPlan(goal=goal, level="full", lemmas=normalise_plan(items), formal_statement=formal_statement)
        return _arranged(client, without_duplicates(plan, "decomposer"), feedback, known)
    items = _decompose(
        client, goal, statement, f"exactly {SIMPLIFIED_SIZE} lemmas (a simplified plan)", feedback, known
    )
    if items:
        plan = TheoryPlan(
            goal=goal,
            level="simplified",
            lemmas=normalise_plan(items[:SIMPLIFIED_SIZE]),
            formal_statement=formal_statement,
            size_note=simplified_size_note(items),
        )
        return _arranged(client, without_duplicates(plan, "decomposer"), feedback, known)
    # The last resort has nothing for an architect to arrange.
    return TheoryPlan(
        goal=goal,
        level="single_goal",
        lemmas=[_goal_lemma(goal, formal_statement)],
        formal_statement=formal_statement,
        architect_note=NOT_CONSULTED,
    )


def simplified_size_note(items: list[dict[str, Any]]) -> str:
    """What became of a simplified plan that is not 3 lemmas: the rest cut, or fewer kept; "" at 3."""
    count = len(items)
    if count > SIMPLIFIED_SIZE:
        dropped = ", ".join(
            str(item["id"]).strip() or f"#{n}"
            for n, item in enumerate(items[SIMPLIFIED_SIZE:], start=SIMPLIFIED_SIZE + 1)
        )
        return (
            f"the decomposer gave {count} lemmas for the simplified plan of {SIMPLIFIED_SIZE}: the first "
            f"{SIMPLIFIED_SIZE} are kept, {dropped} dropped"
        )
    if count < SIMPLIFIED_SIZE:
        lemmas = "lemma" if count == 1 else "lemmas"
        return (
            f"the decomposer gave {count} {lemmas} for the simplified plan of {SIMPLIFIED_SIZE}: the plan has {count}"
        )
    return ""


def _goal_lemma(goal: str, formal_statement: str) -> Lemma:
    return Lemma(id=MAIN_RESULT, statement=formal_statement or goal)


def _arranged(client: LLMClient, plan: TheoryPlan, feedback: str, literature: str) -> TheoryPlan:
    """The architect's review at the plan's level, without duplicates: the architect may copy a lemma too."""
    if plan.level == "single_goal":
        return plan.model_copy(update={"architect_note": NOT_CONSULTED})
    reviewed = architect(client, plan, feedback, sizes=ARCHITECT_SIZES[plan.level], literature=literature)
    return without_duplicates(reviewed, "architect")


def without_duplicates(plan: TheoryPlan, author: str) -> TheoryPlan:
    """`plan` with copies merged and goal restatements dropped, at the level its size now has; the
    note says what `author`'s plan lost."""
    if plan.level == "single_goal":
        return plan
    result = deduplicate_lemmas(plan.lemmas, [plan.goal, plan.formal_statement])
    if not result.changed:
        return plan
    level: Literal["full", "simplified", "single_goal"] = plan.level
    lemmas, note = result.lemmas, f"{author}'s plan: {result.in_words()}"
    if not lemmas:
        # An empty plan would be dishonest; the spec's last fallback is the goal itself.
        level, lemmas = "single_goal", [_goal_lemma(plan.goal, plan.formal_statement)]
        note += f"; no lemma left: the plan is the single goal {MAIN_RESULT}"
    elif level == "full" and len(lemmas) < FULL_PLAN.start:
        level = "simplified"
        left = "1 distinct lemma is" if len(lemmas) == 1 else f"{len(lemmas)} distinct lemmas are"
        note += f"; {left} a simplified plan, not a full one ({FULL_PLAN.start} to {FULL_PLAN.stop - 1})"
    notes = [plan.dedup_note, note] if plan.dedup_note else [note]
    return plan.model_copy(update={"level": level, "lemmas": lemmas, "dedup_note": ". ".join(notes)})


def rework_feedback(rework: TheoryRework | None) -> str:
    """The reviewer's objection as planning feedback."""
    if rework is None:
        return ""
    return (
        f"The reviewer rejected the previous lemma chain. Most problematic step: {rework.step}. Issue: {rework.issue}"
    )


def literature_block(literature: str) -> str:
    if not literature.strip():
        return ""
    return (
        "Known results from the literature (a lemma that is one of them names it in its source, "
        'e.g. "[arXiv:2101.00001] Theorem 1"):\n' + literature.strip() + "\n"
    )


def _decompose(
    client: LLMClient, goal: str, statement: str, plan_size: str, feedback: str, literature: str
) -> list[dict[str, Any]]:
    prompt = render_prompt(
        "decomposer",
        goal=goal,
        formal_statement=statement,
        plan_size=plan_size,
        literature=literature,
        feedback=_feedback_line(feedback),
    )
    return parse_lemma_list(client.complete("decomposer", prompt.system, prompt.user, json_answer=True))


def architect(client: LLMClient, plan: TheoryPlan, feedback: str, sizes: range, literature: str = "") -> TheoryPlan:
    """The architect's arrangement of `plan`, or `plan` itself with the reason it was kept."""
    listing = json.dumps([lemma.model_dump(exclude={"approach"}) for lemma in plan.lemmas], indent=1)
    prompt = render_prompt(
        "architect",
        goal=plan.goal,
        formal_statement=plan.formal_statement or plan.goal,
        literature=literature,
        lemmas=listing,
        feedback=_feedback_line(feedback),
    )
    items = parse_lemma_list(client.complete("architect", prompt.system, prompt.user, json_answer=True))
    if not items:
        return plan.model_copy(update={"architect_note": "answer unusable: the decomposer's plan is kept"})
    if len(items) not in sizes:
        return plan.model_copy(
            update={
                "architect_note": f"proposed {len(items)} lemmas, outside "
                f"{sizes.start}-{sizes.stop - 1}: the decomposer's plan is kept"
            }
        )
    lemmas = normalise_plan(items)
    return plan.model_copy(update={"lemmas": lemmas, "architect_note": _changes(plan.lemmas, lemmas)})


def _changes(before: list[Lemma], after: list[Lemma]) -> str:
    old = {lemma.id: lemma for lemma in before}
    changed = [
        lemma.id
        for lemma in after
        if lemma.id not in old
        or old[lemma.id].model_dump(exclude={"approach"}) != lemma.model_dump(exclude={"approach"})
    ]
    removed = [lemma_id for lemma_id in old if lemma_id not in {lemma.id for lemma in after}]
    parts = [
        f"changed {', '.join(changed)}" if changed else "statements kept",
        *([f"removed {', '.join(removed)}"] if removed else []),
        f"routes suggested for {sum(bool(lemma.approach) for lemma in after)} of {len(after)} lemmas",
    ]
    return "applied: " + "; ".join(parts)


def _feedback_line(feedback: str) -> str:
    return f"Reviewer feedback to take into account: {feedback}" if feedback else ""


def normalise_plan(items: list[dict[str, Any]]) -> list[Lemma]:
    """File-safe unique ids (L<n> when the model's id is unusable); dependencies only backwards."""
    renamed: dict[str, str] = {}
    lemmas: list[Lemma] = []
    for position, item in enumerate(items, start=1):
        raw = item["id"].strip()
        earlier = {lemma.id for lemma in lemmas}
        new_id = raw if SAFE_ID.fullmatch(raw) and raw not in earlier else f"L{position}"
        while new_id in earlier:
            new_id = f"{new_id}_{position}"
        if raw:
            renamed.setdefault(raw, new_id)
        depends = [renamed.get(d.strip(), d.strip()) for d in item["depends_on"]]
        lemmas.append(
            Lemma(
                id=new_id,
                statement=item["statement"],
                depends_on=list(dict.fromkeys(d for d in depends if d in earlier)),
                source=item["source"],
                approach=item.get("approach", ""),
            )
        )
    return lemmas
