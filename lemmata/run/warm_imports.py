"""The code of the stages to come, imported while the run's first model call is in flight; then a
TeX box kept started ahead (latex/texbox.py `SpareBox`) for the plots, trial pass and compile.

Jobs run on worker threads of the workflow process (rules/common.smk), and a rule's first job
imports its stage's code (`lemmata/scripts/<rule>.py` and what it imports) when it starts: between
two model calls, on the run's critical path (the writer's 0.05 s after the experiment, the theory
plan's after the formalizer: about 0.1 s over a run, 2 cores, 2026-11-29). A model call leaves the
process waiting on the network or on the model server, the interpreter's lock free; a thread that
imports the stages to come then costs no waiting job anything.

It starts once per workflow process, when a job has made its model client (`StageJob.client`):
after the client's own imports (the provider's SDK, which the first call needs and which would
otherwise share the processor with this thread), before its first call. Only a process that
called `enable` starts it: lemmata's workflow process (run/snakemake_process.py), whose jobs share
its imports; a job run in a process of its own (a cluster job) would import code it never runs.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import threading

from lemmata.run.pipeline import STAGES

#: The jobs' bodies (run/job.py imports them by name, as here: they sit on the floor above).
SCRIPTS_PACKAGE = "lemmata.scripts"

THREAD_NAME = "lemmata-warm-imports"

_enabled = False
_started = False
_lock = threading.Lock()


def enable() -> None:
    """This process runs the jobs of a whole workflow on threads: warm their imports."""
    global _enabled
    _enabled = True


def start_once() -> threading.Thread | None:
    """Start importing the stages' code on a thread of its own, once per process, when enabled."""
    global _started
    with _lock:
        if not _enabled or _started:
            return None
        _started = True
    thread = threading.Thread(target=warm_up, name=THREAD_NAME, daemon=True)
    thread.start()
    return thread


def stage_scripts() -> list[str]:
    """The modules of lemmata/scripts named like a rule of the pipeline, in the pipeline's order."""
    spec = importlib.util.find_spec(SCRIPTS_PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec else []
    present = {module.name for module in pkgutil.iter_modules(folders)}
    return [f"{SCRIPTS_PACKAGE}.{rule}" for stage in STAGES for rule in stage.rules if rule in present]


def warm_up() -> None:
    import_stage_scripts()
    from lemmata.latex.texbox import SPARE  # imported here, not at start-up: 15 ms off the first call's path

    SPARE.keep()


def import_stage_scripts() -> None:
    for module in stage_scripts():
        try:
            importlib.import_module(module)
        except Exception:  # noqa: BLE001 - the job that runs it imports it again and reports why it fails
            continue
