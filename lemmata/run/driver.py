"""Driving a run: Snakemake as a supervised subprocess (run/workflow.py), again after each closed
gate (run/gate_dialog.py asks), with progress and cards, pausing on request, the copy-out at the
end (run/delivery.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from lemmata import layout
from lemmata.artifacts import Checkpoint, GateDecision, StageForecast, Theory, atomic_write_text, read_artifact
from lemmata.errors import LemmataError, RunBusyError, UserError
from lemmata.isolation.cgroups import remove_boxes_of
from lemmata.llm.interrupted_calls import VARIABLE as INTERRUPTED_CALLS_VARIABLE
from lemmata.llm.interrupted_calls import keep_interrupted_calls
from lemmata.os_errors import disk_is_full
from lemmata.process_exit import wait_for_exit
from lemmata.profiles import profile_arguments, resolve_profile
from lemmata.run import early_workflow
from lemmata.run.cards import default_answer_card, stage_card, writer_card
from lemmata.run.delivery import check_output_folder, deliver
from lemmata.run.display import RunConsole
from lemmata.run.events import JobBoard, TailReader, TokenTally
from lemmata.run.gate_answers import GateAwaited
from lemmata.run.gate_dialog import GateDialog
from lemmata.run.gates import (
    DEFAULT_ANSWERS,
    GATE_ANSWERS_VARIABLE,
    STAGE_REVIEWS,
    THEORY_REVIEW,
    GateInterrupted,
    effective_gate_mode,
)
from lemmata.run.model_service import ModelServerFailed, shared_model
from lemmata.run.outcome import run_outcome
from lemmata.run.parent_death import terminate_with_parent
from lemmata.run.pausing import (
    clear_checkpoint,
    launch_time,
    load_checkpoint,
    pause_request,
    request_pause,
    save_checkpoint,
    withdraw_pause_request,
    withdraw_pause_requested_before,
)
from lemmata.run.pipeline import (
    COMPILE_RULES,
    card_artifacts,
    incomplete_outputs,
    version_rules,
    version_targets,
)
from lemmata.run.record import RunLock, RunRecord, load_record, save_record
from lemmata.run.spending.budget import Budget
from lemmata.run.spending.forecast import forecast_text, parse_forecast
from lemmata.run.workflow import Invocation, default_jobs, snakemake_command, workflow_environment, workflow_processes

POLL_SECONDS = 0.2
#: The reviews the workflow answers itself when nobody can (their default: approved, no feedback).
DEFAULT_ANSWERED = (*STAGE_REVIEWS, THEORY_REVIEW)
PAUSE_SIGNALS = (signal.SIGINT, signal.SIGTERM)


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
    _model_environment: dict[str, str] = field(default_factory=dict)  # how jobs reach the run's shared model

    def drive(self, prepare: Callable[[], None] | None = None) -> RunRecord:
        """Run until completed, paused, stopped at a gate, or failed; the record says which.
        `prepare` runs first, under the run's lock (a rewrite writes its request there)."""
        with RunLock(self.run_dir), self._signals_ask_for_a_pause():
            # A flag from before this driver was launched was left by a run that died before it
            # paused; one written since is a pause sent the moment this run was started.
            withdraw_pause_requested_before(self.run_dir, launch_time(os.environ))
            execution = resolve_profile(self.profile or load_record(self.run_dir).profile)
            self._profile_arguments = profile_arguments(execution)
            # A folder that cannot take the paper stops the run before any model call, not after.
            check_output_folder(Path(load_record(self.run_dir).output_dir))
            if prepare is not None:
                prepare()
            self._repair()
            checkpoint = load_checkpoint(self.run_dir)
            if checkpoint:
                self.console.info(resume_notice(checkpoint))
            record = save_record(
                self.run_dir, load_record(self.run_dir), status="running", message="", profile=execution.name
            )
            if self.version == 1:  # a rewrite is not held to the budget (run/spending/stage_boundary.py)
                self.tally.budget = Budget(record.budget_usd, record.budget_tokens)  # the progress line shows it
            if not execution.remote:
                self.jobs = self.jobs or default_jobs(record.backend)
            with self._shared_model(record, execution.remote):
                return self._loop(record)

    @contextmanager
    def _shared_model(self, record: RunRecord, remote: bool) -> Iterator[None]:
        """The run's model server for the jobs, while the drive lasts; a server that cannot start
        fails the run with its reason (nothing ran yet: resume starts it again)."""
        try:
            with shared_model(self.run_dir, record.backend, remote) as self._model_environment:
                yield
        except ModelServerFailed as error:
            message = f"{error}; continue with `lemmata resume {record.session_id}`"
            save_record(self.run_dir, record, status="failed", message=message)
            raise LemmataError(message) from None

    def _repair(self) -> None:
        """What a killed driver leaves behind: Snakemake's lock on the run directory (its workflow
        process was killed too) and outputs a killed job left half-written. We hold the run's lock,
        so no other driver works here; a workflow process that outlived its driver still may."""
        locks = self.run_dir / ".snakemake" / "locks"
        if locks.is_dir() and any(locks.iterdir()):
            orphans = workflow_processes(self.run_dir)
            if orphans:
                raise RunBusyError(
                    f"a workflow process of an earlier driver (pid {', '.join(map(str, orphans))}) "
                    f"still works on this run: let it end, or stop it (kill {orphans[0]}), then resume"
                )
            subprocess.run(
                [*snakemake_command(self.run_dir, 1), "--unlock"],
                cwd=self.run_dir,
                env=workflow_environment(self.run_dir),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                check=True,
            )
            self.console.info("repaired: removed the lock a killed run left on its workflow directory")
        self._after_a_crashed_invocation()
        incomplete = sorted(incomplete_outputs(self.run_dir))
        if incomplete:
            self.console.info(
                f"repaired: {len(incomplete)} output(s) a killed job left unfinished will be made "
                f"again: {', '.join(incomplete)}"
            )

    def _loop(self, record: RunRecord) -> RunRecord:
        calls = TailReader(self.run_dir / layout.LLM_CALLS)
        forecasts = TailReader(self.run_dir / layout.FORECASTS, start_at_end=True)  # a resume's own
        while True:
            if pause_request(self.run_dir):  # asked for while a gate question waited: no new job starts
                return self._pause(record)
            result = self._invoke_snakemake(calls, forecasts)
            if result.returncode == 0:
                (self.run_dir / layout.INTERRUPTED_CALLS).unlink(missing_ok=True)  # every job finished
                return self._complete(record)
            if result.killed():
                return self._killed(record, result)
            if result.paused or pause_request(self.run_dir):  # a job the budget stopped asked for it
                return self._pause(record)
            if result.stopped_from_outside():
                return save_record(
                    self.run_dir,
                    record,
                    status="stopped",
                    message="the workflow process was stopped by a signal; finished work is kept: "
                    f"continue with `lemmata resume {record.session_id}`",
                )
            gate = GateDialog(self.run_dir, self.console).closed_gate(result.board.failed_rules)
            if gate:
                stopped = self._ask_at_gate(gate, record)
                if stopped:
                    return stopped
                continue
            if not (self.run_dir / layout.LAST_FAILURE).exists() and disk_is_full(self.run_dir):
                return self._stop_on_a_full_disk(record)
            message = self._failure_message(result)
            if set(result.board.failed_rules) & set(COMPILE_RULES):
                self._show_writer_card(record)  # what was written, and why it did not compile
            # A compile failure of the first run: the LaTeX is worth having. A failed rewrite
            # delivers nothing: its version does not exist (rewrite.record_failure).
            if self.version == 1:
                message += self._deliver_what_was_written(record)
            save_record(self.run_dir, record, status="failed", message=message)
            raise LemmataError(message)

    def _invoke_snakemake(self, calls: TailReader, forecasts: TailReader) -> Invocation:
        (self.run_dir / layout.LAST_FAILURE).unlink(missing_ok=True)
        events = TailReader(self.run_dir / layout.EVENTS, start_at_end=True)
        board = JobBoard()
        done_before = {name for name in card_artifacts(self.version) if (self.run_dir / name).exists()}
        done_before |= {_answered(gate) for gate in DEFAULT_ANSWERED if (self.run_dir / layout.gate(gate)).exists()}
        log_path = self.run_dir / layout.SNAKEMAKE_LOG
        log_start = log_path.stat().st_size if log_path.exists() else 0
        calls_made = TailReader(self.run_dir / layout.LLM_CALLS, start_at_end=True)  # by this invocation
        log = open(log_path, "ab")
        command = [
            *snakemake_command(self.run_dir, self.jobs, self._profile_arguments),
            *version_targets(self.version),
            *version_rules(self.version),  # last: the option takes every word after it
        ]
        environment = {
            **workflow_environment(self.run_dir),
            **self._model_environment,
            **self._gate_answers(),
            **self._interrupted_calls(),
        }
        # The process the command started with it, Snakemake already imported; else a new one.
        process = early_workflow.hand_over(command, self.run_dir, environment, log_path) or subprocess.Popen(
            command,
            cwd=self.run_dir,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a Ctrl+C is ours to handle: Snakemake lets its running jobs finish
            preexec_fn=terminate_with_parent,  # a killed driver: Snakemake finishes its running jobs, starts none
        )
        self._workflow = process
        start_file = self.run_dir / layout.INVOCATION_CALLS_START  # for a resume after a crash (_repair)
        try:
            atomic_write_text(start_file, f"{calls_made.offset} {process.pid}\n")
            while process.poll() is None:
                if not self._pause_requested and pause_request(self.run_dir):  # `lemmata pause ID`
                    self._request_pause(process)
                self._update(events, calls, forecasts, board, done_before)
                wait_for_exit(process, POLL_SECONDS)  # returns the moment Snakemake ends
        finally:
            self._workflow = None
            log.close()
            start_file.unlink(missing_ok=True)  # ended under our eyes: _killed keeps what is to be kept
        self._update(events, calls, forecasts, board, done_before)
        with open(log_path, "rb") as written:
            written.seek(log_start)
            log_text = written.read().decode("utf-8", "replace")
        invocation = Invocation(process.returncode, board, paused=self._pause_requested, log_text=log_text)
        if invocation.killed():
            invocation.calls = calls_made.read_new()
            invocation.boxes_removed = remove_boxes_of(process.pid)  # its jobs' boxes: it cannot any more
        return invocation

    def _after_a_crashed_invocation(self) -> None:
        """A driver killed with its workflow (a crash) could not clean up after it: the calls the
        invocation made, from where INVOCATION_CALLS_START says they began, are kept for the reruns
        of its killed jobs, and the cgroups of their boxes are removed."""
        start_file = self.run_dir / layout.INVOCATION_CALLS_START
        if not start_file.is_file():
            return
        try:
            start, workflow = map(int, start_file.read_text(encoding="utf-8").split())
        except ValueError:  # a torn write: the driver died as it began
            start_file.unlink()
            return
        calls = self.run_dir / layout.LLM_CALLS
        if calls.is_file() and start <= calls.stat().st_size:
            reader = TailReader(calls)
            reader.offset = start
            keep_interrupted_calls(self.run_dir / layout.INTERRUPTED_CALLS, reader.read_new())
        if not _alive(workflow):  # gone (_repair refuses to go on while it works): its boxes are orphans
            remove_boxes_of(workflow)
        start_file.unlink()

    def _interrupted_calls(self) -> dict[str, str]:
        """The answers a killed invocation got, for the jobs that ask again (llm/interrupted_calls.py)."""
        kept = self.run_dir / layout.INTERRUPTED_CALLS
        return {INTERRUPTED_CALLS_VARIABLE: str(kept)} if kept.is_file() else {}

    def _killed(self, record: RunRecord, result: Invocation) -> RunRecord:
        """Snakemake was killed (SIGKILL: by hand, or the out-of-memory killer): not a failure of the
        run. Finished outputs are kept, a killed job's half-made ones are made again on resume
        (`--rerun-incomplete`), and the answers its calls got are given again, not asked twice."""
        keep_interrupted_calls(self.run_dir / layout.INTERRUPTED_CALLS, result.calls)
        signal_name = signal.Signals(result.signal).name if result.signal else "a signal"
        return save_record(
            self.run_dir,
            record,
            status="stopped",
            message=f"the workflow process was killed ({signal_name}: by hand, or the out-of-memory killer); "
            f"finished work is kept: continue with `lemmata resume {record.session_id}`",
        )

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
        request = pause_request(self.run_dir)
        checkpoint = save_checkpoint(self.run_dir, record.session_id, rewrite)
        if request is not None and request.by == "budget":
            return save_record(
                self.run_dir,
                record,
                status="paused",
                message=f"paused by its budget at the {checkpoint.stage_name} stage: {request.reason}; continue with "
                f"a larger budget: `{Budget(record.budget_usd, record.budget_tokens).resume_command(record.session_id)}`",
            )
        where = (
            f"at the {gate.replace('_', ' ')} question (`lemmata resume {record.session_id}` asks it again)"
            if gate
            else f"during the {rewrite}"
            if rewrite
            else f"before the {checkpoint.stage_name} stage"
        )
        return save_record(
            self.run_dir,
            record,
            status="paused",
            message=f"paused {where}: continue with `lemmata resume {record.session_id}`",
        )

    def _request_pause(self, process: subprocess.Popen[bytes]) -> None:
        # SIGTERM to Snakemake alone: running jobs finish and their outputs stay clean.
        if not self._pause_requested:
            self._pause_requested = True
            request = pause_request(self.run_dir)
            if request is not None and request.by == "budget":
                self.console.info(f"budget: {request.reason}; pausing: running jobs finish first")
            else:
                self.console.info("pausing: running jobs finish first (Ctrl+C again does not abort)")
            process.send_signal(signal.SIGTERM)

    def _update(
        self, events: TailReader, calls: TailReader, forecasts: TailReader, board: JobBoard, done_before: set[str]
    ) -> None:
        for event in events.read_new():
            board.apply(event)
        for record in calls.read_new():
            self.tally.apply(record)
        for line in forecasts.read_new():
            forecast = parse_forecast(line, self.run_dir / layout.FORECASTS)
            if forecast is not None and forecast.calls:  # a stage that calls no model: nothing to say
                self._show_forecast(forecast)
        for artifact in card_artifacts(self.version):
            if artifact not in done_before and (self.run_dir / artifact).exists():
                done_before.add(artifact)
                self._show_card(artifact)
        for gate in DEFAULT_ANSWERED if self.version == 1 else ():
            answered = _answered(gate)
            if answered not in done_before and (self.run_dir / layout.gate(gate)).exists():
                done_before.add(answered)
                self._show_default_answer(gate)
        self.console.progress(board, self.tally, time.monotonic() - self.started)

    def _show_forecast(self, forecast: StageForecast) -> None:
        """A stage's forecast as it starts, and the budget it is held to."""
        budget = self.tally.budget
        line = f"{forecast.stage}: forecast {forecast_text(forecast)}"
        if budget:
            used = ([self.tally.cost.text] if budget.usd is not None else []) + (
                [f"{self.tally.tokens_in + self.tally.tokens_out:,} tokens"] if budget.tokens is not None else []
            )
            line += f"; budget {budget.text}, used so far {' and '.join(used)}"
        self.console.info(line)

    def _gate_answers(self) -> dict[str, str]:
        """Nobody to ask (no terminal, no browser): the workflow's review gates take their default
        answers themselves, and the run needs no second Snakemake start for them."""
        return {} if self.console.interactive else {GATE_ANSWERS_VARIABLE: DEFAULT_ANSWERS}

    def _show_default_answer(self, gate: str) -> None:
        decision = read_artifact(self.run_dir / layout.gate(gate), GateDecision)
        if decision.decided_by != "default":
            return
        theory_file = self.run_dir / layout.THEORY
        theory = read_artifact(theory_file, Theory) if theory_file.exists() else None
        escalated = load_record(self.run_dir).gate_mode == "auto" and effective_gate_mode("auto", theory) == "human"
        self.console.card(default_answer_card(gate, theory, escalated))

    def _show_card(self, artifact: str) -> None:
        card = stage_card(self.run_dir / artifact)
        if card:
            self.console.card(card)

    def _show_writer_card(self, record: RunRecord, undelivered: str = "") -> None:
        """The writer's summary of this version, with its compile's outcome (failed too)."""
        if (self.run_dir / layout.paper_meta(self.version)).exists():
            self.console.card(
                writer_card(
                    self.run_dir,
                    self.tally,
                    time.monotonic() - self.started,
                    Path(record.output_dir),
                    self.version,
                    undelivered=undelivered,
                )
            )

    def _ask_at_gate(self, gate: str, record: RunRecord) -> RunRecord | None:
        """The gate's question (run/gate_dialog.py), and what its end means for the run: an answer to
        come from the browser waits, Ctrl+C pauses at the question, an empty fallback stops."""
        self._asking = True
        try:
            return GateDialog(self.run_dir, self.console).ask(gate, record)
        except GateAwaited:  # the answer comes from the browser: the run waits here, no process needed
            return save_record(
                self.run_dir,
                record,
                status="waiting",
                message=f"waiting at the {gate.replace('_', ' ')} for a decision: give it in the "
                f"browser's Live tab, or here with `lemmata resume {record.session_id}`",
            )
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

    def _stop_on_a_full_disk(self, record: RunRecord) -> RunRecord:
        """A job that could not even say why it failed, on a full disk: a stop the user can resume
        once there is room (exit 2: the machine's fault), not a failed run."""
        message = (
            f"{self.run_dir}: No space left on device: the disk is full: free some space, then continue "
            f"with `lemmata resume {record.session_id}`; nothing finished is lost"
        )
        with suppress(OSError):  # the record too may find no room; the line below says it all
            save_record(self.run_dir, record, status="stopped", message=message)
        raise UserError(message)

    def _failure_message(self, result: Invocation) -> str:
        failure = self.run_dir / layout.LAST_FAILURE
        if failure.exists():
            return failure.read_text(encoding="utf-8").strip()
        rules = ", ".join(sorted(set(result.board.failed_rules))) or "the workflow"
        return f"{rules} failed; details in {self.run_dir / 'logs'}"

    def _complete(self, record: RunRecord) -> RunRecord:
        """The record's status stays the literal "completed" (resume, rewrites and the server rely on
        it); its message says where the paper is and, when so, that its main result is not established."""
        clear_checkpoint(self.run_dir)
        output = Path(record.output_dir)
        try:
            deliver(self.run_dir, self.version, output)
        except UserError as error:  # the run's work is done and kept: only the copy-out is owed
            self._show_writer_card(record, undelivered=str(error))
            return save_record(
                self.run_dir,
                record,
                status="completed",
                undelivered=self.version,
                message=f"run {record.session_id} completed, but {error}; the paper is in "
                f"{self.run_dir / layout.paper_pdf(self.version)}: `lemmata resume {record.session_id}` "
                "delivers it once the folder can take it",
            )
        self._show_writer_card(record)
        where = f"paper in {output}" if self.version == 1 else f"paper version {self.version} in {output}"
        issues = run_outcome(self.run_dir, "completed").issues  # after "completed (main result not established)"
        return save_record(
            self.run_dir,
            record,
            status="completed",
            undelivered=None,
            message=where + (f"; {'; '.join(issues)}" if issues else ""),
        )

    def _deliver_what_was_written(self, record: RunRecord) -> str:
        """The first run's LaTeX after its compile failed, delivered when possible; what to add to
        the failure's message."""
        try:
            if deliver(self.run_dir, self.version, Path(record.output_dir)):
                return f"; the LaTeX written so far is in {record.output_dir}"
        except UserError as error:
            return f"; the LaTeX written so far is in {self.run_dir} ({error})"
        return ""


def _alive(pid: int) -> bool:
    """A process `pid` runs (a zombie does not: an orphan waits for the machine's init to reap it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _answered(gate: str) -> str:
    """The key under which the driver remembers that it showed a gate's default answer."""
    return f"answered:{gate}"


def resume_notice(checkpoint: Checkpoint) -> str:
    """Where a paused run goes on, and on which direction: the brief the checkpoint kept."""
    paused = time.strftime("%Y-%m-%d %H:%M", time.localtime(checkpoint.paused_at))
    brief = checkpoint.research_brief()
    direction = str(brief.get("direction") or brief.get("goal") or "").strip()
    return f"resuming from the {checkpoint.stage_name} stage (paused {paused})" + (
        f", on the direction: {direction}" if direction else ""
    )
