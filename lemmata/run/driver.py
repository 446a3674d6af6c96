"""Driving a run: Snakemake as a supervised subprocess, gates, progress, the final copy-out."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Protocol

import yaml

import lemmata
from lemmata import layout
from lemmata.artifacts import (
    Checkpoint, DirectionIdeas, Survey, TaskInput, Theory, TheoryRework, atomic_write_text, read_artifact, write_artifact,
)
from lemmata.run.cards import stage_card, writer_card
from lemmata.errors import LemmataError, RunBusyError
from lemmata.run.gate_answers import GateAwaited
from lemmata.isolation.box import WEAKER_LIMITS_VARIABLE
from lemmata.run.events import JobBoard, TailReader, TokenTally
from lemmata.run.gates import (
    DIRECTION, GATE_RULES, STAGE_REVIEWS, SURVEY_PAPERS, THEORY_REVIEW, THEORY_REWORK, GateInterrupted, Review,
    effective_gate_mode, gate_path, lemma_named, record_decision,
)
from lemmata.latex.document import support_files
from lemmata.run.outcome import run_outcome
from lemmata.run.pausing import (
    clear_checkpoint, load_checkpoint, pause_request, request_pause, save_checkpoint, withdraw_pause_request,
)
from lemmata.run.pipeline import (
    COMPILE_RULES, USER_FIGURES, card_artifacts, figures_of, incomplete_outputs, user_files, version_targets,
)
from lemmata.profiles import profile_arguments, resolve_profile
from lemmata.run.record import RunLock, RunRecord, load_record, save_record
from lemmata.settings import Settings, load_environment

POLL_SECONDS = 0.2
PROVIDER_JOBS = 10
EMBEDDED_JOBS = 2
PAUSE_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: What Snakemake logs when it is told to stop (SIGTERM/SIGINT) and lets running jobs finish.
STOP_NOTICE = "Will exit after finishing currently running jobs"


class RunConsole(Protocol):
    """What the driver needs from whoever shows the run: the terminal now, the browser later."""

    interactive: bool  # False: every prompt takes its default answer

    def progress(self, board: JobBoard, tally: TokenTally, elapsed: float) -> None: ...
    def card(self, text: str) -> None: ...
    def info(self, text: str) -> None: ...
    def review_theory(self, theory: Theory, second_look: bool = False, escalated: bool = False) -> Review: ...
    def review_stage(self, question: str) -> Review: ...
    def survey_papers(self, survey: Survey) -> str: ...
    def research_direction(self, survey: Survey, reason: str) -> str: ...


@dataclass
class Invocation:
    returncode: int
    board: JobBoard
    paused: bool = False
    log_text: str = ""  # what Snakemake wrote during this invocation

    def stopped_from_outside(self) -> bool:
        """Snakemake got a signal (not from us): it let running jobs finish, and no job failed."""
        return not self.paused and not self.board.failed_rules and STOP_NOTICE in self.log_text


@dataclass
class Driver:
    run_dir: Path
    console: RunConsole
    jobs: int | None = None  # None: default_jobs(the run's backend), or the profile's on a cluster
    profile: str | None = None  # None: the run's own (RunRecord.profile); a new one is kept for resumes
    version: int = 1  # the paper version this drive makes: 1, the first run; n > 1, a rewrite
    tally: TokenTally = field(default_factory=TokenTally)
    started: float = field(default_factory=time.monotonic)
    _pause_requested: bool = False
    _workflow: subprocess.Popen[bytes] | None = None  # the Snakemake process while one runs
    _asking: bool = False  # a gate question waits for the researcher's answer
    _profile_arguments: list[str] = field(default_factory=list)

    def drive(self, prepare: Callable[[], None] | None = None) -> RunRecord:
        """Run until completed, paused, stopped at a gate, or failed; the record says which.
        `prepare` runs first, under the run's lock (a rewrite writes its request there)."""
        with RunLock(self.run_dir), self._signals_ask_for_a_pause():
            withdraw_pause_request(self.run_dir)  # left by a run that died before it paused
            execution = resolve_profile(self.profile or load_record(self.run_dir).profile)
            self._profile_arguments = profile_arguments(execution)
            if prepare is not None:
                prepare()
            self._repair()
            checkpoint = load_checkpoint(self.run_dir)
            if checkpoint:
                self.console.info(resume_notice(checkpoint))
            record = save_record(self.run_dir, load_record(self.run_dir), status="running", message="",
                                 profile=execution.name)
            if not execution.remote:
                self.jobs = self.jobs or default_jobs(record.backend)
            return self._loop(record)

    def _repair(self) -> None:
        """What a killed driver leaves behind: Snakemake's lock on the run directory (its workflow
        process was killed too) and outputs a killed job left half-written. We hold the run's lock,
        so no other driver works here; a workflow process that outlived its driver still may."""
        locks = self.run_dir / ".snakemake" / "locks"
        if locks.is_dir() and any(locks.iterdir()):
            orphans = workflow_processes(self.run_dir)
            if orphans:
                raise RunBusyError(f"a workflow process of an earlier driver (pid {', '.join(map(str, orphans))}) "
                                   f"still works on this run: let it end, or stop it (kill {orphans[0]}), then resume")
            subprocess.run([*snakemake_command(self.run_dir, 1), "--unlock"], cwd=self.run_dir,
                           env=workflow_environment(self.run_dir), stdin=subprocess.DEVNULL, capture_output=True,
                           check=True)
            self.console.info("repaired: removed the lock a killed run left on its workflow directory")
        incomplete = sorted(incomplete_outputs(self.run_dir))
        if incomplete:
            self.console.info(f"repaired: {len(incomplete)} output(s) a killed job left unfinished will be made "
                              f"again: {', '.join(incomplete)}")

    def _loop(self, record: RunRecord) -> RunRecord:
        calls = TailReader(self.run_dir / layout.LLM_CALLS)
        while True:
            if pause_request(self.run_dir):  # asked for while a gate question waited: no new job starts
                return self._pause(record)
            result = self._invoke_snakemake(calls)
            if result.returncode == 0:
                return self._complete(record)
            if result.paused:
                return self._pause(record)
            if result.stopped_from_outside():
                return save_record(self.run_dir, record, status="stopped",
                                   message="the workflow process was stopped by a signal; finished work is kept: "
                                           f"continue with `lemmata resume {record.session_id}`")
            gate = self._closed_gate(result)
            if gate:
                stopped = self._ask_at_gate(gate, record)
                if stopped:
                    return stopped
                continue
            message = self._failure_message(result)
            if set(result.board.failed_rules) & set(COMPILE_RULES):
                self._show_writer_card(record)  # what was written, and why it did not compile
            # A compile failure of the first run: the LaTeX is worth having. A failed rewrite
            # delivers nothing: its version does not exist (rewrite.record_failure).
            if self.version == 1 and self._deliver(record):
                message += f"; the LaTeX written so far is in {record.output_dir}"
            save_record(self.run_dir, record, status="failed", message=message)
            raise LemmataError(message)

    def _invoke_snakemake(self, calls: TailReader) -> Invocation:
        (self.run_dir / layout.LAST_FAILURE).unlink(missing_ok=True)
        events = TailReader(self.run_dir / layout.EVENTS, start_at_end=True)
        board = JobBoard()
        done_before = {name for name in card_artifacts(self.version) if (self.run_dir / name).exists()}
        log_path = self.run_dir / layout.SNAKEMAKE_LOG
        log_start = log_path.stat().st_size if log_path.exists() else 0
        log = open(log_path, "ab")
        process = subprocess.Popen(
            [*snakemake_command(self.run_dir, self.jobs, self._profile_arguments), *version_targets(self.version)],
            cwd=self.run_dir, env=workflow_environment(self.run_dir), stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True,
        )
        self._workflow = process
        try:
            while process.poll() is None:
                if not self._pause_requested and pause_request(self.run_dir):  # `lemmata pause ID`
                    self._request_pause(process)
                self._update(events, calls, board, done_before)
                time.sleep(POLL_SECONDS)
        finally:
            self._workflow = None
            log.close()
        self._update(events, calls, board, done_before)
        with open(log_path, "rb") as written:
            written.seek(log_start)
            log_text = written.read().decode("utf-8", "replace")
        return Invocation(process.returncode, board, paused=self._pause_requested, log_text=log_text)

    @contextmanager
    def _signals_ask_for_a_pause(self) -> Iterator[None]:
        """Ctrl+C and a plain `kill` ask for a pause, wherever the driver is, never a traceback."""
        previous = {signum: signal.signal(signum, self._on_signal) for signum in PAUSE_SIGNALS}
        try:
            yield
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def _on_signal(self, signum: int, _frame: object) -> None:
        """Written down as a pause request (pause.flag), then carried out: Snakemake is told to
        stop starting jobs; a waiting gate question is interrupted; between the two, the loop
        sees the flag before it starts Snakemake again."""
        if not self._pause_requested and not pause_request(self.run_dir):
            request_pause(self.run_dir, "ctrl-c" if signum == signal.SIGINT else "signal")
        if self._workflow is not None:
            self._request_pause(self._workflow)
        elif self._asking:
            raise KeyboardInterrupt  # the prompt gives up its question; _ask_at_gate pauses the run

    def _pause(self, record: RunRecord, gate: str = "") -> RunRecord:
        rewrite = f"rewrite to version {self.version}" if self.version > 1 else ""
        checkpoint = save_checkpoint(self.run_dir, record.session_id, rewrite)
        where = (f"at the {gate.replace('_', ' ')} question (`lemmata resume {record.session_id}` asks it again)"
                 if gate else f"during the {rewrite}" if rewrite else f"before the {checkpoint.stage_name} stage")
        return save_record(self.run_dir, record, status="paused",
                           message=f"paused {where}: continue with `lemmata resume {record.session_id}`")

    def _request_pause(self, process: subprocess.Popen[bytes]) -> None:
        # SIGTERM to Snakemake alone: running jobs finish and their outputs stay clean.
        if not self._pause_requested:
            self._pause_requested = True
            self.console.info("pausing: running jobs finish first (Ctrl+C again does not abort)")
            process.send_signal(signal.SIGTERM)

    def _update(self, events: TailReader, calls: TailReader, board: JobBoard, done_before: set[str]) -> None:
        for event in events.read_new():
            board.apply(event)
        for record in calls.read_new():
            self.tally.apply(record)
        for artifact in card_artifacts(self.version):
            if artifact not in done_before and (self.run_dir / artifact).exists():
                done_before.add(artifact)
                self._show_card(artifact)
        self.console.progress(board, self.tally, time.monotonic() - self.started)

    def _show_card(self, artifact: str) -> None:
        card = stage_card(self.run_dir / artifact)
        if card:
            self.console.card(card)

    def _show_writer_card(self, record: RunRecord) -> None:
        """The writer's summary of this version, with its compile's outcome (failed too)."""
        if (self.run_dir / layout.paper_meta(self.version)).exists():
            self.console.card(writer_card(self.run_dir, self.tally, time.monotonic() - self.started,
                                          Path(record.output_dir), self.version))

    def _closed_gate(self, result: Invocation) -> str:
        """The gate that stopped the workflow (its rule alone failed, its sentinel missing), or ""."""
        failed = set(result.board.failed_rules)
        if len(failed) != 1:
            return ""
        gate = GATE_RULES.get(failed.pop(), "")
        return gate if gate and not gate_path(self.run_dir, gate).exists() else ""

    def _ask_at_gate(self, gate: str, record: RunRecord) -> RunRecord | None:
        """Ask the researcher and write the gate's sentinel; a record when the run stops here."""
        decided_by = "user" if self.console.interactive else "default"
        ask = {SURVEY_PAPERS: self._survey_papers, DIRECTION: self._direction,
               THEORY_REVIEW: self._theory_review}.get(gate, self._stage_review)
        self._asking = True
        try:
            return ask(gate, record, decided_by)
        except GateAwaited:  # the answer comes from the browser: the run waits here, no process needed
            return save_record(self.run_dir, record, status="waiting",
                               message=f"waiting at the {gate.replace('_', ' ')} for a decision: give it in the "
                                       f"browser's Live tab, or here with `lemmata resume {record.session_id}`")
        except (GateInterrupted, KeyboardInterrupt):  # Ctrl+C or a kill at a question: a pause at the gate
            if not pause_request(self.run_dir):
                request_pause(self.run_dir, "ctrl-c")
            return self._pause(record, gate)
        except RuntimeError as error:  # the spec: empty input or Ctrl+C at a fallback ends the run cleanly
            withdraw_pause_request(self.run_dir)
            message = f"{error}; the gate asks again on `lemmata resume {record.session_id}`"
            save_record(self.run_dir, record, status="stopped", message=message)
            raise LemmataError(message) from None
        finally:
            self._asking = False

    def _survey_papers(self, gate: str, record: RunRecord, decided_by: str) -> None:
        papers = self.console.survey_papers(read_artifact(self.run_dir / layout.SURVEY_FIRST, Survey))
        record_decision(self.run_dir, gate, True, papers, decided_by)

    def _direction(self, gate: str, record: RunRecord, decided_by: str) -> None:
        survey = read_artifact(self.run_dir / layout.SURVEY, Survey)
        ideas = read_artifact(self.run_dir / layout.IDEAS, DirectionIdeas)
        record_decision(self.run_dir, gate, True, self.console.research_direction(survey, ideas.error), "user")

    def _theory_review(self, gate: str, record: RunRecord, decided_by: str) -> RunRecord | None:
        """Approve (with feedback), or `n`: the theory runs once more with the objection; `n`
        again stops the run."""
        theory = read_artifact(self.run_dir / layout.THEORY, Theory)
        rework_file = gate_path(self.run_dir, THEORY_REWORK)
        escalated = record.gate_mode == "auto" and effective_gate_mode("auto", theory) == "human"
        review = self.console.review_theory(theory, second_look=rework_file.exists(), escalated=escalated)
        if review.approved:
            record_decision(self.run_dir, gate, True, review.feedback, decided_by)
            return None
        if not rework_file.exists():  # the spec's one re-run of the theory, with the objection
            write_artifact(rework_file, TheoryRework(step=lemma_named(theory, review.step), issue=review.issue))
            self.console.info("re-running the theory once with your objection")
            return None
        return save_record(self.run_dir, record, status="stopped",
                           message=f"stopped at the theory review after its re-run: {review.feedback or 'rejected'}; "
                                   f"`lemmata resume {record.session_id}` shows the lemma chain again")

    def _stage_review(self, gate: str, record: RunRecord, decided_by: str) -> RunRecord | None:
        """A review after a stage (GATE_MODE human): go on with optional feedback, or stop."""
        review = self.console.review_stage(STAGE_REVIEWS[gate])
        if review.approved:
            record_decision(self.run_dir, gate, True, review.feedback, decided_by)
            return None
        return save_record(self.run_dir, record, status="stopped",
                           message=f"stopped at the {gate.replace('_', ' ')}: {review.feedback or 'rejected'}; "
                                   f"`lemmata resume {record.session_id}` asks again")

    def _failure_message(self, result: Invocation) -> str:
        failure = self.run_dir / layout.LAST_FAILURE
        if failure.exists():
            return failure.read_text(encoding="utf-8").strip()
        rules = ", ".join(sorted(set(result.board.failed_rules))) or "the workflow"
        return f"{rules} failed; details in {self.run_dir / 'logs'}"

    def _deliver(self, record: RunRecord) -> list[str]:
        """Copy the user's files that exist to the output folder; the names copied."""
        delivered = [name for name in user_files(self.version) if (self.run_dir / name).is_file()]
        if not delivered:
            return []
        output = Path(record.output_dir)
        output.mkdir(parents=True, exist_ok=True)
        for name in delivered:
            shutil.copy2(self.run_dir / name, output / name)
        for source in support_files():  # so that the delivered .tex compiles on its own
            shutil.copy2(source, output / source.name)
        figures = sorted((self.run_dir / figures_of(self.version)).glob("*.pdf"))
        if figures:
            (output / USER_FIGURES).mkdir(exist_ok=True)
            for figure in figures:
                shutil.copy2(figure, output / USER_FIGURES / figure.name)
        return delivered

    def _complete(self, record: RunRecord) -> RunRecord:
        """The record's status stays the literal "completed" (resume, rewrites and the server rely on
        it); its message says where the paper is and, when so, that its main result is not established."""
        clear_checkpoint(self.run_dir)
        self._deliver(record)
        output = Path(record.output_dir)
        self._show_writer_card(record)
        where = f"paper in {output}" if self.version == 1 else f"paper version {self.version} in {output}"
        issues = run_outcome(self.run_dir, "completed").issues  # after "completed (main result not established)"
        return save_record(self.run_dir, record, status="completed",
                           message=where + (f"; {'; '.join(issues)}" if issues else ""))


def resume_notice(checkpoint: Checkpoint) -> str:
    """Where a paused run goes on, and on which direction: the brief the checkpoint kept."""
    paused = time.strftime("%Y-%m-%d %H:%M", time.localtime(checkpoint.paused_at))
    brief = checkpoint.research_brief()
    direction = str(brief.get("direction") or brief.get("goal") or "").strip()
    return (f"resuming from the {checkpoint.stage_name} stage (paused {paused})"
            + (f", on the direction: {direction}" if direction else ""))


def default_jobs(backend: str) -> int:
    """Parallel jobs: lemma jobs wait on a provider, not on the CPU, so a full plan (up to 10
    lemmas) is proved at once; the embedded model answers one call at a time (a file lock), so
    more than two processes would only hold more memory."""
    if backend == "embedded":
        return EMBEDDED_JOBS
    return max(PROVIDER_JOBS, os.cpu_count() or 1)


def snakefile() -> Path:
    return Path(str(files("lemmata") / "Snakefile"))


def snakemake_command(run_dir: Path, jobs: int | None, profile_arguments: Sequence[str] = ()) -> list[str]:
    """`jobs` None: the profile's (a cluster profile's `jobs:`). The options after the profile's
    hold whatever the profile says: code and software-env changes must not rerun finished
    stages (each rerun costs model calls), and the driver reads the lemmata logger's events."""
    return [
        sys.executable, "-m", "snakemake", "--snakefile", str(snakefile()), "--directory", str(run_dir),
        *profile_arguments, "--configfile", str(run_dir / layout.CONFIG), *(["--jobs", str(jobs)] if jobs else []),
        "--logger", "lemmata", "--rerun-incomplete", "--rerun-triggers", "mtime", "params", "input", "--nocolor",
    ]


def workflow_processes(run_dir: Path) -> list[int]:
    """Snakemake processes running the workflow on `run_dir` (one whose driver was killed keeps
    running). The directory is compared resolved: the data directory may have been named through
    a symbolic link. Our own short-lived `--unlock` and `--report` invocations do not count."""
    wanted = Path(run_dir).resolve()
    pids = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = [arg.decode(errors="replace") for arg in cmdline.read_bytes().split(b"\0")]
        except OSError:
            continue
        if not any("snakemake" in arg for arg in args) or {"--unlock", "--report"} & set(args):
            continue
        directory = args[args.index("--directory") + 1] if "--directory" in args[:-1] else ""
        if directory and Path(directory).resolve() == wanted:
            pids.append(int(cmdline.parent.name))
    return sorted(pids)


def report_command(run_dir: Path, output: Path) -> list[str]:
    """Snakemake's HTML report of the run; --nolock, so a report of a running run does not wait."""
    return [sys.executable, "-m", "snakemake", "--snakefile", str(snakefile()), "--directory", str(run_dir),
            "--configfile", str(run_dir / layout.CONFIG), "--report", str(output), "--nolock", "--nocolor"]


def workflow_environment(run_dir: Path) -> dict[str, str]:
    """The job environment: ours plus .env values, the logger plugin importable, events routed."""
    environ = load_environment()
    if WEAKER_LIMITS_VARIABLE not in os.environ:  # a .env file may not loosen the sandbox (SECURITY.md)
        environ.pop(WEAKER_LIMITS_VARIABLE, None)
    package_parent = str(Path(lemmata.__file__).resolve().parent.parent)
    environ["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, environ.get("PYTHONPATH", "")) if p)
    environ["LEMMATA_EVENTS_FILE"] = str(run_dir / layout.EVENTS)
    return environ


def create_run(run_dir: Path, record: RunRecord, task: TaskInput, settings: Settings) -> None:
    """A new run directory: record, the complete workflow config (no credentials), logs dir."""
    (run_dir / "logs").mkdir(parents=True, exist_ok=True)
    config = {**settings.workflow_config(), **task.model_dump()}
    atomic_write_text(run_dir / layout.CONFIG, yaml.safe_dump(config, sort_keys=False))
    save_record(run_dir, record)
