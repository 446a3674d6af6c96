"""How well lemmata's verification tells wrong proofs from right ones, on human-labelled proofs.

Runs the real `lemmata check --json --no-machine-checks` once per proof of a labelled JSONL file (one object a line:
`id`, `problem`, `proof`, `label` correct|incorrect; the default is the Open Proof Corpus sample
in ../shared/data/proof-verification/dev.jsonl, which stays outside the package) and prints a
table: false accepts (proofs humans judged incorrect that lemmata accepted), correct proofs
accepted, unreadable answers, model calls and seconds; once for what the checks accepted and once
for what lemmata calls verified (acceptance by a trusted checker).

Results are kept per proof in the output folder, so an interrupted run goes on where it stopped.
`--save-calibration` stores the measurement as the model's calibration in $LEMMATA_HOME (or, with
`--bundle`, in the package, for the developers' measured models): it decides whether the model's
checks may verify anything.

Usage: python bench/verification.py [--backend embedded] [--limit N] [--data FILE] [--out DIR]
                                    [--save-calibration [--bundle]] [--fresh]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

from lemmata.errors import UserError
from lemmata.settings import lemmata_home
from lemmata.verification.calibrate import LabelledProof, interleaved, parse_labelled
from lemmata.verification.calibration import (
    BUNDLED_CALIBRATIONS,
    STACK_VERSION,
    Calibration,
    model_slug,
    save_calibration,
)

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "proof-verification" / "dev.jsonl"
DATASET_NAMES = {"dev.jsonl": "Open Proof Corpus sample"}


def load_rows(path: Path, limit: int | None) -> list[LabelledProof]:
    try:
        rows = parse_labelled(path.read_text(encoding="utf-8"), str(path))
    except UserError as exc:
        sys.exit(str(exc))
    return interleaved(rows)[:limit] if limit else rows


def check_one(row: LabelledProof, folder: Path, calls_dir: Path, environ: dict[str, str]) -> dict:
    """One `lemmata check --json` of the row's proof; its answer, or why there is none."""
    case = folder / "proofs" / model_slug(row.id)
    case.mkdir(parents=True, exist_ok=True)
    (case / "statement.txt").write_text(row.problem, encoding="utf-8")
    (case / "proof.txt").write_text(row.proof, encoding="utf-8")
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "lemmata",
            "check",
            "--json",
            "--no-machine-checks",  # the model checks are what is measured here
            "--log-dir",
            str(calls_dir),
            str(case / "statement.txt"),
            str(case / "proof.txt"),
        ],
        capture_output=True,
        text=True,
        env=environ,
        stdin=subprocess.DEVNULL,
    )
    seconds = time.monotonic() - started
    if done.returncode not in (0, 1) or not done.stdout.strip():
        return {
            "id": row.id,
            "label": row.label,
            "error": done.stderr.strip()[-500:] or f"exit {done.returncode}",
            "wall_seconds": seconds,
            "stack_version": STACK_VERSION,
        }
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return {
        "id": row.id,
        "label": row.label,
        "result": result,
        "wall_seconds": seconds,
        "stack_version": STACK_VERSION,
    }


def unreadable(entry: dict) -> bool:
    if "error" in entry:
        return True
    return any(step["outcome"] == "could_not_run" for step in entry["result"]["checks"])


def table(entries: list[dict]) -> tuple[str, dict]:
    done = [entry for entry in entries if "result" in entry]
    incorrect = [entry for entry in entries if entry["label"] == "incorrect"]
    correct = [entry for entry in entries if entry["label"] == "correct"]

    def count(group: list[dict], key: str) -> int:
        return sum(1 for entry in group if "result" in entry and entry["result"][key])

    def rate(part: int, whole: int) -> str:
        return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "-"

    figures = {
        "incorrect": len(incorrect),
        "correct": len(correct),
        "false_accepts": count(incorrect, "accepted"),
        "correct_accepted": count(correct, "accepted"),
        "unreadable": sum(unreadable(entry) for entry in entries),
        "calls": sum(entry["result"]["calls"] for entry in done),
        "seconds": round(sum(entry["wall_seconds"] for entry in entries), 1),
    }
    checker = next((entry["result"]["checker"] for entry in done), {"backend": "?", "model": "?", "trust": "?"})
    lines = [
        f"backend {checker['backend']}, model {checker['model']}, trust {checker['trust']}; "
        f"{len(entries)} proofs ({len(incorrect)} judged incorrect by humans, {len(correct)} correct); "
        f"checks version {STACK_VERSION}",
        "",
        "| outcome | false accepts (of incorrect) | correct proofs accepted | unreadable | calls | seconds |",
        "|---|---|---|---|---|---|",
        f"| accepted by the checks | {rate(figures['false_accepts'], len(incorrect))} | "
        f"{rate(figures['correct_accepted'], len(correct))} | {figures['unreadable']} | {figures['calls']} | "
        f"{figures['seconds']:.0f} |",
        f"| verified (accepted by a trusted checker) | {rate(count(incorrect, 'verified'), len(incorrect))} | "
        f"{rate(count(correct, 'verified'), len(correct))} | | | |",
    ]
    return "\n".join(lines), {**figures, "backend": checker["backend"], "model": checker["model"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default=os.environ.get("LLM_BACKEND", "embedded"))
    parser.add_argument("--limit", type=int, default=None, help="check only this many proofs (both labels mixed)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=None, help="default: $LEMMATA_HOME/bench/verification-<backend>")
    parser.add_argument(
        "--save-calibration", action="store_true", help="store the measurement as the model's calibration"
    )
    parser.add_argument("--bundle", action="store_true", help="with --save-calibration: into the package (developers)")
    parser.add_argument("--fresh", action="store_true", help="forget the results of earlier runs in --out")
    args = parser.parse_args()
    if not args.data.is_file():
        sys.exit(f"no labelled proofs at {args.data}: pass --data FILE (JSONL: id, problem, proof, label)")
    rows = load_rows(args.data, args.limit)
    folder = args.out or lemmata_home() / "bench" / f"verification-{args.backend}"
    folder.mkdir(parents=True, exist_ok=True)
    results_file = folder / "results.jsonl"
    if args.fresh:
        results_file.unlink(missing_ok=True)
    earlier = {}
    if results_file.is_file():
        for line in results_file.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if entry.get("stack_version") == STACK_VERSION and "result" in entry:
                earlier[entry["id"]] = entry
    environ = {**os.environ, "LLM_BACKEND": args.backend}
    entries = []
    for number, row in enumerate(rows, start=1):
        entry = earlier.get(row.id)
        if entry is None:
            entry = check_one(row, folder, folder / "calls", environ)
            with open(results_file, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry) + "\n")
        entries.append(entry)
        verdict = (
            ("error: " + entry["error"][:80])
            if "error" in entry
            else ("accepted" if entry["result"]["accepted"] else entry["result"]["method"])
        )
        print(
            f"[{number}/{len(rows)}] {row.label:9} {verdict} ({entry['wall_seconds']:.0f} s) {row.id}",
            file=sys.stderr,
            flush=True,
        )
    text, figures = table(entries)
    print(text)
    if args.save_calibration:
        calibration = Calibration(
            backend=figures["backend"],
            model=figures["model"],
            stack_version=STACK_VERSION,
            dataset=f"{DATASET_NAMES.get(args.data.name, args.data.name)}, {len(entries)} human-labelled proofs",
            measured_at=date.today().isoformat(),
            incorrect=figures["incorrect"],
            correct=figures["correct"],
            false_accepts=figures["false_accepts"],
            correct_accepted=figures["correct_accepted"],
            unreadable=figures["unreadable"],
            calls=figures["calls"],
            seconds=figures["seconds"],
        )
        if args.bundle:
            path = BUNDLED_CALIBRATIONS / f"{model_slug(calibration.model)}.json"
            path.write_text(calibration.model_dump_json(indent=2) + "\n", encoding="utf-8")
        else:
            path = save_calibration(lemmata_home(), calibration)
        print(
            f"\ncalibration: {calibration.trust()} (false accepts {figures['false_accepts']}/{figures['incorrect']}); "
            f"saved to {path}"
        )


if __name__ == "__main__":
    main()
