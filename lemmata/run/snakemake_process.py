"""Snakemake's command line, as lemmata starts it (`python -m lemmata.run.snakemake_process ARGS`).

It is `python -m snakemake ARGS`, with these differences:
- It leaves as soon as Snakemake is done (it is the last thing a run waits for): Snakemake's
  scheduler arms a one-second `threading.Timer` after each pass (its job-rate limit), and Python
  waits for every such timer before the process may exit. With nothing left to schedule, the
  scheduler's timers are cancelled; timers of any other library are left to run.
- Its metadata records (`.snakemake/metadata/`) are made 0600 instead of Snakemake's 0660 (a
  project folder shared by a group): a run folder is its user's alone (lemmata/private_files.py).
- Its scheduler's SIGTERM handler (a pause: finish the running jobs, start no more) runs on a
  thread of its own. Snakemake's handler takes the scheduler's lock, which the main thread holds
  while it handles finished and failed jobs, and a signal handler runs on the main thread: a
  SIGTERM landing inside that block deadlocked the run (seen in CI, 2026-11-28, a budget pause
  sent the moment a job failed).
- Started as `... --await-invocation` (run/early_workflow.py), it imports Snakemake, then reads
  its command line, folder, environment, umask and log from one line on its standard input.
- Snakemake's report registry does not import its built-in HTML reporter unless the command asks
  for a report (`lemmata report` does, a run does not), and the process keeps a TeX box started
  ahead for its plots, trial passes and compiles (latex/texbox.py `SpareBox`).
The process then exits as any Python program does (exit handlers, interpreter teardown), but
with the objects Snakemake and the jobs left frozen out of the garbage collector (`gc.freeze`):
the teardown's collections walked all of them and took 0.39 s of every run's end (2 cores,
2026-11-27), now 0.02 s. Snakemake's modules are frozen as soon as they are imported: the
collections during a run took 0.14 s, now 0.08 s. Objects are still freed as their last
reference goes (files close, buffers flush); only reference cycles among them are left to the
end of the process.
"""

from __future__ import annotations

import gc
import json
import os
import stat
import sys
import tempfile
import threading

from snakemake.cli import main as snakemake_main
from snakemake.persistence.file import FilePersistence
from snakemake.scheduling.job_scheduler import JobScheduler
from snakemake_interface_common.plugin_registry import PluginRegistryBase
from snakemake_interface_report_plugins.registry import ReportPluginRegistry

from lemmata.run.early_workflow import AWAIT_INVOCATION
from lemmata.terminal_text import escape_the_standard_streams

SNAKEMAKE_RECORD_MODE = stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IWGRP
PRIVATE_RECORD_MODE = stat.S_IRUSR | stat.S_IWUSR


def cancel_idle_timers() -> int:
    """Cancel Snakemake's timers still waiting (the scheduler's re-evaluations); how many there were."""
    timers = [
        thread
        for thread in threading.enumerate()
        if isinstance(thread, threading.Timer)
        and getattr(thread.function, "__module__", "").startswith("snakemake.")  # not another library's
    ]
    for timer in timers:
        timer.cancel()
    return len(timers)


def exit_status(code: object) -> int:
    """The process status `sys.exit(code)` would give (a message is printed, as Python does)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def take_invocation() -> None:
    """Started early (run/early_workflow.py), with Snakemake imported: become the process the
    driver would have started, from the one line it sends; end quietly if none comes."""
    line = sys.stdin.buffer.readline()
    if not line:
        sys.exit(0)
    invocation = json.loads(line)
    os.umask(int(invocation["umask"]))
    os.chdir(invocation["cwd"])
    os.environ.clear()
    os.environ.update(invocation["env"])
    tempfile.tempdir = None  # found again under the run's environment
    log = os.open(invocation["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.dup2(log, sys.stdout.fileno())
    os.dup2(log, sys.stderr.fileno())
    os.close(log)
    nothing = os.open(os.devnull, os.O_RDONLY)
    os.dup2(nothing, sys.stdin.fileno())
    os.close(nothing)
    sys.argv = [sys.argv[0], *invocation["argv"]]


def private_metadata_records() -> None:
    """Snakemake writes each record and then chmods it to the `mode` its writer defaults to (0660);
    0600 instead. Where a later Snakemake no longer has that default, nothing is changed (the test
    of a run's file modes then says so)."""
    write = FilePersistence._io_write
    if write.__defaults__ == (SNAKEMAKE_RECORD_MODE,):
        write.__defaults__ = (PRIVATE_RECORD_MODE,)


def asks_for_a_report(arguments: list[str]) -> bool:
    """`lemmata report` runs Snakemake with --report (and its HTML reporter); a run does not."""
    return any(argument.startswith("--report") for argument in arguments)  # --report, --reporter, --report-...


def no_builtin_report_plugin() -> None:
    """Snakemake's argument parser takes the options of every plugin, and the report registry
    imports its built-in HTML reporter for them (jinja2, docutils, pygments, numpy: 0.15 s of each
    run's start, 2 cores, 2026-11-29). A run that asks for no report gets a registry that collects
    the installed report plugins only, as every other registry does."""
    ReportPluginRegistry.collect_plugins = PluginRegistryBase.collect_plugins


def stop_requests_off_the_main_thread() -> None:
    """Snakemake's `JobScheduler.exit_gracefully`, the SIGTERM handler its constructor installs,
    started on a short-lived thread instead of run inside the signal handler: the thread waits
    for the scheduler's lock while the main thread goes on and lets go of it."""
    graceful_exit = JobScheduler.exit_gracefully
    if getattr(graceful_exit, "off_the_main_thread", False):
        return

    def exit_gracefully(scheduler: JobScheduler, *args: object) -> None:
        threading.Thread(
            target=graceful_exit, args=(scheduler, *args), name="snakemake-stop-request", daemon=True
        ).start()

    exit_gracefully.off_the_main_thread = True  # type: ignore[attr-defined]
    JobScheduler.exit_gracefully = exit_gracefully


def main() -> None:
    if sys.argv[1:] == [AWAIT_INVOCATION]:
        take_invocation()
    # The run's log holds what jobs report, model text among it (a refused answer quoted): shown,
    # never obeyed by the terminal a researcher reads the log on.
    escape_the_standard_streams()
    gc.freeze()  # Snakemake's modules, just imported, are never garbage: no collection walks them again
    private_metadata_records()
    stop_requests_off_the_main_thread()
    if not asks_for_a_report(sys.argv[1:]):
        no_builtin_report_plugin()
    from lemmata.latex.texbox import SPARE  # after take_invocation: lemmata's modules see the run's environment

    SPARE.keep()
    try:
        snakemake_main()  # ends with sys.exit(status)
        status = 0
    except SystemExit as exit_:
        status = exit_status(exit_.code)
    cancel_idle_timers()
    gc.freeze()
    sys.exit(status)


if __name__ == "__main__":
    main()
