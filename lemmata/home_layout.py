"""Every path of the data directory (`$LEMMATA_HOME`, default `~/.lemmata`), in one place; the run
folders inside it are `layout.py`'s. Its users take their names from here: the run record, the
pause and gate answers, the memories, the calibrations, the model, the settings tab.

    .env  prices.yaml                          the saved settings, the user's prices
    runs/<id>/                                 a run folder (layout.py)
    sessions/<id>/pause.flag  checkpoint.json  a run's pause request and where it stopped
    sessions/<id>/answers/<gate>.json          a gate's answer from the browser
    results/<id>/                              the output folder of a run started in the browser
    memory/domains/<domain>/_index.json  memory/knowledge_graph/<id>.json   what runs learned
    calibration/<model>.json .progress.jsonl .log  <model>-calls/  `lemmata calibrate`
    checks/<time>-<what>/                      `lemmata check`'s folders, with their model calls
    models/                                    the embedded model and its generation lock
    models/prompt-states/<model>/              system prompts the embedded model has read
    skills/                                    skills the user installed
"""

from __future__ import annotations

from pathlib import Path

DOTENV = ".env"
PRICES = "prices.yaml"
RUNS = "runs"
SESSIONS = "sessions"
RESULTS = "results"
MEMORY = "memory"
CALIBRATION = "calibration"
CHECKS = "checks"
MODELS = "models"
PROMPT_STATES = "prompt-states"  # in models/: what the embedded model read of each system prompt
SKILLS = "skills"

# In each domain's folder of memories (`memory/domains/<domain>/`), beside one file per memory.
MEMORY_INDEX = "_index.json"
MEMORY_LOCK = ".index.lock"  # one writer at a time

# In a run's session directory (`sessions/<id>/`), beside the run folder rather than in it: the
# workflow never sees them as inputs or outputs.
PAUSE_FLAG = "pause.flag"  # a pause was asked for; the driver stops at the next rule boundary
CHECKPOINT = "checkpoint.json"  # where a paused run stopped
ANSWERS = "answers"  # gate answers given in the browser


def session_dir(run_dir: Path) -> Path:
    """`sessions/<id>/` of the run `runs/<id>/`: same data directory, same session id."""
    run_dir = Path(run_dir)
    return run_dir.parent.parent / SESSIONS / run_dir.name


def domain_memories(home: Path) -> Path:
    return Path(home) / MEMORY / "domains"


def knowledge_graphs(home: Path) -> Path:
    return Path(home) / MEMORY / "knowledge_graph"
