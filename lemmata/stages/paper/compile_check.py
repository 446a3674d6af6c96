"""The writer's compile check: which fragment of the assembled paper breaks the compile.

A trial pass (latex/trial.py) runs over the paper with each fragment marked by comment lines. The
first error is blamed on the fragment that holds its line (or the last one before it: TeX
notices an error at or after its cause); an endless loop, which names no line, on a fragment that
defines macros. A fragment lemmata placed (a prover's proof, a statement) is then printed as
plain text, since it is not the model's to rewrite; a part the writer model wrote is noted for a
further turn, and shown as plain text for the rest of the check, so that one pass after another
finds every broken fragment. Each fragment is blamed at most once, so the check ends.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from lemmata.latex.trial import TrialError
from lemmata.stages.paper.fragments import Fragment, Item, fragment_at, render

Check = Callable[[str], list[TrialError]]
_DEFINES = re.compile(r"\\(?:[gex]?def|newcommand|renewcommand|providecommand|DeclareRobustCommand|let)(?![A-Za-z@])")


@dataclass
class CompileCheck:
    """What a check found. `plain`: lemmata's fragments now printed as plain text (key -> error);
    `writer_errors`: the writer's parts that break the compile; `unlocated`: errors blamed on none."""

    plain: dict[str, str] = field(default_factory=dict)
    writer_errors: dict[str, str] = field(default_factory=dict)
    unlocated: list[str] = field(default_factory=list)
    passes: int = 0

    @property
    def compiles(self) -> bool:
        return not self.writer_errors and not self.unlocated

    def remaining_errors(self) -> list[str]:
        """What still stops the compile, for the paper's metadata."""
        return [f"{key}: {error}" for key, error in self.writer_errors.items()] + self.unlocated


def check_document(items: Sequence[Item], document: Callable[[str], str], check: Check) -> CompileCheck:
    """Trial-compile `document(body)` until it passes, blaming one fragment per failed pass."""
    fragments = {item.key: item for item in items if isinstance(item, Fragment)}
    result = CompileCheck()
    for _ in range(len(fragments) + 1):
        tex = document(render(items, plain={**result.plain, **result.writer_errors}, annotated=True))
        errors = check(tex)
        result.passes += 1
        if not errors:
            return result
        key = _culprit(errors[0], tex, fragments, result.plain.keys() | result.writer_errors.keys())
        if key is None:
            result.unlocated.append(errors[0].message)
            return result
        (result.writer_errors if fragments[key].by_writer else result.plain)[key] = errors[0].detail
    return result


def _culprit(error: TrialError, tex: str, fragments: Mapping[str, Fragment], blamed: set[str]) -> str | None:
    """The fragment to blame for `error`, or None when it is none of them (or one already blamed)."""
    if error.timed_out:
        suspects = [key for key, fragment in fragments.items() if key not in blamed and _DEFINES.search(fragment.latex)]
        return suspects[0] if suspects else None
    key = fragment_at(tex, error.line) if error.line is not None else None
    return key if key in fragments and key not in blamed else None
