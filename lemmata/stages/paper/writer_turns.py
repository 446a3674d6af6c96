"""The writer's turns (WRITER_MAX_TURNS): a first answer, then further turns for what it lacked.

A turn is needed when the answer was cut off (finish reason `length`, or `repetition` from the
embedded backend), left out parts (or wrote only lines of the request, which are dropped), or
wrote a part that breaks the compile. The further turn carries the first request (the same
prefix, for the prompt cache), the parts kept so far as the model's answer (not its raw answer:
a small model shown its own copied lines copies them again), and what to write now: the missing
parts by their markers (those written fewest times first), or each broken part with pdflatex's
error. A part that two answers wrote without one kept is not asked again: lemmata's own text
stands in for it (ATTEMPTS_PER_PART). When the turns run out, the draft stands as it is: lemmata fills in the missing parts, and a part
that still breaks the compile is reported (the compile step then fails, keeping the .tex).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from lemmata.agents.client import LLMClient
from lemmata.agents.prompts import Prompt, render_prompt
from lemmata.llm.base import ChatResponse, Message
from lemmata.stages.paper.compile_check import CompileCheck
from lemmata.stages.paper.fragments import Item
from lemmata.stages.paper.parts import ParsedAnswer, parse_answer, part_keys, part_title
from lemmata.stages.paper.prose_claims import RefutedClaim

#: Answers that may write a part before lemmata's own text stands in for it: the embedded model,
#: asked a third time for a preliminaries part it had looped on and then filled with the macro list,
#: looped on it again to its 2,048-token cap (123 s; the README's main command, 2026-11-27).
ATTEMPTS_PER_PART = 2


@dataclass
class Draft:
    """The paper as the parts collected so far make it. `missing`: required parts not written yet."""

    items: list[Item]
    missing: list[str]
    latex: Mapping[str, str] = field(default_factory=dict)  # the writer's parts as typeset, by key
    kept: Mapping[str, str] = field(default_factory=dict)  # the writer's parts as kept (echoes dropped), by key
    absent: list[str] = field(default_factory=list)  # every part not written (lemmata's text stands in)
    removed_citations: list[str] = field(default_factory=list)
    echoed_lines: int = 0
    repairs: Mapping[str, int] = field(default_factory=dict)  # CleanParts.repairs of these parts
    refuted_claims: list[RefutedClaim] = field(default_factory=list)  # removed from the prose, in Limitations


@dataclass
class Outcome:
    draft: Draft
    check: CompileCheck
    turns: int
    reasons: list[str]


@dataclass
class WriterTurns:
    client: LLMClient
    prompt: Prompt
    lemma_ids: Sequence[str]
    max_turns: int
    assemble: Callable[[dict[str, str]], Draft]  # the model's raw parts -> the draft paper
    verify: Callable[[list[Item]], CompileCheck] | None = None  # None: no pdflatex to check with

    def run(self) -> Outcome:
        raw: dict[str, str] = {}
        reasons: list[str] = []
        messages = [Message("user", self.prompt.user)]
        asked = part_keys(self.lemma_ids)
        attempts: Counter[str] = Counter()  # answers that wrote each part (kept or not)
        turn = 0
        while True:
            reply = self.client.complete_reply("writer", self.prompt.system, messages)
            turn += 1
            parsed = parse_answer(reply.text, self.lemma_ids, cut_off=reply.cut_off)
            raw.update({key: text for key, text in parsed.parts.items() if key in asked})
            attempts.update(key for key in asked if key in parsed.parts or key == parsed.cut_part)
            draft = self.assemble(raw)
            more = turn < self.max_turns
            # Fewest attempts first, in the paper's order: the model begins with the first part
            # asked, and a part it failed on came first again, turn after turn.
            wanted = sorted(
                (key for key in draft.missing if attempts[key] < ATTEMPTS_PER_PART), key=attempts.__getitem__
            )
            if wanted and more:
                copied = [key for key in draft.missing if key in parsed.parts]
                reasons.append(_missing_reason(reply, parsed, copied, wanted))
                messages, asked = self._further(draft, _missing_problem(reply, parsed, copied), wanted)
                continue
            check = self.verify(draft.items) if self.verify else CompileCheck()
            if check.writer_errors and more:
                failing = [key.removeprefix("part:") for key in check.writer_errors]
                reasons.append(
                    "compile error in "
                    + "; ".join(
                        f"{part_title(key.removeprefix('part:'))}: {error}"
                        for key, error in check.writer_errors.items()
                    )
                )
                messages, asked = self._further(draft, _compile_problem(check, draft), failing)
                continue
            return Outcome(draft, check, turn, reasons)

    def _further(self, draft: Draft, problem: str, keys: list[str]) -> tuple[list[Message], list[str]]:
        """The next turn's messages (first request, the parts kept, what to write now) and the parts asked."""
        request = render_prompt(
            "writer_followup", problem=problem, parts="\n".join(part_title(key) for key in [*keys, "END"])
        ).user
        kept = "\n".join(f"{part_title(key)}\n{text}" for key, text in draft.kept.items() if key not in keys)
        if not kept:  # no empty assistant message: providers refuse one
            return [Message("user", f"{self.prompt.user}\n\n{request}")], keys
        answer = f"{kept}\n{part_title('END')}"
        return [Message("user", self.prompt.user), Message("assistant", answer), Message("user", request)], keys


def _missing_reason(reply: ChatResponse, parsed: ParsedAnswer, copied: list[str], missing: list[str]) -> str:
    """One line for the paper's metadata: why the next turn was needed."""
    if reply.cut_off:
        why = f"cut off (finish reason {reply.finish_reason})"
    elif reply.finish_reason == "echo":
        why = "ended where it began to repeat the request (finish reason echo)"
    else:
        why = "ended mid-part without the end marker" if parsed.cut_part else "parts missing"
    if copied:
        why += f"; only lines of the request in {', '.join(part_title(key) for key in copied)}"
    return f"{why}; asked for {', '.join(part_title(key) for key in missing)}"


def _missing_problem(reply: ChatResponse, parsed: ParsedAnswer, copied: list[str]) -> str:
    """What the model is told about its last answer."""
    lines = []
    if reply.cut_off or parsed.cut_part:
        where = f" in the part {part_title(parsed.cut_part)}" if parsed.cut_part else ""
        lines.append(
            f"Your answer was cut off{where} before it was complete. Some parts are missing; write them now, shorter."
        )
    elif reply.finish_reason == "echo":
        lines.append("Your answer began to repeat the request word for word; that repetition is dropped.")
    else:
        lines.append("Your answer left out some parts.")
    if copied:
        lines.append(
            f"These parts only repeated lines of the request, which are dropped: "
            f"{', '.join(part_title(key) for key in copied)}. Write them in your own words; "
            'for a lemma, one or two sentences that begin with the words "The idea is".'
        )
    return " ".join(lines)


def _compile_problem(check: CompileCheck, draft: Draft) -> str:
    """Each broken part with pdflatex's error and the part as typeset."""
    paragraphs = []
    for key, error in check.writer_errors.items():
        part = key.removeprefix("part:")
        paragraphs.append(
            f"pdflatex cannot compile your part {part_title(part)}: {error}\n"
            f"The part as lemmata typeset it:\n{draft.latex.get(part, '')}"
        )
    return "\n\n".join(paragraphs) + "\n\nWrite each of these parts again without the error, in plain LaTeX."
