"""Why statements of `bench/formal.py` end "not formalized": each refusal classified by cause.

Reads the results `bench/formal.py --out DIR` kept (DIR/items/<name>/<true|twin>/result.json) and
sorts each "not formalized" reason into one of:

- **the model declined**: the formalizer said the statement cannot be stated (its own words, e.g.
  "an asymptotic bound"), which lemmata takes on its word today (issue 56 asks that it be checked);
- **a construct the language lacks**: an unknown function (named), words in an expression that name
  a construct (primes, existence, roots, a sequence's terms), an indexed name such as `t_{n-1}`;
- **a faithfulness refusal**: the formal statement says something else than the prose (a number
  left out, a domain the prose does not state, a hypothesis the prose does not make, vacuous);
- **a malformed answer**: an expression that is not one, a letter not declared, an answer not read;
- **other**: anything else, printed whole so that it gets a rule.

Prints, for the true statements and the twins, the count of each cause and then the details
(the construct or the rule, with the statements it stopped). The classifier is `cause_of`, a pure
function of the reason's text (tests/unit/bench/test_formal_causes.py).

Usage: python bench/formal_causes.py DIR [--examples 3]
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

DECLINED = "the model declined"
LACKS = "a construct the language lacks"
FAITHFULNESS = "a faithfulness refusal"
MALFORMED = "a malformed answer"
OTHER = "other"
CAUSES = (DECLINED, LACKS, FAITHFULNESS, MALFORMED, OTHER)

REFUSED = "the formal statement was refused: "
#: Words in an expression, by the construct they name (the first that matches wins).
CONSTRUCT_WORDS = [
    ("primes", {"prime", "primes", "composite"}),
    ("existence", {"exists", "exist", "there", "some", "least", "greatest", "smallest", "largest", "unique"}),
    ("roots of a polynomial", {"root", "roots", "zeros", "solutions"}),
    ("counting", {"number", "count", "many", "ways", "digits", "digit"}),
    ("a quantifier in words", {"all", "every", "each", "for", "any"}),
]
FAITHFULNESS_RULES = [
    ("a number of the prose left out", "leaves out"),
    ("a domain the prose does not state", "which the statement does not say of"),
    ("a value the hypotheses do not give", "while no hypothesis says anything of"),
    ("a hypothesis the prose does not make", "is no condition the statement states"),
    ("vacuous: no input satisfies the hypotheses", "so it would hold vacuously"),
    ("circular: a definition restated", "circular"),
    ("cases the prose does not name", "offers cases"),
    ("a case contradicting a hypothesis", "contradicts"),
    ("a hypothesis about no variable", "is about no variable"),
]
MALFORMED_RULES = [
    ("a letter not declared", "is not declared"),
    ("a name that is not a variable's", "is not a variable name"),
    ("a comparison that is not one", "compare numbers"),
    ("an expression that is not one", "is not an expression"),
    ("an answer not read", "could not be read"),
    ("an expression too large", "nested more than"),
]


def cause_of(reason: str) -> tuple[str, str]:
    """(cause, detail) of a "not formalized" reason."""
    if reason.startswith("the formalizer's answer could not be read"):
        return MALFORMED, "an answer not read"
    if not reason.startswith(REFUSED):
        return DECLINED, reason.strip()[:80] or "(no reason given)"
    refusal = reason[len(REFUSED) :]
    function = re.search(r"unknown function '([^']+)'", refusal)
    if function:
        return LACKS, f"the function {function.group(1)}"
    if re.search(r"'[^']*_\{[^']*'", refusal) or "is not a variable name" in refusal and "{" in refusal:
        return LACKS, "a sequence (an indexed name such as t_{n-1})"
    words = re.search(r"it holds words: ([^;)]+)", refusal)
    if words:
        said = {word.strip().lower() for word in words.group(1).split(",")}
        for construct, names in CONSTRUCT_WORDS:
            if said & names:
                return LACKS, construct
        return MALFORMED, "words in an expression: " + ", ".join(sorted(said))
    for detail, marker in FAITHFULNESS_RULES:
        if marker in refusal:
            return FAITHFULNESS, detail
    for detail, marker in MALFORMED_RULES:
        if marker in refusal:
            return MALFORMED, detail
    return OTHER, refusal[:120]


def refusals(out: Path) -> dict[str, list[tuple[str, str]]]:
    """kind ("true" or "twin") -> (statement name, reason) of each result not formalized."""
    found: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for path in sorted(out.glob("items/*/*/result.json")):
        entry = json.loads(path.read_text(encoding="utf-8"))
        reason = ((entry.get("result") or {}).get("formal") or {}).get("not_formalized")
        if reason:
            found[path.parent.name].append((path.parent.parent.name, reason))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the --out folder of a bench/formal.py run")
    parser.add_argument("--examples", type=int, default=3, help="statements named per detail")
    args = parser.parse_args()
    found = refusals(args.out)
    kinds = [kind for kind in ("true", "twin") if kind in found]
    counts = {kind: Counter(cause_of(reason)[0] for _, reason in found[kind]) for kind in kinds}
    print("| cause | " + " | ".join(f"{kind} statements" for kind in kinds) + " |")
    print("|---|" + "---|" * len(kinds))
    for cause in CAUSES:
        print(f"| {cause} | " + " | ".join(str(counts[kind][cause]) for kind in kinds) + " |")
    print("| **not formalized** | " + " | ".join(f"**{len(found[kind])}**" for kind in kinds) + " |")
    for kind in kinds:
        print(f"\n{kind} statements, by detail:")
        details: dict[tuple[str, str], list[str]] = defaultdict(list)
        for name, reason in found[kind]:
            details[cause_of(reason)].append(name)
        for (cause, detail), names in sorted(details.items(), key=lambda item: (-len(item[1]), item[0])):
            shown = ", ".join(names[: args.examples]) + (", ..." if len(names) > args.examples else "")
            print(f"  {len(names):>3}  {cause}: {detail}  ({shown})")


if __name__ == "__main__":
    main()
