"""The formal development of a paper version: every statement Coq's kernel proved — the main
result and the lemmas — with the proof it accepted, in one file that re-checks on its own:

    coqc formal_v1.v

Each statement sits in a module of its own (`Module L3. ... Theorem statement : ... End L3.`),
under the scope it was checked in; the file ends with `Print Assumptions` of each, which prints
"Closed under the global context" or the standard axioms of the Reals library. A comment at the
top says what the file does not hold: statements proved only by the SMT solver, tested, refuted,
or not formalized, each with its status. The file is compiled in the box once written; a
statement whose proof does not re-check in the shared file is left out, and the header says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from lemmata import layout
from lemmata.artifacts import FormalCheck, Theory, atomic_write_text
from lemmata.formal import coq
from lemmata.kernel.admission import read_admitted
from lemmata.kernel.coq_terms import NotStatable, coq_statement
from lemmata.kernel.tree import FormalError
from lemmata.verification.ladder import evidence_in_words

PRELUDE = "Require Import ZArith Lia.\n"
REALS = "Require Import Reals Lra Psatz.\n"
#: Tries at compiling the whole file: each failed one leaves out the statement the error is in.
RECHECKS = 4


@dataclass(frozen=True)
class Proved:
    """A statement the kernel proved: where it comes from, its Coq form and the accepted proof."""

    name: str  # a Coq module name
    what: str  # "the main result", "Lemma L3"
    prose: str
    proposition: str
    scope: str
    proof: str


def development(theory: Theory, version: int) -> str | None:
    """The file's text, checked by coqc in the box; None when the kernel proved nothing."""
    proved = list(_proved(theory))
    if not proved:
        return None
    left_out: list[str] = []
    for _ in range(RECHECKS):
        source = _source(theory, version, proved, left_out)
        line, error = coq.check_file(source)
        if line is None:
            return source
        culprit = _module_at(source, line, proved)
        if culprit is None:
            break
        proved.remove(culprit)
        left_out.append(f"{culprit.what}: its proof did not re-check in this file ({error})")
        if not proved:
            break
    return None


def write_development(run_dir: Path, version: int, theory: Theory) -> Path | None:
    """The version's formal development written beside its theory (layout.formal_development_of);
    an older one removed when the kernel proved nothing this time."""
    path = Path(run_dir) / layout.formal_development_of(version)
    source = development(theory, version)
    if source is None:
        path.unlink(missing_ok=True)
        return None
    atomic_write_text(path, source)
    return path


def _proved(theory: Theory) -> Iterator[Proved]:
    if theory.goal_check is not None:
        entry = _entry(theory.goal_check, "Main_result", "the main result")
        if entry is not None:
            yield entry
    for lemma in theory.lemmas:
        if lemma.formal is not None:
            entry = _entry(lemma.formal, f"Lemma_{_identifier(lemma.id)}", f"Lemma {lemma.id}")
            if entry is not None:
                yield entry


def _entry(formal: FormalCheck, name: str, what: str) -> Proved | None:
    kernel = next((check for check in formal.proofs if check.method == "kernel proof"), None)
    if kernel is None or formal.verdict != "machine_checked":
        return None
    try:  # the statement the researcher was shown, read back: the one the kernel's proof is of
        stated = coq_statement(read_admitted(formal.text))
    except (FormalError, NotStatable):
        return None
    return Proved(name, what, formal.prose, stated.proposition, stated.scope, kernel.proof)


def _source(theory: Theory, version: int, proved: list[Proved], left_out: list[str]) -> str:
    header = [
        f"(* The formal development of paper version {version}: each statement below was proved in Coq's",
        "   kernel by lemmata's machine checks, with the proof the kernel accepted. Re-check with:",
        f"     coqc formal_v{version}.v",
        "   Each statement is a module's `statement`; the prose it formalizes is above it.",
    ]
    others = list(_not_here(theory, {entry.what for entry in proved}))
    if others or left_out:
        header.append("   Not in this file:")
        header += [f"   - {_comment_safe(line)}" for line in [*left_out, *others]]
    header.append("*)")
    reals = any(entry.scope == "R" for entry in proved)
    parts = ["\n".join(header), PRELUDE + (REALS if reals else "")]
    for entry in proved:
        scope = "R_scope" if entry.scope == "R" else "Z_scope"
        parts.append(
            f"(* {_comment_safe(entry.what)}: {_comment_safe(' '.join(entry.prose.split()))} *)\n"
            f"Module {entry.name}.\nOpen Scope {scope}.\n"
            f"Theorem statement : {' '.join(entry.proposition.split())}.\nProof.\n{entry.proof.strip()}\nQed.\n"
            f"End {entry.name}."
        )
    parts.append("\n".join(f"Print Assumptions {entry.name}.statement." for entry in proved))
    return "\n\n".join(parts) + "\n"


def _not_here(theory: Theory, here: set[str]) -> Iterator[str]:
    """The statements the kernel did not prove, with what is known of them."""
    if theory.goal_check is not None and "the main result" not in here:
        yield f"the main result: {evidence_in_words(theory.goal_check)}"
    for lemma in theory.lemmas:
        if f"Lemma {lemma.id}" not in here:
            yield f"Lemma {lemma.id}: {evidence_in_words(lemma.formal) or 'no formal statement was made'}"


def _module_at(source: str, line: int, proved: list[Proved]) -> Proved | None:
    """The statement whose module holds `line` of the file (1-based)."""
    before = source.splitlines()[: max(0, line - 1)]
    opened = [text.split()[1].rstrip(".") for text in before if text.startswith("Module ")]
    name = opened[-1] if opened else None
    return next((entry for entry in proved if entry.name == name), None)


def _identifier(lemma_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", lemma_id)


def _comment_safe(text: str) -> str:
    """Text inside a Coq comment: `(*` and `*)` would open or close one, and Coq reads strings in
    comments, so one `"` (a statement quoting a word) would leave the file an unterminated string."""
    return text.replace("(*", "( *").replace("*)", "* )").replace('"', "''")
