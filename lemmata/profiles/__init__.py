"""Where a run's jobs execute: a Snakemake profile, shipped with lemmata (`local`, the default,
and `slurm`) or a folder of the user's own with a config.yaml in it.

Nothing here imports Snakemake's SLURM plugin: it is an extra (`lemmata[slurm]`), and with it
importable every Snakemake start asks SLURM for its configuration (about 10 s where no
controller answers). Whether it is installed is asked of the import system only."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import yaml

from lemmata.errors import UserError

DEFAULT_PROFILE = "local"
#: The rules a cluster profile sends to the queue; the workflow's `localrules` are all the others.
#: Here, not in run/pipeline.py: the Snakefile reads it at every parse and this module is light.
CLUSTER_RULES = ("prove_lemma", "experiment", "rewrite_theory", "rewrite_experiment")
SLURM_PLUGIN = "snakemake_executor_plugin_slurm"
#: What SLURM says when it keeps no job accounting: sacct then never sees a job end.
NO_ACCOUNTING = "accounting_storage/none"


@dataclass(frozen=True)
class Profile:
    name: str  # a shipped profile's name, or the absolute path of the user's folder
    directory: Path
    executor: str  # Snakemake's executor: "local", "slurm", ...

    @property
    def remote(self) -> bool:
        return self.executor != "local"


def shipped_profiles() -> list[str]:
    root = Path(str(files("lemmata") / "profiles"))
    return sorted(entry.name for entry in root.iterdir() if (entry / "config.yaml").is_file())


def resolve_profile(name: str | None) -> Profile:
    """A shipped profile by name, or a folder holding a config.yaml; a clear error otherwise."""
    name = (name or "").strip() or DEFAULT_PROFILE
    if name in shipped_profiles():
        directory = Path(str(files("lemmata") / "profiles" / name))
    else:
        directory = Path(name).expanduser()
        if not (directory / "config.yaml").is_file():
            raise UserError(
                f"no profile {name!r}: name a shipped one ({', '.join(shipped_profiles())}) or a folder "
                "with a Snakemake config.yaml in it"
            )
        directory = directory.resolve()
        name = str(directory)
    return Profile(name, directory, executor_of(directory / "config.yaml"))


def executor_of(config_file: Path) -> str:
    try:
        settings = yaml.safe_load(config_file.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise UserError(f"cannot read the profile {config_file}: {error}") from None
    if not isinstance(settings, dict):
        raise UserError(f"the profile {config_file} is not a mapping of Snakemake options")
    return str(settings.get("executor", "local"))


def profile_arguments(profile: Profile) -> list[str]:
    """Snakemake's arguments for the profile, after checking it can work here: a SLURM profile
    needs the plugin, `sbatch`, and a controller that answers; without accounting, job status
    comes from squeue."""
    arguments = ["--profile", str(profile.directory)]
    if profile.executor != "slurm":
        return arguments
    if importlib.util.find_spec(SLURM_PLUGIN) is None:
        raise UserError(
            f"the {profile.name} profile runs jobs through SLURM, and Snakemake's SLURM plugin is not "
            "installed: pip install 'lemmata[slurm]'"
        )
    if shutil.which("sbatch") is None:
        raise UserError(
            f"the {profile.name} profile submits jobs with sbatch, which is not on PATH: run lemmata "
            "where SLURM jobs can be submitted (a login node)"
        )
    if slurm_setting("AccountingStorageType") == NO_ACCOUNTING:
        arguments += ["--slurm-status-command", "squeue"]
    return arguments


def slurm_setting(key: str) -> str:
    """One value of `scontrol show config`; a clear error when the controller does not answer."""
    try:
        shown = subprocess.run(
            ["scontrol", "show", "config"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise UserError(f"SLURM's controller did not answer `scontrol show config`: {error}") from None
    if shown.returncode != 0:
        raise UserError(f"SLURM's controller did not answer `scontrol show config`: {shown.stderr.strip()}")
    for line in shown.stdout.splitlines():
        name, _, value = line.partition("=")
        if name.strip() == key:
            return value.strip()
    return ""
