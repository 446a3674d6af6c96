"""The Settings tab's checking models: each backend's model with the trust its checks earned
(verification/calibration.py), and a calibration started from the browser.

A calibration runs as `lemmata calibrate --backend NAME --yes`, a process of its own (as a run's
driver is: the server never runs model work itself), its output in the calibration folder. One
runs at a time: two would share one machine's cores (or one provider's rate limit) and measure
each other's slowness. Its progress is the progress file the command keeps, read at each poll.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lemmata.artifacts import calibrate_command
from lemmata.errors import ArtifactError, LemmataError
from lemmata.home_layout import CALIBRATION
from lemmata.llm.prices import load_prices
from lemmata.llm.registry import registered
from lemmata.llm.resolve import choose_backend, resolve_models
from lemmata.server.http import ApiError
from lemmata.settings import Settings, load_environment
from lemmata.verification.calibrate import forecast_words, plan_calibration
from lemmata.verification.calibration import checker_for, model_slug, trust_in_words

#: Backends for tests only: never offered for a calibration.
HIDDEN_BACKENDS = frozenset({"replay"})
#: How much of the calibration's output a poll shows: its last lines.
LOG_TAIL_LINES = 3


def log_path(home: Path, model: str) -> Path:
    return Path(home) / CALIBRATION / f"{model_slug(model)}.log"


@dataclass
class CalibrationRunner:
    """The one calibration this server started, if any."""

    environ: Mapping[str, str] | None = None
    backend: str = ""
    model: str = ""
    process: subprocess.Popen[bytes] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self, backend: str, home: Path) -> None:
        """Start `lemmata calibrate` for `backend`: ApiError 400 for a backend that is not one or
        lacks its credential, 409 while a calibration runs."""
        if backend not in {spec.name for spec in registered()} - HIDDEN_BACKENDS:
            names = ", ".join(spec.name for spec in registered() if spec.name not in HIDDEN_BACKENDS)
            raise ApiError(400, f"{backend!r} is not a backend: use one of {names}")
        environ = {**load_environment(_plain(self.environ)), "LLM_BACKEND": backend}
        try:
            choice = choose_backend(Settings.from_environment(environ), environ)
        except LemmataError as error:
            raise ApiError(400, str(error)) from None
        with self._lock:
            if self.running():
                raise ApiError(409, f"a calibration of {self.model} ({self.backend}) runs: wait until it ends")
            log = log_path(home, choice.models.active)
            log.parent.mkdir(parents=True, exist_ok=True)
            with open(log, "wb") as output:
                self.process = subprocess.Popen(
                    [sys.executable, "-m", "lemmata", "calibrate", "--backend", backend, "--yes"],
                    env=None if self.environ is None else dict(self.environ),
                    stdin=subprocess.DEVNULL,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # a Ctrl+C of the server is its own; stop() ends this one
                )
            self.backend, self.model = backend, choice.models.active

    def stop(self) -> None:
        """At the server's shutdown: interrupt the calibration (it keeps what it measured)."""
        with self._lock:
            if self.running():
                assert self.process is not None
                self.process.send_signal(signal.SIGINT)
                try:
                    self.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.process.kill()


def checking_models(environ: Mapping[str, str] | None, home: Path, runner: CalibrationRunner) -> list[dict[str, Any]]:
    """Each backend's checking model as a run started now would use it: its trust and what that
    means, whether it can be used here (its credential), the calibration's forecast, and the
    progress of one that runs or was stopped."""
    merged = load_environment(_plain(environ))
    prices = load_prices(home)
    rows = []
    for spec in registered():
        if spec.name in HIDDEN_BACKENDS:
            continue
        environ_for = {**merged, "LLM_BACKEND": spec.name}
        settings = Settings.from_environment(environ_for)
        try:
            model = resolve_models(spec.name, settings).active
        except LemmataError as error:  # e.g. the embedded model not installed: said, the others shown
            rows.append({**_UNUSABLE, "backend": spec.name, "in_words": str(error)})
            continue
        trust: str
        try:
            checker = checker_for(spec.name, model, home)
            trust, words = checker.trust, trust_in_words(checker, how_to_measure=False)
        except ArtifactError as error:  # a damaged record: said, and the other backends still shown
            trust, words = "unreadable", str(error)
        plan = plan_calibration(home, spec.name, model, settings.MAX_TOKENS_VERIFIER, prices)
        log = log_path(home, model)
        rows.append(
            {
                "backend": spec.name,
                "model": model,
                "available": spec.has_credential(settings, environ_for),
                "trust": trust,
                "in_words": words,
                "command": calibrate_command(spec.name, model).strip("`"),
                "forecast": forecast_words(plan.forecast()),
                "measured": len(plan.chosen) - len(plan.todo),
                "proofs": len(plan.chosen),
                "running": runner.running() and runner.model == model,
                "output": _tail(log) if log.is_file() else "",
            }
        )
    return rows


#: The row of a backend that cannot be used here at all (its `in_words` says why).
_UNUSABLE: dict[str, Any] = {
    "model": "",
    "available": False,
    "trust": "unavailable",
    "command": "",
    "forecast": "",
    "measured": 0,
    "proofs": 0,
    "running": False,
    "output": "",
}


def _tail(path: Path) -> str:
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return "\n".join(lines[-LOG_TAIL_LINES:])


def _plain(environ: Mapping[str, str] | None) -> dict[str, str] | None:
    return None if environ is None else dict(environ)
