"""Proving a lemma's Coq proposition with Coq's kernel, in a box, and saying exactly what happened.

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

and `coqc` checks it in a box (`lemmata.isolation`): the Coq binaries and libraries read-only, a
tmpfs as working directory, no network, 2 GiB and the timeout per process. The file goes in on
stdin, so no model text reaches a command line.

Two independent layers keep a body from proving anything but the statement:
1. `script_refusal` reads the body before Coq does: comments and strings out, then every sentence
   must start as a tactic does (a lower-case word, after bullets, braces and goal selectors), and
   no word of `REFUSED_WORDS` may appear anywhere (Admitted, Axiom, Set/Unset, Require, Notation,
   Ltac, Qed, Print, native_compute, exact_no_check, ... and `#[...]` attributes);
2. what Coq says after the proof, behind a marker the body cannot know (a fresh nonce): the
   theorem must still have the statement defined before the body (the `Check`), and
   `Print Assumptions` must say "Closed under the global context" or list only the standard axioms
   the Reals library itself rests on (`STANDARD_AXIOMS`, each with its exact type as Coq prints it).
An `Admitted` helper, an `Axiom`, `Unset Guard Checking` or a restated theorem all fail layer 2
even when layer 1 is bypassed (tests/unit/formal/test_coq.py does so).

The standard automation (`automation_scripts`) is a small portfolio tried in one `coqc` run, one
body `first [ solve [timeout N (tactic)] | ... ]`: over Z lia, reflexivity, mod/div as equations
then lia, nia, each integer's value mod 2 then nia; over R lra, nra, squares of differences then
nra, inverses of positives then nra, absolute values by cases then lra, lia; the caller's hints
then nra or nia come second. psatz is not used: it needs the csdp program, which Debian's Coq does
not bring. Closed computations (`2^100 mod 7 = 2`) are proved by `reflexivity`, which the kernel
re-checks with its ordinary conversion. A model script may use `vm_compute` (the kernel re-checks
its cast with its bytecode machine, part of Coq's trusted kernel), not `native_compute` (compiled
OCaml outside the kernel).

Measured on 2 cores (Debian 12, Coq 8.16.1), one `coqc` run in the box, start to verdict:
- scope Z (ZArith, Lia): a proof 0.75-0.8 s, the model's script or the portfolio alike, of which
  `Print Assumptions` takes 0.4 s (it walks every constant the proof uses); a portfolio whose
  every branch fails at once 0.4 s, 2.4 s where nia searches (`a^2 + b^2 = c^2 -> a*b*c mod 60 = 0`);
- scope R (Reals, Lra, Psatz, Lia, ZArith): a proof 1.05-1.3 s warm, 1.4 s with the page cache
  dropped (machine-checks.md measured about 5 s on a machine's very first run); failing 0.45 s;
- `prove` with a model script that fails costs two runs; `coq_problem()` 0.03 s (0.14 s cold),
  once per process. Peak memory 325 MB (Z), 460 MB (R).
A file coqc accepted before on this machine is answered with what it printed then
(kernel_cache.py): a few milliseconds instead of these seconds, the same checks after it.
"""

from __future__ import annotations

import os
import re
import secrets
import selectors
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Literal

from lemmata.formal import kernel_cache
from lemmata.isolation.box import BoxLimits, BoxSpec, box_problem, open_box
from lemmata.isolation.bubblewrap import SETPRIV, system_library_paths

Scope = Literal["Z", "R"]
Outcome = Literal["proved", "failed", "refused", "timed_out", "unavailable"]

#: What each scope's file starts with; a body may use these libraries and nothing else.
PRELUDES: dict[str, str] = {
    "Z": "Require Import ZArith Lia.\nOpen Scope Z_scope.\n",
    "R": "Require Import Reals Lra Psatz Lia ZArith.\nOpen Scope R_scope.\n",
}
THEOREM = "lemmata_goal"
FILE_NAME = f"{THEOREM}.v"
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

COQC = "/usr/bin/coqc"
#: What coqc reads besides its own files under /usr/lib: findlib's configuration names the
#: plugin directories (without it coqc stops with an anomaly).
COQ_FILES = ("/usr/bin", "/etc/ocamlfind.conf")
#: The stdlib files the preludes load; their absence means libcoq-stdlib is missing.
STDLIB_FILES = ("Init/Prelude.vo", "ZArith/ZArith.vo", "Reals/Reals.vo", "micromega/Lia.vo", "micromega/Psatz.vo")
INSTALL_HINT = "install Coq (Debian/Ubuntu: apt-get install --no-install-recommends coq libcoq-stdlib; bin/setup does)"
WORK = "/box/coq"
#: Per process: coqc takes 420-460 MB; a proof that grows its terms stops here with "Out of memory".
COQ_LIMITS = BoxLimits(
    memory_bytes=2 << 30, processes=16, scratch_bytes=128 << 20, file_bytes=128 << 20, open_files=256
)
#: At most this much of each of coqc's streams is kept (their ends: the error, the assumptions).
OUTPUT_TAIL_BYTES = 64 << 10
DETAIL_CHARS = 300


@dataclass(frozen=True)
class KernelVerdict:
    outcome: Outcome
    detail: str  # why: the refusal, Coq's first error, the timeout, what is missing; for proved, what failed first
    method: str  # "model script" or "automation: <name>"; "" unless proved
    script: str  # the proof body the kernel accepted; "" unless proved
    source: str  # the .v file checked last (when proved, coqc re-checks it on its own)
    axioms: tuple[str, ...]  # what Print Assumptions listed
    seconds: float

    @property
    def proved(self) -> bool:
        return self.outcome == "proved"


# ---------------------------------------------------------------------------------------------
# Layer 1: reading the body before Coq does.


def script_refusal(body: str) -> str:
    """Why the body may not be checked, naming the refused word or sentence; "" when it may."""
    if not body.strip():
        return "the proof body is empty"
    if len(body) > MAX_BODY_CHARS:
        return f"the proof body is longer than {MAX_BODY_CHARS} characters"
    code, problem = _code(body, "the proof body")
    if problem:
        return problem
    tokens = _tokens(code)
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
    code, problem = _code(term, what)
    if problem:
        return problem
    tokens = _tokens(code)
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


def _code(text: str, what: str) -> tuple[str, str]:
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


def _tokens(code: str) -> list[str]:
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


# ---------------------------------------------------------------------------------------------
# The file.


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


# ---------------------------------------------------------------------------------------------
# The standard automation.

#: (name, tactic). Every tactic starts with `intros`: the statement's names stay the binders'.
Z_AUTOMATION = (
    ("lia", "intros; lia"),
    ("kernel computation (reflexivity)", "intros; reflexivity"),
    ("mod and div as equations, lia", "intros; Z.div_mod_to_equations; lia"),
    ("nia", "intros; nia"),
    (
        "each integer mod 2, nia",
        "intros; repeat match goal with x : Z |- _ => lazymatch goal with _ : 0 <= x mod 2 < 2 |- _ => fail "
        "| _ => pose proof (Z.mod_pos_bound x 2 ltac:(lia)); pose proof (Z.div_mod x 2 ltac:(lia)) end end; "
        "Z.div_mod_to_equations; nia",
    ),
)
R_AUTOMATION = (
    ("lra", "intros; lra"),
    ("nra", "intros; nra"),
    (
        "squares of differences, nra",
        "intros; repeat match goal with x : R, y : R |- _ => lazymatch goal with _ : 0 <= (x - y) ^ 2 |- _ => fail "
        "| _ => pose proof (pow2_ge_0 (x - y)) end end; nra",
    ),
    (
        "inverses of positives, nra",
        "intros; unfold Rdiv in *; repeat match goal with |- context [/ ?t] => lazymatch goal with "
        "_ : t * / t = 1 |- _ => fail | _ => assert (t * / t = 1) by (apply Rinv_r; lra); "
        "assert (0 < / t) by (apply Rinv_0_lt_compat; lra); pose proof (pow2_ge_0 (t - / t)) end end; nra",
    ),
    (
        "absolute values by cases, lra",
        "intros; repeat match goal with H : context [Rabs ?t] |- _ => destruct (Rcase_abs t); "
        "[rewrite (Rabs_left t) in H by lra | rewrite (Rabs_right t) in H by lra] | |- context [Rabs ?t] => "
        "destruct (Rcase_abs t); [rewrite (Rabs_left t) by lra | rewrite (Rabs_right t) by lra] end; lra",
    ),
    ("lia", "intros; lia"),
)


def automation_scripts(scope: Scope, hints: Sequence[str] = ()) -> list[tuple[str, str]]:
    """lemmata's own automation for the scope, as (name, body); with hints (Coq terms proving
    facts, e.g. `pow2_ge_0 (a - b)`), first a branch that states them all and calls nra (R) or
    nia (Z). A hint that does not type-check is skipped, not fatal."""
    branches = list(R_AUTOMATION if scope == "R" else Z_AUTOMATION)
    usable = [hint.strip() for hint in hints if not term_refusal(hint, "a hint")]
    if usable:
        solver = "nra" if scope == "R" else "nia"
        stated = "".join(f"try pose proof ({hint}); " for hint in usable)
        branches.insert(1, (f"hints, {solver}", f"intros; {stated}{solver}"))
    return [(name, f"{tactic}.") for name, tactic in branches]


def portfolio_body(scripts: Sequence[tuple[str, str]], seconds_each: int, nonce: str) -> str:
    """One body trying each script in turn, each under Ltac's `timeout`; before each, it prints
    which it tries, so the last such line before the marker names the one that closed the goal."""
    branches = [
        f'idtac "lemmata_try_{nonce} {index}"; solve [timeout {seconds_each} ({script.strip().removesuffix(".")})]'
        for index, (_, script) in enumerate(scripts)
    ]
    return "first [\n  " + "\n| ".join(branches) + "\n]."


# ---------------------------------------------------------------------------------------------
# Running coqc in the box.


def coq_problem() -> str:
    """What keeps coqc and its standard library from running in the box here, and what to
    install; "" when they run. Looked at once per process."""
    return _coq_library()[1]


@cache
def _coq_library() -> tuple[str, str]:
    """(coqc's library folder, "") when Coq runs in the box here, else ("", what keeps it from running)."""
    problem = box_problem()
    if problem:
        return "", f"Coq runs only in the box, and {problem}"
    if not os.access(COQC, os.X_OK):
        return "", f"Coq's compiler {COQC} is not installed: {INSTALL_HINT}"
    try:
        run = _run_in_box([COQC, "-where"], b"", 30.0)
    except OSError as error:
        return "", f"coqc could not start in the box ({error}): {INSTALL_HINT}"
    where = run.stdout.strip()
    if run.returncode != 0 or not where.startswith("/usr/lib/"):
        return "", f"coqc -where failed in the box ({_first_line(run.stderr or run.stdout)}): {INSTALL_HINT}"
    missing = [name for name in STDLIB_FILES if not os.path.isfile(f"{where}/theories/{name}")]
    if missing:
        return "", (
            f"Coq's standard library is incomplete ({', '.join(missing)} missing in {where}/theories): {INSTALL_HINT}"
        )
    return where, ""


@cache
def coq_installation() -> str:
    """What a kernel verdict depends on besides the file (kernel_cache.py): coqc and the standard
    library files the preludes load, each by path, size and modification time; "" without Coq."""
    where = _coq_library()[0]
    if not where:
        return ""
    paths = [os.path.realpath(COQC), *(f"{where}/theories/{name}" for name in STDLIB_FILES)]
    identities = []
    for path in paths:
        try:
            status = os.stat(path)
        except OSError:  # removed since coq_problem looked: nothing is remembered
            return ""
        identities.append(f"{path}:{status.st_size}:{status.st_mtime_ns}")
    return "\n".join(identities)


@dataclass(frozen=True)
class _Run:
    returncode: int
    stdout: str  # the last OUTPUT_TAIL_BYTES
    stderr: str
    timed_out: bool
    seconds: float


def _run_in_box(argv: Sequence[str], stdin: bytes, timeout: float) -> _Run:
    """`argv` in a box showing Coq, with `stdin` as its input; the tails of its output."""
    limits = BoxLimits(
        wall_seconds=timeout,
        cpu_seconds=timeout + 1,
        memory_bytes=COQ_LIMITS.memory_bytes,
        processes=COQ_LIMITS.processes,
        scratch_bytes=COQ_LIMITS.scratch_bytes,
        file_bytes=COQ_LIMITS.file_bytes,
        open_files=COQ_LIMITS.open_files,
    )
    read_only = (*COQ_FILES, *system_library_paths(), *((SETPRIV,) if os.geteuid() == 0 else ()))
    environment = {"PATH": "/usr/bin:/bin", "HOME": WORK, "LANG": "C.UTF-8"}
    # Per-process limits only, as for TeX: coqc starts no program but csdpcert (psatz), so a cgroup
    # for the whole box would add nothing, and without one Coq runs wherever bubblewrap does.
    spec = BoxSpec(argv, read_only, environment, limits, WORK, whole_box_limits=False)
    started = time.monotonic()
    with open_box(spec, stdin=subprocess.PIPE) as box:
        process = box.process
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        try:
            # At most MAX_SOURCE_BYTES, which the pipe takes whole: this write never waits.
            process.stdin.write(stdin)
            process.stdin.close()
        except BrokenPipeError:
            pass
        stdout, stderr, timed_out = _collect(process, started + timeout)
    returncode = process.returncode if process.returncode is not None else -9
    return _Run(returncode, stdout, stderr, timed_out, time.monotonic() - started)


def _collect(process: subprocess.Popen[bytes], deadline: float) -> tuple[str, str, bool]:
    """The tails of stdout and stderr until both close or the deadline passes (True then)."""
    assert process.stdout is not None and process.stderr is not None
    buffers = {process.stdout.fileno(): bytearray(), process.stderr.fileno(): bytearray()}
    timed_out = False
    with selectors.DefaultSelector() as selector:
        for fd in buffers:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            for key, _ in selector.select(min(remaining, 1.0)):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    selector.unregister(key.fd)
                    continue
                buffer = buffers[key.fd]
                buffer += chunk
                del buffer[: max(0, len(buffer) - OUTPUT_TAIL_BYTES)]  # a flood must not fill our memory
    if not timed_out:
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
    out, err = (buffers[stream.fileno()].decode("utf-8", "replace") for stream in (process.stdout, process.stderr))
    return out, err, timed_out


def _coqc(source: str, timeout: float, nonce: str = "") -> _Run:
    """coqc on `source` in the box; a file it accepted before on this machine is answered with
    what it printed then (kernel_cache.py), and a file it accepts now is kept."""
    installation = coq_installation()
    recalled = kernel_cache.recall(source, nonce, installation) if installation else None
    if recalled is not None:
        return _Run(0, recalled, "", False, 0.0)
    run = _run_in_box(["/bin/sh", "-c", f"cat > {FILE_NAME} && exec {COQC} -q {FILE_NAME}"], source.encode(), timeout)
    if installation and run.returncode == 0 and not run.timed_out:
        kernel_cache.remember(source, nonce, installation, run.stdout)
    return run


# ---------------------------------------------------------------------------------------------
# Checking one body, and proving.


@dataclass(frozen=True)
class _Check:
    """What one coqc run of one body came to, and its stdout (where the portfolio names its winner)."""

    outcome: Outcome
    detail: str
    axioms: tuple[str, ...]
    source: str
    stdout: str


def check_script(proposition: str, scope: Scope, body: str, timeout_seconds: float = 20.0) -> KernelVerdict:
    """One body checked by the kernel: layer 1, coqc in the box, layer 2."""
    started = time.monotonic()
    refusal = term_refusal(proposition, "the proposition") or script_refusal(body)
    if refusal:
        return KernelVerdict("refused", _short(refusal), "", "", "", (), time.monotonic() - started)
    check = _check(proposition, scope, body, timeout_seconds)
    return _verdict(check, "model script", body, started)


def _verdict(check: _Check, method: str, script: str, started: float, detail: str = "") -> KernelVerdict:
    proved = check.outcome == "proved"
    return KernelVerdict(
        check.outcome,
        _short(detail or check.detail),
        method if proved else "",
        script.strip() if proved else "",
        check.source,
        check.axioms,
        time.monotonic() - started,
    )


def _check(proposition: str, scope: Scope, body: str, timeout: float, nonce: str = "") -> _Check:
    """coqc on the file around `body`, then layer 2. The body is not read here: callers do
    (lemmata's own automation needs no reading; tests of layer 2 bypass it on purpose)."""
    nonce = nonce or secrets.token_hex(8)
    source = coq_source(proposition, scope, body, nonce=nonce)
    if len(source.encode()) > MAX_SOURCE_BYTES:
        return _Check("refused", f"the file would be longer than {MAX_SOURCE_BYTES} bytes", (), source, "")
    problem = coq_problem()
    if problem:
        return _Check("unavailable", problem, (), source, "")
    run = _coqc(source, timeout, nonce)
    # The wall clock (we end the box), or the CPU limit (SIGXCPU), seen directly or through bwrap.
    if run.timed_out or run.returncode in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
        return _Check("timed_out", f"Coq did not finish within {timeout:g} s", (), source, run.stdout)
    if run.returncode in (-signal.SIGKILL, 128 + signal.SIGKILL):
        return _Check("failed", "Coq was killed (out of memory?)", (), source, run.stdout)
    if run.returncode != 0:
        outcome, detail = _failure(run, scope, body)
        return _Check(outcome, detail, (), source, run.stdout)
    listed = _assumptions(run.stdout, nonce)
    if listed is None:
        return _Check("refused", "Coq's answer to Print Assumptions is missing or unreadable", (), source, run.stdout)
    unexpected = [entry for entry in listed if entry not in STANDARD_AXIOMS[scope]]
    if unexpected:
        detail = f"the proof rests on `{unexpected[0].split(' : ')[0]}`, which is no standard axiom (Print Assumptions)"
        return _Check("refused", detail, tuple(listed), source, run.stdout)
    return _Check("proved", "", tuple(listed), source, run.stdout)


def _failure(run: _Run, scope: Scope, body: str) -> tuple[Outcome, str]:
    """Coq stopped with an error: the part of the file it stopped in says what it means."""
    line, message = _first_error(run.stderr)
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


def check_file(source: str, timeout_seconds: float = 60.0) -> tuple[int | None, str]:
    """A whole Coq file lemmata wrote itself (the formal development, formal/development.py)
    compiled in the box: (None, "") when it checks, else the line of the first error and the error."""
    problem = coq_problem()
    if problem:
        return 0, problem
    run = _coqc(source, timeout_seconds)
    if run.timed_out:
        return 0, f"Coq did not finish within {timeout_seconds:g} s"
    if run.returncode != 0:
        line, message = _first_error(run.stderr)
        return line or 0, message or f"coqc ended with status {run.returncode}"
    return None, ""


STATEMENT_FAILS = "the statement does not check"
FILE_LINE = re.compile(r'^File "[^"]*", line (\d+), characters')


def _first_error(stderr: str) -> tuple[int | None, str]:
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


def _winner(stdout: str, nonce: str) -> int | None:
    """The portfolio branch that closed the goal: the last one announced before the marker."""
    before = stdout.split(f"lemmata_marker_{nonce}")[0]
    tried = re.findall(rf"^lemmata_try_{nonce} (\d+)$", before, re.MULTILINE)
    return int(tried[-1]) if tried else None


def proof_body(script: str) -> str:
    """The model's script as a body: without a `Proof.` before it and a `Qed.` after it, which
    models often add, and with the final dot they often leave out (Coq would read `lia Qed.`)."""
    text = re.sub(r"\AProof\s*\.(?=\s)", "", script.strip())
    text = re.sub(r"(?:\A|(?<=\s))(?:Qed|Defined)\s*\.\Z", "", text).strip()
    code, problem = _code(text, "the proof body")
    tokens = _tokens(code) if not problem else []
    if tokens and tokens[-1] not in (".", "}"):
        text += "."
    return text


def prove(
    proposition: str,
    scope: Scope,
    model_script: str = "",
    hints: Sequence[str] = (),
    timeout_seconds: float = 20.0,
) -> KernelVerdict:
    """The model's script first (when given and not refused), then the standard automation in one
    coqc run; the first proof wins. Each coqc run may take `timeout_seconds`. When neither proves
    it, the verdict is the model script's (refused, failed, timed out) if there was one, its
    detail followed by what the automation did."""
    started = time.monotonic()
    refusal = term_refusal(proposition, "the proposition")
    if refusal:
        return KernelVerdict("refused", _short(refusal), "", "", "", (), time.monotonic() - started)
    problem = coq_problem()
    if problem:
        return KernelVerdict("unavailable", _short(problem), "", "", "", (), time.monotonic() - started)
    model: KernelVerdict | None = None
    if model_script.strip():
        model = check_script(proposition, scope, proof_body(model_script), timeout_seconds)
        if model.proved or model.outcome == "unavailable" or model.detail.startswith(STATEMENT_FAILS):
            return _since(model, started)  # an ill-typed statement fails the automation's run alike
    automation = _automation(proposition, scope, hints, timeout_seconds, started)
    if model is None:
        return automation
    if automation.proved:
        return _since(replace(automation, detail=_short(f"the model's script {_said(model)}")), started)
    detail = f"the model's script {_said(model)}; the automation {_said(automation)}"
    return _since(replace(model, detail=_short(detail), source=automation.source), started)


def _automation(proposition: str, scope: Scope, hints: Sequence[str], timeout: float, started: float) -> KernelVerdict:
    scripts = automation_scripts(scope, hints)
    nonce = secrets.token_hex(8)
    # Most branches prove or fail in well under a second; the Ltac timeouts together stay inside
    # the run's own, with room for loading the libraries.
    seconds_each = max(1, int(timeout * 0.6 / len(scripts)))
    check = _check(proposition, scope, portfolio_body(scripts, seconds_each, nonce), timeout, nonce)
    if check.outcome == "proved":
        index = _winner(check.stdout, nonce)
        # Announcements come before each branch: without one (never so far) name the whole portfolio.
        name, script = (
            scripts[index] if index is not None else ("portfolio", portfolio_body(scripts, seconds_each, nonce))
        )
        return _verdict(check, f"automation: {name}", script, started)
    if check.outcome == "failed" and check.detail.startswith("line "):
        return _verdict(check, "", "", started, f"none of its {len(scripts)} tactics closed the goal")
    return _verdict(check, "", "", started)


def _said(verdict: KernelVerdict) -> str:
    return {"refused": "was refused", "failed": "failed", "timed_out": "timed out"}.get(
        verdict.outcome, verdict.outcome
    ) + (f": {verdict.detail}" if verdict.detail else "")


def _since(verdict: KernelVerdict, started: float) -> KernelVerdict:
    return replace(verdict, seconds=time.monotonic() - started)


def _short(text: str) -> str:
    """One line of at most DETAIL_CHARS: Coq's messages may quote the model's text at length."""
    text = " ".join(text.split())
    return text if len(text) <= DETAIL_CHARS else text[: DETAIL_CHARS - 1] + "…"


def _first_line(text: str) -> str:
    return _short(next((line for line in text.splitlines() if line.strip()), "no output"))
