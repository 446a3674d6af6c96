"""The echo filter's shortcuts (stages/paper/prompt_echo.py) decide as difflib does: `alike` as
difflib's three ratios in turn, `_copied_from` as the longest common stretch, on pairs built to
sit near each threshold — copies with an edit at the start, middle or end, reworded lines,
strangers and empty strings."""

from __future__ import annotations

import json
import random
from difflib import SequenceMatcher

from lemmata.stages.paper.prompt_echo import (
    ECHO_SIMILARITY,
    MACRO_LIST_SIMILARITY,
    MIN_COPIED_CHARS,
    _copied_from,
    alike,
)
from support import DATA

ALPHABET = "abcdefghij klmnop,.$\\"


def difflib_alike(line: str, other: str, threshold: float) -> bool:
    matcher = SequenceMatcher(None, line, other, autojunk=False)
    return (
        matcher.real_quick_ratio() >= threshold and matcher.quick_ratio() >= threshold and matcher.ratio() >= threshold
    )


def difflib_copied_from(line: str, prompt_line: str) -> bool:
    if len(line) < MIN_COPIED_CHARS or len(prompt_line) < len(line):
        return False
    block = SequenceMatcher(None, line, prompt_line, autojunk=False).find_longest_match(
        0, len(line), 0, len(prompt_line)
    )
    return block.size >= ECHO_SIMILARITY * len(line)


def edited(text: str, rng: random.Random, edits: int) -> str:
    characters = list(text)
    for _ in range(edits):
        at = rng.randrange(len(characters) + 1)
        kind = rng.choice(("insert", "delete", "replace"))
        if kind == "insert" or not characters:
            characters.insert(at, rng.choice(ALPHABET))
        elif kind == "delete" and at < len(characters):
            del characters[at]
        elif at < len(characters):
            characters[at] = rng.choice(ALPHABET)
    return "".join(characters)


def pairs(count: int, seed: int = 7) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    made = [("", ""), ("", "abc"), ("abc", "")]
    for _ in range(count):
        base = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(20, 120)))
        made.append((edited(base, rng, rng.randrange(0, 25)), base))
        start = rng.randrange(0, 30)
        piece = base[start : start + rng.randrange(30, 90)]
        made.append((edited(piece, rng, rng.randrange(0, 8)), base + base[::-1]))
        made.append(("".join(rng.choice(ALPHABET) for _ in range(len(base))), base))
    return made


def recorded_pairs() -> list[tuple[str, str]]:
    """Lines of a recorded writer answer against lines of its prompt (the embedded model, am-gm)."""
    calls = [
        json.loads(line) for line in (DATA / "embedded_runs" / "am-gm" / "llm_calls.jsonl").read_text().splitlines()
    ]
    writer = next(call for call in calls if call["role"] == "writer")
    prompt = [line for message in writer["messages"] for line in message["content"].splitlines() if line.strip()]
    answer = [line for line in writer["response"].splitlines() if line.strip()]
    return [(line, prompted) for line in answer[:30] for prompted in prompt[:40]]


def test_alike_decides_as_difflib_s_three_ratios() -> None:
    for line, other in pairs(150) + recorded_pairs():
        for threshold in (ECHO_SIMILARITY, MACRO_LIST_SIMILARITY):
            assert alike(line, other, threshold) == difflib_alike(line, other, threshold), (line, other, threshold)


def test_copied_from_decides_as_the_longest_common_stretch() -> None:
    decided = [(_copied_from(line, other), line, other) for line, other in pairs(150) + recorded_pairs()]
    for copied, line, other in decided:
        assert copied == difflib_copied_from(line, other), (line, other)
    assert sum(copied for copied, _, _ in decided) >= 20  # the pairs reach both answers
