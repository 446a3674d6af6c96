"""Proving a lemma's Coq proposition with Coq's kernel, in a box, and saying exactly what happened.

lemmata writes the whole file (lemmata/kernel/coq_file.py: the model supplies at most a proof
body, refused before Coq sees it when it could prove anything else) and `coqc` checks it in a
box (`lemmata.isolation`): the Coq binaries and libraries read-only, a tmpfs as working directory, no network, 2 GiB and the timeout per process. The file goes in on
stdin, so no model text reaches a command line.

The kernel judges coqc's answer (coq_file.judge: the marker, the statement, Print Assumptions);
this module runs coqc and its automation, and keeps no verdict of its own.

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
Every verdict comes from a coqc run of its own: nothing remembered stands for Coq's kernel
(until issue 52 an acceptance kept in the user's cache did, and whatever stood in that folder
would have been taken for a proof). A file checked again costs these seconds again.
"""

from __future__ import annotations

import os
import re
import secrets
import selectors
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache

from lemmata.isolation.box import BoxLimits, BoxSpec, box_problem, open_box
from lemmata.isolation.bubblewrap import SETPRIV, system_library_paths
from lemmata.kernel.coq_file import (
    MAX_SOURCE_BYTES,
    STATEMENT_FAILS,
    THEOREM,
    CoqRun,
    Outcome,
    Scope,
    code_of,
    coq_source,
    first_error,
    judge,
    script_refusal,
    term_refusal,
    tokens_of,
)

FILE_NAME = f"{THEOREM}.v"
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
    certificate: str = ""  # for proved: the kernel's certificate (coq_file.judge); else ""

    @property
    def proved(self) -> bool:
        return self.outcome == "proved"


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


def _run_in_box(argv: Sequence[str], stdin: bytes, timeout: float) -> CoqRun:
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
    return CoqRun(returncode, stdout, stderr, timed_out)


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


def _coqc(source: str, timeout: float) -> CoqRun:
    """coqc on `source` in the box."""
    return _run_in_box(["/bin/sh", "-c", f"cat > {FILE_NAME} && exec {COQC} -q {FILE_NAME}"], source.encode(), timeout)


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
    certificate: str = ""


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
        check.certificate,
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
    run = _coqc(source, timeout)
    judged = judge(proposition, scope, body, nonce, run, timeout)
    return _Check(judged.outcome, judged.detail, judged.axioms, source, run.stdout, judged.certificate)


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
        line, message = first_error(run.stderr)
        return line or 0, message or f"coqc ended with status {run.returncode}"
    return None, ""


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
    code, problem = code_of(text, "the proof body")
    tokens = tokens_of(code) if not problem else []
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
