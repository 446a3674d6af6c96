"""The JSON answers we ask models for, one model per role whose answer is parsed as JSON.

`lemmata roles --json` prints their JSON schemas; the local backend sends them as the
grammar for constrained decoding. Parsers stay lenient (see each stage); these models
describe what we ask for, not all that we accept.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")


class SurveyAnswer(Answer):
    summary: str = ""
    open_problems: list[str] = Field(default_factory=list)
    key_objects: list[str] = Field(default_factory=list)


class DirectionItem(Answer):
    title: str
    summary: str = ""
    rationale: str = ""


class IdeationAnswer(Answer):
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
    verdict: str = Field(description="valid, invalid or uncertain",
                         json_schema_extra={"enum": ["valid", "invalid", "uncertain"]})
    issues: list[str] = Field(default_factory=list)


class FormalizerAnswer(Answer):
    formal_statement: str = Field(description="the goal with every quantifier, domain and hypothesis explicit")
    assumptions: list[str] = Field(default_factory=list)


class ConsistencyAnswer(Answer):
    consistent: bool
    issues: list[str] = Field(default_factory=list)


class ExperimentAnswer(Answer):
    code: str = Field(description='a Python script that prints one JSON line {"trials": N, "violations": K}')
    rationale: str = ""
