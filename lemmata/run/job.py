"""What every workflow script shares: settings from the Snakemake config, the model client, the
rule's log (when it started, how it ended), and turning a LemmataError into a one-line failure the
driver can report.

The scripts run inside Snakemake's own process (a `run:` block on a worker thread, see
rules/common.smk): a job costs no Python start and no imports after the first job paid them. So a
job ends with an exception, never with SystemExit: on a worker thread SystemExit would escape
Snakemake's job bookkeeping and leave the job neither finished nor failed.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lemmata import layout
from lemmata.artifacts import Checker, TaskInput, atomic_write_text, read_artifact
from lemmata.errors import BudgetReached, GateClosed, LemmataError
from lemmata.redaction import redact_known
from lemmata.run.job_harness import ProcessStateChanged, job_harness
from lemmata.settings import Settings, data_home_of
from lemmata.terminal_text import shown

if TYPE_CHECKING:
    from lemmata.agents.client import LLMClient


class JobFailed(Exception):
    """A job ended by one of our errors; its one-line message is already in logs/last_failure.txt."""


@dataclass(frozen=True)
class RuleJob:
    """One job as its rule's `run:` block sees it, under the names of Snakemake's `snakemake`
    object (what a `script:` gets): the rule's name, its files, params, wildcards and the config."""

    rule: str
    input: Any
    output: Any
    params: Any
    wildcards: Any
    log: Any
    config: Mapping[str, Any]


def run_script(name: str, rule_job: RuleJob) -> None:
    """The job body `lemmata/scripts/<name>.py` defines (`run(job)`), for this job, once its stage
    has a forecast and the run's budget lets it start (run/spending/stage_boundary.py)."""
    from lemmata.run.spending.stage_boundary import before_job

    job = StageJob(rule_job)
    started = time.monotonic()
    try:
        with job_harness(job.log_file, expected=(JobFailed, GateClosed, BudgetReached)):
            try:
                before_job(job.run_dir, job.rule, job.version, job.settings, job.home)
            except BudgetReached as reached:
                job.log(f"{job.rule}: not started: {reached}")
                raise
            except LemmataError as error:  # e.g. a prices.yaml broken since the run started
                raise job.failed(error, started) from None
            script = importlib.import_module(f"lemmata.scripts.{name}")
            script.run(job)
    except ProcessStateChanged as changed:
        raise job.failed(changed, started) from None


class StageJob:
    """A thin view of the rule's job (a RuleJob, or any object with the same names) for one script."""

    def __init__(self, smk: Any) -> None:
        self.smk = smk
        self.run_dir = Path.cwd()  # Snakemake runs scripts in the run directory.
        self.rule = str(smk.rule)
        self.home = data_home_of(self.run_dir)
        logs = getattr(smk, "log", None)
        self.log_file = Path(logs[0]) if logs else None  # the rule's `log:`

    @cached_property
    def settings(self) -> Settings:
        return Settings.from_mapping(self.smk.config)

    def input(self, name: str) -> Path:
        return Path(getattr(self.smk.input, name))

    def output(self, name: str | None = None) -> Path:
        return Path(self.smk.output[0] if name is None else getattr(self.smk.output, name))

    @property
    def version(self) -> int:
        """The paper version this job works for: n of a rewrite's rule (`{n}`), else 1."""
        wildcards = getattr(self.smk, "wildcards", None)
        return int(wildcards.n) if wildcards is not None and hasattr(wildcards, "n") else 1

    def client(self, scope: str | None = None) -> LLMClient:
        """The model client; its calls are logged under `scope`, by default the rule (and the
        version, for a rewrite's)."""
        # Imported here: the gates and the bookkeeping jobs call no model, and skip its import.
        from lemmata.agents.client import make_client

        default = self.rule if self.version == 1 else f"{self.rule}:v{self.version}"
        return make_client(self.settings, os.environ, self.run_dir, scope or default)

    def checker(self, client: LLMClient) -> Checker:
        """Who checks this job's proofs: the client's active model, trusted as far as it was measured."""
        from lemmata.llm.base import answering_backend
        from lemmata.verification.calibration import checker_for

        return checker_for(answering_backend(client.backend), client.models.active, self.home)

    def task_from_config(self) -> TaskInput:
        """The task as the workflow was started with it: only intake reads it here."""
        keys = ("session_id", "mode", "task", "domain", "paper_ids")
        return TaskInput.model_validate({k: self.smk.config[k] for k in keys if k in self.smk.config})

    def task_input(self) -> TaskInput:
        """The run's task, from the one artifact that holds it (input.json, made by intake)."""
        return read_artifact(self.run_dir / layout.INPUT, TaskInput)

    def log(self, line: str) -> None:
        """One line in the rule's log, stamped; the log is the job's own record of itself."""
        if self.log_file is not None:
            self.log_file.parent.mkdir(parents=True, exist_ok=True)
            with self.log_file.open("a", encoding="utf-8") as handle:
                # Read with cat or tail: a model's text quoted here is shown, never obeyed (terminal_text.py).
                handle.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {shown(redact_known(line))}\n")

    def failed(self, error: LemmataError, started: float) -> JobFailed:
        """The end of a job by one of our errors: its one line kept for the driver, logged, said."""
        message = shown(redact_known(f"{self.rule}: {error}"))  # a message may quote a key or a model's answer
        atomic_write_text(self.run_dir / layout.LAST_FAILURE, message + "\n")
        self.log(f"failed after {time.monotonic() - started:.1f} s: {message}")
        sys.stderr.write(f"lemmata: {message}\n")
        return JobFailed(message)

    @contextmanager
    def reporting(self) -> Iterator[None]:
        """Our errors end the job with one line (kept for the driver); bugs keep their traceback.
        The rule's log says when the job started and how it ended."""
        started = time.monotonic()
        self.log(f"{self.rule}: started")
        try:
            yield
        except LemmataError as exc:
            raise self.failed(exc, started) from None
        except GateClosed:  # a gate closing on purpose: the driver asks its question
            self.log(f"stopped after {time.monotonic() - started:.1f} s: the gate waits for a decision")
            raise
        except SystemExit as exc:  # from a library: on Snakemake's worker thread it must not escape as such
            self.log(f"failed after {time.monotonic() - started:.1f} s: exit status {exc.code}")
            raise JobFailed(f"{self.rule}: exited with status {exc.code}") from None
        except BaseException as exc:
            self.log(f"crashed after {time.monotonic() - started:.1f} s: {type(exc).__name__}: {exc}")
            raise
        self.log(f"done in {time.monotonic() - started:.1f} s")
