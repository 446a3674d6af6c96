"""A one-node SLURM cluster on 127.0.0.1, for the tests and benchmarks of the `slurm` profile.

Everything lives in one directory: its own munge key and socket, slurm.conf, spool, state
and logs. Client commands find the cluster through SLURM_CONF (`environment()`), except the
`srun` inside a Snakemake job: the plugin's job step drops every SLURM_ variable but the job's
identity, so that srun reads the standard /etc/slurm/slurm.conf, which `start()` links to ours
(refusing to replace a real one) and `stop()` removes. munged, slurmctld and slurmd run in
the foreground as our children, so `stop()` ends exactly the processes it started, by pid.
Debian's packages provide the binaries; `install_packages()` installs them when missing (root
only)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from support.waiting import wait_until

PACKAGES = ("slurmctld", "slurmd", "slurm-client", "munge")
DAEMONS = {"munged": "/usr/sbin/munged", "slurmctld": "/usr/sbin/slurmctld", "slurmd": "/usr/sbin/slurmd"}
PARTITION = "lemmata"
STANDARD_CONF = Path("/etc/slurm/slurm.conf")


@dataclass(frozen=True)
class QueuedJob:
    job_id: str
    state: str  # PENDING, RUNNING, COMPLETED, FAILED, ...
    comment: str  # what Snakemake's plugin says the job is: rule_experiment, group_lemmas, ...


class SlurmUnavailable(RuntimeError):
    """SLURM cannot be installed or started here; the message says why."""


def installed() -> bool:
    return all(Path(binary).exists() for binary in DAEMONS.values()) and shutil.which("sbatch") is not None


def install_packages() -> None:
    """Debian's SLURM 22.05 and munge, without recommends (about 5 s); nothing when present."""
    if installed():
        return
    if os.geteuid() != 0:
        raise SlurmUnavailable(f"SLURM is not installed and this is not root: apt-get install {' '.join(PACKAGES)}")
    environ = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *PACKAGES],
    ):
        done = subprocess.run(command, env=environ, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if done.returncode != 0:
            raise SlurmUnavailable(f"{' '.join(command)} failed: {done.stderr.strip()[-2000:]}")


@dataclass
class SlurmCluster:
    root: Path
    cpus: int = 2
    memory_mb: int = 4000
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def conf(self) -> Path:
        return self.root / "slurm.conf"

    @property
    def munge_socket(self) -> Path:
        return self.root / "munge" / "munge.socket"

    def environment(self) -> dict[str, str]:
        """What a client (sbatch, squeue, the executor plugin) needs to find this cluster."""
        return {"SLURM_CONF": str(self.conf)}

    def start(self, timeout: float = 60) -> None:
        """munged, then slurmctld and slurmd; returns once the node takes jobs."""
        if os.geteuid() != 0:
            raise SlurmUnavailable("the test cluster runs its daemons as root (SlurmUser=root)")
        self._write_files()
        try:
            self._spawn(
                "munged",
                "-F",
                f"--socket={self.munge_socket}",
                f"--key-file={self.root / 'munge' / 'key'}",
                f"--pid-file={self.root / 'munge' / 'munged.pid'}",
                f"--seed-file={self.root / 'munge' / 'seed'}",
                "--force",
            )
            self._wait(lambda: self.munge_socket.exists(), timeout, "munged to open its socket")
            self._spawn("slurmctld", "-D", "-i", "-f", str(self.conf))
            self._spawn("slurmd", "-D", "-f", str(self.conf), "-N", self.node_name)
            self._wait(self._node_takes_jobs, timeout, "the node to become idle")
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """SIGTERM to the daemons we started (last started first), SIGKILL to any that linger;
        the link to our slurm.conf goes."""
        if STANDARD_CONF.is_symlink() and STANDARD_CONF.readlink() == self.conf:
            STANDARD_CONF.unlink()
        for name in reversed(list(self.processes)):
            process = self.processes.pop(name)
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()

    def queue(self) -> list[QueuedJob]:
        """Every job SLURM lists: pending, running, and ended within MinJobAge."""
        listed = self.client(["squeue", "--noheader", "--states=all", "--format=%i|%T|%k"])
        return [QueuedJob(*line.split("|", 2)) for line in listed.splitlines() if line.count("|") >= 2]

    def client(self, command: list[str]) -> str:
        done = subprocess.run(
            command,
            env={**os.environ, **self.environment()},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=30,
        )
        if done.returncode != 0:
            raise SlurmUnavailable(f"{' '.join(command)}: {done.stderr.strip()}")
        return done.stdout

    @property
    def node_name(self) -> str:
        return socket.gethostname().split(".")[0]

    def _node_takes_jobs(self) -> bool:
        try:
            state = self.client(["sinfo", "--noheader", "--format=%T", "--nodes", self.node_name]).strip()
        except (SlurmUnavailable, subprocess.TimeoutExpired):
            return False
        return state in ("idle", "mixed", "allocated")

    def _spawn(self, name: str, *arguments: str) -> None:
        log = open(self.root / "log" / f"{name}.out", "ab")
        self.processes[name] = subprocess.Popen(
            [DAEMONS[name], *arguments],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **self.environment()},
        )
        log.close()

    def _wait(self, ready, timeout: float, what: str) -> None:
        def ready_or_dead() -> bool:
            if ready():
                return True
            dead = [name for name, process in self.processes.items() if process.poll() is not None]
            if dead:
                raise SlurmUnavailable(f"{', '.join(dead)} exited while waiting for {what}: see {self.root / 'log'}")
            return False

        if not wait_until(ready_or_dead, timeout, 0.2, message=None):
            raise SlurmUnavailable(f"timed out after {timeout:.0f} s waiting for {what}: see {self.root / 'log'}")

    def _write_files(self) -> None:
        for folder in ("munge", "spool/ctld", "spool/d", "log", "run"):
            (self.root / folder).mkdir(parents=True, exist_ok=True)
        key = self.root / "munge" / "key"
        if not key.exists():
            key.write_bytes(os.urandom(128))
        key.chmod(0o600)
        (self.root / "munge").chmod(0o700)
        self.conf.write_text(slurm_conf(self.root, self.node_name, self.cpus, self.memory_mb), encoding="utf-8")
        if STANDARD_CONF.is_symlink():  # left by a test cluster that was killed, not stopped
            STANDARD_CONF.unlink()
        if STANDARD_CONF.exists():
            raise SlurmUnavailable(
                f"{STANDARD_CONF} exists: this machine has a SLURM configuration of its own, "
                "which the test cluster does not replace"
            )
        STANDARD_CONF.parent.mkdir(parents=True, exist_ok=True)
        STANDARD_CONF.symlink_to(self.conf)


def slurm_conf(root: Path, node: str, cpus: int, memory_mb: int) -> str:
    """Accounting off (no slurmdbd): status comes from squeue, so finished jobs must stay listed
    a while (MinJobAge); the scheduler looks every second rather than every minute."""
    return f"""\
ClusterName=lemmata-test
SlurmctldHost={node}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={root / "munge" / "munge.socket"}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
MinJobAge=300
ReturnToService=2
MpiDefault=none
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation={root / "spool" / "ctld"}
SlurmdSpoolDir={root / "spool" / "d"}
SlurmctldPidFile={root / "run" / "slurmctld.pid"}
SlurmdPidFile={root / "run" / "slurmd.pid"}
SlurmctldLogFile={root / "log" / "slurmctld.log"}
SlurmdLogFile={root / "log" / "slurmd.log"}
NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory_mb} State=UNKNOWN
PartitionName={PARTITION} Nodes={node} Default=YES MaxTime=INFINITE State=UP
"""
