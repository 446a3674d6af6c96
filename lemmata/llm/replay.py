"""The `replay` backend: answers from a recorded `llm_calls.jsonl` or a hand-written script.

A script line needs `role` and `response`; `scope` (which parallel job asked) and token
counts are optional. Answers are given per role in recorded order; a call whose scope was
recorded gets the answer recorded for that scope, so parallel jobs replay deterministically;
else one recorded for its parent scope (a recording made before a job split its calls), else an
unscoped one.
Consumption is tracked in a state file under a lock, because each Snakemake job is its
own process.
"""

from __future__ import annotations

import fcntl
import json
import logging
from pathlib import Path
from typing import Any

from lemmata.errors import ReplayExhaustedError, UserError
from lemmata.llm.base import ChatRequest, ChatResponse, finish_reason_of, pass_whole

log = logging.getLogger(__name__)


def load_replay_script(path: Path) -> list[dict[str, Any]]:
    """Successful calls of a recording, in order; a clear UserError when it is unusable."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"LEMMATA_REPLAY={path}: no such file; point it at a recorded llm_calls.jsonl")
    entries = []
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines) and not text.endswith("\n"):
                # Torn by a failed append of an older lemmata: that call was never recorded.
                log.warning("%s:%d: skipped a torn last line", path, number)
                continue
            raise UserError(f"{path}:{number}: not a JSON line") from None
        if not isinstance(entry, dict) or "role" not in entry or "response" not in entry:
            raise UserError(f"{path}:{number}: a replay line needs 'role' and 'response'")
        if entry["response"] is not None and not entry.get("error"):
            entries.append(entry)
    return entries


def recorded_model(path: Path) -> str:
    """The model whose answers a recording holds (its first call's), or "replay" when it names none
    or cannot be read (building the backend then reports why). A replay is that model's answers
    again: whatever was measured of the model (its checks' trust) holds for the replay."""
    return _first_recorded(path, "model")


def recorded_backend(path: Path) -> str:
    """The backend a recording's answers came from (its first call's), or "replay": the name its
    checks go by, in the paper and in the advice to measure them."""
    return _first_recorded(path, "backend")


def _first_recorded(path: Path, field: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(entry, dict) and isinstance(entry.get(field), str) and entry[field]:
                    return str(entry[field])
    except (OSError, UnicodeDecodeError):
        pass
    return "replay"


class ReplayBackend:
    name = "replay"

    def __init__(self, script_path: Path, state_dir: Path) -> None:
        self.script = load_replay_script(script_path)
        #: Whose answers these are: the recorded backend's (llm/base.py answering_backend).
        self.answers_of = recorded_backend(script_path)
        self.state_path = Path(state_dir) / ".replay_state.json"

    def complete(self, request: ChatRequest) -> ChatResponse:
        """The next recorded answer; a streamed call gets it as one piece."""
        entry = self._take(request.role, request.scope)
        return pass_whole(
            request,
            ChatResponse(
                text=entry["response"],
                tokens_in=entry.get("tokens_in"),
                tokens_out=entry.get("tokens_out"),
                cache_read_tokens=entry.get("cache_read_tokens"),
                cache_write_tokens=entry.get("cache_write_tokens"),
                finish_reason=finish_reason_of(entry.get("finish_reason")),  # recordings before it: None
            ),
        )

    def _take(self, role: str, scope: str) -> dict[str, Any]:
        self.state_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.state_path.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            used = set(self._read_used())
            index = self._pick(role, scope, used)
            if index is None:
                raise ReplayExhaustedError(
                    f"replay script has no answer left for role '{role}'" + (f" (scope {scope})" if scope else "")
                )
            used.add(index)
            self.state_path.write_text(json.dumps(sorted(used)))
        return self.script[index]

    def _pick(self, role: str, scope: str, used: set[int]) -> int | None:
        unused = [i for i, e in enumerate(self.script) if i not in used and e["role"] == role]
        same_scope = [i for i in unused if _scope_of(self.script[i]) == scope]
        # Recorded before the job gave its concurrent calls scopes of their own ("experiment" for
        # "experiment:L2": the experiment checked its lemmas one after another until 2026-11-29).
        parent = scope.rpartition(":")[0]
        parent_scope = [i for i in unused if parent and _scope_of(self.script[i]) == parent]
        unscoped = [i for i in unused if not _scope_of(self.script[i])]
        for candidates in (same_scope, parent_scope, unscoped):
            if candidates:
                return candidates[0]
        return None

    def _read_used(self) -> list[int]:
        try:
            return json.loads(self.state_path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return []


def _scope_of(entry: dict[str, Any]) -> str:
    return str(entry.get("scope") or "")
