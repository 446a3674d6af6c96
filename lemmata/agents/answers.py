"""The JSON answers we ask models for, one model per role whose answer is parsed as JSON.

`lemmata roles --json` prints their JSON schemas; the local backend sends them as the
grammar for constrained decoding. Parsers stay lenient (see each stage); these models
describe what we ask for, not all that we accept.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

#: A markdown fence line: ``` with an optional language.
CODE_FENCE = re.compile(r"```[A-Za-z0-9_+-]*")


class Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ToolCallItem(Answer):
    tool: str
    argument: str = Field("", description="the query (search tools) or the section name (latex_section_read)")

    @model_validator(mode="before")
    @classmethod
    def _other_shapes(cls, value: Any) -> Any:
        """Also read {"name": t, "arguments": {"query": q}} and {"tool": t, "query": q}: the shapes
        of native tool-calling APIs, which models trained on them write unasked."""
        if not isinstance(value, dict):
            return value
        value = dict(value)
        value.setdefault("tool", value.get("name") or value.get("function") or "")
        arguments = value.get("arguments") if isinstance(value.get("arguments"), dict) else value
        if not isinstance(value.get("argument"), str) or not value.get("argument"):
            for key in ("query", "section", "q", "argument", "input"):
                if isinstance(arguments.get(key), str):
                    value["argument"] = arguments[key]
                    break
        return value


class ToolTurnAnswer(Answer):
    """One turn of a tool-using agent: the calls to make now (none to finish)."""

    tool_calls: list[ToolCallItem] = Field(default_factory=list)


class SurveyAnswer(ToolTurnAnswer):
    papers: list[str] = Field(default_factory=list, description="identifiers of retrieved papers worth keeping")
    summary: str = ""
    open_problems: list[str] = Field(default_factory=list)
    key_objects: list[str] = Field(default_factory=list)

    @field_validator("papers", mode="before")
    @classmethod
    def _records_as_identifiers(cls, value: Any) -> Any:
        """Models copy whole records ({"id": ..., "title": ...}) where an identifier is asked for."""
        if not isinstance(value, list):
            return value
        names = [item.get("id") or item.get("title") if isinstance(item, dict) else item for item in value]
        return [name for name in names if isinstance(name, str)]


class ExtractorAnswer(Answer):
    results: list[str] = Field(default_factory=list, description="theorems, lemmas or bounds the text states")
    techniques: list[str] = Field(default_factory=list)


class DirectionItem(Answer):
    title: str
    summary: str = ""
    rationale: str = ""


class IdeationAnswer(ToolTurnAnswer):
    directions: list[DirectionItem] = Field(default_factory=list)


class PlannerAnswer(Answer):
    chosen: int = Field(0, description="index of the chosen direction, from 0")
    goal: str = Field(description="the precise mathematical statement to prove")
    research_brief: str = ""


class LemmaItem(Answer):
    id: str
    statement: str
    depends_on: list[str] = Field(default_factory=list)
    source: str | None = ""


class LemmaListAnswer(Answer):
    lemmas: list[LemmaItem]


class ArchitectItem(LemmaItem):
    approach: str = Field("", description="how to prove the lemma: technique, key step, what to cite")


class ArchitectAnswer(Answer):
    lemmas: list[ArchitectItem]


class VerifierAnswer(Answer):
    # The enum reaches the schema only: grammar-constrained backends must pick one of the three,
    # while a provider's stray "Valid." is still read leniently.
    verdict: str = Field(
        description="valid, invalid or uncertain", json_schema_extra={"enum": ["valid", "invalid", "uncertain"]}
    )
    issues: list[str] = Field(default_factory=list)


class RefuterAnswer(Answer):
    """The adversarial second check: the first error of a proof, or none."""

    error_found: bool
    first_error: str = Field("", description="the first error, quoted or described; empty when there is none")


#: The variable types a formal statement may use (artifacts.FormalDomain), and "other" for what
#: the checkers cannot state (complex numbers, functions, sets): the grammar offers only these.
FORMAL_TYPES = [
    "integer", "natural", "positive integer", "nonzero integer", "real", "positive real", "nonnegative real",
    "nonzero real", "rational", "other",
]  # fmt: skip


class FormalVariableItem(Answer):
    name: str
    type: str = Field(json_schema_extra={"enum": list[Any](FORMAL_TYPES)})


class FormalizerAnswer(Answer):
    """A statement in lemmata's formal language (lemmata/kernel/tree.py, read from text by lemmata/formal/reading.py), with a restatement in
    words; an empty conclusion and a reason when it cannot be written that way."""

    formal_statement: str = Field(description="the statement with every quantifier, domain and hypothesis explicit")
    variables: list[FormalVariableItem] = Field(default_factory=list)
    hypotheses: list[str] = Field(default_factory=list, description="Python expressions")
    conclusion: str = Field("", description="a Python expression; empty when the statement cannot be written so")
    not_formalizable_because: str = Field("", description="why not, when the conclusion is empty")

    @field_validator("hypotheses", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class ConsistencyAnswer(Answer):
    consistent: bool
    issues: list[str] = Field(default_factory=list)


def _escaped_once(code: str) -> str:
    """A script whose JSON string was escaped twice ("import numpy as np\\nfrom ...": one line full
    of literal backslash-n, as the embedded model wrote it) decoded once more; any other as it is."""
    if "\n" in code or code.count("\\n") < 2:
        return code
    try:
        decoded = json.loads(f'"{code}"')
    except json.JSONDecodeError:
        return code
    return decoded if isinstance(decoded, str) else code


class ExperimentAnswer(Answer):
    code: str = Field(
        description="a Python script whose last printed line is the JSON counts line "
        '{"trials": N, "violations": V}, optionally with "series" and "x_label"'
    )
    rationale: str = ""

    @field_validator("code")
    @classmethod
    def _without_fence(cls, code: str) -> str:
        """The script as it was meant: escaped once only, and without a markdown fence around it
        (the embedded model writes "```python" as the first line of "code", and sometimes
        "```python" again as the last)."""
        code = _escaped_once(code)
        lines = code.strip("\n").split("\n")
        if len(lines) > 1 and CODE_FENCE.fullmatch(lines[0].strip()):
            lines = lines[1:]
            if lines and CODE_FENCE.fullmatch(lines[-1].strip()):
                lines = lines[:-1]
        return "\n".join(lines)
