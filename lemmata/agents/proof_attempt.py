"""Reading a prover answer in the spec's six steps, into a proof and an honest confidence."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from pydantic import ValidationError

from lemmata.agents.parsing import FENCE, NOT_JSON
from lemmata.artifacts import SelfAssessment

GAP_OPENER = re.compile(r"\[GAP:\s*")
CITATION_GROUP = re.compile(r"\[([^\[\]]+)\]")
END_MARKERS = re.compile(r"\bQED\b|∎|□|\\qed\b|\\blacksquare|\\square|\\Box\b|this completes", re.IGNORECASE)
WEASEL_WORDS = re.compile(
    r"\b(clearly|obviously|trivially|evidently|it is easy to see|it is obvious|straightforward)\b", re.IGNORECASE
)
UNCITED_PENALTY, UNCITED_CAP = 0.15, 0.30
WEASEL_PENALTY, WEASEL_CAP = 0.05, 0.15
#: Without a self-assessment block: an explicit end of proof earns a "sketch" score at most.
HEURISTIC_WITH_END, HEURISTIC_WITHOUT_END = 0.5, 0.2
MIN_PROOF_CHARACTERS = 20
#: A heading that opens the prover's self-assessment: "### Self-Assessment", "**Self-assessment JSON Object**",
#: "### JSON Self-Assessment".
SELF_ASSESSMENT_HEADING = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*)?(?:\*\*|__)?[ \t]*(?:json[ \t]+)?self[- ]assessment\b[^\n]*$",
    re.IGNORECASE | re.MULTILINE,
)
#: The heading naming nothing but the assessment: "### Self-Assessment JSON Object", "**Self-assessment:**".
BARE_ASSESSMENT_HEADING = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*)?(?:\*\*|__)?[ \t]*(?:json[ \t]+)?self[- ]assessment"
    r"(?:[ \t]+(?:json[ \t]+)?(?:object|block))?[ \t]*:?[ \t]*(?:\*\*|__)?[ \t]*:?[ \t]*$",
    re.IGNORECASE,
)
#: A markdown heading, or a line that is only a bold phrase: "### Gaps", "**Weakest step:**".
SECTION_HEADING = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*(?:\*\*|__)?|(?:\*\*|__))[ \t]*(?P<name>[A-Za-z][A-Za-z \t-]{0,40}?)[ \t]*:?[ \t]*"
    r"(?:\*\*|__)?[ \t]*:?[ \t]*$",
    re.MULTILINE,
)
#: The parts of the self-assessment the spec asks for, as the prover names them when it writes
#: each under a heading of its own.
ASSESSMENT_SECTIONS = frozenset(
    {
        "verification",
        "techniques used",
        "techniques",
        "gaps",
        "weakest step",
        "confidence",
        "confidence calibration",
        "completeness",
        "self-assessment",
        "self assessment",
    }
)
#: A heading line naming a Lean sketch or a Coq proof, at the end of the text before its block.
FORMAL_HEADING = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*)?(?:\*\*|__)?[ \t]*(?:lean(?:[ \t]*4)?|coq)[ \t]+(?:sketch|proof|formali[sz]ation|code|script)\b"
    r"[^\n]*\n\s*\Z",
    re.IGNORECASE | re.MULTILINE,
)
#: Prose after that heading up to this long is a remark on the proof, cut with it.
MAX_REMARK_CHARS = 400
#: What may follow that heading: blank lines, list items ("- **Confidence**: 0.95"), "Key: value" lines.
ASSESSMENT_LINE = re.compile(
    r"^[ \t]*(?:$|[-*+\u2022][ \t]|\d+[.)][ \t]|(?:\*\*|__)?[A-Za-z][\w ]{0,30}(?:\*\*|__)?[ \t]*:)"
)


@dataclass
class ProofAttempt:
    proof_text: str
    confidence: float
    assessment: SelfAssessment | None
    gaps: list[str] = field(default_factory=list)
    lean_sketch: str = ""
    notes: list[str] = field(default_factory=list)
    cut_off: bool = False  # the answer stopped before the model ended it: never a whole proof
    coq_script: str = ""  # a Coq proof of the lemma's formal statement, for the kernel to check

    @property
    def kernel_scripts(self) -> dict[str, str]:
        """The model's scripts by language, as formal/kernels.py's kernels read them."""
        return {"coq": self.coq_script} if self.coq_script else {}


#: Why an answer that stopped before the model ended it is no whole proof, by finish reason.
CUT_OFF_NOTES = {
    "length": "the answer was cut off at its token limit, so the proof is not complete",
    "repetition": "the answer was cut off where it began to repeat itself, so the proof is not complete",
}


def parse_proof_attempt(answer: str, cited_ids: list[str], finish_reason: str | None = None) -> ProofAttempt:
    """Gaps, assessment block (or heuristic), citation and weasel penalties, cleaned proof. An
    answer cut off (`finish_reason` "length" or "repetition") is marked so, with a note: a proof
    that ends mid-sentence is not complete, whatever a checker says of the part it sees, and is
    never verified (verification/policy.py)."""
    gaps = gap_tags(answer)
    assessment, block = find_assessment(answer)
    body = answer.replace(block, "") if block else answer
    body, lean_sketch = _split_formal_block(body, ("lean", "lean4"))
    body, coq_script = _split_formal_block(body, ("coq",))
    proof_text = without_statement_echo(without_self_assessment(body)).strip()
    notes: list[str] = []
    if assessment is not None:
        confidence = assessment.confidence
        gaps += [g for g in assessment.gaps if g not in gaps]
    else:
        confidence = HEURISTIC_WITH_END if END_MARKERS.search(proof_text) else HEURISTIC_WITHOUT_END
        notes.append("no self-assessment block: heuristic confidence")
    cited = cited_identifiers(proof_text)
    uncited = [i for i in cited_ids if i not in cited]
    if uncited:
        confidence -= min(UNCITED_PENALTY * len(uncited), UNCITED_CAP)
        notes.append("does not cite " + ", ".join(uncited))
    weasels = WEASEL_WORDS.findall(proof_text)
    if weasels:
        confidence -= min(WEASEL_PENALTY * len(weasels), WEASEL_CAP)
        quoted = (f'"{word}"' for word in sorted({w.lower() for w in weasels}))
        notes.append("claims without justification: " + ", ".join(quoted))
    if len(proof_text) < MIN_PROOF_CHARACTERS:
        confidence = 0.0
        gaps.append("the answer contains no proof")
    cut_off = finish_reason in CUT_OFF_NOTES
    if cut_off:
        notes.append(CUT_OFF_NOTES[str(finish_reason)])
    return ProofAttempt(
        proof_text, round(max(0.0, min(1.0, confidence)), 4), assessment, gaps, lean_sketch, notes, cut_off, coq_script
    )


#: A section of a prover's answer that restates what it was given to prove: "#### Formal
#: Statement", "### Coq Statement", "**Statement to Prove**" (the README's main command, 2026-11-26:
#: the paper printed the Coq statement it had been shown, whose `lemmata_goal` broke the compile).
ECHOED_SECTION = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*|\*\*|__)[ \t]*(?:formal|coq|lean(?:[ \t]*4)?)[ \t]+statement\b[^\n]*\n.*?(?=^[ \t]*(?:#{1,6}[ \t]|\*\*[A-Z])|\Z)",
    re.IGNORECASE | re.MULTILINE | re.DOTALL,
)


def without_statement_echo(text: str) -> str:
    """The proof without the sections that restate the formal or the Coq statement it was shown:
    the paper prints the formal statement itself, beside the lemma."""
    return ECHOED_SECTION.sub("", text)


def without_self_assessment(text: str) -> str:
    """`text` without a trailing self-assessment section: its heading and the list or the empty
    space (the JSON block already cut out) that follows. Malformed model output, the embedded
    model (2026-11-25): the assessment as a markdown list under "### Self-Assessment", or the
    heading "### Self-Assessment JSON Object" left behind its block; neither is proof. Also the
    assessment's parts as sections of their own (`without_assessment_sections`), before or after
    that heading: on 2026-11-26 a "### Verification" list came before "### JSON Self-Assessment"
    and its block, and both were printed as the end of the proof."""
    while True:
        shorter = _without_assessment_heading(without_assessment_sections(text))
        if shorter == text:
            return text
        text = shorter


def _without_assessment_heading(text: str) -> str:
    headings = list(SELF_ASSESSMENT_HEADING.finditer(text))
    if not headings:
        return text
    start, end = headings[-1].start(), headings[-1].end()
    rest = text[end:]
    names_only_the_assessment = BARE_ASSESSMENT_HEADING.match(headings[-1].group(0)) is not None
    if all(ASSESSMENT_LINE.match(line) for line in rest.splitlines()) or (
        names_only_the_assessment and _is_a_remark(rest)
    ):
        return text[:start].rstrip() + "\n"
    return text  # more proof follows: the heading was the proof's own


def without_assessment_sections(text: str) -> str:
    """`text` without the sections at its end that are parts of a self-assessment, each under a
    heading of its own and made of list items or "Key: value" lines: "### Verification",
    "### Techniques Used", "### Gaps", "### Weakest Step", "### Confidence Calibration" (malformed
    model output, the README's main command on the embedded model, 2026-11-26: the paper printed
    them as the end of a lemma's proof)."""
    headings = list(SECTION_HEADING.finditer(text))
    cut = len(text)
    for heading in reversed(headings):
        name = " ".join(heading.group("name").casefold().split())
        body = text[heading.end() : cut]
        if name not in ASSESSMENT_SECTIONS or not all(ASSESSMENT_LINE.match(line) for line in body.splitlines()):
            break
        cut = heading.start()
    return text if cut == len(text) else text[:cut].rstrip() + "\n"


def _is_a_remark(text: str) -> bool:
    """A few sentences with no display: what a prover adds about its proof after the assessment
    heading ("This proof is elementary and ..."), not proof."""
    return len(text.strip()) <= MAX_REMARK_CHARS and not re.search(r"\\\[|\$\$|\\begin\{", text)


def gap_tags(text: str) -> list[str]:
    """The text of each `[GAP: ...]` tag; brackets inside it (an interval, a citation) are kept."""
    gaps = []
    for opener in GAP_OPENER.finditer(text):
        depth, start = 1, opener.end()
        for index in range(start, len(text)):
            depth += {"[": 1, "]": -1}.get(text[index], 0)
            if depth == 0:
                gaps.append(text[start:index].strip())
                break
    return gaps


def cited_identifiers(text: str) -> set[str]:
    """Every identifier cited in square brackets, alone ([L1]) or grouped ([L1, L2] or [L1; L2])."""
    return {part.strip() for group in CITATION_GROUP.findall(text) for part in re.split(r"[,;]", group)}


def find_assessment(answer: str) -> tuple[SelfAssessment | None, str]:
    """The last self-assessment block and its exact text; an invalid block is still cut out."""
    for match in reversed(list(FENCE.finditer(answer))):
        if match.group(1).lower() in ("json", "") and '"confidence"' in match.group(2):
            return _assessment_from(match.group(2)), match.group(0)
    start = answer.rfind("{")
    while start != -1:
        try:
            value, end = json.JSONDecoder().raw_decode(answer[start:])
        except NOT_JSON:
            value, end = None, 0
        if isinstance(value, dict) and "confidence" in value:
            return _assessment_from(value), answer[start : start + end]
        start = answer.rfind("{", 0, start)
    return None, ""


def _assessment_from(value: object) -> SelfAssessment | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except NOT_JSON:
            return None
    if not isinstance(value, dict) or "confidence" not in value:
        return None
    try:
        return SelfAssessment.model_validate({k: v for k, v in value.items() if k in SelfAssessment.model_fields})
    except ValidationError:
        return None


def _split_formal_block(text: str, languages: tuple[str, ...]) -> tuple[str, str]:
    """The text without its first block in one of `languages` (Lean, Coq), and the block's code. A
    heading naming it just before the block goes with it (the README's main command, 2026-11-26:
    "### Lean 4 Sketch:" was left at the end of a proof in the paper)."""
    for match in FENCE.finditer(text):
        if match.group(1).lower() in languages:
            before = FORMAL_HEADING.sub("", text[: match.start()])
            return before + text[match.end() :], match.group(2).strip()
    return text, ""
