"""Theory, step one: the lemma plan, with three fallback layers.

Full plan of 4 to 10 lemmas; then a simplified plan of 3; then the single goal `main_result`.
"""

from __future__ import annotations

import re
from typing import Any

from lemmata.artifacts import Lemma, TheoryPlan
from lemmata.llm.client import LLMClient
from lemmata.stages.parsing import parse_lemma_list
from lemmata.stages.prompts import render_prompt

FULL_PLAN = range(4, 11)
SIMPLIFIED_SIZE = 3
SAFE_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")
MAIN_RESULT = "main_result"


def plan_theory(client: LLMClient, goal: str, feedback: str = "") -> TheoryPlan:
    items = _ask(client, goal, "4 to 10 lemmas", feedback)
    if len(items) in FULL_PLAN:
        return TheoryPlan(goal=goal, level="full", lemmas=normalise_plan(items))
    items = _ask(client, goal, f"exactly {SIMPLIFIED_SIZE} lemmas (a simplified plan)", feedback)
    if items:
        return TheoryPlan(goal=goal, level="simplified", lemmas=normalise_plan(items[:SIMPLIFIED_SIZE]))
    return TheoryPlan(goal=goal, level="single_goal", lemmas=[Lemma(id=MAIN_RESULT, statement=goal)])


def _ask(client: LLMClient, goal: str, plan_size: str, feedback: str) -> list[dict[str, Any]]:
    note = f"Reviewer feedback to take into account: {feedback}" if feedback else ""
    prompt = render_prompt("decomposer", goal=goal, plan_size=plan_size, feedback=note)
    return parse_lemma_list(client.complete("decomposer", prompt.system, prompt.user, json_answer=True))


def normalise_plan(items: list[dict[str, Any]]) -> list[Lemma]:
    """File-safe unique ids (L<n> when the model's id is unusable); dependencies only backwards."""
    renamed: dict[str, str] = {}
    lemmas: list[Lemma] = []
    for position, item in enumerate(items, start=1):
        raw = item["id"].strip()
        earlier = {lemma.id for lemma in lemmas}
        new_id = raw if SAFE_ID.match(raw) and raw not in earlier else f"L{position}"
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
            )
        )
    return lemmas
