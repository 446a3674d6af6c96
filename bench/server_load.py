"""Server under load: status polls of a run in progress, simultaneous rewrites, one 202 of 100.

A data directory gets one completed run (the real `lemmata prove` of the even-sum session against
the fake model and search services), copied under new session ids as needed; a second `lemmata
prove` is held in progress (the fake model holds its calls after the first few); the real server,
`lemmata serve`, runs as a subprocess with the same environment. Then, every latency measured by
the client, wall clock, from sending the request to reading the whole answer:

- status poll: one client 5 x POLLS times (the service time), then CLIENTS clients at once, each POLLS
  times GET /api/runs/{id} of the run in progress (every answer must be 200 and say "running");
- slow headers: CLIENTS clients poll as before while another client holds HALF_OPEN connections
  (default 2,000), each with half a request sent and no token: p99 must stay under 500 ms and the
  server's log grow by less than 1 MB (issue 53; server/connections.py);
- one 202 of 100: BURST requests POST /api/runs/{id}/rewrite on one completed run, released together
  by a barrier: exactly one may be 202, every other one 409 with an error;
- rewrites of many runs: CLIENTS clients, released together, each POST /api/runs/{copy}/rewrite on
  a completed copy of its own, while the run is still in progress: as many are 202 as the server
  has places (MAX_DRIVEN_RUNS, 4, less the one rewrite it drives already), every other one 429
  with its run untouched;
- status poll again, while the rewrite processes those requests started are starting up.

In a rewrite burst each client opens its connection (one GET) before the barrier, so that the
requests arrive together; a status-poll client's first poll includes its connect. Percentiles are
numpy's (linear between order statistics: with 50 samples, p99 lies between the two slowest). The
rewrite processes the server starts hold at their first model call (so that fifty rewrites do not
fight for the CPU to the end); at the end the server is stopped (it stops its rewrites, which
pause), the run in progress is stopped, the held calls are released, and every process whose
environment names this data directory must be gone (stragglers are killed and reported). Prints a
table; exits 1 if the one-of-100 check fails (also: its run's revisions/ must hold one request and
its chat one rewrite_requested marker), a status poll fails, the many-runs burst takes more or
fewer places than the server has, an accepted rewrite never reaches its first model call, or a
process was left.

Usage: python bench/server_load.py [--clients 50] [--polls 20] [--burst 100] [--hold-after 10] [--half-open 2000]
"""

from __future__ import annotations

import argparse
import os
import resource
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np
from _common import search_settings  # bench/ is the script directory, hence on sys.path

from lemmata import layout
from lemmata.artifacts import write_artifact
from lemmata.run.qa_history import read_history
from lemmata.run.record import load_record
from lemmata.server.supervisor import MAX_DRIVEN_RUNS
from support import even_sum_session
from support.fake_llm_server import FakeLLMServer, RecordedRequest
from support.fake_search_servers import FakeSearchServers

INSTRUCTIONS = "Stress the parity argument and name the ideal 2Z explicitly"
#: Files of a run directory that name its session id (besides logs, which are history).
ID_FILES = ("run.json", "config.yaml", "input.json", "research_output.json")
#: Variables of the developer's shell that must not reach the lemmata processes.
DROPPED_PREFIXES = ("LLM_", "LEMMATA_", "MAX_TOKENS_", "VENDORA", "ANTHROPIC", "COMPAT", "VENDORX", "SEARCH_")
PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
PROVE_TIMEOUT = 600.0
READY_TIMEOUT = 60.0
STOP_TIMEOUT = 180.0  # the server and every process of the data directory, after the held calls are let go


# --- the model calls we hold ---------------------------------------------------------------------


class Hold:
    """A FakeLLMServer `before_answer` hook: the first `after` calls are answered, later ones wait
    until `release()`. `after=None` answers everything (until `hold_from_now()`)."""

    def __init__(self, after: int | None = None) -> None:
        self.after = after
        self.calls = 0
        self.waiting = 0
        self._lock = threading.Lock()
        self._released = threading.Event()

    def hold_from_now(self) -> None:
        with self._lock:
            self.after = self.calls

    def release(self) -> None:
        self._released.set()

    def __call__(self, request: RecordedRequest) -> None:
        with self._lock:
            self.calls += 1
            held = self.after is not None and self.calls > self.after and not self._released.is_set()
            self.waiting += held
        if held:
            self._released.wait()
            with self._lock:
                self.waiting -= 1


# --- the data directory --------------------------------------------------------------------------

#: The API token the measured server requires (LEMMATA_API_TOKEN), sent by every client here.
API_TOKEN = secrets.token_urlsafe(32)


def lemmata_environment(home: Path, llm: FakeLLMServer, search: FakeSearchServers) -> dict[str, str]:
    """This process's environment minus every lemmata, model, credential and proxy variable, with
    LEMMATA_HOME at `home`, the API token, the local backend at `llm` and the search tools at `search`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(DROPPED_PREFIXES) and k not in PROXIES}
    env.update(
        {
            "LEMMATA_HOME": str(home),
            "LEMMATA_API_TOKEN": API_TOKEN,
            "LLM_BACKEND": "local",
            "LOCAL_LLM_BASE_URL": llm.openai_base_url,
            "LLM_RETRY_WAIT_MIN": "0",
            "LLM_RETRY_WAIT_MAX": "0.01",
            "TEXMFVAR": str(home / "texmf-var"),
            **search_settings(search),
        }
    )
    return env


def start_lemmata(args: list[str], env: dict[str, str], cwd: Path, log: Path) -> subprocess.Popen:
    """`lemmata ARGS` in a session of its own (as from a terminal), its output in `log`."""
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "lemmata", *args],
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def recorded_runs(home: Path) -> list[Path]:
    return sorted(path.parent for path in (home / "runs").glob(f"*/{layout.RUN_RECORD}"))


def make_completed_run(home: Path, env: dict[str, str], workdir: Path) -> Path:
    started = time.monotonic()
    prove = start_lemmata(
        ["prove", even_sum_session.TASK, "-o", str(home / "out")], env, workdir, workdir / "completed_prove.log"
    )
    try:
        returncode = prove.wait(timeout=PROVE_TIMEOUT)
    except subprocess.TimeoutExpired:
        prove.kill()
        raise
    (run_dir,) = recorded_runs(home)
    if returncode != 0 or load_record(run_dir).status != "completed":
        tail = (workdir / "completed_prove.log").read_text(errors="replace")[-2000:]
        sys.exit(f"the completed run failed (exit {returncode}):\n{tail}")
    print(f"completed run {run_dir.name}: {time.monotonic() - started:.1f} s", flush=True)
    return run_dir


def replace_keeping_mtime(path: Path, old: str, new: str) -> None:
    stat = path.stat()
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def copy_run(run_dir: Path, session_id: str, output_dir: Path) -> Path:
    """The completed run under another session id: its directory, every file that names the id
    (the record, the workflow config, the task input, the research output) and its knowledge graph,
    modification times kept (so Snakemake sees the same finished work), its own output folder."""
    home = run_dir.parent.parent
    target = home / "runs" / session_id
    shutil.copytree(run_dir, target, symlinks=True)
    (target / ".lemmata.lock").unlink(missing_ok=True)
    for name in ID_FILES:
        if (target / name).exists():
            replace_keeping_mtime(target / name, run_dir.name, session_id)
    record = target / layout.RUN_RECORD
    stat = record.stat()
    write_artifact(record, load_record(target).model_copy(update={"output_dir": str(output_dir)}))
    os.utime(record, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    graph = home / "memory" / "knowledge_graph" / f"{run_dir.name}.json"
    if graph.exists():
        shutil.copy2(graph, graph.with_name(f"{session_id}.json"))
        replace_keeping_mtime(graph.with_name(f"{session_id}.json"), run_dir.name, session_id)
    return target


# --- processes ------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def processes_of(home: Path) -> dict[int, str]:
    """Live processes whose environment has LEMMATA_HOME=`home` or whose command line names it
    (every lemmata, Snakemake and job process of the data directory), with their command lines."""
    marker, found = f"LEMMATA_HOME={home}".encode(), {}
    for proc in Path("/proc").glob("[0-9]*"):
        pid = int(proc.name)
        if pid == os.getpid():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:  # ended meanwhile, or not ours to read
            continue
        if state != "Z" and (marker in environ.split(b"\0") or str(home).encode() in cmdline):
            found[pid] = cmdline.replace(b"\0", b" ").decode(errors="replace").strip()
    return found


def kill_all(pids: Iterator[int] | list[int]) -> None:
    """SIGSTOP every one first (none can start a replacement meanwhile), then SIGKILL."""
    pids = list(pids)
    for signum in (signal.SIGSTOP, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                pass


def wait_for(condition: Callable[[], bool], timeout: float, interval: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(interval)
    return True


# --- the measurements -------------------------------------------------------------------------


@dataclass
class Sample:
    seconds: float
    status: int  # 0: no answer (the exception is in `error`)
    error: str = ""


@dataclass
class Measurement:
    name: str
    samples: list[Sample] = field(default_factory=list)
    wall: float = 0.0  # from the barrier's release to the last answer read
    started: float = 0.0  # time.perf_counter() at the barrier's release
    failures: list[str] = field(default_factory=list)

    def codes(self) -> str:
        counts = Counter(sample.status for sample in self.samples)
        return " ".join(f"{count}x{code or 'error'}" for code, count in sorted(counts.items()))


def client(base_url: str) -> httpx.Client:
    return httpx.Client(
        base_url=base_url, headers={"Authorization": f"Bearer {API_TOKEN}"}, timeout=120.0, trust_env=False
    )


def concurrently(
    count: int, work: Callable[[int, httpx.Client, threading.Barrier], list[Sample]], base_url: str
) -> tuple[list[list[Sample]], float, float]:
    """`work(i, client, barrier)` in `count` threads, each with its own connection; the barrier lets
    them go together. Returns each thread's samples, the barrier's release (perf_counter) and the
    wall time from there to the last answer."""
    barrier = threading.Barrier(count + 1)
    results: list[list[Sample]] = [[] for _ in range(count)]

    def run(i: int) -> None:
        try:
            with client(base_url) as http:
                results[i] = work(i, http, barrier)
        except Exception as exc:  # a client that fails before or at the barrier: shown, and nobody waits for it
            results[i] = [Sample(0.0, 0, f"{type(exc).__name__}: {exc}")]
            barrier.abort()

    threads = [threading.Thread(target=run, args=(i,), name=f"client-{i}") for i in range(count)]
    for thread in threads:
        thread.start()
    try:
        barrier.wait(timeout=120)  # every client connected
    except threading.BrokenBarrierError:
        pass
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    return results, started, time.perf_counter() - started


def timed(send: Callable[[], httpx.Response], check: Callable[[httpx.Response], str] | None = None) -> Sample:
    started = time.perf_counter()
    try:
        response = send()
        response.read()
    except httpx.HTTPError as exc:
        return Sample(time.perf_counter() - started, 0, f"{type(exc).__name__}: {exc}")
    seconds = time.perf_counter() - started
    return Sample(seconds, response.status_code, check(response) if check else "")


def status_poll(name: str, base_url: str, run_id: str, clients: int, polls: int) -> Measurement:
    def check(response: httpx.Response) -> str:
        if response.status_code != 200:
            return f"{response.status_code}: {response.text[:200]}"
        body = response.json()
        return "" if body.get("id") == run_id and body.get("status") == "running" else f"body {str(body)[:200]}"

    def work(_: int, http: httpx.Client, barrier: threading.Barrier) -> list[Sample]:
        # No connection opened before the barrier: under load, waiting there could leave it idle past
        # the server's keep-alive timeout (uvicorn: 5 s), and a reset would be ours, not the server's.
        # So the first poll of each client includes its TCP connect, as a browser's would.
        barrier.wait(timeout=120)
        samples, answered = [], None
        for _ in range(polls):
            sample = timed(lambda: http.get(f"/api/runs/{run_id}"), check)
            if sample.status == 0 and answered is not None:
                sample.error += f" (its connection idle {time.perf_counter() - sample.seconds - answered:.2f} s)"
            samples.append(sample)
            answered = time.perf_counter()
        return samples

    results, started, wall = concurrently(clients, work, base_url)
    measurement = Measurement(name, [s for samples in results for s in samples], wall, started)
    errors = Counter(sample.error for sample in measurement.samples if sample.error)
    measurement.failures += [f"{count} polls: {error}" for error, count in errors.items()]
    return measurement


#: What a client that never finishes its request sends: the start of its headers.
HALF_A_REQUEST = b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
#: The targets of the slow-header phase (issue 53).
SLOW_HEADERS_P99_MS, SLOW_HEADERS_LOG_BYTES = 500.0, 1_000_000


def under_slow_headers(
    name: str, base_url: str, port: int, run_id: str, half_open: int, clients: int, polls: int, log: Path
) -> Measurement:
    """Status polls while another client holds `half_open` connections, each with half a request
    sent (no token needed: the token is read once the headers are complete). Fails when a poll
    fails, p99 reaches SLOW_HEADERS_P99_MS or the server's log grows by SLOW_HEADERS_LOG_BYTES."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 2 * half_open + 1024)), hard))
    before = log.stat().st_size
    sockets: list[socket.socket] = []
    try:
        for _ in range(half_open):
            connection = socket.create_connection(("127.0.0.1", port), timeout=10)
            connection.sendall(HALF_A_REQUEST)
            sockets.append(connection)
        measurement = status_poll(name, base_url, run_id, clients, polls)
    finally:
        for connection in sockets:
            connection.close()
    grown = log.stat().st_size - before
    ms = sorted(sample.seconds * 1000 for sample in measurement.samples)
    p99 = float(np.percentile(ms, 99)) if ms else float("inf")
    if p99 >= SLOW_HEADERS_P99_MS:
        measurement.failures.append(f"p99 {p99:.0f} ms with {half_open} half-open connections (target < 500 ms)")
    if grown >= SLOW_HEADERS_LOG_BYTES:
        measurement.failures.append(f"the server's log grew by {grown:,} bytes (target < 1 MB)")
    print(f"{name}: the server's log grew by {grown:,} bytes", flush=True)
    return measurement


def rewrite_burst(name: str, base_url: str, run_ids: list[str]) -> tuple[Measurement, list[httpx.Response | None]]:
    """One POST /rewrite per id, all released together; the answers in the order of `run_ids`."""
    answers: list[httpx.Response | None] = [None] * len(run_ids)

    def work(i: int, http: httpx.Client, barrier: threading.Barrier) -> list[Sample]:
        http.get(f"/api/runs/{run_ids[i]}")  # the connection, before the barrier
        barrier.wait(timeout=120)

        def send() -> httpx.Response:
            answers[i] = http.post(f"/api/runs/{run_ids[i]}/rewrite", json={"instructions": INSTRUCTIONS})
            return answers[i]

        return [timed(send)]

    results, started, wall = concurrently(len(run_ids), work, base_url)
    return Measurement(name, [s for samples in results for s in samples], wall, started), answers


def check_places_taken(
    measurement: Measurement, answers: list[httpx.Response | None], run_dirs: list[Path], places: int
) -> int:
    """Of simultaneous rewrites of different runs, as many are 202 as the server has places
    (MAX_DRIVEN_RUNS less the runs it drives already), each with its request written; every
    other one is a 429 with an error and leaves its run as it was. The number of 202s."""
    accepted = refused = 0
    for run_dir, answer in zip(run_dirs, answers):
        requested = (run_dir / "revisions" / "v2.json").is_file()
        if answer is not None and answer.status_code == 202:
            accepted += 1
            if not requested:
                measurement.failures.append(f"{run_dir.name}: 202 without revisions/v2.json")
        elif answer is not None and answer.status_code == 429 and "error" in answer.json():
            refused += 1
            if requested:
                measurement.failures.append(f"{run_dir.name}: 429, and yet revisions/v2.json was written")
        else:
            measurement.failures.append(
                f"{run_dir.name}: " + (f"{answer.status_code} {answer.text[:200]}" if answer else "no answer")
            )
    if accepted != min(places, len(run_dirs)):
        measurement.failures.append(f"{accepted} rewrites accepted where the server had {places} places")
    return accepted


def check_one_accepted(measurement: Measurement, answers: list[httpx.Response | None], run_dir: Path) -> None:
    codes = Counter(answer.status_code if answer is not None else 0 for answer in answers)
    if codes[202] != 1 or codes[409] != len(answers) - 1:
        measurement.failures.append(f"expected 1x202 and {len(answers) - 1}x409, got {dict(codes)}")
    for answer in answers:
        if answer is not None and answer.status_code == 409 and "error" not in answer.json():
            measurement.failures.append(f"a 409 without an error: {answer.text[:200]}")
            break
    requests = sorted(path.name for path in (run_dir / "revisions").glob("*.json"))
    markers = [r for r in read_history(run_dir) if r.marker == "rewrite_requested"]
    if requests != ["v2.json"] or len(markers) != 1:
        measurement.failures.append(f"revisions/ holds {requests}, the chat {len(markers)} rewrite_requested markers")


# --- the table ------------------------------------------------------------------------------------


def print_table(measurements: list[Measurement]) -> None:
    header = f"{'measurement':<42} {'n':>5} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'wall s':>7}  status codes"
    print(header + "\n" + "-" * len(header))
    for m in measurements:
        ms = np.array([sample.seconds for sample in m.samples]) * 1000.0
        p50, p99 = np.percentile(ms, [50, 99]) if len(ms) else (float("nan"), float("nan"))
        peak = ms.max() if len(ms) else float("nan")
        print(f"{m.name:<42} {len(ms):>5} {p50:>8.1f} {p99:>8.1f} {peak:>8.1f} {m.wall:>7.2f}  {m.codes()}")
    for m in measurements:
        for failure in m.failures:
            print(f"FAILED {m.name}: {failure}")


# --- the world ------------------------------------------------------------------------------------


@contextmanager
def data_directory(keep: Path | None) -> Iterator[Path]:
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        yield keep
        return
    with tempfile.TemporaryDirectory(prefix="lemmata-server-load-") as tmp:
        yield Path(tmp)


def stop_everything(
    server: subprocess.Popen | None, prove: subprocess.Popen | None, holds: list[Hold], home: Path
) -> list[str]:
    """The server first (it terminates its rewrites, which ask for a pause and wait for their
    running job), then the run in progress (the same way), then the held model calls are let go so
    those jobs end and every process pauses and exits. What is still there after STOP_TIMEOUT is
    killed and reported, with `ps`."""
    problems = []
    if server is not None and server.poll() is None:
        server.send_signal(signal.SIGTERM)  # uvicorn's graceful shutdown: the lifespan stops the rewrites
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            problems.append("the server did not exit within 30 s of SIGTERM")
            kill_all([server.pid])
            server.wait()
    if prove is not None and prove.poll() is None:
        prove.send_signal(signal.SIGTERM)  # the driver asks for a pause
    for hold in holds:
        hold.release()
    if not wait_for(lambda: not processes_of(home), STOP_TIMEOUT, 0.5):
        left = processes_of(home)
        ps = subprocess.run(
            ["ps", "-o", "pid,ppid,pgid,stat,etime,args", "-p", ",".join(map(str, left))],
            capture_output=True,
            text=True,
        ).stdout
        problems.append(f"{len(left)} processes still running {STOP_TIMEOUT:.0f} s after the stop, killed:\n{ps}")
        kill_all(left)
        wait_for(lambda: not processes_of(home), 10)
    if prove is not None:
        try:
            prove.wait(timeout=10)
        except subprocess.TimeoutExpired:
            problems.append("the run in progress did not exit")
    left = processes_of(home)
    if left:
        problems.append(f"{len(left)} processes survive even SIGKILL: {left}")
    return problems


def ps_lines(needle: str) -> list[str]:
    """`ps` lines (every process, full command line) that contain `needle`, ps itself excepted."""
    listing = subprocess.run(["ps", "-eo", "pid,ppid,stat,args", "--no-headers"], capture_output=True, text=True).stdout
    return [line for line in listing.splitlines() if needle in line and " ps -eo " not in line]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--clients", type=int, default=50, help="concurrent status-poll clients, and rewrites of the burst"
    )
    parser.add_argument("--polls", type=int, default=20, help="status polls per client")
    parser.add_argument("--burst", type=int, default=100, help="simultaneous rewrite requests on one run")
    parser.add_argument(
        "--half-open",
        type=int,
        default=2000,
        help="connections another client holds with half a request sent, during one status-poll phase (0: none)",
    )
    parser.add_argument(
        "--hold-after",
        type=int,
        default=10,
        help="model calls the run in progress makes before its next one is held (10: in the theory stage)",
    )
    parser.add_argument(
        "--start-timeout",
        type=float,
        default=300.0,
        help="seconds the accepted rewrites get to reach their first model call",
    )
    parser.add_argument(
        "--workdir", type=Path, help="keep the data directory and the logs here (default: a temporary one)"
    )
    args = parser.parse_args()

    failed = False
    with data_directory(args.workdir) as workdir, ExitStack() as stack:
        workdir = workdir.resolve()
        home = workdir / "home"
        rewrites_hold, live_hold = Hold(), Hold(after=args.hold_after)
        llm = stack.enter_context(FakeLLMServer())  # the completed run, its copies and their rewrites
        live_llm = stack.enter_context(FakeLLMServer())  # the run in progress
        for fake, hold in ((llm, rewrites_hold), (live_llm, live_hold)):
            even_sum_session.install(fake)
            fake.before_answer = hold
        search = stack.enter_context(FakeSearchServers())
        env = lemmata_environment(home, llm, search)

        completed = make_completed_run(home, env, workdir)
        copies = [
            copy_run(completed, f"{completed.name}-c{i:03d}", home / "out" / f"c{i:03d}")
            for i in range(args.clients + 1)
        ]
        burst_run, own_copies = copies[0], copies[1:]
        print(f"{len(copies)} copies of it", flush=True)
        rewrites_hold.hold_from_now()  # from here on, a rewrite holds at its first model call

        server = prove = None
        try:
            known = {run_dir.name for run_dir in recorded_runs(home)}
            prove = start_lemmata(
                ["prove", even_sum_session.TASK, "-o", str(home / "out" / "live")],
                lemmata_environment(home, live_llm, search),
                workdir,
                workdir / "live_prove.log",
            )
            if not wait_for(lambda: live_hold.waiting > 0 or prove.poll() is not None, PROVE_TIMEOUT):
                sys.exit("the run in progress never reached its held call")
            (live,) = [run_dir for run_dir in recorded_runs(home) if run_dir.name not in known]
            if prove.poll() is not None or load_record(live).status != "running":
                sys.exit(f"the run in progress is not running: {(workdir / 'live_prove.log').read_text()[-2000:]}")
            print(f"run in progress {live.name}: holding at model call {args.hold_after + 1}", flush=True)

            port = free_port()
            base_url = f"http://127.0.0.1:{port}"
            with open(workdir / "server.log", "ab") as log:
                server = subprocess.Popen(
                    [sys.executable, "-m", "lemmata", "serve", "--port", str(port)],
                    env=env,
                    cwd=workdir,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )

            def ready() -> bool:
                if server.poll() is not None:
                    sys.exit(f"the server exited: {(workdir / 'server.log').read_text()[-2000:]}")
                try:
                    return (
                        httpx.get(
                            base_url + "/api/runs",
                            headers={"Authorization": f"Bearer {API_TOKEN}"},
                            trust_env=False,
                            timeout=2,
                        ).status_code
                        == 200
                    )
                except httpx.HTTPError:
                    return False

            if not wait_for(ready, READY_TIMEOUT):
                sys.exit("the server did not answer within a minute")

            measurements = [
                status_poll(f"status poll (1 client x {args.polls * 5})", base_url, live.name, 1, args.polls * 5),
                status_poll(
                    f"status poll ({args.clients} clients x {args.polls})",
                    base_url,
                    live.name,
                    args.clients,
                    args.polls,
                ),
            ]
            if args.half_open:
                measurements.append(
                    under_slow_headers(
                        f"status poll, {args.half_open:,} half-open connections",
                        base_url,
                        port,
                        live.name,
                        args.half_open,
                        args.clients,
                        args.polls,
                        workdir / "server.log",
                    )
                )
            one, answers = rewrite_burst(
                f"rewrite, {args.burst} at once on one run", base_url, [burst_run.name] * args.burst
            )
            check_one_accepted(one, answers, burst_run)
            measurements.append(one)
            many, answers = rewrite_burst(
                f"rewrite, {len(own_copies)} at once, one run each", base_url, [run_dir.name for run_dir in own_copies]
            )
            # The burst run's rewrite holds one place (the run in progress is the CLI's, not the server's).
            accepted = check_places_taken(many, answers, own_copies, MAX_DRIVEN_RUNS - 1)
            measurements.append(many)
            driven = 1 + accepted
            measurements.append(
                status_poll(f"status poll, {driven} rewrites starting", base_url, live.name, args.clients, args.polls)
            )
            started = wait_for(lambda: rewrites_hold.waiting >= driven, args.start_timeout, 0.2)
            started_line = (
                f"rewrites at their first model call: {rewrites_hold.waiting}/{driven}, "
                f"{time.perf_counter() - many.started:.1f} s after the burst of {len(own_copies)}"
            )
            if not started:
                many.failures.append(started_line + f" (waited {args.start_timeout:.0f} s)")
            if load_record(live).status != "running" or prove.poll() is not None:
                measurements[-1].failures.append("the run in progress was no longer running at the end")
        finally:
            problems = stop_everything(server, prove, [rewrites_hold, live_hold], home)
        leftovers = ps_lines(str(home)) + [f"{pid} {cmd}" for pid, cmd in processes_of(home).items()]

        print()
        print_table(measurements)
        print(started_line)
        for problem in problems:
            print(f"FAILED clean-up: {problem}")
        print(
            f"processes of the data directory left after the stop: {len(leftovers)}"
            + "".join(f"\n  {line}" for line in leftovers)
        )
        failed = any(m.failures for m in measurements) or bool(problems) or bool(leftovers)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
