"""The shared model server and the backend jobs use to reach it, over a real Unix socket, with the
scripted stand-in for llama-cpp's Llama (tests/e2e/test_shared_model.py runs the real model)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import socketserver
import stat
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import fields, replace
from pathlib import Path

import pytest

from lemmata.errors import ProviderError
from lemmata.llm.base import ChatRequest, Message
from lemmata.llm.embedded_backend import EmbeddedBackend
from lemmata.llm.model_server import (
    MAX_REQUEST_BYTES,
    SOCKET_VARIABLE,
    SharedModelBackend,
    request_from_wire,
    request_to_wire,
    serve,
)
from lemmata.llm.resolve import build_backend
from lemmata.settings import Settings
from support.waiting import wait_until
from unit.llm.test_embedded_backend import FakeLlama

REQUEST = ChatRequest(
    role="prover",
    model="m",
    system="You prove lemmas.",
    messages=(Message("user", "Prove [L1]."), Message("assistant", "Draft."), Message("user", "Again.")),
    max_tokens=300,
    json_schema={"type": "object", "properties": {"proof": {"type": "string"}}},
    scope="prove_lemma:L1",
)


@contextmanager
def running_server(backend: object) -> Iterator[Path]:
    directory = Path(tempfile.mkdtemp(prefix="lemmata-test-model-"))  # short: a socket path has ~100 bytes
    socket_path = directory / "model.sock"
    done = threading.Event()
    thread = threading.Thread(target=serve, args=(backend, socket_path, lambda: not done.is_set(), 0.05))
    thread.start()
    try:
        wait_until(socket_path.exists, 10, 0.01, message="the server did not bind its socket")
        yield socket_path
    finally:
        done.set()
        thread.join(10)
        assert not thread.is_alive()
        directory.rmdir()  # the server removed its socket file


def embedded(llama: FakeLlama) -> EmbeddedBackend:
    return EmbeddedBackend(Path("model.gguf"), 4096, threads=2, llama_factory=lambda *_: llama)


def test_a_request_crosses_the_wire_unchanged() -> None:
    assert request_from_wire(json.loads(json.dumps(request_to_wire(REQUEST)))) == REQUEST


def test_every_field_of_a_request_crosses_the_wire() -> None:
    """ChatRequest.own_words was added without its place on the wire: the README's main command
    then ran with no echo guard in the shared model server, while the in-process tests passed.
    Each field set to a value other than its default must arrive (the streaming callback aside:
    the server streams by its own protocol)."""
    changed = replace(REQUEST, json_schema={"type": "object"}, scope="prove_lemma:L2", own_words=not REQUEST.own_words)
    wired = {field.name for field in fields(ChatRequest) if field.name != "on_text"}
    assert request_from_wire(json.loads(json.dumps(request_to_wire(changed)))) == changed
    assert set(request_to_wire(changed)) == wired


def test_a_job_gets_the_answer_the_in_process_model_gives() -> None:
    llama = FakeLlama(text="The proof.")
    with running_server(embedded(llama)) as socket_path:
        response = SharedModelBackend(socket_path).complete(REQUEST)
    direct = embedded(FakeLlama(text="The proof.")).complete(REQUEST)
    assert response.text == direct.text == "The proof."
    assert (response.tokens_in, response.tokens_out, response.finish_reason) == (40, 5, "stop")
    assert response.extra.keys() == direct.extra.keys()
    sent = llama.calls[0]
    assert [m["role"] for m in sent["messages"]] == ["system", "user", "assistant", "user"]
    assert sent["response_format"]["schema"]["required"] == ["proof"]  # the schema arrived


def test_a_streaming_caller_gets_the_whole_answer_as_one_piece() -> None:
    pieces: list[str] = []
    with running_server(embedded(FakeLlama(text="Whole."))) as socket_path:
        request = ChatRequest(role="writer", model="m", system="s", messages=(Message("user", "u"),), max_tokens=9)
        response = SharedModelBackend(socket_path).complete(
            ChatRequest(**{**request.__dict__, "on_text": pieces.append})
        )
    assert pieces == ["Whole."] and response.text == "Whole."


def test_a_model_error_reaches_the_job_as_a_provider_error_and_the_server_goes_on() -> None:
    llama = FakeLlama(error=ValueError("Requested tokens (9000) exceed context window of 4096"))
    with running_server(embedded(llama)) as socket_path:
        with pytest.raises(ProviderError, match="raise LEMMATA_EMBEDDED_CONTEXT"):
            SharedModelBackend(socket_path).complete(REQUEST)
        llama.error = None
        assert SharedModelBackend(socket_path).complete(REQUEST).text == "answer"


def test_the_socket_file_appears_only_once_the_server_listens(monkeypatch: pytest.MonkeyPatch) -> None:
    """Callers wait for the socket file; a file that exists before listen() refuses the first call
    (a CI run met this: "Connection refused" on a loaded machine)."""
    import time

    listen = socketserver.UnixStreamServer.server_activate

    def slow_listen(server: socketserver.UnixStreamServer) -> None:
        time.sleep(0.5)  # a loaded machine between bind() and listen()
        listen(server)

    monkeypatch.setattr(socketserver.UnixStreamServer, "server_activate", slow_listen)
    with running_server(embedded(FakeLlama(text="First."))) as socket_path:
        assert SharedModelBackend(socket_path).complete(REQUEST).text == "First."


def test_a_malformed_or_oversized_request_gets_an_error_line_not_a_dead_server() -> None:
    with running_server(embedded(FakeLlama())) as socket_path:
        for payload in (b"not json\n", b'{"role": "x"}\n', b"x" * (MAX_REQUEST_BYTES + 10) + b"\n"):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
                connection.connect(str(socket_path))
                try:
                    connection.sendall(payload)
                except BrokenPipeError:  # the server answered before reading all of the oversized line
                    pass
                answer = json.loads(connection.makefile("rb").readline())
            assert "error" in answer
        assert SharedModelBackend(socket_path).complete(REQUEST).text == "answer"


def test_calls_of_parallel_jobs_take_turns_on_the_one_model() -> None:
    llama = FakeLlama(delay=0.2)
    with running_server(embedded(llama)) as socket_path:
        threads = [threading.Thread(target=SharedModelBackend(socket_path).complete, args=(REQUEST,)) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(llama.calls) == 3 and llama.max_active == 1


def test_the_socket_is_for_our_user_only() -> None:
    with running_server(embedded(FakeLlama())) as socket_path:
        assert stat.S_IMODE(socket_path.stat().st_mode) == 0o600
        assert stat.S_IMODE(socket_path.parent.stat().st_mode) == 0o700


def test_a_job_whose_server_is_gone_gets_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ProviderError, match="embedded model server .* is gone.*resume the run"):
        SharedModelBackend(tmp_path / "model.sock").complete(REQUEST)


def test_a_job_whose_server_dies_during_the_call_is_told_where_the_crash_is_logged() -> None:
    # Seen on a Sapphire Rapids machine: llama.cpp's AMX kernel killed the server by SIGSEGV in the
    # middle of every call, and 200 checks failed with "closed the connection without an answer".
    # A short folder of its own: a Unix socket's path has at most 107 bytes, pytest's are longer.
    folder = Path(tempfile.mkdtemp(prefix="lemmata-test-model-"))
    socket_path = folder / "model.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(socket_path))
    listener.listen(1)

    def die_after_reading_the_request() -> None:
        connection, _ = listener.accept()
        connection.recv(1 << 16)
        connection.close()

    server = threading.Thread(target=die_after_reading_the_request)
    server.start()
    try:
        with pytest.raises(ProviderError, match="died during the call.*logs/model_server.log.*bin/setup"):
            SharedModelBackend(socket_path).complete(REQUEST)
    finally:
        server.join(10)
        listener.close()
        shutil.rmtree(folder, ignore_errors=True)


def test_jobs_of_a_run_with_a_model_server_use_it_and_others_load_the_model(tmp_path: Path) -> None:
    settings = Settings.from_mapping({"LLM_BACKEND": "embedded", "LEMMATA_EMBEDDED_MODEL": str(tmp_path / "m.gguf")})
    (tmp_path / "m.gguf").write_bytes(b"GGUF")
    shared = build_backend("embedded", settings, {SOCKET_VARIABLE: str(tmp_path / "model.sock")}, tmp_path)
    assert isinstance(shared, SharedModelBackend) and shared.socket_path == tmp_path / "model.sock"
    assert isinstance(build_backend("embedded", settings, {}, tmp_path), EmbeddedBackend)
    assert SOCKET_VARIABLE not in os.environ
