"""Starting a run: settings checked, backend chosen, run directory created. Shared by the CLI
(`lemmata prove|explore|from-papers`, which then drives the run itself) and the server
(`POST /api/runs`, which hands the run to a supervised `lemmata resume`)."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from lemmata import layout
from lemmata.artifacts import TaskInput, atomic_write_text
from lemmata.errors import UserError, check_utf8_text
from lemmata.home_layout import RESULTS, RUNS
from lemmata.llm.prices import load_prices
from lemmata.llm.resolve import backend_name, choose_backend
from lemmata.private_files import private_directory
from lemmata.profiles import profile_arguments, resolve_profile
from lemmata.run.delivery import OutputFolderError, check_output_folder
from lemmata.run.record import DataHome, RunRecord, new_session_id, save_record
from lemmata.run.spending.budget import Budget, budget_from_environment, check_priced
from lemmata.settings import Settings

#: What a run says it is about, by mode, when `from-papers` gets only paper ids.
PAPERS_TASK = "Build on these papers: "
#: A domain is a name ("multi-armed bandits"), not a description.
MAX_DOMAIN_CHARS = 100
#: The longest task: a statement with its definitions takes a few thousand characters. The
#: briefing embeds the whole task on the CPU to find memories of earlier runs, about 0.6 s per
#: 1,000 characters (a 127 kB task took 74 s), before any model call.
MAX_TASK_CHARS = 10_000
#: Paper ids `from-papers` takes (the CLI and the API alike).
MAX_PAPERS = 20
#: Control characters a task may hold: the rest (NUL, BEL, ESC, ...) would reach the terminal,
#: the prompts and the paper as they are.
ALLOWED_CONTROLS = "\t\n\r"


@dataclass(frozen=True)
class NewRun:
    run_dir: Path
    backend: str
    model: str
    #: Why the paper goes to a folder inside the one asked for (another run's, or one holding a paper); "" otherwise.
    output_note: str = ""


def create_new_run(
    data_home: DataHome,
    mode: str,
    task: str,
    output: Path | None,
    gate: str | None,
    environ: Mapping[str, str],
    embedded_model: Callable[[Settings], Path],
    profile: str | None = None,
    budget: Budget | None = None,
    results: Path | None = None,
    **task_fields: Any,
) -> NewRun:
    """A run directory ready to drive; UserError/SettingsError before anything is written.
    `output` receives the paper's copy (None: `<results>/<id>/`, `results` None: the data
    directory's `results/`); it is checked here, before any model call (run/delivery.py), and a
    folder that another run delivers to, or that holds a paper already, is refused.
    `embedded_model(settings)` returns the model file an embedded run loads (it may install the
    default model, or refuse); it is called before the backend is built. `budget` limits what the
    run may spend; what it leaves unset comes from LEMMATA_BUDGET_USD / LEMMATA_BUDGET_TOKENS."""
    check_task(task)
    check_domain(str(task_fields.get("domain", "")))
    execution = resolve_profile(profile)
    profile_arguments(execution)  # a profile that cannot work here stops us before any work
    settings = Settings.from_mapping({**environ, **({"GATE_MODE": gate} if gate else {})})
    if backend_name(settings, environ) == "embedded":
        settings = settings.model_copy(update={"LEMMATA_EMBEDDED_MODEL": str(embedded_model(settings))})
    backend = choose_backend(settings, environ)  # a missing credential stops us before any work
    prices = load_prices(data_home.home)  # so does a broken prices.yaml, which every model job would read
    # What the command line leaves unset comes from the environment; a USD budget needs prices.
    given, from_environment = budget or Budget(), budget_from_environment(environ)
    budget = Budget(given.usd or from_environment.usd, given.tokens or from_environment.tokens)
    check_priced(budget, backend.name, (backend.models.active, backend.models.fast), prices, data_home.home)
    if backend.name == "replay":
        settings = checked_replay_settings(settings)
    # The run keeps the backend it started with, on resume too.
    settings = settings.model_copy(update={"LLM_BACKEND": backend.name})
    # The data home before the output folder in it: a home that is a file is named as the home.
    private_directory(data_home.home / RUNS)
    session_id = new_session_id()
    run_dir = data_home.run_dir(session_id)
    output = output if output is not None else (results or data_home.home / RESULTS) / session_id
    output_dir, output_note = claim_output_folder(data_home, output, session_id)
    record = RunRecord(
        session_id=session_id,
        mode=mode,
        task=task,
        output_dir=str(output_dir),
        gate_mode=settings.GATE_MODE,
        backend=backend.name,
        profile=execution.name,
        budget_usd=budget.usd,
        budget_tokens=budget.tokens,
    )

    create_run(run_dir, record, TaskInput(session_id=session_id, mode=mode, task=task, **task_fields), settings)
    return NewRun(run_dir, backend.name, backend.models.active, output_note)


def claim_output_folder(data_home: DataHome, output: Path, session_id: str) -> tuple[Path, str]:
    """The real path of a safe output folder (made when missing) that no other run delivers to, and
    why it is not `output` itself: two runs never overwrite each other's paper_v1.* (a run's
    rewrites deliver next to its own). A folder another run delivers to, or one that holds a paper,
    keeps what it holds; this run's files go to <output>/<session id>/ (issue 54: `--output
    ./results`, the spec's default spelled out, worked once and then refused every later run)."""
    folder = check_output_folder(output)
    holder = _holder(data_home, folder)
    if holder is None:
        return folder, ""
    inside = check_output_folder(folder / session_id)
    if _holder(data_home, inside) is not None:  # a folder of the user's, named as a new run is
        raise OutputFolderError(
            f"the output folder {folder} {holder}, and {inside} is taken too: give this run another --output"
        )
    return inside, f"the output folder {folder} {holder}: this run's paper goes to {inside}"


def _holder(data_home: DataHome, folder: Path) -> str | None:
    """What already claims `folder` (another run, or a paper in it), said as the end of a sentence."""
    others = [record.session_id for record in data_home.run_records() if Path(record.output_dir) == folder]
    if others:
        return f"is the output folder of run {others[0]}"
    # A link under a paper's name is no paper: delivery replaces it (run/delivery.py).
    papers = sorted(
        path.name
        for pattern in ("paper_v*.tex", "paper_v*.pdf")
        for path in folder.glob(pattern)
        if path.is_file() and not path.is_symlink()
    )
    return f"holds {papers[0]} already" if papers else None


def check_task(task: str) -> None:
    """A task is UTF-8 text of at most MAX_TASK_CHARS, without control characters but tab and newline."""
    if not task.strip():
        raise UserError("the task is empty: say what to prove or explore")
    if len(task) > MAX_TASK_CHARS:
        raise UserError(
            f"the task has {len(task):,} characters, more than the {MAX_TASK_CHARS:,} a run takes: the "
            "briefing embeds the whole task on this machine's CPU (about 0.6 s per 1,000 characters) "
            "before any model call; state the problem and its definitions, and leave the rest to the survey"
        )
    check_utf8_text("the task", task)
    control = next((c for c in task if unicodedata.category(c) == "Cc" and c not in ALLOWED_CONTROLS), None)
    if control is not None:
        raise UserError(
            f"the task holds the control character U+{ord(control):04X} (at position {task.index(control)}): "
            "a task is text; only tabs and line breaks are allowed"
        )


def check_domain(domain: str) -> None:
    """A domain names a plugin and a memory directory: a short line of text."""
    if len(domain) > MAX_DOMAIN_CHARS or any(not c.isprintable() for c in domain):
        raise UserError(
            f"the domain must be one line of at most {MAX_DOMAIN_CHARS} characters, such as "
            "'multi-armed bandits' or 'number theory'"
        )


def checked_replay_settings(settings: Settings) -> Settings:
    """Jobs run inside the run directory: the recording's path must be absolute, and usable now."""
    from lemmata.llm.replay import load_replay_script

    recording = Path(settings.LEMMATA_REPLAY).expanduser().resolve()
    load_replay_script(recording)
    return settings.model_copy(update={"LEMMATA_REPLAY": str(recording)})


def create_run(run_dir: Path, record: RunRecord, task: TaskInput, settings: Settings) -> None:
    """A new run directory: record, the complete workflow config (no credentials), logs dir."""
    private_directory(run_dir / "logs")  # the home and runs/ too, when this run is their first
    config = {**settings.workflow_config(), **task.model_dump()}
    atomic_write_text(run_dir / layout.CONFIG, yaml.safe_dump(config, sort_keys=False))
    save_record(run_dir, record)
