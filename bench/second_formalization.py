"""What a second formalization of the same statement catches, and what it costs.

Issue 52 asked us to consider the benchmark curators' check of an autoformalization: formalize a
statement twice, independently, and let the solver say whether the two say the same. This bench
measures it on the output of `bench/formal.py` (its folder, `--results`): for each check whose
formalizer wrote a statement lemmata read (`theory/.formalizer/*.json`), the embedded formalizer
is asked again, with another seed and a higher temperature (`--seed`, `--temperature`: the only
second formalizer this machine has is the same 1.5B model resampled), through the same code a run
uses (stages/formal/formalize.py: the prompt, the reading, the one repair round). Then Z3 is asked
whether the two statements, each read as "where defined, its domains and hypotheses imply its
conclusion", hold at exactly the same inputs (variables matched by name, else by their order
when the kinds agree):

- `same text`: the second answer is the first's, variable for variable;
- `equivalent`: different text, the solver proves the two agree at every input;
- `differ`: the solver finds an input where one holds and the other does not (it is printed);
- `undecided`: the solver cannot say (not expressible, unknown), or the variables cannot be matched;
- `second not formalized`: the second answer was refused or declined.

Two statements that are both true hold at every input, so they are equivalent however they
differ: the comparison of claims can catch a formalization that turned a false prose true (the
danger of a false statement machine-checked), never a true one weakened. So the bench also asks
whether the two assume the same inputs (domains, hypotheses, definedness): a hypothesis one adds
("assumptions differ") shows there even when both are true.

The table crosses these with the first check's status, for the true statements and the false
twins: a flag ("differ") on a twin machine-checked or a true statement refuted is a catch (the
first formalization was not the prose's); a flag on a true statement machine-checked is the
price, a false alarm a researcher would have to read. The cost is the extra call's seconds.

Usage: python bench/second_formalization.py --results DIR [--seed 8] [--temperature 0.7]
                                            [--limit N] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from lemmata.artifacts import Formalization
from lemmata.kernel.semantics import Kind
from lemmata.kernel.statement import Statement, Variable
from lemmata.kernel.tree import Expr, FormalError, Op, Var, conjunction, substitute

OUTCOMES = ("same text", "equivalent", "differ", "undecided", "second not formalized")


def first_formalization(case: Path) -> Formalization | None:
    """The formalizer's record of a bench check, when it wrote a statement lemmata read."""
    for path in sorted((case / "theory" / ".formalizer").glob("*.json")):
        record = Formalization.model_validate_json(path.read_text(encoding="utf-8"))
        if record.spec is not None and not record.not_formalized:
            return record
    return None


def guards(statement: Statement) -> Expr:
    """Where the statement says something: defined, its domains and hypotheses true."""
    return conjunction([*statement.definedness(), *statement.assumptions()])


def holds(statement: Statement) -> Expr:
    """The statement as one condition on its variables: where defined, assumptions imply the conclusion."""
    return Op("implies", (guards(statement), statement.conclusion))


def renamed(expr: Expr, mapping: dict[str, str]) -> Expr:
    """`expr` with its variables renamed at once (through fresh names: x -> y, y -> x swaps)."""
    for index, name in enumerate(mapping):
        expr = substitute(expr, name, Var(f"renamed{index}"))
    for index, name in enumerate(mapping):
        expr = substitute(expr, f"renamed{index}", Var(mapping[name]))
    return expr


def matched(first: Statement, second: Statement) -> Statement | None:
    """`second` with its variables named as `first`'s: by name when the names are the same, else by
    declaration order when the kinds agree; None when they cannot be matched."""
    names = [v.name for v in first.variables]
    if sorted(names) == sorted(v.name for v in second.variables):
        return second
    if [v.kind for v in first.variables] != [v.kind for v in second.variables]:
        return None
    mapping = {v.name: name for v, name in zip(second.variables, names, strict=True)}
    return Statement(
        tuple(Variable(mapping[v.name], v.domain) for v in second.variables),
        tuple(renamed(h, mapping) for h in second.hypotheses),
        renamed(second.conclusion, mapping),
    )


def compared(first: Statement, second: Statement, part: str = "claim") -> tuple[str, str]:
    """(outcome, detail) of asking the solver whether the two statements hold at the same inputs
    (`part` "claim"), or assume the same inputs (`part` "assumptions": the same domains,
    hypotheses and definedness)."""
    from lemmata.kernel.smt import NotExpressible, prove_or_find_model

    other = matched(first, second)
    if other is None:
        return "undecided", "the variables cannot be matched"
    kinds: dict[str, Kind] = {**first.kinds, **other.kinds}
    base = {"int": "integer", "real": "real"}
    variables = tuple(Variable(name, base[kind]) for name, kind in kinds.items())  # type: ignore[arg-type]
    side = holds if part == "claim" else guards
    question = Statement(variables, (), Op("iff", (side(first), side(other))))
    try:
        answer = prove_or_find_model(question, timeout_seconds=10.0)
    except (NotExpressible, FormalError) as error:
        return "undecided", f"not expressible: {error}"
    if answer.outcome == "unsat":
        return "equivalent", ""
    if answer.outcome == "sat":
        return "differ", f"they disagree at {answer.model}"
    return "undecided", f"solver: {answer.reason}"


def second_formalization(client: object, statement: str) -> tuple[Formalization, float]:
    from lemmata.stages.formal.formalize import formalization

    started = time.monotonic()
    with tempfile.TemporaryDirectory() as cache:
        record = formalization(client, statement, Path(cache))  # type: ignore[arg-type]
    return record, time.monotonic() - started


def embedded_client(log_dir: Path, seed: int, temperature: float) -> object:
    from lemmata.agents.client import make_client
    from lemmata.llm import embedded_backend
    from lemmata.settings import Settings, load_environment

    embedded_backend.SAMPLING.update(seed=seed, temperature=temperature)
    environ = {**load_environment(), "LLM_BACKEND": "embedded"}
    return make_client(Settings.from_environment(environ), environ, log_dir, scope="second_formalization")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, required=True, help="bench/formal.py's output folder")
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--limit", type=int, default=0, help="at most this many checks (0: all)")
    parser.add_argument("--out", type=Path, default=None, help="the rows as JSON")
    args = parser.parse_args()

    from lemmata.formal.checking import read_formal

    cases = sorted(p.parent for p in args.results.glob("items/*/*/result.json"))
    log_dir = Path(tempfile.mkdtemp(prefix="second-formalization-"))
    client = embedded_client(log_dir, args.seed, args.temperature)
    rows: list[dict] = []
    for case in cases:
        first = first_formalization(case)
        if first is None:
            continue
        if args.limit and len(rows) >= args.limit:
            break
        status = json.loads((case / "result.json").read_text())["result"]["status"]
        second, seconds = second_formalization(client, first.statement)
        assumed = ""
        if second.spec is None or second.not_formalized:
            outcome, detail = "second not formalized", second.not_formalized
        elif second.spec.model_dump() == first.spec.model_dump():  # type: ignore[union-attr]
            outcome, detail = "same text", ""
        else:
            try:
                one, two = read_formal(first.spec), read_formal(second.spec)  # type: ignore[arg-type]
                outcome, detail = compared(one, two)
                assumed = compared(one, two, "assumptions")[0]
            except FormalError as error:
                outcome, detail = "undecided", f"not read: {error}"
        row = {
            "name": case.parent.name,
            "kind": case.name,
            "first_status": status,
            "outcome": outcome,
            "assumptions": assumed,
            "detail": detail[:300],
            "seconds": round(seconds, 1),
            "first": first.spec.model_dump(),  # type: ignore[union-attr]
            "second": second.spec.model_dump() if second.spec else None,
        }
        rows.append(row)
        print(
            f"[{len(rows)}] {row['kind']} {status} -> {outcome}/{assumed} ({seconds:.0f} s) {row['name']} {detail[:120]}"
        )
        sys.stdout.flush()
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
    print_table(rows)
    return 0


def print_table(rows: list[dict]) -> None:
    statuses = sorted({row["first_status"] for row in rows})
    print("\n| first check | kind | " + " | ".join(OUTCOMES) + " | assumptions differ |")
    print("|---|---|" + "---|" * (len(OUTCOMES) + 1))
    for kind in ("true", "twin"):
        for status in statuses:
            chosen = [row for row in rows if row["kind"] == kind and row["first_status"] == status]
            if chosen:
                counts = Counter(row["outcome"] for row in chosen)
                assumed = sum(row["assumptions"] == "differ" for row in chosen)
                print(f"| {status} | {kind} | " + " | ".join(str(counts[o]) for o in OUTCOMES) + f" | {assumed} |")
    seconds = [row["seconds"] for row in rows]
    if seconds:
        print(
            f"\n{len(rows)} second formalizations, median {statistics.median(seconds):.1f} s, total {sum(seconds):.0f} s"
        )
    for row in rows:
        if "differ" in (row["outcome"], row["assumptions"]):
            print(
                f"- {row['name']} ({row['kind']}, {row['first_status']}): claim {row['outcome']}, assumptions "
                f"{row['assumptions']}; first {row['first']}; second {row['second']} {row['detail'][:200]}"
            )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
