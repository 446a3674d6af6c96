"""Statements in lemmata's formal language, and what the machines find about them.

The formalizer writes a statement — the goal, then each lemma of the plan — as typed variables,
hypotheses and a conclusion (lemmata/formal). Its answer is stored under the hash of its input
(`theory/.formalizer/`), so the formalizer is asked again only when a statement changed (the
spec's rule), on a resumed run, a rework or a rewrite alike. An answer that cannot be read, or
that cannot be the prose's (a number of the prose left out, the conclusion among the
hypotheses), is sent back once with the reason; a statement the formalizer says cannot be written
so (an asymptotic rate, a probability) keeps the model checks only, and says why.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from lemmata.agents.answers import FormalizerAnswer, FormalVariableItem
from lemmata.agents.client import LLMClient
from lemmata.agents.parsing import latex_backslashes_kept, parse_json_answer
from lemmata.agents.prompts import render_prompt
from lemmata.artifacts import FormalCheck, Formalization, FormalSpec, FormalStatement, FormalVariable, atomic_write_text
from lemmata.errors import ModelOutputError
from lemmata.formal.checking import (
    DEFAULT_BUDGET,
    Budget,
    falsify,
    formal_reading,
    not_formalized,
    read_formal,
    worker_started_ahead,
)
from lemmata.formal.definitions import definition_parts, prose_definition
from lemmata.formal.faithfulness import CIRCULAR, ONE_DIRECTION, equivalence_is_the_claim
from lemmata.formal.reading import FUNCTIONS, MODULE_PREFIXES, REDUCTIONS, resolve_domain
from lemmata.kernel.tree import Const, Expr, FormalError, Op, Var

#: Answers the formalizer gives for one statement: the first, and one more after a refusal.
FORMALIZER_ATTEMPTS = 2


def formalize(client: LLMClient, goal: str, cache_dir: Path, budget: Budget = DEFAULT_BUDGET) -> FormalStatement:
    """The goal restated, in the formal language, and falsified (sampling and the solver). Its
    kernel proof is tried by the planning job, beside its model calls (stages/theory/falsify.py:
    checked_plan): a second of CPU that would otherwise hold up the next call."""
    with worker_started_ahead():  # the check's process starts while the formalizer answers
        record = formalization(client, goal, cache_dir)
        check = formal_check(record, budget)
    return FormalStatement(
        goal=goal,
        formal_statement=record.restatement or goal,
        input_sha256=record.input_sha256,
        note=record.note,
        check=check,
    )


def formal_check(record: Formalization, budget: Budget = DEFAULT_BUDGET) -> FormalCheck:
    """The machine checks of a formalized statement short of a kernel proof (formal/checking.py)."""
    if record.spec is None:
        return not_formalized(record.statement, record.not_formalized)
    if record.not_formalized:
        return not_formalized(record.statement, record.not_formalized, record.spec)
    return falsify(record.statement, record.spec, budget)


def stored_formalization(statement: str, cache_dir: Path) -> Path:
    """Where the formalizer's answer for `statement` is kept: under the hash of its input."""
    first = render_prompt("formalizer", statement=statement, feedback="")
    return Path(cache_dir) / f"{hashlib.sha256((first.system + first.user).encode('utf-8')).hexdigest()}.json"


def formalization(client: LLMClient, statement: str, cache_dir: Path) -> Formalization:
    """The formalizer's statement for `statement`, from the store when its input was seen before."""
    cached = stored_formalization(statement, cache_dir)
    key = cached.stem
    if cached.exists():
        try:
            return Formalization.model_validate_json(cached.read_text(encoding="utf-8"))
        except ValueError:
            pass  # a corrupt (or older) entry is asked again, not trusted
    record = _ask(client, statement, key)
    atomic_write_text(cached, record.model_dump_json(indent=2) + "\n")
    return record


def _ask(client: LLMClient, statement: str, key: str) -> Formalization:
    feedback, restatement, refused, spec = "", "", "", None
    declared: list[FormalVariableItem] = []  # the variables of the last answer that declared any
    for attempt in range(1, FORMALIZER_ATTEMPTS + 1):
        prompt = render_prompt("formalizer", statement=statement, feedback=feedback)
        text = client.complete("formalizer", prompt.system, prompt.user, json_answer=True)
        try:
            # LaTeX copied from the prose into a JSON string: `\frac` must not read as a form feed.
            answer = parse_json_answer(latex_backslashes_kept(text), FormalizerAnswer, "formalizer")
        except ModelOutputError as exc:
            refused = f"the formalizer's answer could not be read: {exc}"
            feedback = "Your previous answer could not be read as the JSON object asked for. Answer again."
            continue
        if not answer.variables:
            # Told to write no hypotheses, the embedded formalizer wrote no variables either
            # (`lemmata check`, 2026-11-29): its earlier declarations, for the same statement, hold.
            answer = answer.model_copy(update={"variables": declared})
        declared = answer.variables
        restatement = answer.formal_statement.strip() or restatement
        if not answer.conclusion.strip():
            why = answer.not_formalizable_because.strip() or "the formalizer gave no conclusion"
            return Formalization(
                input_sha256=key, statement=statement, restatement=restatement, not_formalized=why, attempts=attempt
            )
        try:
            spec = with_the_prose_definitions(statement, spec_of(answer))
            formal_reading(statement, spec)
        except FormalError as error:
            refused = f"the formal statement was refused: {error}"
            if str(error) == CIRCULAR:
                # Told so, the embedded formalizer negated the conclusion ("x is not even" for "an
                # integer is even if it is 2k for some k", the README's main command, 2026-11-29):
                # a circular statement, a definition restated, changes only by saying something
                # else, which sampling would then "refute". The refusal stands.
                break
            feedback = (
                f"Your previous answer:\n{_one_line(text)}\nIt was refused: {error}. Write the statement again, "
                "changing what was refused and following the rules."
            ) + both_directions_hint(statement, spec, str(error))
            continue
        return Formalization(
            input_sha256=key, statement=statement, restatement=restatement, spec=spec, attempts=attempt
        )
    return Formalization(
        input_sha256=key,
        statement=statement,
        restatement=restatement,
        spec=spec,
        not_formalized=refused,
        attempts=attempt,
    )


def both_directions_hint(statement: str, spec: FormalSpec | None, refusal: str) -> str:
    """For a statement that claims an equivalence, written with its one hypothesis as one side and
    the conclusion as the other: the two joined by iff(...), to copy. The embedded formalizer, told
    to write both directions of "The sum of two integers is even if and only if at least one of
    them is even", wrote its one direction again (`lemmata check`, 2026-11-29): a statement
    refused, while the equivalence has a counterexample (a = 0, b = 1). Only for an equivalence
    that is the whole claim (faithfulness.equivalence_is_the_claim: one among its conditions would
    become another claim), and a hypothesis that is not a bound on a variable (`n > 0`: a domain
    written as a hypothesis; iff(n > 0, ...) would claim the side false for every other n)."""
    if refusal != ONE_DIRECTION or spec is None or len(spec.hypotheses) != 1:
        return ""
    if not equivalence_is_the_claim(statement) or _bounds_a_variable(read_formal(spec).hypotheses[0]):
        return ""
    return (
        "\nThe statement is one equivalence: your hypothesis is one side and your conclusion the other. "
        "Keep your variables as they are, write no hypotheses, and write the conclusion "
        f"iff({spec.hypotheses[0]}, {spec.conclusion})."
    )


def _bounds_a_variable(expr: Expr) -> bool:
    """`n > 0`, `x != 0`, `1 <= k`: a comparison of one variable with a number."""
    if not (isinstance(expr, Op) and expr.name in ("gt", "ge", "lt", "le", "ne") and len(expr.args) == 2):
        return False
    kinds = {type(arg) for arg in expr.args}
    return kinds == {Var, Const}


#: A call in a formal statement's text: `f(8)`, `rem(3/8, -2/5)` (not `math.sqrt`'s `sqrt`).
_CALL = re.compile(r"(?<![\w.])([^\W\d_]\w*)\s*\(")


def with_the_prose_definitions(prose: str, spec: FormalSpec) -> FormalSpec:
    """`spec` with the prose's own definition before its hypotheses, for each function it calls
    that neither the language nor a hypothesis defines and the prose's conditions define once by
    a formula: "Let f(x)=3x^4-7x^3+2x^2-bx+1. For what value of b is f(1)=1?" came as `f(1) == 1`
    implies `b == -2` (miniF2F's mathd_algebra_159, the embedded model, 2026-12-02: refused for an
    unknown function f). The definition is copied from the prose, not written by a model, and is
    checked as any other (formal/definitions.py)."""
    declared = {variable.name for variable in spec.variables}
    known = {*FUNCTIONS, *REDUCTIONS, "len", "range", *MODULE_PREFIXES, *declared}
    defined = {parts[0] for text in spec.hypotheses if (parts := definition_parts(text, known))}
    added: dict[str, str] = {}
    for text in (*spec.hypotheses, spec.conclusion):
        for name in _CALL.findall(text):
            if name in known or name.lower() in known or name in defined or name in added:
                continue
            found = prose_definition(prose, name)
            if not isinstance(found, str):
                params, right_side = found
                added[name] = f"{name}({', '.join(params)}) = {right_side}"
    if not added:
        return spec
    return spec.model_copy(update={"hypotheses": [*added.values(), *spec.hypotheses]})


def spec_of(answer: FormalizerAnswer) -> FormalSpec:
    """The answer as a FormalSpec; FormalError for a variable the checkers cannot state. A
    hypothesis that only gives variables their type ("x, y, and z are positive reals", as the
    embedded model writes them) becomes their domain: the same statement, in the form the
    checkers read."""
    domains = {item.name.strip(): item.type for item in answer.variables}
    hypotheses = []
    for hypothesis in answer.hypotheses:
        typed = TYPE_STATEMENT.match(hypothesis.strip())
        if typed is None:
            if hypothesis.strip():
                hypotheses.append(hypothesis)
            continue
        domain = " ".join(filter(None, (typed.group("sign"), typed.group("kind").lower().rstrip("s"))))
        for name in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", typed.group("names").strip()):
            domains[name] = domain
    variables = [FormalVariable(name=name, type=resolve_domain(name, kind)) for name, kind in domains.items()]
    return FormalSpec(variables=variables, hypotheses=hypotheses, conclusion=answer.conclusion.strip())


#: "x, y, and z are positive reals", "n is a natural number", "p, q are integers".
TYPE_STATEMENT = re.compile(
    r"^(?P<names>[A-Za-z_]\w*(?:\s*,\s*(?:and\s+)?[A-Za-z_]\w*)*(?:\s+and\s+[A-Za-z_]\w*)?)\s+(?:is|are)\s+"
    r"(?:an?\s+)?(?P<sign>positive|nonnegative|non-negative)?\s*"
    r"(?P<kind>integers?|naturals?|reals?|rationals?)(?:\s+numbers?)?\.?$",
    re.IGNORECASE,
)


def _one_line(text: str) -> str:
    return " ".join(text.split())
