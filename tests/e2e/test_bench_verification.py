"""bench/verification.py: the real `lemmata check` over labelled proofs, its table and the
calibration it stores, on a replayed model (no network, no model)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from lemmata.verification.calibration import load_calibration
from lemmata.verification.user_proof import check_scope
from support import REPO

VALID = json.dumps({"verdict": "valid", "issues": []})
NO_ERROR = json.dumps({"error_found": False, "first_error": ""})
FOUND = json.dumps({"error_found": True, "first_error": "Step 2 does not follow."})
#: id, label, what the replayed checker answers: accepts one incorrect proof of three, one correct of two.
ROWS = [
    ("p1::m", "incorrect", [VALID, NO_ERROR]),
    ("p2::m", "incorrect", [VALID, FOUND]),
    ("p3::m", "incorrect", [json.dumps({"verdict": "invalid", "issues": ["wrong"]})]),
    ("p4::m", "correct", [VALID, NO_ERROR]),
    ("p5::m", "correct", ["not json at all"]),
]


def test_the_bench_prints_false_accepts_and_saves_a_calibration(tmp_path: Path) -> None:
    data, script = tmp_path / "labelled.jsonl", tmp_path / "replay.jsonl"
    rows, calls = [], []
    for ident, label, answers in ROWS:
        row = {
            "id": ident,
            "problem": f"Problem {ident}.",
            "proof": f"A proof of problem {ident} in a few steps. QED",
            "label": label,
        }
        rows.append(json.dumps(row))
        scope = check_scope(row["problem"], row["proof"])
        calls += [
            json.dumps({"role": role, "scope": scope, "model": "bench-model", "response": answer})
            for role, answer in zip(("verifier", "refuter"), answers)
        ]
    data.write_text("\n".join(rows) + "\n")
    script.write_text("\n".join(calls) + "\n")
    home = tmp_path / "home"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "LEMMATA_"))},
        "LEMMATA_HOME": str(home),
        "LEMMATA_REPLAY": str(script),
        "PYTHONPATH": str(REPO),
    }
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "verification.py"),
            "--backend",
            "replay",
            "--data",
            str(data),
            "--out",
            str(tmp_path / "out"),
            "--save-calibration",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    table = done.stdout
    assert (
        "backend replay, model bench-model, trust uncalibrated; 5 proofs (3 judged incorrect by humans, 2 correct)"
        in table
    )
    assert "| accepted by the checks | 1/3 (33%) | 1/2 (50%) | 1 | 8 |" in table
    assert "| verified (accepted by a trusted checker) | 0/3 (0%) | 0/2 (0%) |" in table
    record = load_calibration(home, "bench-model")
    assert record is not None and (record.false_accepts, record.incorrect, record.correct_accepted, record.correct) == (
        1,
        3,
        1,
        2,
    )
    assert record.trust() == "not_discriminating"  # too few proofs, and a third of the incorrect ones accepted
    assert "calibration: not_discriminating" in table
    # A second run reads the kept results: no check runs again (the replay has nothing left to answer).
    again = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "verification.py"),
            "--backend",
            "replay",
            "--data",
            str(data),
            "--out",
            str(tmp_path / "out"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert again.returncode == 0 and "| accepted by the checks | 1/3 (33%) |" in again.stdout
