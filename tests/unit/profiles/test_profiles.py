"""Snakemake profiles: which one a run uses, what it passes to Snakemake, and the clear errors
for a profile this machine cannot use. No SLURM here: its commands are scripts on PATH (the
real cluster is test_slurm_e2e.py's)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import cli_environment

import lemmata
from lemmata import profiles
from lemmata.errors import UserError
from lemmata.profiles import CLUSTER_RULES, SLURM_PLUGIN, profile_arguments, resolve_profile, shipped_profiles
from lemmata.run.record import RunRecord
from lemmata.run.workflow import snakemake_command

PACKAGE = Path(lemmata.__file__).parent


def fake_slurm_commands(folder: Path, accounting: str = "accounting_storage/none", answers: bool = True) -> str:
    """sbatch and scontrol as scripts: `scontrol show config` prints what a real one prints
    (or fails as one whose controller is down). Returns a PATH with them first."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sbatch").write_text("#!/bin/sh\nexit 0\n")
    if answers:
        config = (
            f"Configuration data as of 2026-11-21T10:00:00\nAccountingStorageHost   = (null)\n"
            f"AccountingStorageType   = {accounting}\nClusterName             = test\n"
        )
        (folder / "scontrol").write_text(f"#!/bin/sh\ncat <<'EOF'\n{config}EOF\n")
    else:
        (folder / "scontrol").write_text(
            "#!/bin/sh\necho 'slurm_load_ctl_conf error: Unable to contact slurm "
            "controller (connect failure)' >&2\nexit 1\n"
        )
    for name in ("sbatch", "scontrol"):
        (folder / name).chmod(0o755)
    return f"{folder}:/usr/bin:/bin"


@pytest.fixture
def plugin_installed(monkeypatch):
    """The SLURM plugin importable, as in an install with the slurm extra (not in this venv)."""
    real = importlib.util.find_spec
    monkeypatch.setattr(
        profiles.importlib.util,
        "find_spec",
        lambda name, *args: object() if name == SLURM_PLUGIN else real(name, *args),
    )


def test_lemmata_ships_a_local_default_and_a_slurm_profile():
    assert shipped_profiles() == ["local", "slurm"]
    local, slurm = resolve_profile(None), resolve_profile("slurm")
    assert (local.name, local.executor, local.remote) == ("local", "local", False)
    assert (slurm.name, slurm.executor, slurm.remote) == ("slurm", "slurm", True)
    assert (slurm.directory / "config.yaml").is_file()


def test_a_folder_of_ones_own_is_a_profile_named_by_its_absolute_path(tmp_path, monkeypatch):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "config.yaml").write_text("executor: slurm\njobs: 100\n")
    monkeypatch.chdir(tmp_path)
    profile = resolve_profile("site")
    assert (profile.name, profile.directory, profile.executor) == (str(tmp_path / "site"), tmp_path / "site", "slurm")


def test_an_empty_profile_name_is_the_default():
    assert resolve_profile("").name == resolve_profile(" ").name == "local"


@pytest.mark.parametrize("name", ["nowhere", "local2"])
def test_an_unknown_profile_is_refused_naming_the_shipped_ones(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError, match=r"no profile .*: name a shipped one \(local, slurm\) or a folder"):
        resolve_profile(name)


@pytest.mark.parametrize(
    "text, problem",
    [
        ("executor: [local\n", "cannot read the profile"),
        ("- just\n- a list\n", "is not a mapping of Snakemake options"),
    ],
)
def test_a_broken_profile_file_is_refused_with_its_path(text, problem, tmp_path):
    (tmp_path / "config.yaml").write_text(text)
    with pytest.raises(UserError, match=problem):
        resolve_profile(str(tmp_path))


def test_the_local_profile_passes_only_itself(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")  # no SLURM command is asked
    profile = resolve_profile("local")
    assert profile_arguments(profile) == ["--profile", str(profile.directory)]


def test_the_slurm_profile_without_the_extra_says_how_to_install_it():
    assert importlib.util.find_spec(SLURM_PLUGIN) is None, "the test venv must not have the SLURM plugin"
    with pytest.raises(UserError, match=r"Snakemake's SLURM plugin is not installed: pip install 'lemmata\[slurm\]'"):
        profile_arguments(resolve_profile("slurm"))


def test_the_slurm_profile_needs_sbatch(plugin_installed, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UserError, match="submits jobs with sbatch, which is not on PATH"):
        profile_arguments(resolve_profile("slurm"))


@pytest.mark.parametrize(
    "accounting, extra",
    [("accounting_storage/none", ["--slurm-status-command", "squeue"]), ("accounting_storage/slurmdbd", [])],
)
def test_job_status_comes_from_squeue_only_when_the_cluster_keeps_no_accounting(
    accounting, extra, plugin_installed, monkeypatch, tmp_path
):
    monkeypatch.setenv("PATH", fake_slurm_commands(tmp_path / "bin", accounting))
    profile = resolve_profile("slurm")
    assert profile_arguments(profile) == ["--profile", str(profile.directory), *extra]


def test_a_controller_that_does_not_answer_is_a_clear_error(plugin_installed, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", fake_slurm_commands(tmp_path / "bin", answers=False))
    with pytest.raises(
        UserError,
        match="SLURM's controller did not answer `scontrol show config`: slurm_load_ctl_conf error: Unable to contact",
    ):
        profile_arguments(resolve_profile("slurm"))


def test_the_workflow_command_puts_the_profile_before_what_lemmata_needs(tmp_path):
    profile = ["--profile", "/p/slurm", "--slurm-status-command", "squeue"]
    command = snakemake_command(tmp_path, None, profile)
    assert "--jobs" not in command and "--cores" not in command  # the profile's jobs: 20
    assert command.index("--slurm-status-command") < command.index("--configfile") < command.index("--logger")
    local = snakemake_command(tmp_path, 10)
    assert local[local.index("--jobs") + 1] == "10" and "--profile" not in local


def workflow_rules(run_dir: Path) -> tuple[set[str], set[str]]:
    """Every rule of the packaged workflow, and those it runs where the driver runs, as
    Snakemake itself loads them (the local rules are computed from CLUSTER_RULES at parse time;
    Snakemake keeps them in a private set, which no public call lists)."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

    with SnakemakeApi(OutputSettings()) as api:
        workflow = api.workflow(
            snakefile=PACKAGE / "Snakefile",
            resource_settings=ResourceSettings(),
            config_settings=ConfigSettings(config={"task": "x", "mode": "prove", "session_id": "x"}),
            workdir=run_dir,
        )._workflow
        return {rule.name for rule in workflow.rules}, set(workflow._localrules)


def test_only_the_lemma_proofs_and_the_experiments_are_cluster_jobs(tmp_path):
    rules, local = workflow_rules(tmp_path)
    assert local <= rules, local - rules
    assert rules - local == set(CLUSTER_RULES)
    slurm = (PACKAGE / "profiles" / "slurm" / "config.yaml").read_text()
    for rule in CLUSTER_RULES:  # each has its own time limit on the cluster
        assert re.search(rf"^  {rule}:\n    runtime: \d+", slurm, re.MULTILINE), rule


def test_a_record_from_before_profiles_runs_under_the_local_one():
    record = RunRecord.model_validate(
        {
            "session_id": "20261101-120000-abcdef",
            "mode": "prove",
            "task": "t",
            "output_dir": "/tmp/o",
            "gate_mode": "auto",
            "backend": "local",
        }
    )
    assert record.profile == "local"


@pytest.mark.parametrize(
    "profile, message",
    [
        ("nowhere", "no profile 'nowhere'"),
        ("slurm", "pip install 'lemmata[slurm]'"),
    ],
)
def test_prove_with_a_profile_it_cannot_use_stops_before_the_run_exists(profile, message, tmp_path):
    home = tmp_path / "home"
    env = cli_environment(home, LLM_BACKEND="replay", LEMMATA_REPLAY="/nonexistent.jsonl")
    result = subprocess.run(
        [sys.executable, "-m", "lemmata", "prove", "the sum of two even integers is even", "--profile", profile],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode != 0
    assert message in result.stderr and "Traceback" not in result.stderr
    assert not (home / "runs").exists()
