"""Theory, step three: assemble the proved lemmas, check consistency, crystallize the theorem,
sketch the argument for the review (sketch.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from difflib import SequenceMatcher
from typing import Literal

from lemmata.agents.answers import ConsistencyAnswer
from lemmata.agents.client import LLMClient
from lemmata.agents.parsing import NOT_JSON, latex_backslashes_kept, parse_json_answer, strip_fences
from lemmata.agents.prompts import render_prompt
from lemmata.agents.proof_attempt import cited_identifiers, without_self_assessment
from lemmata.artifacts import ConsistencyCheck, ProvedLemma, Theory, TheoryPlan, proven_count
from lemmata.errors import ModelOutputError, ProviderError
from lemmata.stages.theory.prove import short_statement
from lemmata.stages.theory.sketch import sketch_theory
from lemmata.verification.ladder import label

#: A tail of a line this long (normalised) that is this alike the note the model was sent is a copy of it.
MIN_ECHO_CHARS = 24
ECHO_SIMILARITY = 0.8
CITATION_PROBLEM = re.compile(r"uncited|missing citation|not cited", re.IGNORECASE)
#: A first line that introduces the answer instead of stating anything ("Sure! Here is the theorem:").
PREAMBLE_LINE = re.compile(
    r"^\s*(?:sure|certainly|of course|okay|ok|here(?:'s| is| are)|below is|the (?:final |crystallized |precise |"
    r"resulting )?(?:theorem|statement|result)(?: statement)? (?:is|reads)|i (?:have|will|would|can)|as requested)"
    r"\b[^\n]*(?::|\.|!)\s*$",
    re.IGNORECASE,
)
THEOREM_LABEL = re.compile(
    r"^\s*(?:\*\*|__)?(?:main )?(?:theorem|statement|result)(?: \d+)?[.:]?(?:\*\*|__)?[.:]?\s*", re.IGNORECASE
)
THEOREM_ENVIRONMENT = re.compile(
    r"^\s*\\begin\{(theorem|maintheorem)\}(?:\[[^\]]*\])?\s*(.*?)\s*\\end\{\1\}\s*$", re.DOTALL
)
#: Where a statement ends and its proof (or the model's commentary) begins: a proof heading,
#: inline in bold or on its own line, a proof environment, a markdown heading.
PROOF_START = re.compile(
    r"(?:\*\*|__)\s*Proof\b[^*_\n]{0,3}(?:\*\*|__)|\\begin\{proof\}|^[ \t]*Proof[.:]"
    r"|^[ \t]*#{1,6}[ \t]",
    re.MULTILINE | re.IGNORECASE,
)
#: An answer that talks about the task instead of stating a theorem.
CHATTER = re.compile(
    r"\b(?:I cannot|I can't|I am unable|I'm unable|I'm sorry|I apologi[sz]e|as an AI|"
    r"language model|unable to (?:determine|state|provide)|need more information)\b",
    re.IGNORECASE,
)


def assemble_theory(
    client: LLMClient,
    plan: TheoryPlan,
    lemmas: list[ProvedLemma],
    beside_the_sketch: Callable[[Theory], None] | None = None,
) -> Theory:
    """The lemmas assembled into a proof of the goal, checked for consistency, the theorem stated.
    When a machine checked the goal's own formal statement (the plan's `goal_check`), the theorem is
    the goal as formalized: no crystallizer call, whose statement could claim more than was checked.
    `beside_the_sketch(theory)`, when given, is called once with the theory as it is before its
    sketch, on another thread while the sketch call waits on the model (the formal development's
    kernel check: a second of CPU after every assembly, 2026-11-27)."""
    goal_check = plan.goal_check
    usable = [lemma for lemma in lemmas if lemma.verified or not lemma.proof_failed]
    if not usable:
        check = ConsistencyCheck(passed=False, issues=["no lemma was proved"])
        theory = Theory(
            goal=plan.goal,
            theorem_statement=plan.goal,
            lemmas=lemmas,
            assembled_proof="",
            consistency=check,
            proof_status="failed",
            formal_statement=plan.formal_statement,
            refuted=plan.refuted,
            goal_check=goal_check,
            sketch_note="no lemma was proved",
        )
        theory = theory.model_copy(update={"proof_status": proof_status(theory)})
        if beside_the_sketch is not None:
            beside_the_sketch(theory)
        return theory
    proof = assemble(client, plan.goal, usable)
    check = check_consistency(client, plan.goal, proof, [lemma.id for lemma in usable])
    if not check.passed and is_citation_problem(check):  # citation failures need a new assembly
        proof = assemble(client, plan.goal, usable, retry_note(check))
        check = check_consistency(client, plan.goal, proof, [lemma.id for lemma in usable])
    if goal_check is not None and goal_check.verdict == "machine_checked":
        statement, error = plan.formal_statement or plan.goal, ""
    else:
        # The statement is asked for once the proof is final (a statement of a rejected proof would
        # be a wasted call); after a failed check, with the check's note, for a more careful statement.
        statement, error = crystallize_or_goal(client, plan.goal, proof, retry_note(check) if not check.passed else "")
        if check.passed and error:  # an answer that was no statement: asked once more, saying why
            statement, error = crystallize_or_goal(
                client,
                plan.goal,
                proof,
                f"Your previous answer was rejected: {error}. Answer with the theorem statement only.",
            )
    theory = Theory(
        goal=plan.goal,
        theorem_statement=statement,
        lemmas=lemmas,
        assembled_proof=proof,
        consistency=check,
        proof_status="partial",
        formal_statement=plan.formal_statement,
        crystallization_error=error,
        refuted=plan.refuted,
        goal_check=goal_check,
    )
    theory = theory.model_copy(update={"proof_status": proof_status(theory)})
    # The sketch waits on the model; work on the theory that needs none runs meanwhile. The pool's
    # end waits for it, whatever the sketch does, and its error is raised here.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="beside-the-sketch") as pool:
        beside = pool.submit(beside_the_sketch, theory) if beside_the_sketch is not None else None
        sketch, note = sketch_theory(client, theory)
        if beside is not None:
            beside.result()
    return theory.model_copy(update={"sketch": sketch, "sketch_note": note})


#: The header of a lemma entry of the assembler's prompt: "[L2] (machine-checked, confidence 0.80)".
_LISTING_HEADER = re.compile(r"^\s*\[(?P<id>[^\]\n]+)\]\s*\([^()\n]*confidence\s+\d(?:\.\d+)?\)")
_PROOF_LABEL = re.compile(r"^\s*Proof:\s*")


def assemble(client: LLMClient, goal: str, lemmas: list[ProvedLemma], feedback: str = "") -> str:
    """The assembler's proof of the goal from the lemmas. It is given each lemma's statement only
    (at most 120 characters, the spec's proven-lemma context), not its proof: given the provers'
    proofs, the embedded model proved the lemmas again and cited none of them, twice, and the
    spec's citation retry cost a second assembly (the README's main command, 2026-11-27)."""
    listing = "\n".join(
        f"[{lemma.id}] ({label(lemma.status)}, confidence {lemma.confidence:.2f}) {short_statement(lemma.statement)}"
        for lemma in lemmas
    )
    prompt = render_prompt("assembler", goal=goal, lemmas=listing, feedback=feedback)
    # The assembler copies the provers' format, self-assessment included: that is no proof, and
    # citations in it ("Techniques used: [L4]") must not count for the consistency check.
    answer = without_self_assessment(
        proof_of_json_answer(strip_fences(client.complete("assembler", prompt.system, prompt.user)))
    )
    return without_announcements(without_listing_echo(without_feedback_echo(answer, feedback), lemmas)).strip()


#: "Here is the assembled proof:", "Below is the complete proof." — a sentence about the answer.
_ANNOUNCEMENT = re.compile(
    r"[ \t]*\b(?:here is|here's|below is)\s+(?:the|my|an?)\s+(?:[\w-]+\s+){0,3}proof\b[^.:\n]{0,40}[:.][ \t]*",
    re.IGNORECASE,
)


def without_announcements(answer: str) -> str:
    """The answer without sentences that announce it. Malformed model output, the README's main
    command on the embedded model (2026-11-27): "... we will use the given lemma [L1]. Here is the
    assembled proof:", printed in the paper as part of the main result's proof."""
    return _ANNOUNCEMENT.sub(" ", answer).replace(" \n", "\n")


def proof_of_json_answer(answer: str) -> str:
    """The "proof" of an answer that is a JSON object, else the answer. Malformed model output,
    the README's main command on the embedded model (2026-11-26): the assembler answered
    {"proof": ..., "reasoning": ..., "citations": ["[L2]", "[L3]", "[L4]"]}, and the paper printed
    the object as the main result's proof sketch, its citation list counting as citations."""
    text = answer.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return answer
    try:
        value = json.loads(latex_backslashes_kept(text), strict=False)
    except NOT_JSON:
        return answer
    proof = value.get("proof") if isinstance(value, dict) else None
    return proof if isinstance(proof, str) and proof.strip() else answer


def without_feedback_echo(answer: str, feedback: str) -> str:
    """The answer without the note it was sent copied back into it: asked again with "The
    consistency check rejected the previous version: uncited lemma L1; ... Cite every lemma as
    [id].", the embedded model ended its proof with that very line (the README's main command,
    2026-11-25), which the paper then printed as part of the main result's proof. From the first
    sentence of a line on which the rest of the line reads like the note, the line goes."""
    note = _normalised(feedback)
    if not note:
        return answer
    kept = []
    for line in answer.splitlines():
        sentences = re.split(r"(?<=[.;:!?])\s+", line)
        for start in range(len(sentences)):
            rest = _normalised(" ".join(sentences[start:]))
            if len(rest) >= MIN_ECHO_CHARS and SequenceMatcher(None, rest, note).ratio() >= ECHO_SIMILARITY:
                line = " ".join(sentences[:start]).rstrip()
                break
        kept.append(line)
    return "\n".join(kept)


def without_listing_echo(answer: str, lemmas: list[ProvedLemma]) -> str:
    """The answer without the lemma entries of its prompt copied into it: the embedded assembler
    (the AM-GM recording, 2026-11-26) wrote its proof and then pasted "[L2] (machine-checked,
    confidence 0.80) <statement>" and "Proof: <the prover's proof>" for each lemma, which the paper
    printed as the main result's proof sketch, markdown headings and all. From an entry's header
    line, every line of that lemma's proof (and blank line) goes; the first other line stays."""
    proofs = {
        lemma.id: {_normalised(line) for line in lemma.proof_text.splitlines() if line.strip()} for lemma in lemmas
    }
    kept: list[str] = []
    copied: set[str] | None = None
    for line in answer.splitlines():
        header = _LISTING_HEADER.match(line)
        if header and header.group("id") in proofs:
            copied = proofs[header.group("id")]
            continue
        if copied is not None:
            if not line.strip() or _normalised(_PROOF_LABEL.sub("", line)) in copied:
                continue
            copied = None
        kept.append(line)
    return "\n".join(kept)


def _normalised(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.casefold()).split())


def check_consistency(client: LLMClient, goal: str, proof: str, lemma_ids: list[str]) -> ConsistencyCheck:
    uncited = uncited_lemmas(proof, lemma_ids)
    prompt = render_prompt("consistency", goal=goal, lemma_ids=", ".join(lemma_ids), proof=proof)
    try:
        text = client.complete("consistency", prompt.system, prompt.user, json_answer=True)
        answer = parse_json_answer(text, ConsistencyAnswer, "consistency")
    except (ProviderError, ModelOutputError) as exc:
        # A check that could not run has not passed.
        return ConsistencyCheck(
            passed=False,
            uncited_lemmas=uncited,
            issues=[
                f"the consistency check could not run: {exc}",
                *(f"uncited lemma {lemma_id}" for lemma_id in uncited),
            ],
        )
    issues = [issue for issue in answer.issues if issue.strip()]
    issues += [f"uncited lemma {lemma_id}" for lemma_id in uncited if not any(lemma_id in i for i in issues)]
    return ConsistencyCheck(passed=answer.consistent and not uncited, uncited_lemmas=uncited, issues=issues)


def crystallize_or_goal(client: LLMClient, goal: str, proof: str, feedback: str = "") -> tuple[str, str]:
    """The crystallized statement, or the goal and why: lemma work is never lost to this call."""
    try:
        return crystallize(client, goal, proof, feedback), ""
    except (ProviderError, ModelOutputError) as exc:
        return goal, f"the crystallizer failed, the goal is stated instead: {exc}"


def crystallize(client: LLMClient, goal: str, proof: str, feedback: str = "") -> str:
    prompt = render_prompt("crystallizer", goal=goal, proof=proof, feedback=feedback)
    return statement_from(client.complete("crystallizer", prompt.system, prompt.user))


def before_its_proof(text: str) -> str:
    """The statement without the proof and commentary a model wrote after it ("... is even.
    **Proof:** 1. ... #### Verification ...", the embedded model, 2026-11-25): cut at the first
    proof heading or markdown heading that is not inside a math environment (the spec: the
    crystallizer never truncates math environments). A text that starts with its proof is kept."""
    for match in PROOF_START.finditer(text):
        before = text[: match.start()]
        if not before.strip():
            continue
        inside_math = (
            before.count("\\begin{") != before.count("\\end{")
            or before.count("\\[") != before.count("\\]")
            or before.count("\\(") != before.count("\\)")
            or before.replace("\\$", "").count("$") % 2 == 1
        )
        if not inside_math:
            return before.strip()
    return text


def statement_from(answer: str) -> str:
    """The theorem statement in a crystallizer answer: its fences, an introducing line, a
    "Theorem:" label or a theorem environment around it removed, nothing inside cut. An answer
    that is empty or talks instead of stating is a ModelOutputError, never a theorem."""
    text = strip_fences(answer)
    lines = text.splitlines()
    while lines and (not lines[0].strip() or PREAMBLE_LINE.match(lines[0])):
        lines.pop(0)
    text = "\n".join(lines).strip()
    environment = THEOREM_ENVIRONMENT.match(text)
    if environment:
        text = environment.group(2)
    text = THEOREM_LABEL.sub("", text, count=1).strip()
    text = before_its_proof(text)
    if not text:
        raise ModelOutputError("the crystallizer answered no statement")
    if CHATTER.search(text) or not re.search(r"[A-Za-z]", text):
        raise ModelOutputError(
            f"the crystallizer answered with chatter, not a statement: {' '.join(text.split())[:120]!r}"
        )
    return text


def uncited_lemmas(proof: str, lemma_ids: list[str]) -> list[str]:
    cited = cited_identifiers(proof)
    return [lemma_id for lemma_id in lemma_ids if lemma_id not in cited]


def is_citation_problem(check: ConsistencyCheck) -> bool:
    return bool(check.uncited_lemmas) or any(CITATION_PROBLEM.search(issue) for issue in check.issues)


def retry_note(check: ConsistencyCheck) -> str:
    note = "The consistency check rejected the previous version: " + "; ".join(check.issues) + "."
    return note + (" Cite every lemma as [id]." if is_citation_problem(check) else " State only what is proved.")


def proof_status(theory: Theory) -> Literal["proved", "partial", "failed"]:
    """proved: the main result is established; partial: some lemma has a proof; failed: none has."""
    if theory.main_result_established:
        return "proved"
    return "partial" if proven_count(theory.lemmas) else "failed"
