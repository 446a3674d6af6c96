"""Files Coq's kernel accepted, remembered on this machine: the same file is not checked twice.

coqc is the longest of a run's machine checks (0.75-1.3 s a file on 2 cores, most of it loading
the standard library and `Print Assumptions`), and the same files come back: a rewrite or a
resumed run proves the goal and the lemmas again, and the formal development re-checks the proofs
just checked one by one. A coqc run that accepted a file (exit status 0) is kept in
`$XDG_CACHE_HOME/lemmata/coq-accepted/`, named by the hash of the file and of the Coq installation
(coqc and the standard library files the preludes load: a Debian update replaces them), with what
coqc printed; the same file is then answered from there, and everything after coqc (the marker,
Print Assumptions' list, the allowed axioms: coq.py) reads that answer as it reads a fresh one.

Only acceptances are kept: a failure may be a time-out or a memory limit of a busy machine. The
file's nonce (coq.py: the name of its statement and marker, which the proof cannot know) differs
from check to check: the key and the kept output hold a placeholder instead, filled with the new
nonce when read. An output that holds the placeholder itself is not kept: a proof could print it
to forge the marker once it is filled. Like the TeX formats (latex/formats.py), a folder another
user can write is not used: an answer planted there would make a lemma machine-checked.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from lemmata.files import write_bytes_atomically
from lemmata.machine_cache import forget_least_recently_used, private_cache, touch

CACHE_NAME = "coq-accepted"
#: Where a kept file or output had its nonce.
PLACEHOLDER = "\x00lemmata-nonce\x00"
#: Entries are a few kilobytes; beyond this many, the oldest go.
CAPACITY_ENTRIES = 4000
_FORMAT = 1


def recall(source: str, nonce: str, installation: str) -> str | None:
    """What coqc printed when it accepted `source` before (with `nonce` in place of the nonce it
    had then); None when it has not, or the cache cannot be trusted or read."""
    path = _entry(source, nonce, installation)
    if path is None:
        return None
    try:
        kept = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("format") != _FORMAT or not isinstance(kept.get("stdout"), str):
        return None
    touch(path)  # recently used: the last to go
    return kept["stdout"].replace(PLACEHOLDER, nonce) if nonce else kept["stdout"]


def remember(source: str, nonce: str, installation: str, stdout: str) -> None:
    """Keep coqc's acceptance of `source`; nothing when it cannot be kept safely."""
    if PLACEHOLDER in source or PLACEHOLDER in stdout:
        return
    path = _entry(source, nonce, installation)
    if path is None:
        return
    kept = stdout.replace(nonce, PLACEHOLDER) if nonce else stdout
    try:
        write_bytes_atomically(path, json.dumps({"format": _FORMAT, "stdout": kept}).encode())
        forget_least_recently_used(path.parent, CAPACITY_ENTRIES)
    except OSError:  # a full disk, a read-only cache: the next check runs coqc again
        pass


def _entry(source: str, nonce: str, installation: str) -> Path | None:
    """The entry's path in the cache; None when there is no cache of this user's alone."""
    normal = source.replace(nonce, PLACEHOLDER) if nonce else source
    directory = private_cache(CACHE_NAME)
    if directory is None:
        return None
    key = hashlib.sha256(f"{_FORMAT}\0{installation}\0{normal}".encode()).hexdigest()
    return directory / f"{key}.json"
