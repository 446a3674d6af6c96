"""Theory, step zero: the goal as a formal statement, re-derived only when its input changed.

The formalizer's input is the goal. Its answer is stored under the hash of that input, so a
rerun of the rule (a rewritten directions.json, a resumed run, a rewrite with the same goal)
reuses the statement instead of asking again; a new goal asks once.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from lemmata.agents.answers import FormalizerAnswer
from lemmata.agents.client import LLMClient
from lemmata.agents.parsing import parse_json_answer
from lemmata.agents.prompts import render_prompt
from lemmata.artifacts import FormalStatement, atomic_write_text
from lemmata.errors import ModelOutputError


def formalize(client: LLMClient, goal: str, cache_dir: Path) -> FormalStatement:
    prompt = render_prompt("formalizer", goal=goal)
    key = hashlib.sha256((prompt.system + prompt.user).encode("utf-8")).hexdigest()
    cached = Path(cache_dir) / f"{key}.json"
    if cached.exists():
        try:
            return FormalStatement.model_validate_json(cached.read_text(encoding="utf-8"))
        except ValueError:
            pass  # a corrupt cache entry is asked again, not trusted
    text = client.complete("formalizer", prompt.system, prompt.user, json_answer=True)
    try:
        answer = parse_json_answer(text, FormalizerAnswer, "formalizer")
        statement = FormalStatement(
            goal=goal,
            formal_statement=answer.formal_statement.strip() or goal,
            assumptions=[a.strip() for a in answer.assumptions if a.strip()],
            input_sha256=key,
        )
    except ModelOutputError as exc:
        # The goal itself is a usable statement; the plan notes that it was not formalized.
        statement = FormalStatement(
            goal=goal,
            formal_statement=goal,
            input_sha256=key,
            note=f"formalizer answer unusable, the goal is used as stated: {exc}",
        )
    atomic_write_text(cached, statement.model_dump_json(indent=2) + "\n")
    return statement
