"""A scriptable fake OpenAI/Anthropic model provider on 127.0.0.1 for tests and benchmarks."""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import signal
import socketserver
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Union

from lemmata.llm.base import ROLE_HEADER
from support.loopback import LoopbackServer

UNKNOWN_ROLE = "unknown"
ANY_ROLE_IN_SCRIPT = "*"
DEFAULT_MODELS = ("fake-model",)
# Anthropic's smallest cacheable prompt prefix for most models, in tokens.
DEFAULT_MIN_CACHEABLE_TOKENS = 1024
# How many blocks before a breakpoint Anthropic looks back for an earlier cached prefix.
CACHE_LOOKBACK_BLOCKS = 20
STREAM_PIECES = 4
# Cut mid-object so that every JSON parser rejects it.
MALFORMED_BODY = b'{"id": "fake-malformed", "choices": [{"message": '


@dataclass
class RecordedRequest:
    """One request as the fake server saw it, and what it answered."""

    role: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    answered_status: int = 0  # stays 0 while in flight, or when stop() cut the request short
    answer_text: str | None = None
    started_at: float = field(default_factory=time.monotonic)
    finished_at: float | None = None
    # Prompt-cache tokens the answer reported (Anthropic dialect with prompt_cache on; 0 otherwise).
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0


Responder = Callable[[RecordedRequest], Union[str, "Answer"]]
#: How a scripted answer ends: "stop" (the model ended it) or "length" (cut off at the token
#: limit: OpenAI's finish_reason "length", Anthropic's stop_reason "max_tokens").
FINISH_REASONS = ("stop", "length")


@dataclass(frozen=True)
class Answer:
    """A scripted answer (text or responder) with its own extra latency in seconds and how it ends.
    A responder may return an Answer too (its text and finish_reason are used)."""

    text: str | Responder
    latency: float = 0.0
    finish_reason: str = "stop"

    def __post_init__(self) -> None:
        if self.finish_reason not in FINISH_REASONS:
            raise ValueError(f"finish_reason must be one of {FINISH_REASONS}, not {self.finish_reason!r}")


@dataclass(frozen=True)
class Fault:
    """A scripted failure: an HTTP error status, a hang of some seconds, or a malformed body."""

    status: int | None = None
    message: str = "injected fault"
    retry_after: float | None = None
    hang: float | None = None
    malformed: bool = False

    def __post_init__(self) -> None:
        """Reject faults that are none or several kinds at once."""
        kinds = [self.status is not None, self.hang is not None, self.malformed]
        if sum(kinds) != 1:
            raise ValueError("a Fault needs exactly one of status=, hang= or malformed=True")


ScriptedAnswer = str | Answer | Responder


def estimate_tokens(text: str) -> int:
    """Deterministic token estimate: characters / 4 rounded up, at least 1."""
    return max(1, math.ceil(len(text) / 4))


def _content_text(content: Any) -> str:
    """Text of a message content given as a string or as a list of typed parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def prompt_text(body: Mapping[str, Any]) -> str:
    """All text a request sends to the model (system prompt, then messages), concatenated."""
    messages = body.get("messages")
    pieces = [_content_text(body.get("system"))]
    if isinstance(messages, list):
        pieces += [_content_text(m.get("content")) for m in messages if isinstance(m, dict)]
    return "".join(pieces)


def _canonical_json(value: Any) -> str:
    """Deterministic JSON of a request fragment (sorted keys, no spaces)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _without_cache_control(block: Any) -> Any:
    """A content block or tool as it counts for the cache key: its cache_control marker left out."""
    return {k: v for k, v in block.items() if k != "cache_control"} if isinstance(block, dict) else block


def _cache_items(body: Mapping[str, Any]) -> list[tuple[Any, str, bool]]:
    """The prompt in Anthropic's cache order (tools, system, messages), one item per block.

    Each item is (what identifies the block in a cache key, its text as prompt_text counts it,
    whether it carries cache_control). Messages name their index and role, so that block
    boundaries between messages are part of the key.
    """

    def text_of(block: Any) -> str:
        return block["text"] if isinstance(block, dict) and isinstance(block.get("text"), str) else ""

    def marked(block: Any) -> bool:
        return isinstance(block, dict) and isinstance(block.get("cache_control"), dict)

    items: list[tuple[Any, str, bool]] = []
    tools = body.get("tools")
    for tool in tools if isinstance(tools, list) else ():
        items.append((["tool", _without_cache_control(tool)], "", marked(tool)))
    system = body.get("system")
    if isinstance(system, str):
        items.append((["system", {"type": "text", "text": system}], system, False))
    elif isinstance(system, list):
        items += [(["system", _without_cache_control(b)], text_of(b), marked(b)) for b in system]
    messages = body.get("messages")
    for index, msg in enumerate(messages if isinstance(messages, list) else ()):
        if not isinstance(msg, dict):
            continue
        role, content = msg.get("role"), msg.get("content")
        if isinstance(content, str):
            items.append((["message", index, role, {"type": "text", "text": content}], content, False))
        elif isinstance(content, list):
            items += [(["message", index, role, _without_cache_control(b)], text_of(b), marked(b)) for b in content]
        else:
            items.append((["message", index, role, content], "", False))
    return items


@dataclass(frozen=True)
class CachePrefix:
    """The prompt prefix that ends at one block, in Anthropic's cache order."""

    key: str  # digest of the prefix's canonical JSON, cache_control markers left out
    tokens: int  # estimate_tokens of the prefix's text, a leading part of prompt_text(body)
    breakpoint: bool  # the block ending the prefix carries cache_control


def cache_prefixes(body: Mapping[str, Any]) -> list[CachePrefix]:
    """The request's prompt prefixes, one ending at each block (tools, system, then messages)."""
    digest = hashlib.sha256()
    texts: list[str] = []
    ends: list[tuple[str, int, bool]] = []
    length = 0
    for identity, text, is_breakpoint in _cache_items(body):
        digest.update(_canonical_json(identity).encode() + b"\n")
        texts.append(text)
        length += len(text)
        ends.append((digest.hexdigest(), length, is_breakpoint))
    whole = "".join(texts)
    return [CachePrefix(key, estimate_tokens(whole[:end]), marked) for key, end, marked in ends]


def _as_answer(scripted: ScriptedAnswer) -> Answer:
    """Normalise what callers may enqueue into an Answer."""
    if isinstance(scripted, Answer):
        return scripted
    if isinstance(scripted, str) or callable(scripted):
        return Answer(text=scripted)
    raise TypeError(f"a scripted answer must be a str, an Answer or a callable, not {type(scripted).__name__}")


def _split_text(text: str, pieces: int = STREAM_PIECES) -> list[str]:
    """Split text into at most `pieces` consecutive chunks for streaming."""
    if not text:
        return []
    size = math.ceil(len(text) / pieces)
    return [text[start : start + size] for start in range(0, len(text), size)]


def _sse(payload: Mapping[str, Any] | str, event: str | None = None) -> bytes:
    """One server-sent event, optionally named."""
    data = payload if isinstance(payload, str) else json.dumps(payload)
    prefix = f"event: {event}\n" if event else ""
    return f"{prefix}data: {data}\n\n".encode()


def _error_type(status: int) -> str:
    """Provider error type for an HTTP status (both providers use these names)."""
    named = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
        529: "overloaded_error",
    }
    return named.get(status, "api_error" if status >= 500 else "invalid_request_error")


@dataclass(frozen=True)
class _Reply:
    """Everything either provider shape needs to render one answer."""

    reply_id: str
    model: str
    text: str
    input_tokens: int  # excludes cache reads and writes, as Anthropic reports it
    output_tokens: int
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    finish_reason: str = "stop"


def _openai_usage(reply: _Reply) -> dict[str, int]:
    """OpenAI usage object."""
    total = reply.input_tokens + reply.output_tokens
    return {"prompt_tokens": reply.input_tokens, "completion_tokens": reply.output_tokens, "total_tokens": total}


def _openai_reply(reply: _Reply) -> dict[str, Any]:
    """OpenAI chat.completion body."""
    message = {"role": "assistant", "content": reply.text}
    return {
        "id": reply.reply_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": reply.model,
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
        "usage": _openai_usage(reply),
    }


def _openai_stream(reply: _Reply) -> list[bytes]:
    """OpenAI chat.completion.chunk events, ending with usage and [DONE]."""
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish_reason: str | None = None, usage: dict[str, int] | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
        payload = {
            "id": reply.reply_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": reply.model,
            "choices": [choice],
            "usage": usage,
        }
        return _sse(payload)

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": piece}) for piece in _split_text(reply.text)]
    events.append(chunk({}, reply.finish_reason, _openai_usage(reply)))
    events.append(_sse("[DONE]"))
    return events


def _openai_error(status: int, message: str) -> dict[str, Any]:
    """OpenAI error body."""
    kind = "server_error" if status >= 500 else _error_type(status)
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


def _anthropic_usage(reply: _Reply) -> dict[str, int]:
    """Anthropic usage object (cache figures stay 0 unless the server's prompt_cache is on)."""
    return {
        "input_tokens": reply.input_tokens,
        "output_tokens": reply.output_tokens,
        "cache_read_input_tokens": reply.cache_read_tokens,
        "cache_creation_input_tokens": reply.cache_creation_tokens,
    }


def _anthropic_stop_reason(reply: _Reply) -> str:
    """Anthropic's name for how the answer ended."""
    return "max_tokens" if reply.finish_reason == "length" else "end_turn"


def _anthropic_reply(reply: _Reply) -> dict[str, Any]:
    """Anthropic Messages body."""
    return {
        "id": reply.reply_id,
        "type": "message",
        "role": "assistant",
        "model": reply.model,
        "content": [{"type": "text", "text": reply.text}],
        "stop_reason": _anthropic_stop_reason(reply),
        "stop_sequence": None,
        "usage": _anthropic_usage(reply),
    }


def _anthropic_stream(reply: _Reply) -> list[bytes]:
    """Anthropic Messages stream events, from message_start to message_stop."""
    start = {
        **_anthropic_reply(reply),
        "content": [],
        "stop_reason": None,
        "usage": {**_anthropic_usage(reply), "output_tokens": 0},
    }
    events = [
        _sse({"type": "message_start", "message": start}, "message_start"),
        _sse(
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            "content_block_start",
        ),
    ]
    for piece in _split_text(reply.text):
        delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}
        events.append(_sse(delta, "content_block_delta"))
    events.append(_sse({"type": "content_block_stop", "index": 0}, "content_block_stop"))
    finish = {
        "type": "message_delta",
        "delta": {"stop_reason": _anthropic_stop_reason(reply), "stop_sequence": None},
        "usage": _anthropic_usage(reply),
    }
    events.append(_sse(finish, "message_delta"))
    events.append(_sse({"type": "message_stop"}, "message_stop"))
    return events


def _anthropic_error(status: int, message: str) -> dict[str, Any]:
    """Anthropic error body."""
    return {"type": "error", "error": {"type": _error_type(status), "message": message}}


@dataclass(frozen=True)
class _Dialect:
    """How one provider endpoint renders answers, streams and errors."""

    id_prefix: str
    reply_body: Callable[[_Reply], dict[str, Any]]
    stream_events: Callable[[_Reply], list[bytes]]
    error_body: Callable[[int, str], dict[str, Any]]
    caches_prompts: bool = False  # imitates Anthropic's prompt caching when the server's prompt_cache is on


OPENAI_CHAT_PATH = "/v1/chat/completions"
ANTHROPIC_MESSAGES_PATH = "/v1/messages"
MODELS_PATH = "/v1/models"
_DIALECTS = {
    OPENAI_CHAT_PATH: _Dialect("chatcmpl-fake-", _openai_reply, _openai_stream, _openai_error),
    ANTHROPIC_MESSAGES_PATH: _Dialect(
        "msg_fake_", _anthropic_reply, _anthropic_stream, _anthropic_error, caches_prompts=True
    ),
}


class _Handler(BaseHTTPRequestHandler):
    """Turns one HTTP request into a scripted answer, fault or error."""

    server: _HTTPServer
    # One request per connection: SSE bodies end at close, and no idle keep-alive thread outlives stop().
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Stay quiet: test output should not be flooded with access logs."""

    def do_GET(self) -> None:
        """Serve the model list; everything else is unknown."""
        record = self._record({})
        if self._route() == MODELS_PATH:
            self._send(record, 200, self.server.fake.models_body())
        else:
            self._send_not_found(record)

    def do_POST(self) -> None:
        """Serve a chat completion or a message, per the script."""
        body = self._read_json_object()
        dialect = _DIALECTS.get(self._route())
        record = self._record(body or {})
        if dialect is None:
            self._send_not_found(record)
        elif body is None:
            self._send(record, 400, dialect.error_body(400, "fake server: request body is not a JSON object"))
        else:
            self._answer(dialect, record)

    def _route(self) -> str:
        """Request path without its query string (SDKs may add one)."""
        return self.path.split("?", 1)[0]

    def _read_json_object(self) -> dict[str, Any] | None:
        """The request body as a JSON object, {} when empty, None when not an object."""
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not raw:
            return {}
        try:
            parsed = json.loads(raw)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None

    def _record(self, body: dict[str, Any]) -> RecordedRequest:
        """Record the request as soon as it arrives, so in-flight calls are visible too."""
        headers = {name.lower(): value for name, value in self.headers.items()}
        role = headers.get(ROLE_HEADER.lower()) or UNKNOWN_ROLE
        return self.server.fake._record(RecordedRequest(role, self._route(), headers, body))

    def _answer(self, dialect: _Dialect, record: RecordedRequest) -> None:
        """Apply the next fault, else the next answer, else the default, else 400."""
        fake = self.server.fake
        if fake.before_answer is not None:
            fake.before_answer(record)
        fault = fake._take_fault(record.role)
        if fault is not None and fault.hang is None:
            return self._send_fault(dialect, record, fault)
        # A hung request takes its answer only after the hang, so a client retry that arrives meanwhile gets it.
        if fault is not None and not fake._pause(fault.hang or 0.0):
            return fake._finish(record, 0)
        scripted = fake._take_answer(record.role)
        if scripted is None:
            message = f"fake server: no scripted answer left for role '{record.role}'"
            return self._send(record, 400, dialect.error_body(400, message))
        try:
            text = scripted.text(record) if callable(scripted.text) else scripted.text
            if isinstance(text, Answer) and isinstance(text.text, str):
                scripted, text = text, text.text
            if not isinstance(text, str):
                raise TypeError(f"responder returned {type(text).__name__}, not str or an Answer with text")
        except Exception as exc:  # a broken test responder must show up as a clear, non-retried error
            message = f"fake server: responder for role '{record.role}' failed: {exc!r}"
            return self._send(record, 400, dialect.error_body(400, message))
        if not fake._pause(fake.latency + scripted.latency):
            return fake._finish(record, 0)
        record.answer_text = text
        reply = fake._make_reply(dialect, record, text, scripted.finish_reason)
        if record.body.get("stream") is True:
            self._send_stream(record, dialect.stream_events(reply))
        else:
            self._send(record, 200, dialect.reply_body(reply))

    def _send_fault(self, dialect: _Dialect, record: RecordedRequest, fault: Fault) -> None:
        """Answer with the fault's malformed body or error status."""
        if fault.malformed:
            return self._send(record, 200, MALFORMED_BODY)
        headers = {} if fault.retry_after is None else {"retry-after": format(fault.retry_after, "g")}
        status = fault.status or 500
        self._send(record, status, dialect.error_body(status, fault.message), headers)

    def _send_not_found(self, record: RecordedRequest) -> None:
        """404 with a JSON error body."""
        self._send(record, 404, _openai_error(404, f"fake server: no route for {self.command} {record.path}"))

    def _send(
        self,
        record: RecordedRequest,
        status: int,
        payload: Mapping[str, Any] | bytes,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Send a complete JSON response, recording it first so a client never sees it before the record does."""
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.server.fake._finish(record, status)
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass  # the client gave up (its timeout fired); that is its business, not a server error

    def _send_stream(self, record: RecordedRequest, events: list[bytes]) -> None:
        """Send server-sent events one by one; the body ends when the connection closes."""
        self.server.fake._finish(record, 200)
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            interval = self.server.fake.stream_intervals.get(record.role, 0.0)
            for number, event in enumerate(events):
                if number and interval:
                    time.sleep(interval)
                self.wfile.write(event)
                self.wfile.flush()
        except OSError:
            pass


class _HTTPServer(ThreadingHTTPServer):
    """Threaded HTTP server that knows its FakeLLMServer."""

    daemon_threads = True  # a hung request must never keep the process alive
    request_queue_size = 128  # parallel provers connect at once; a short backlog would stall them on SYN retries

    def __init__(self, address: tuple[str, int], fake: FakeLLMServer) -> None:
        self.fake = fake
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        """Bind without HTTPServer's getfqdn(), which can wait on a reverse DNS lookup."""
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), int(self.server_address[1])

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Ignore clients that hung up; report real handler bugs."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FakeLLMServer(LoopbackServer):
    """Fake model provider: scripted answers and faults per agent role, with every request recorded.

    With prompt_cache on, the Anthropic endpoint imitates Anthropic's prompt caching: the prefix of
    a request up to a block marked cache_control (order: tools, system, messages) is written to the
    cache, per model, unless it is shorter than min_cacheable_tokens. The longest cached prefix that
    ends at a breakpoint, or up to CACHE_LOOKBACK_BLOCKS blocks before one, is read; what lies
    between it and the last breakpoint is written. input_tokens counts the tokens after that, so
    input + read + creation is always the input estimate the server reports without caching.
    Entries never expire (clear_prompt_cache() forgets them); the OpenAI endpoint never caches.
    """

    name = "fake LLM server"

    def __init__(
        self,
        latency: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        models: Sequence[str] = DEFAULT_MODELS,
        prompt_cache: bool = False,
        min_cacheable_tokens: int = DEFAULT_MIN_CACHEABLE_TOKENS,
    ) -> None:
        self.latency = latency
        self.host = host
        self.models = list(models)
        self.prompt_cache = prompt_cache
        self.min_cacheable_tokens = min_cacheable_tokens
        self.requests: list[RecordedRequest] = []
        #: Called with each request before it is answered, in the handler's thread: a test acts
        #: while a call is in flight (the job making it waits), e.g. pauses the run there.
        self.before_answer: Callable[[RecordedRequest], None] | None = None
        #: Seconds between the events of a role's streamed answers (default: none, all at once),
        #: so a client shows the pieces arriving one by one.
        self.stream_intervals: dict[str, float] = {}
        self._requested_port = port
        self._port: int | None = None
        self._lock = threading.Lock()
        self._answers: dict[str, deque[Answer]] = {}
        self._faults: dict[str | None, deque[Fault]] = {}
        self._defaults: dict[str | None, Answer] = {}
        self._cached_prefixes: dict[str, set[str]] = {}  # per model, keys of the prompt prefixes cached
        self._reply_numbers = itertools.count(1)
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def enqueue(self, role: str, *answers: ScriptedAnswer) -> None:
        """Append answers (text, Answer, or responder callable) to the role's FIFO queue."""
        normalised = [_as_answer(answer) for answer in answers]
        with self._lock:
            self._answers.setdefault(role, deque()).extend(normalised)

    def set_default(self, role: str | None, responder: Responder | str | None) -> None:
        """Answer with responder when the role's queue is empty (role None: any role; responder None: clear)."""
        with self._lock:
            if responder is None:
                self._defaults.pop(role, None)
            else:
                self._defaults[role] = _as_answer(responder)

    def inject_fault(self, role: str | None, *faults: Fault) -> None:
        """Queue faults served before any answer, one per request (role None: the next request of any role)."""
        for fault in faults:
            if not isinstance(fault, Fault):
                raise TypeError(f"inject_fault takes Fault objects, not {type(fault).__name__}")
        with self._lock:
            self._faults.setdefault(role, deque()).extend(faults)

    def pending(self, role: str | None = None) -> int:
        """How many scripted answers remain queued for the role (None: all roles)."""
        with self._lock:
            if role is None:
                return sum(len(queue) for queue in self._answers.values())
            return len(self._answers.get(role, ()))

    def calls(self, role: str) -> list[RecordedRequest]:
        """Recorded requests of one role, oldest first."""
        with self._lock:
            return [request for request in self.requests if request.role == role]

    def clear_prompt_cache(self) -> None:
        """Forget every cached prompt prefix, as if the cache entries had expired."""
        with self._lock:
            self._cached_prefixes.clear()

    def apply_script(self, script: Mapping[str, Any]) -> None:
        """Apply a script dict: {"latency", "models", "prompt_cache", "min_cacheable_tokens",
        "answers": {role: [...]}, "faults": {role or "*": [...]}}."""
        unknown = set(script) - {"latency", "models", "prompt_cache", "min_cacheable_tokens", "answers", "faults"}
        if unknown:
            raise ValueError(f"unknown script keys: {sorted(unknown)}")
        if "latency" in script:
            self.latency = float(script["latency"])
        if "models" in script:
            self.models = [str(model) for model in script["models"]]
        if "prompt_cache" in script:
            if not isinstance(script["prompt_cache"], bool):
                raise ValueError(f"script key prompt_cache must be true or false, not {script['prompt_cache']!r}")
            self.prompt_cache = script["prompt_cache"]
        if "min_cacheable_tokens" in script:
            self.min_cacheable_tokens = int(script["min_cacheable_tokens"])
        for role, answers in script.get("answers", {}).items():
            self.enqueue(role, *(_answer_from_script(answer) for answer in answers))
        for role, faults in script.get("faults", {}).items():
            target = None if role == ANY_ROLE_IN_SCRIPT else role
            self.inject_fault(target, *(_fault_from_script(fault) for fault in faults))

    @classmethod
    def load_script(cls, path: str | Path, **options: Any) -> FakeLLMServer:
        """A new (not yet started) server configured from a JSON script file; options go to the constructor."""
        server = cls(**options)
        server.apply_script(json.loads(Path(path).read_text(encoding="utf-8")))
        return server

    def _make_server(self) -> ThreadingHTTPServer:
        return _HTTPServer((self.host, self._requested_port), self)

    def start(self) -> FakeLLMServer:
        """Serve in a daemon thread; port 0 picks a free port."""
        super().start()
        assert self._httpd is not None
        self._port = self._httpd.server_port
        return self

    @property
    def port(self) -> int:
        """The bound port (known once started)."""
        if self._port is None:
            raise RuntimeError("fake LLM server has not been started")
        return self._port

    @property
    def openai_base_url(self) -> str:
        """Base URL for OpenAI clients."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """Base URL for Anthropic clients (they add /v1 themselves)."""
        return f"http://{self.host}:{self.port}"

    def models_body(self) -> dict[str, Any]:
        """OpenAI-shaped model list."""
        data = [{"id": model, "object": "model", "created": 0, "owned_by": "lemmata-fake"} for model in self.models]
        return {"object": "list", "data": data}

    def _record(self, request: RecordedRequest) -> RecordedRequest:
        """Append a request to the record."""
        with self._lock:
            self.requests.append(request)
        return request

    def _finish(self, request: RecordedRequest, status: int) -> None:
        """Mark a recorded request as answered with status."""
        with self._lock:
            request.answered_status = status
            request.finished_at = time.monotonic()

    def _take_fault(self, role: str) -> Fault | None:
        """Pop the next fault for the role, its own queue before the any-role queue."""
        with self._lock:
            for key in (role, None):
                queue = self._faults.get(key)
                if queue:
                    return queue.popleft()
        return None

    def _take_answer(self, role: str) -> Answer | None:
        """Pop the role's next answer (under the lock, so each is given once), else its default."""
        with self._lock:
            queue = self._answers.get(role)
            if queue:
                return queue.popleft()
            return self._defaults.get(role) or self._defaults.get(None)

    def _pause(self, seconds: float) -> bool:
        """Sleep up to seconds; False if stop() cut it short (Event.wait wakes at once on stop)."""
        return seconds <= 0 or not self._stopping.wait(seconds)

    def _use_prompt_cache(self, model: str, body: Mapping[str, Any]) -> tuple[int, int]:
        """(tokens read, tokens written) for the request's cacheable prefixes, remembering those written."""
        if not self.prompt_cache:
            return 0, 0
        prefixes = cache_prefixes(body)
        marks = [
            i for i, prefix in enumerate(prefixes) if prefix.breakpoint and prefix.tokens >= self.min_cacheable_tokens
        ]
        if not marks:
            return 0, 0
        looked_at = {i for mark in marks for i in range(max(0, mark - CACHE_LOOKBACK_BLOCKS), mark + 1)}
        with self._lock:  # check and remember at once, so that of two equal requests exactly one writes
            cached = self._cached_prefixes.setdefault(model, set())
            read = max((prefixes[i].tokens for i in looked_at if prefixes[i].key in cached), default=0)
            cached.update(prefixes[i].key for i in marks)
        return read, prefixes[marks[-1]].tokens - read

    def _make_reply(
        self, dialect: _Dialect, request: RecordedRequest, text: str, finish_reason: str = "stop"
    ) -> _Reply:
        """Build the reply with deterministic id and token estimates, prompt-cache figures included."""
        with self._lock:
            number = next(self._reply_numbers)
        model = str(request.body.get("model") or self.models[0])
        read, creation = self._use_prompt_cache(model, request.body) if dialect.caches_prompts else (0, 0)
        with self._lock:
            request.cache_read_tokens, request.cache_creation_tokens = read, creation
        input_tokens = estimate_tokens(prompt_text(request.body)) - read - creation
        return _Reply(
            f"{dialect.id_prefix}{number}",
            model,
            text,
            input_tokens,
            estimate_tokens(text),
            read,
            creation,
            finish_reason,
        )


def _answer_from_script(item: Any) -> Answer:
    """An answer from a script entry: "text" or {"text": ..., "latency": ..., "finish_reason": "length"}."""
    if isinstance(item, str):
        return Answer(item)
    if (
        isinstance(item, dict)
        and isinstance(item.get("text"), str)
        and set(item) <= {"text", "latency", "finish_reason"}
    ):
        return Answer(item["text"], float(item.get("latency", 0.0)), str(item.get("finish_reason", "stop")))
    raise ValueError(
        f"bad scripted answer {item!r}: expected a string or "
        "{'text': ..., 'latency': ..., 'finish_reason': 'stop' or 'length'}"
    )


def _fault_from_script(item: Any) -> Fault:
    """A fault from a script entry such as {"status": 429, "message": ...}, {"hang": 5} or {"malformed": true}."""
    try:
        return Fault(**item)
    except TypeError as exc:
        raise ValueError(f"bad scripted fault {item!r}: {exc}") from exc


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description="Run the fake LLM provider on 127.0.0.1 until SIGTERM/SIGINT.")
    parser.add_argument("--script", type=Path, help="JSON script of answers, faults and latency")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: any free port)")
    parser.add_argument("--latency", type=float, help="seconds added to every answer (overrides the script)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Serve in the foreground until SIGTERM or SIGINT, then exit 0."""
    args = _parse_args(argv)
    server = FakeLLMServer.load_script(args.script, port=args.port) if args.script else FakeLLMServer(port=args.port)
    if args.latency is not None:
        server.latency = args.latency
    stop_requested = threading.Event()
    for signal_number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signal_number, lambda *_: stop_requested.set())
    with server:
        print(f"fake LLM server listening on {server.openai_base_url}", flush=True)
        # Wake now and then so the signal handler always gets to run in the main thread.
        while not stop_requested.wait(0.1):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
