"""Record a real run of the embedded model as a replay fixture for test_embedded_replays.py.

Runs `lemmata prove TASK` on the embedded model (offline, no search) in a fresh data directory,
with the settings of settings.json, and keeps the call log, the task and what the run delivered
(lemma count, outcome) under tests/data/embedded_runs/NAME/. Replaying the log gives the model's
real answers again, so what a small model really writes is tested in every CI run, in seconds.
A run takes 15 to 40 minutes on 2 cores.

Usage: python tests/data/embedded_runs/record.py NAME "TASK"
       python tests/data/embedded_runs/record.py NAME --from-run RUN_DIR   (a run already made with
       those settings, e.g. by bench/embedded_run.py --keep DIR: its task is read from input.json)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from lemmata.artifacts import Theory, read_artifact
from lemmata.run.outcome import run_outcome
from lemmata.run.record import live_status, load_record

HERE = Path(__file__).parent
#: What the recorded runs share: offline (no search services to fake) and the embedded model.
SETTINGS = {"LLM_BACKEND": "embedded", "SEARCH_TOOLS": "false"}


def main(name: str, task: str) -> None:
    target = HERE / name
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "LEMMATA_HOME"))},
            "LEMMATA_HOME": f"{tmp}/home",
            **SETTINGS,
        }
        # The embedded model's file is found in the user's data directory when it is not bundled.
        model_home = Path(os.environ.get("LEMMATA_HOME", Path.home() / ".lemmata")) / "models"
        if model_home.is_dir():
            Path(tmp, "home").mkdir()
            os.symlink(model_home, Path(tmp, "home", "models"))
        subprocess.run(
            [sys.executable, "-m", "lemmata", "prove", task, "-o", f"{tmp}/out"],
            env=env,
            check=True,
            stdin=subprocess.DEVNULL,
        )
        keep(next(Path(tmp, "home", "runs").iterdir()), target, task)


def keep(run_dir: Path, target: Path, task: str) -> None:
    """The fixture from a finished run: its call log, its task, and what it delivered."""
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(run_dir / "llm_calls.jsonl", target / "llm_calls.jsonl")
    theory = read_artifact(run_dir / "theory.json", Theory)
    outcome = run_outcome(run_dir, live_status(run_dir, load_record(run_dir)))
    (target / "task.txt").write_text(task + "\n")
    (target / "recorded.json").write_text(
        json.dumps(
            {
                "settings": SETTINGS,
                "lemmas": len(theory.lemmas),
                "outcome": outcome.text,
                "main_result_status": theory.main_result_status,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {target}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[2] == "--from-run":
        run = Path(sys.argv[3])
        keep(run, HERE / sys.argv[1], json.loads((run / "input.json").read_text())["task"])
    else:
        main(sys.argv[1], sys.argv[2])
