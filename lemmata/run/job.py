"""What every workflow script shares: settings from the Snakemake config, the model client,
and turning a LemmataError into a one-line failure the driver can report."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import Any

from lemmata.artifacts import Checker, TaskInput, atomic_write_text
from lemmata.errors import LemmataError
from lemmata.agents.client import LLMClient
from lemmata.agents.client import make_client
from lemmata.redaction import redact_known
from lemmata.settings import Settings, lemmata_home

FAILURE_FILE = "logs/last_failure.txt"


class StageJob:
    """A thin view of Snakemake's `snakemake` object for one script run."""

    def __init__(self, smk: Any) -> None:
        self.smk = smk
        self.run_dir = Path.cwd()  # Snakemake runs scripts in the run directory.
        self.rule = str(smk.rule)
        self.home = data_home_of(self.run_dir)

    @cached_property
    def settings(self) -> Settings:
        return Settings.from_mapping(self.smk.config)

    def input(self, name: str) -> Path:
        return Path(getattr(self.smk.input, name))

    def output(self, name: str | None = None) -> Path:
        return Path(self.smk.output[0] if name is None else getattr(self.smk.output, name))

    def client(self, scope: str | None = None) -> LLMClient:
        return make_client(self.settings, os.environ, self.run_dir, scope or self.rule)

    def checker(self, client: LLMClient) -> Checker:
        """Who checks this job's proofs: the client's active model, trusted as far as it was measured."""
        from lemmata.verification.calibration import checker_for

        return checker_for(client.backend.name, client.models.active, self.home)

    def task_input(self) -> TaskInput:
        keys = ("session_id", "mode", "task", "domain", "paper_ids")
        return TaskInput.model_validate({k: self.smk.config[k] for k in keys if k in self.smk.config})

    @contextmanager
    def reporting(self) -> Iterator[None]:
        """Our errors end the job with one line (kept for the driver); bugs keep their traceback."""
        try:
            yield
        except LemmataError as exc:
            message = redact_known(f"{self.rule}: {exc}")  # a message may quote a key or a model's answer
            atomic_write_text(self.run_dir / FAILURE_FILE, message + "\n")
            sys.stderr.write(f"lemmata: {message}\n")
            raise SystemExit(1) from None


def data_home_of(run_dir: Path) -> Path:
    """The data directory a run belongs to (memories, installed skills): the one it lives in
    (`<home>/runs/<id>/`); for a workflow run by hand elsewhere, $LEMMATA_HOME."""
    return run_dir.parent.parent if run_dir.parent.name == "runs" else lemmata_home()
