"""Agent roles: each maps to its token-limit setting, a model tier, and an answer schema."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from lemmata.agents import answers
from lemmata.settings import Settings


@dataclass(frozen=True)
class Role:
    name: str
    max_tokens_setting: str
    tier: Literal["active", "fast"]
    answer: type[BaseModel] | None
    purpose: str
    #: Why no stage calls this role of the spec's list ("" for the roles that are called).
    not_called: str = ""
    #: Its answer is the model's own words: a stretch of the prompt repeated verbatim is an echo
    #: (ChatRequest.own_words). The sketch and the paper's prose restated the request on the
    #: embedded model: 100% and 77% of their tokens out (bench/embedded_run.py, 2026-11-27).
    own_words: bool = False
    #: With own_words: what the embedded backend writes in place of an echo before the answer goes
    #: on (ChatRequest.resume_after_echo). The writer's first answer stopped where its introduction
    #: pasted the request, one part of eight written, and each further turn cost 17-53 s.
    resume_after_echo: str = ""

    def max_tokens(self, settings: Settings) -> int:
        return int(getattr(settings, self.max_tokens_setting))

    def json_schema(self) -> dict[str, Any] | None:
        return self.answer.model_json_schema() if self.answer else None


ROLES: dict[str, Role] = {
    role.name: role
    for role in (
        Role("survey", "MAX_TOKENS_AGENT", "active", answers.SurveyAnswer, "literature survey"),
        Role("extractor", "MAX_TOKENS_ANALYST", "fast", answers.ExtractorAnswer, "key results of a paper read"),
        Role("ideation", "MAX_TOKENS_PLANNER", "active", answers.IdeationAnswer, "divergent research directions"),
        Role(
            "planner", "MAX_TOKENS_PLANNER", "active", answers.PlannerAnswer, "convergent choice of direction and goal"
        ),
        Role("decomposer", "MAX_TOKENS_DECOMPOSER", "active", answers.LemmaListAnswer, "lemma plan"),
        Role("architect", "MAX_TOKENS_ARCHITECT", "active", answers.ArchitectAnswer, "proof architecture"),
        Role("prover", "MAX_TOKENS_PROVER", "active", None, "lemma proofs with self-assessment"),
        Role("verifier", "MAX_TOKENS_VERIFIER", "active", answers.VerifierAnswer, "proof verification"),
        Role(
            "refuter",
            "MAX_TOKENS_VERIFIER",
            "active",
            answers.RefuterAnswer,
            "proof verification, second check: the first error of the whole proof",
        ),
        Role("assembler", "MAX_TOKENS_ASSEMBLER", "active", None, "assembled proof citing lemmas"),
        Role("consistency", "MAX_TOKENS_VERIFIER", "fast", answers.ConsistencyAnswer, "consistency check"),
        Role("crystallizer", "MAX_TOKENS_CRYSTALLIZER", "active", None, "final theorem statement"),
        Role("formalizer", "MAX_TOKENS_FORMALIZER", "fast", answers.FormalizerAnswer, "formal statements"),
        Role("refiner", "MAX_TOKENS_FORMALIZER", "active", None, "refinement after stagnation"),
        Role(
            "counterexample",
            "MAX_TOKENS_FORMALIZER",
            "active",
            None,
            "counterexample search",
            not_called="counterexamples are searched by machine, on each lemma's formal statement before any "
            "proof (sampling with exact arithmetic, and the SMT solver): a model's search would find fewer",
        ),
        Role(
            "analyst",
            "MAX_TOKENS_ANALYST",
            "fast",
            None,
            "analysis stages",
            not_called="the extractor, on the same setting, is the analysis stage there is",
        ),
        Role(
            "sketch",
            "MAX_TOKENS_SKETCH",
            "fast",
            None,
            "proof sketch",
            own_words=True,
        ),
        Role("compress", "MAX_TOKENS_COMPRESS", "fast", None, "agent history compression"),
        Role("experiment", "MAX_TOKENS_AGENT", "active", answers.ExperimentAnswer, "numerical checks"),
        Role("writer", "MAX_TOKENS_AGENT", "active", None, "LaTeX paper", own_words=True, resume_after_echo="\n%%%"),
        Role("qa", "MAX_TOKENS_AGENT", "active", None, "paper questions and answers"),
    )
}


def role(name: str) -> Role:
    try:
        return ROLES[name]
    except KeyError:
        raise ValueError(f"unknown agent role {name!r}") from None
