"""The certificate a machine proof carries: what the kernel proved, bound to the statement shown.

A proof of a formal statement counts (verdict.py) only when its certificate is the one the
kernel would issue for the statement it reads back from the text the researcher is shown: the
Coq proposition derived from it, or that text itself for the solver. A proof made for another
statement, by an older kernel (`KERNEL_VERSION`: raised whenever a translation changes what it
means), or written by anything but these functions (an architecture test holds that only the
kernel calls them) is no proof. They are pure, so a certificate survives the process that made it.
"""

from __future__ import annotations

import hashlib

#: Raised whenever a translation to a checker changes meaning: proofs made before no longer count.
KERNEL_VERSION = 2
CERTIFICATE_PREFIX = f"lemmata-kernel-{KERNEL_VERSION}:"


def coq_certificate(proposition: str) -> str:
    """The certificate of a proof of `proposition` that Coq's kernel accepted (coq_file.judge)."""
    return _issued("coq", " ".join(proposition.split()))


def solver_certificate(statement_text: str) -> str:
    """The certificate of the solver's `unsat` for the statement rendered `statement_text` (smt.decide)."""
    return _issued("z3", statement_text)


def _issued(checker: str, subject: str) -> str:
    digest = hashlib.sha256(f"{KERNEL_VERSION}\0{checker}\0{subject}".encode()).hexdigest()
    return CERTIFICATE_PREFIX + digest
