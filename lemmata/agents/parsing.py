"""Lenient readers for model answers: JSON wherever it hides, lemma lists in four passes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from lemmata.errors import ModelOutputError

FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n(.*?)```", re.DOTALL)
LIST_KEYS = ("lemmas", "steps", "subgoals", "proof_steps", "lemma_list", "components", "parts")
ID_KEYS = ("id", "lemma_id", "name", "title")
STATEMENT_KEYS = ("statement", "formal_statement", "hypothesis", "content")
DEPENDENCY_KEYS = ("depends_on", "dependencies", "uses", "requires")
APPROACH_KEYS = ("approach", "strategy", "proof_idea", "method")
LIST_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(.+)$")

M = TypeVar("M", bound=BaseModel)


#: What a model's text that is not JSON raises in Python's parser: a decoding error, or, for
#: nesting deeper than the parser recurses (3,000 `[` before an answer), a RecursionError, which
#: escaped every parser here and failed the job (issue 53). Both make a malformed answer.
NOT_JSON = (json.JSONDecodeError, RecursionError)


def fenced_blocks(text: str, languages: tuple[str, ...] = ("json", "")) -> list[str]:
    return [body for lang, body in FENCE.findall(text) if lang.lower() in languages]


def strip_fences(text: str) -> str:
    """The answer with its code-fence lines removed; nothing inside or around them is cut."""
    return FENCE.sub(lambda match: match.group(2), text).strip()


def first_json_value(text: str, opener: str) -> Any | None:
    """The first complete JSON object (`{`) or array (`[`) in free text, or None."""
    return next((value for value, _, _ in json_values(text, opener)), None)


def json_values(text: str, opener: str) -> Iterator[tuple[Any, int, int]]:
    """Each complete JSON object (`{`) or array (`[`) in free text, with its span, in order."""
    start = text.find(opener)
    while start != -1:
        try:
            value, length = json.JSONDecoder().raw_decode(text[start:])
        except NOT_JSON:
            start = text.find(opener, start + 1)
            continue
        yield value, start, start + length
        start = text.find(opener, start + length)


#: In a model's JSON string, a backslash that starts LaTeX, not a JSON escape: `\(`, `\frac`,
#: `\theta`, `\nabla`, `\underline` written with one backslash. An escaped pair `\\` is kept;
#: `\n` or `\t` before a capital, a space or a digit stays a newline or a tab.
_LATEX_BACKSLASH = re.compile(r'\\\\|\\(?=[bfnrt][a-z])|\\u(?![0-9a-fA-F]{4})|\\(?!["\\/bfnrtu])')


def latex_backslashes_kept(text: str) -> str:
    """JSON text whose LaTeX backslashes are escaped, so that json.loads keeps them: `\\frac` would
    otherwise read as a form feed and "rac" (the embedded model's formal statements, 2026-11-26)."""
    return _LATEX_BACKSLASH.sub(lambda m: m.group(0) if m.group(0) == "\\\\" else "\\\\" + m.group(0)[1:], text)


def parse_json_answer(text: str, model: type[M], role: str) -> M:
    """The answer as `model`: the whole text, a fenced block, the complete part of a truncated
    object, or the first object in it. Line breaks written raw inside a string (a script as the
    embedded model writes it into "code") are read as the line breaks they mean."""
    candidates: list[Any] = []
    for chunk in [text, *fenced_blocks(text)]:
        try:
            candidates.append(json.loads(chunk, strict=False))
        except NOT_JSON:
            pass
    # Before the first inner object: in a truncated answer that is one item, not the answer.
    candidates.append(close_truncated_json(text))
    candidates.append(first_json_value(text, "{"))
    for candidate in candidates:
        if isinstance(candidate, dict):
            try:
                return model.model_validate(candidate)
            except ValidationError:
                continue
    raise ModelOutputError(f"the {role} answer is not the JSON asked for: {_excerpt(text)}")


def close_truncated_json(text: str, attempts: int = 200) -> Any | None:
    """The complete part of a JSON object cut off mid-way (an answer that hit its token limit):
    cut after the last complete member or item, then close what is still open. None when the
    object is not truncated, or nothing of it survives."""
    start = text.find("{")
    if start == -1:
        return None
    body, closers, cuts = text[start:], [], []
    in_string = escaped = False
    for index, char in enumerate(body):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            closers.append("}" if char == "{" else "]")
        elif char in "}]":
            closers.pop()
            if not closers:
                return None  # complete, so not ours to repair
            cuts.append((index + 1, "".join(reversed(closers))))
        elif char == "," and (closers[-1] == "]" or len(closers) == 1):
            # Inside a nested object a cut would keep a half item (a lemma without its statement).
            cuts.append((index, "".join(reversed(closers))))
    for cut, closing in reversed(cuts[-attempts:]):
        try:
            return json.loads(body[:cut] + closing)
        except NOT_JSON:
            continue
    return None


def parse_lemma_list(text: str) -> list[dict[str, Any]]:
    """Four passes: fenced JSON, first object with a known list key, first array, text list.
    The JSON passes read LaTeX's single backslashes as backslashes (`latex_backslashes_kept`):
    `"\\beta = \\frac{1}{2}"` was read as backspace, "eta", form feed, "rac" (issue 53)."""
    json_text = latex_backslashes_kept(text)
    passes = ((_from_fences, json_text), (_from_first_object, json_text), (_from_first_array, json_text))
    for reader, source in (*passes, (_from_text_list, text)):
        items = normalise_lemma_items(reader(source))
        if items:
            return items
    return []


def _from_fences(text: str) -> Any:
    for block in fenced_blocks(text):
        try:
            value = json.loads(block)
        except NOT_JSON:
            continue
        found = _list_in(value)
        if found:
            return found
    return None


def _from_first_object(text: str) -> Any:
    first = next(json_values(text, "{"), None)
    if first is None:
        return None
    _, start, _ = first
    # An object inside an array is a lemma item, not a plan: its "steps" are not lemmas.
    if _inside_array(text, start):
        return None
    return _list_in(first[0])


def _inside_array(text: str, position: int) -> bool:
    for _, start, end in json_values(text, "["):
        if start > position:
            return False
        if position < end:
            return True
    return False


def _from_first_array(text: str) -> Any:
    # The first array that holds lemma items: a citation "[1]" or an interval "[0, 1]" in the
    # prose before the list is not the list.
    return next((value for value, _, _ in json_values(text, "[") if normalise_lemma_items(value)), None)


def _from_text_list(text: str) -> list[dict[str, str]]:
    items = []
    for line in text.splitlines():
        match = LIST_ITEM.match(line)
        if match:
            items.append({"statement": match.group(1).strip()})
    return items


def _list_in(value: Any) -> Any:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        for key in LIST_KEYS:
            if isinstance(value.get(key), list):
                return value[key]
    return None


def normalise_lemma_items(raw: Any) -> list[dict[str, Any]]:
    """Accept the alternative field names; drop items without a statement."""
    if not isinstance(raw, list):
        return []
    items = []
    for entry in raw:
        if isinstance(entry, str):
            entry = {"statement": entry}
        if not isinstance(entry, dict):
            continue
        statement = _first(entry, STATEMENT_KEYS)
        if not statement:
            continue
        depends = _first(entry, DEPENDENCY_KEYS) or []
        items.append(
            {
                "id": str(_first(entry, ID_KEYS) or ""),
                "statement": str(statement).strip(),
                "depends_on": [str(d) for d in depends] if isinstance(depends, list) else [str(depends)],
                "source": str(entry.get("source") or ""),
                "approach": str(_first(entry, APPROACH_KEYS) or "").strip(),
            }
        )
    return items


def _first(entry: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if entry.get(key) not in (None, ""):
            return entry[key]
    return None


def _excerpt(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[:limit] + "…")
