"""One embedded model shared by all jobs of a run: a server process that holds the model, and the
backend the jobs use to reach it.

Without it every job is a process that loads the model again and starts with an empty prompt
cache, so every call re-reads the system prompt its role's previous call had already read. The
server loads the model once and keeps one context whose cache outlives the jobs, with each
role's last state kept beside it (role_states.py). It serves one call at a time: on a laptop's
cores two generations at once would each run at half speed.

The transport is a Unix socket in a directory only our user can enter (mode 0700): another local
user cannot connect, a web page cannot reach a socket file, and the sandbox of model-written
code does not see the directory. One connection carries one call: a line of JSON (the request)
in, a line of JSON (the response, or {"error": ...}) out.
"""

from __future__ import annotations

import json
import os
import socket
import socketserver
import threading
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from lemmata.errors import ProviderError
from lemmata.llm.base import Backend, ChatRequest, ChatResponse, Message, pass_whole

#: Set in the environment of a run's jobs: the socket of the run's shared model.
SOCKET_VARIABLE = "LEMMATA_MODEL_SOCKET"
#: The socket's file name inside its private directory.
SOCKET_NAME = "model.sock"
#: A request line longer than this is refused (prompts are at most the context window: ~100 kB).
MAX_REQUEST_BYTES = 8 << 20


def request_to_wire(request: ChatRequest) -> dict[str, Any]:
    return {
        "role": request.role,
        "model": request.model,
        "system": request.system,
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "max_tokens": request.max_tokens,
        "json_schema": request.json_schema,
        "scope": request.scope,
        "own_words": request.own_words,
        "resume_after_echo": request.resume_after_echo,
    }


def request_from_wire(data: dict[str, Any]) -> ChatRequest:
    return ChatRequest(
        role=str(data["role"]),
        model=str(data["model"]),
        system=str(data["system"]),
        messages=tuple(Message(m["role"], m["content"]) for m in data["messages"]),
        max_tokens=int(data["max_tokens"]),
        json_schema=data.get("json_schema"),
        scope=str(data.get("scope", "")),
        own_words=bool(data.get("own_words", False)),
        resume_after_echo=str(data.get("resume_after_echo", "")),
    )


def response_from_wire(data: dict[str, Any]) -> ChatResponse:
    return ChatResponse(**data)


class SharedModelBackend:
    """The `embedded` backend of a job whose run has a model server: each call goes to the server."""

    name = "embedded"

    def __init__(self, socket_path: Path) -> None:
        self.socket_path = Path(socket_path)

    def complete(self, request: ChatRequest) -> ChatResponse:
        payload = json.dumps(request_to_wire(request)).encode() + b"\n"
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
                connection.connect(str(self.socket_path))
                connection.sendall(payload)
                answer = _read_line(connection)
        except OSError as exc:
            raise ProviderError(
                f"the run's embedded model server ({self.socket_path}) is gone: {exc.strerror or exc}; "
                "its log is logs/model_server.log in the run folder; resume the run to start it again"
            ) from None
        if not answer:
            raise ProviderError(
                "the run's embedded model server closed the connection without an answer: it died during "
                "the call (a crash of the model library leaves its stack in logs/model_server.log in the run "
                "folder; bin/setup rebuilds a model library that crashes on this CPU)"
            )
        data = json.loads(answer)
        if "error" in data:
            raise ProviderError(str(data["error"]))
        return pass_whole(request, response_from_wire(data))


def _read_line(connection: socket.socket) -> bytes:
    pieces = []
    while True:
        piece = connection.recv(1 << 16)
        if not piece:
            break
        pieces.append(piece)
        if piece.endswith(b"\n"):
            break
    return b"".join(pieces)


class _CallHandler(socketserver.StreamRequestHandler):
    server: _ModelSocketServer

    def handle(self) -> None:
        line = self.rfile.readline(MAX_REQUEST_BYTES + 1)
        if not line:
            return
        try:
            if len(line) > MAX_REQUEST_BYTES:
                raise ProviderError(f"a request of more than {MAX_REQUEST_BYTES} bytes")
            response = self.server.backend.complete(request_from_wire(json.loads(line)))
            reply: dict[str, Any] = asdict(response)
        except ProviderError as exc:
            reply = {"error": str(exc)}
        except (ValueError, KeyError, TypeError) as exc:  # a malformed request line
            reply = {"error": f"embedded model server: malformed request: {exc}"}
        except Exception as exc:  # the server outlives a failed call: the other jobs' calls still need it
            reply = {"error": f"embedded model server: {type(exc).__name__}: {exc}"}
        self.wfile.write(json.dumps(reply).encode() + b"\n")


class _ModelSocketServer(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True

    def __init__(self, socket_path: Path, backend: Backend) -> None:
        """Bound and listening under a temporary name, then renamed into place: callers wait for
        the socket file, and a file that appeared at bind() would refuse calls until listen()."""
        self.backend = backend
        unready = socket_path.with_name(f".{socket_path.name}.{os.getpid()}")
        unready.unlink(missing_ok=True)
        super().__init__(str(unready), _CallHandler)
        try:
            os.chmod(unready, 0o600)  # read/write for our user only
            os.replace(unready, socket_path)
        except OSError:
            self.server_close()
            unready.unlink(missing_ok=True)
            raise


def serve(backend: Backend, socket_path: Path, keep_serving: Callable[[], bool], check_every: float = 1.0) -> None:
    """Answer calls on `socket_path` until `keep_serving()` says no (asked every `check_every`
    seconds) or the process is told to stop. Calls are answered on threads and take turns on
    the backend (its own lock). The socket file is removed at the end."""
    socket_path = Path(socket_path)
    server = _ModelSocketServer(socket_path, backend)
    stopped = threading.Event()

    def watch() -> None:
        while not stopped.wait(check_every):
            if not keep_serving():
                server.shutdown()
                return

    watcher = threading.Thread(target=watch, name="model-server-watch", daemon=True)
    watcher.start()
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        stopped.set()
        server.server_close()
        socket_path.unlink(missing_ok=True)
