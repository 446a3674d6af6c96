"""The Coq file lemmata writes around a proof, and what Coq's answer about it means.

lemmata writes the whole file; the model supplies at most a proof body (a tactic script):

    <prelude of the scope>                      Require Import ZArith Lia. / Reals Lra Psatz Lia ZArith.
    Definition lemmata_statement_<nonce> : Prop := <proposition>.
    Theorem lemmata_goal : <proposition>.
    Proof.
    <body>
    Qed.
    Check (lemmata_goal : lemmata_statement_<nonce>).
    Locate lemmata_marker_<nonce>.
    Print Assumptions lemmata_goal.

Two independent layers keep a body from proving anything but the statement:
1. `script_refusal` reads the body before Coq does: comments and strings out, then every sentence
   must start as a tactic does (a lower-case word, after bullets, braces and goal selectors), and
   no word of `REFUSED_WORDS` may appear anywhere (Admitted, Axiom, Set/Unset, Require, Notation,
   Ltac, Qed, Print, native_compute, exact_no_check, ... and `#[...]` attributes);
2. `judge` reads what Coq said after the proof, behind a marker the body cannot know (a fresh
   nonce): the theorem must still have the statement defined before the body (the `Check`), and
   `Print Assumptions` must say "Closed under the global context" or list only the standard axioms
   the Reals library itself rests on (`STANDARD_AXIOMS`, each with its exact type as Coq prints it).
An `Admitted` helper, an `Axiom`, `Unset Guard Checking` or a restated theorem all fail layer 2
even when layer 1 is bypassed (tests/unit/formal/test_coq.py does so).

Running coqc (in a box, with time and memory limits) is lemmata/formal/coq.py's: this module
only writes the file and judges the answer, and only its judgement of a proof carries the
certificate the status rule accepts (verdict.py).
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass
from typing import Literal

from lemmata.kernel.certificate import coq_certificate

Scope = Literal["Z", "R"]
Outcome = Literal["proved", "failed", "refused", "timed_out", "unavailable"]

PRELUDES: dict[str, str] = {
    "Z": "Require Import ZArith Lia.\nOpen Scope Z_scope.\n",
    "R": "Require Import Reals Lra Psatz Lia ZArith.\nOpen Scope R_scope.\n",
}
THEOREM = "lemmata_goal"
#: The axioms of the standard library a proof may rest on, exactly as `Print Assumptions` prints
#: them (whitespace aside). Measured over Rabs_triang, sqrt_sqrt, exp_pos, ln_exp, MVT, RiemannInt,
#: atan_right_inv, Rle_dec, archimed, completeness, ...: the Reals library rests on these four
#: (the last only for ln, Rpower, atan, integrals, the mean value theorem). ZArith rests on none.
REALS_AXIOMS = (
    "ClassicalDedekindReals.sig_forall_dec : forall P : nat -> Prop, (forall n : nat, {P n} + {~ P n}) ->"
    " {n : nat | ~ P n} + {forall n : nat, P n}",
    "ClassicalDedekindReals.sig_not_dec : forall P : Prop, {~ ~ P} + {~ P}",
    "FunctionalExtensionality.functional_extensionality_dep : forall (A : Type) (B : A -> Type)"
    " (f g : forall x : A, B x), (forall x : A, f x = g x) -> f = g",
    "Classical_Prop.classic : forall P : Prop, P \\/ ~ P",
)
STANDARD_AXIOMS: dict[str, frozenset[str]] = {"Z": frozenset(), "R": frozenset(REALS_AXIOMS)}
CLOSED = "Closed under the global context"

#: Words a body may not contain anywhere, with why. Vernacular commands also fail the rule that a
#: sentence starts as a tactic; listing them here as well means a sentence split that differs
#: from Coq's still finds them.
REFUSAL_REASONS = {
    "ends or abandons the proof without proving it": (
        "Admitted admit give_up Abort Qed Defined Save Proof Restart Undo Back BackTo Reset Unshelve"
    ),
    "assumes instead of proving": (
        "Axiom Axioms Parameter Parameters Hypothesis Hypotheses Variable Variables Conjecture Context Assume "
        "Primitive Register"
    ),
    "states another theorem": (
        "Theorem Lemma Remark Fact Corollary Proposition Property Example Goal Derive Obligation Obligations Next Solve"
    ),
    "changes how Coq checks": (
        "Set Unset Test Opaque Transparent Strategy Arguments Typeclasses Generalizable Implicit Universe Universes "
        "Constraint"
    ),
    "declares or redefines something the statement or the tactics could use": (
        "Notation Infix Reserved Definition Fixpoint CoFixpoint Function Inductive CoInductive Variant Record "
        "Structure Class Instance Existing Ltac Ltac2 Tactic Let Module Section End Include Canonical Coercion Hint "
        "Create Scheme Combined Open Close Delimit Undelimit Bind Add Remove Local Global Program Polymorphic "
        "Monomorphic Cumulative NonCumulative Private"
    ),
    "loads other code or files": "Require Import Export From Load Declare Cd",
    "is a command that prints, writes files, wraps other commands or leaves Coq": (
        "Print Redirect Drop Extraction Extract Separate Recursive Show Check Search SearchPattern SearchRewrite "
        "About Locate Inspect Compute Eval Time Timeout Fail Succeed Optimize Debug Info Instructions Profile Quit "
        "Comments"
    ),
    "skips the kernel's standard check": (
        "native_compute native_cast_no_check vm_cast_no_check exact_no_check change_no_check"
    ),
}
REFUSED_WORDS = {word: reason for reason, words in REFUSAL_REASONS.items() for word in words.split()}
MAX_BODY_CHARS = 20_000
MAX_TERM_CHARS = 10_000
#: The whole file goes through a pipe into the box before coqc starts: within the pipe's 64 KiB,
#: writing it never waits on the box.
MAX_SOURCE_BYTES = 60_000


def script_refusal(body: str) -> str:
    """Why the body may not be checked, naming the refused word or sentence; "" when it may."""
    if not body.strip():
        return "the proof body is empty"
    if len(body) > MAX_BODY_CHARS:
        return f"the proof body is longer than {MAX_BODY_CHARS} characters"
    code, problem = code_of(body, "the proof body")
    if problem:
        return problem
    tokens = tokens_of(code)
    problem = _refused_word(tokens, "the proof body")
    if problem:
        return problem
    for start in _sentence_starts(tokens):
        if not _starts_a_tactic(start):
            return f"the proof body has a sentence starting with `{start}`: only tactics may be used, not commands"
    return ""


def term_refusal(term: str, what: str) -> str:
    """Why `term` (the proposition, a hint) is not one plain Coq term; "" when it is. It may contain
    no sentence end, comment, string or refused word: it could otherwise end the statement and add
    commands of its own."""
    if not term.strip():
        return f"{what} is empty"
    if len(term) > MAX_TERM_CHARS:
        return f"{what} is longer than {MAX_TERM_CHARS} characters"
    if "(*" in term or "*)" in term or '"' in term:
        return f"{what} contains a comment or a string"
    code, problem = code_of(term, what)
    if problem:
        return problem
    tokens = tokens_of(code)
    if "." in tokens:
        return f"{what} contains a sentence end (a dot followed by a space)"
    problem = _refused_word(tokens, what)
    if problem:
        return problem
    depth = 0
    for token in tokens:
        depth += {"(": 1, ")": -1}.get(token, 0)
        if depth < 0:
            return f"{what} closes a parenthesis it did not open"
    return f"{what} leaves a parenthesis open" if depth else ""


def code_of(text: str, what: str) -> tuple[str, str]:
    """The text with comments (nested) and strings replaced by a space and `""`; or a problem."""
    for character in text:
        if not (character.isascii() and (character.isprintable() or character in "\n\t\r")):
            return "", f"{what} contains the character {character!r}: only printable ASCII is accepted"
    out: list[str] = []
    position, depth = 0, 0
    while position < len(text):
        if text.startswith("(*", position):
            depth, position = depth + 1, position + 2
        elif depth and text.startswith("*)", position):
            depth, position = depth - 1, position + 2
            if not depth:
                out.append(" ")
        elif depth:
            # Coq reads strings inside comments (a "*)" in one does not end the comment): refusing
            # them keeps this reading and Coq's the same.
            if text[position] == '"':
                return "", f'{what} has a string (") inside a comment'
            position += 1
        elif text[position] == '"':
            end = position + 1
            while True:
                end = text.find('"', end)
                if end < 0:
                    return "", f"{what} has a string that is never closed"
                if text.startswith('""', end):  # Coq's escaped quote
                    end += 2
                    continue
                break
            out.append(' "" ')
            position = end + 1
        else:
            out.append(text[position])
            position += 1
    if depth:
        return "", f"{what} has a comment that is never closed"
    return "".join(out), ""


TOKEN = re.compile(
    r"""(?P<word>[A-Za-z_][A-Za-z0-9_']*(?:\.[A-Za-z_][A-Za-z0-9_']*)*)
      | (?P<number>[0-9][0-9_]*(?:\.[0-9][0-9_]*)?)
      | (?P<end>\.(?=\s|$))
      | (?P<string>"")
      | (?P<single>[()\[\]{},;.])
      | (?P<symbol>[^\sA-Za-z0-9_()\[\]{},;."]+)""",
    re.VERBOSE,
)


def tokens_of(code: str) -> list[str]:
    """Words (qualified names whole), numbers, single brackets, runs of other symbols; a sentence
    end (a dot before a blank or the end) is the token ".", a dot inside `..` or `x.(f)` is "."
    too, so every place Coq could end a sentence ends one here."""
    return [match.group() for match in TOKEN.finditer(code)]


def _refused_word(tokens: list[str], what: str) -> str:
    for token in tokens:
        if "#" in token:
            return f"{what} contains `{token}`: attributes (#[...]) change how Coq checks"
        for part in token.split("."):
            if part in REFUSED_WORDS:
                return f"{what} contains `{part}`, which {REFUSED_WORDS[part]}"
    return ""


BULLET = re.compile(r"-+|\++|\*+")
SELECTOR = re.compile(r"(?:all|par|!|[0-9]+(?:-[0-9]+)?(?:,[0-9]+(?:-[0-9]+)?)*|\[[A-Za-z_][A-Za-z0-9_']*\])")


def _sentence_starts(tokens: list[str]) -> list[str]:
    """The first token of each sentence after its bullets, braces and goal selector."""
    starts = []
    position = 0
    while position < len(tokens):
        while position < len(tokens) and (tokens[position] in ("{", "}") or BULLET.fullmatch(tokens[position])):
            position += 1
        if position >= len(tokens):
            break
        selector = _selector_length(tokens, position)
        if selector:
            position += selector
            continue  # `2: {` and `all: lia` alike: what follows the selector is checked as a start
        starts.append(tokens[position])
        while position < len(tokens) and tokens[position] != ".":
            position += 1
        position += 1
    return starts


def _selector_length(tokens: list[str], position: int) -> int:
    """How many tokens a goal selector (`2:`, `1-3,5:`, `all:`, `[x]:`, `!:`) takes here; 0 if none."""
    if tokens[position] == "!:":
        return 1
    for end in range(position + 1, min(position + 16, len(tokens))):
        if tokens[end] == ":":
            return end - position + 1 if SELECTOR.fullmatch("".join(tokens[position:end])) else 0
    return 0


def _starts_a_tactic(token: str) -> bool:
    """Tactics are lower-case words (`intros`, `Z.div_mod_to_equations`), or open a parenthesised
    or bracketed tactic; every vernacular command starts with a capital."""
    last = token.rsplit(".", 1)[-1]
    return last[:1].islower() or token in ("(", "[")


def coq_source(proposition: str, scope: Scope, body: str, *, nonce: str = "0") -> str:
    """The whole file lemmata writes around a body; `nonce` names the statement and the marker
    (`prove` draws a fresh one for each run, which the body cannot know)."""
    proposition = " ".join(proposition.split())  # one line each: Coq's error lines say which part failed
    return (
        PRELUDES[scope]
        + f"Definition lemmata_statement_{nonce} : Prop := {proposition}.\n"
        + f"Theorem {THEOREM} : {proposition}.\n"
        + "Proof.\n"
        + body.strip()
        + "\nQed.\n"
        + f"Check ({THEOREM} : lemmata_statement_{nonce}).\n"
        + f"Locate lemmata_marker_{nonce}.\n"
        + f"Print Assumptions {THEOREM}.\n"
    )


def _line_parts(scope: Scope, body: str) -> tuple[int, int, int]:
    """The first line of the statement, of the body and of `Qed.` in coq_source's file."""
    statement = PRELUDES[scope].count("\n") + 1
    body_start = statement + 3
    return statement, body_start, body_start + body.strip().count("\n") + 1


@dataclass(frozen=True)
class CoqRun:
    """What coqc did with a file: its exit status, the ends of its streams, whether it ran out of time."""

    returncode: int
    stdout: str
    stderr: str
    timed_out: bool


@dataclass(frozen=True)
class Judgement:
    outcome: Outcome
    detail: str
    axioms: tuple[str, ...]
    certificate: str  # for proved: the kernel's certificate of the proposition; else ""


def judge(proposition: str, scope: Scope, body: str, nonce: str, run: CoqRun, timeout: float) -> Judgement:
    """What coqc's answer about `coq_source(proposition, scope, body, nonce=nonce)` says: proved
    only when coqc accepted the file, the marker is there and Print Assumptions lists nothing but
    the scope's standard axioms."""
    # The wall clock (the caller ends the box), or the CPU limit (SIGXCPU), seen directly or through bwrap.
    if run.timed_out or run.returncode in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
        return Judgement("timed_out", f"Coq did not finish within {timeout:g} s", (), "")
    if run.returncode in (-signal.SIGKILL, 128 + signal.SIGKILL):
        return Judgement("failed", "Coq was killed (out of memory?)", (), "")
    if run.returncode != 0:
        outcome, detail = _failure(run, scope, body)
        return Judgement(outcome, detail, (), "")
    listed = _assumptions(run.stdout, nonce)
    if listed is None:
        return Judgement("refused", "Coq's answer to Print Assumptions is missing or unreadable", (), "")
    unexpected = [entry for entry in listed if entry not in STANDARD_AXIOMS[scope]]
    if unexpected:
        detail = f"the proof rests on `{unexpected[0].split(' : ')[0]}`, which is no standard axiom (Print Assumptions)"
        return Judgement("refused", detail, tuple(listed), "")
    return Judgement("proved", "", tuple(listed), coq_certificate(proposition))


def _failure(run: CoqRun, scope: Scope, body: str) -> tuple[Outcome, str]:
    """Coq stopped with an error: the part of the file it stopped in says what it means."""
    line, message = first_error(run.stderr)
    statement, body_start, qed = _line_parts(scope, body)
    if line is None:
        return "failed", message or f"coqc ended with status {run.returncode}"
    if line < statement:
        return "unavailable", f"Coq's libraries did not load: {message}"
    if line < body_start:
        return "failed", f"{STATEMENT_FAILS}: {message}"
    if line < qed:
        return "failed", f"line {line - body_start + 1} of the proof: {message}"
    if line == qed:
        return "failed", f"at Qed: {message}"
    return "refused", f"the theorem proved is not the statement: {message}"


STATEMENT_FAILS = "the statement does not check"
FILE_LINE = re.compile(r'^File "[^"]*", line (\d+), characters')


def first_error(stderr: str) -> tuple[int | None, str]:
    """The line of Coq's first error and its message on one line (without "Error:"); warnings,
    which Coq locates the same way, are passed over."""
    lines = stderr.splitlines()
    for index, text in enumerate(lines):
        located = FILE_LINE.match(text)
        if located and index + 1 < len(lines) and lines[index + 1].startswith("Error:"):
            message = []
            for part in lines[index + 1 : index + 8]:
                if FILE_LINE.match(part):
                    break
                message.append(part.strip())
            return int(located.group(1)), " ".join(message).removeprefix("Error:").strip()
    return None, " ".join(part.strip() for part in lines if part.strip())


def _assumptions(stdout: str, nonce: str) -> list[str] | None:
    """What Print Assumptions listed after the marker, each entry "name : type" on one line, or []
    for "Closed under the global context"; None when the marker or the answer is missing. A line
    that is no axiom entry ("f is assumed to be guarded.", another heading) becomes an entry of
    its own, which no allowed axiom matches."""
    marker = f"No object of basename lemmata_marker_{nonce}"
    lines = stdout.splitlines()
    if marker not in lines:
        return None
    answer = [line for line in lines[lines.index(marker) + 1 :] if line.strip()]
    if answer == [CLOSED]:
        return []
    if not answer or answer[0] != "Axioms:":
        return None
    entries: list[str] = []
    for line in answer[1:]:
        if line.startswith(" ") and entries:
            entries[-1] += " " + line.strip()
        else:
            entries.append(line.strip())
    return [" ".join(entry.split()) for entry in entries]
