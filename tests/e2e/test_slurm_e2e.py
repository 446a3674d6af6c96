"""The `slurm` profile against a real SLURM: Debian's munge, slurmctld and slurmd on 127.0.0.1
(support.slurm_cluster, installed when missing), lemmata[slurm] in its own virtualenv
(`bin/setup --slurm`, LEMMATA_SLURM_VENV), and the fake model and search servers, which the
jobs on the "compute node" reach over loopback. The lemma proofs and the experiment pass
through the queue; every other rule runs where the driver runs."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import cli_environment

from lemmata.run.record import load_record
from support import even_sum_session
from support.slurm_cluster import QueuedJob, SlurmCluster, SlurmUnavailable, install_packages
from support.waiting import wait_until

pytestmark = pytest.mark.long  # a cluster on this machine: minutes

SLURM_VENV = Path(os.environ.get("LEMMATA_SLURM_VENV", "/nonexistent"))
INSTRUCTIONS = "Name the ideal 2Z explicitly"


def unavailable(reason: str) -> None:
    if os.environ.get("LEMMATA_REQUIRE_SLURM") == "1":  # bin/test set everything up: a failure
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason, allow_module_level=True)


if not (SLURM_VENV / "bin" / "lemmata").exists():
    unavailable("no lemmata[slurm] virtualenv: run `bin/setup --slurm` and set LEMMATA_SLURM_VENV=.venv-slurm")
if os.geteuid() != 0:
    unavailable("the test cluster's daemons run as root")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    try:
        install_packages()
        started = SlurmCluster(tmp_path_factory.mktemp("slurm"))
        started.start()
    except SlurmUnavailable as error:
        unavailable(str(error))
    pids = [process.pid for process in started.processes.values()]
    yield started
    started.stop()
    assert not [pid for pid in pids if Path(f"/proc/{pid}").exists()], "a daemon we started outlived stop()"


@dataclass
class QueueWatch:
    """What squeue listed while a command ran, polled every 0.3 s: each new job's states, in
    order (jobs listed before are left out: SLURM lists ended jobs for MinJobAge)."""

    cluster: SlurmCluster
    states: dict[str, list[str]] = field(default_factory=dict)
    comments: dict[str, str] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _earlier: set[str] = field(default_factory=set)

    def __enter__(self) -> QueueWatch:
        self._earlier = {job.job_id for job in self.cluster.queue()}
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._see(self.cluster.queue())

    def _poll(self) -> None:
        while not self._stop.wait(0.3):
            self._see(self.cluster.queue())

    def _see(self, jobs: list[QueuedJob]) -> None:
        for job in jobs:
            if job.job_id in self._earlier:
                continue
            self.comments[job.job_id] = job.comment
            seen = self.states.setdefault(job.job_id, [])
            if not seen or seen[-1] != job.state:
                seen.append(job.state)

    def jobs_of(self, comment_part: str) -> list[str]:
        return [job_id for job_id, comment in self.comments.items() if comment_part in comment]


def lemmata_slurm(arguments: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The lemmata installed with the slurm extra, as a user of a cluster runs it."""
    return subprocess.run(
        [str(SLURM_VENV / "bin" / "lemmata"), *arguments],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )


def slurm_environment(home: Path, cluster: SlurmCluster, services) -> dict[str, str]:
    llm, search = services
    return cli_environment(
        home,
        LLM_BACKEND="local",
        LOCAL_LLM_BASE_URL=llm.openai_base_url,
        **search.settings_values(),
        **cluster.environment(),
    )


@dataclass
class ClusterRun:
    run_dir: Path
    env: dict[str, str]
    result: subprocess.CompletedProcess[str]
    queue: QueueWatch


@pytest.fixture(scope="module")
def cluster_run(cluster, services, tmp_path_factory) -> ClusterRun:
    home = tmp_path_factory.mktemp("slurm-run") / "home"
    env = slurm_environment(home, cluster, services)
    with QueueWatch(cluster) as queue:
        result = lemmata_slurm(
            ["prove", even_sum_session.TASK, "-o", str(home / "out"), "--profile", "slurm"], env, home.parent
        )
    (run_dir,) = (home / "runs").iterdir()
    return ClusterRun(run_dir, env, result, queue)


def test_the_lemma_proofs_and_the_experiment_pass_through_the_queue_and_the_paper_is_made(cluster_run):
    run = cluster_run
    assert run.result.returncode == 0, run.result.stderr[-3000:]
    assert "jobs under the slurm profile" in run.result.stderr
    record = load_record(run.run_dir)
    assert (record.status, record.profile) == ("completed", "slurm")
    assert (run.run_dir / "paper_v1.pdf").read_bytes().startswith(b"%PDF")
    lemmas = sorted(path.stem for path in (run.run_dir / "theory" / "lemmas").glob("*.json"))
    assert lemmas == ["L1", "L2", "L3", "L4"]

    # The four lemmas build on each other (L2 on L1, L4 on L1 and L3): one group, one cluster job,
    # seen running and then ended; the experiment is a second one. Nothing else was queued.
    lemma_jobs, experiment_jobs = run.queue.jobs_of("lemmas"), run.queue.jobs_of("experiment")
    assert len(lemma_jobs) == 1 and len(experiment_jobs) == 1, run.queue.comments
    assert len(run.queue.comments) == 2, run.queue.comments
    for job_id in lemma_jobs + experiment_jobs:
        assert "RUNNING" in run.queue.states[job_id] and run.queue.states[job_id][-1] == "COMPLETED", run.queue.states

    log = (run.run_dir / "logs" / "snakemake.log").read_text(encoding="utf-8")
    assert log.count("has been submitted with SLURM jobid") == 2
    assert "localrule survey:" in log and "localrule writer:" in log and "localrule compile:" in log
    assert "localrule prove_lemma" not in log and "localrule experiment:" not in log


def test_without_accounting_job_status_comes_from_squeue(cluster):
    """The test cluster keeps no accounting (sacct would never see a job end): what real
    `scontrol show config` says makes lemmata ask for squeue."""
    shown = subprocess.run(
        [
            str(SLURM_VENV / "bin" / "python"),
            "-c",
            "from lemmata.profiles import profile_arguments, resolve_profile; "
            "print(' '.join(profile_arguments(resolve_profile('slurm'))))",
        ],
        env={**os.environ, **cluster.environment()},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.split()[-2:] == ["--slurm-status-command", "squeue"]


def test_a_rewrite_keeps_the_runs_profile_and_queues_its_theory_and_experiment(cluster, cluster_run):
    run = cluster_run
    assert run.result.returncode == 0
    with QueueWatch(cluster) as queue:
        result = lemmata_slurm(["rewrite", run.run_dir.name, INSTRUCTIONS], run.env, run.run_dir.parent)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (run.run_dir / "paper_v2.pdf").read_bytes().startswith(b"%PDF")
    theory_jobs, experiment_jobs = queue.jobs_of("rule_rewrite_theory"), queue.jobs_of("rule_rewrite_experiment")
    assert len(theory_jobs) == 1 and len(experiment_jobs) == 1, queue.comments
    assert all(queue.states[job_id][-1] == "COMPLETED" for job_id in theory_jobs + experiment_jobs), queue.states
    assert len(queue.comments) == 2, queue.comments  # the writer and pdflatex stayed local


def test_a_pause_lets_the_queued_lemma_job_finish_and_resume_goes_on_on_the_cluster(cluster, services, tmp_path):
    llm, _ = services
    home = tmp_path / "home"
    env = slurm_environment(home, cluster, services)
    try:
        with QueueWatch(cluster) as queue:
            driver = subprocess.Popen(
                [
                    str(SLURM_VENV / "bin" / "lemmata"),
                    "prove",
                    even_sum_session.TASK,
                    "-o",
                    str(home / "out"),
                    "--profile",
                    "slurm",
                ],
                env=env,
                cwd=tmp_path,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            # Slow answers from the moment the lemma job is queued (its proofs start seconds
            # later, in the job's own Snakemake): it is still running when the pause comes.
            wait_until(
                lambda: queue.jobs_of("lemmas"), 300, 0.2, message="timed out waiting for the lemma job to be queued"
            )
            llm.latency = 1.0
            wait_until(
                lambda: any("RUNNING" in queue.states[j] for j in queue.jobs_of("lemmas")),
                300,
                0.2,
                message="timed out waiting for the lemma job to run",
            )
            (run_dir,) = (home / "runs").iterdir()
            paused = lemmata_slurm(["pause", run_dir.name], env, tmp_path)
            assert paused.returncode == 0, paused.stderr
            _, stderr = driver.communicate(timeout=300)
    finally:
        llm.latency = 0.0
    assert driver.returncode == 1, stderr[-3000:]  # paused: not done
    record = load_record(run_dir)
    assert record.status == "paused", record.message
    # The running job was let finish, not cancelled: every lemma is proved; nothing came after it.
    (lemma_job,) = queue.jobs_of("lemmas")
    assert queue.states[lemma_job][-1] == "COMPLETED", queue.states
    assert len(list((run_dir / "theory" / "lemmas").glob("*.json"))) == 4
    assert not (run_dir / "experiment.json").exists()

    with QueueWatch(cluster) as queue:
        resumed = lemmata_slurm(["resume", run_dir.name], env, tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert load_record(run_dir).status == "completed"
    assert list(queue.comments.values()) == ["rule_experiment"]  # the lemmas were not proved again


def test_a_profile_the_machine_cannot_use_is_refused_before_the_run_exists(cluster, services, tmp_path):
    """No controller answering (its address changed to a closed port): a clear error, no run."""
    conf = tmp_path / "slurm.conf"
    conf.write_text(cluster.conf.read_text().replace("SlurmctldPort=16817", "SlurmctldPort=16999"))
    home = tmp_path / "home"
    env = {**slurm_environment(home, cluster, services), "SLURM_CONF": str(conf)}
    result = lemmata_slurm(["prove", even_sum_session.TASK, "--profile", "slurm"], env, tmp_path)
    assert result.returncode != 0
    assert "SLURM's controller did not answer" in result.stderr and "Traceback" not in result.stderr
    assert not (home / "runs").exists()
