"""The executable predicate of a formal statement, as the experiment runs it in the sandbox.

The experiment stage gives a lemma with a formal statement lemmata's own test instead of a script
a model wrote: `program(spec)` is a three-line Python program that the sandbox runs (the box shows
the installed lemmata read-only). It runs the statement on small, edge and random inputs
(sampling.tally) and prints the experiment's counts line, split by the size of the inputs:
`{"trials": N, "violations": V, "series": [...], "x_label": "largest input"}`.
"""

from __future__ import annotations

import json
import sys

from lemmata.artifacts import FormalSpec
from lemmata.formal.reading import read_statement
from lemmata.formal.sampling import tally

SECONDS = 5.0
X_LABEL = "largest |input|, order of magnitude"


def program(spec: FormalSpec) -> str:
    return f"from lemmata.formal.predicate import print_counts\nprint_counts({spec.model_dump_json()!r})\n"


def print_counts(spec_json: str) -> None:
    spec = FormalSpec.model_validate_json(spec_json)
    statement = read_statement([(v.name, v.type) for v in spec.variables], spec.hypotheses, spec.conclusion)
    counted = tally(statement, seconds=SECONDS)
    if counted.trials == 0:
        sys.exit("no sampled input satisfied the hypotheses: the statement cannot be tested by sampling")
    series = [{"x": size, "trials": seen, "violations": failed} for size, (seen, failed) in counted.by_size.items()]
    line: dict[str, object] = {"trials": counted.trials, "violations": counted.violations}
    if len(series) > 1:
        line |= {"series": series, "x_label": X_LABEL}
    print(json.dumps(line))
