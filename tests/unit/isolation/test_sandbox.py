"""The sandbox of model-written tests, threat by threat: an endless loop, a 10 GB allocation,
reading an API key, opening a socket (issue 6). Each is stopped or denied and the result says
why; a normal test reports its counts. Limits are small so that each run takes a second or two.

The audit-hook policy and the stop reasons are pure functions, tested directly; the box with
real runs. Attacks written to get around the audit hook are in test_sandbox_attacks.py.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path

import pytest

from lemmata.isolation import staging
from lemmata.isolation.launcher import Guard
from lemmata.isolation.sandbox import Limits, run_python, stop_reason
from lemmata.stages.experiment.counts import read_counts

QUICK = Limits(wall_seconds=10, cpu_seconds=1, memory_bytes=512 << 20, file_bytes=1 << 20)
SECRET = "sk-fake-test-0123456789"


class OneShotServer:
    """A TCP server on 127.0.0.1 of the test's own network namespace, counting connections."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.socket.settimeout(0.2)
        self.port = self.socket.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.socket.accept()
            except OSError:
                continue
            self.connections += 1
            connection.close()

    def __enter__(self) -> OneShotServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.socket.close()


# =========================================================================== a normal test


def test_a_normal_test_reports_its_violation_rate() -> None:
    code = (
        "import json, numpy as np\nrng = np.random.default_rng(7)\nx = rng.random(4000)\n"
        "print('sampling done')\n"
        "print(json.dumps({'trials': 4000, 'violations': int((x > 0.995).sum())}))\n"
    )
    result = run_python(code, QUICK)
    assert (result.returncode, result.stopped, result.timed_out) == (0, "", False), result.stderr
    counts = read_counts(result)
    assert counts.trials == 4000 and 0 < counts.violations < 60  # about 0.5 % of the trials
    assert result.cpu_seconds is not None and result.cpu_seconds < QUICK.cpu_seconds
    assert {
        "bubblewrap box",
        "no network",
        "environment from nothing",
        "scratch tmpfs",
        "unprivileged uid",
        "audit hook (telemetry)",
    } <= set(result.protections)
    assert result.network_isolated is True


def test_the_script_may_write_and_read_its_scratch_directory() -> None:
    code = "open('data.txt', 'w').write('42')\nimport tempfile\ntempfile.mkstemp()\nprint(open('data.txt').read())"
    result = run_python(code, QUICK)
    assert (result.returncode, result.stdout.strip(), result.stopped) == (0, "42", "")


# =========================================================================== an endless loop


def test_a_domain_plugins_module_is_importable_in_the_sandbox_and_runs_under_its_guard() -> None:
    from lemmata.plugins.bandits import plugin

    code = (
        "import json, bandit_regret\n"
        "curve = bandit_regret.simulate('ucb1', [0.6, 0.4], horizon=300, runs=20, seed=1)\n"
        "ok = curve.at(300) <= bandit_regret.ucb1_bound([0.6, 0.4], 300)\n"
        "print(json.dumps({'trials': 1, 'violations': 0 if ok else 1, 'file': bandit_regret.__file__}))\n"
        "open('/etc/passwd').read()\n"
    )
    result = run_python(code, QUICK, modules=plugin.sandbox_modules)
    first = json.loads(result.stdout.strip().splitlines()[0])
    assert first["violations"] == 0
    assert Path(first["file"]).name == "bandit_regret.py" and staging.PREFIX in first["file"]  # a copy
    assert "reading outside" in result.stopped  # the module's presence opens nothing else


def test_without_modules_a_plugins_tool_is_not_importable() -> None:
    result = run_python("import bandit_regret", QUICK)
    assert result.returncode != 0 and "No module named 'bandit_regret'" in result.stderr


@pytest.mark.parametrize(
    "modules, message",
    [
        ({"check": Path(__file__)}, "identifier other than check"),
        ({"bad-name": Path(__file__)}, "identifier"),
        ({"tool": Path("/nonexistent/tool.py")}, "no file"),
    ],
)
def test_sandbox_module_names_and_files_are_checked_before_anything_runs(modules: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        run_python("print(1)", QUICK, modules=modules)


def test_sandbox_modules_need_the_launcher() -> None:
    with pytest.raises(ValueError, match="guard=True"):
        run_python("print(1)", QUICK, guard=False, modules={"tool": Path(__file__)})


def test_an_endless_loop_is_stopped_at_the_cpu_limit() -> None:
    result = run_python("while True:\n    pass\n", QUICK)
    assert result.stopped == "stopped: exceeded the 1 s CPU-time limit"
    assert result.timed_out is False and result.returncode < 0
    # The limit counts the launcher's CPU before the user's code too, and under load the
    # measured share was 0.88 s (CI beside a README run, 2026-12-03): it ran, and was stopped.
    assert result.cpu_seconds is not None and result.cpu_seconds >= 0.5


def test_an_endless_loop_that_ignores_sigxcpu_is_killed_at_the_hard_limit() -> None:
    code = "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass\n"
    result = run_python(code, QUICK)
    assert result.stopped == "stopped: exceeded the 1 s CPU-time limit"
    assert result.returncode == -9


def test_a_sleeping_loop_is_stopped_at_the_wall_clock() -> None:
    result = run_python("import time\nwhile True:\n    time.sleep(0.1)\n", Limits(wall_seconds=1.5, cpu_seconds=5))
    assert result.timed_out is True
    assert result.stopped == "stopped: ran past the 1.5 s wall-clock limit"


# =========================================================================== a 10 GB allocation


@pytest.mark.parametrize(
    "code",
    [
        pytest.param("block = bytearray(10 * 2**30)\nprint(len(block))", id="bytearray"),
        pytest.param("import numpy as np\nblock = np.ones(10 * 2**30 // 8)\nprint(block.sum())", id="numpy"),
        pytest.param("blocks = []\nwhile True:\n    blocks.append(bytearray(64 * 2**20))", id="growing"),
    ],
)
def test_a_10_gb_allocation_is_stopped_at_the_memory_limit(code: str) -> None:
    result = run_python(code, Limits(wall_seconds=10, cpu_seconds=5, memory_bytes=512 << 20))
    assert result.stopped == "stopped: exceeded the 512 MiB memory limit (MemoryError)"
    assert result.stdout == ""


def test_a_file_past_the_size_limit_is_stopped() -> None:
    result = run_python("open('big', 'wb').write(b'x' * (4 << 20))", QUICK)
    assert result.stopped == "stopped: wrote a file past the 1 MiB file-size limit"


def test_runaway_output_keeps_only_its_tail() -> None:
    code = "for i in range(200000):\n    print('x' * 50)\nprint('{\"trials\": 1, \"violations\": 0}')"
    result = run_python(code, Limits(wall_seconds=20, cpu_seconds=10, output_bytes=4096))
    assert result.returncode == 0 and len(result.stdout) <= 4096
    assert read_counts(result).trials == 1


# =========================================================================== reading an API key


def test_the_script_sees_none_of_the_parents_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "VENDORA_API_KEY",
        "ANTHROPIC_API_KEY",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "LEMMATA_HOME",
        "LEMMATA_REPLAY",
        "HTTPS_PROXY",
        "http_proxy",
        "PYTHONPATH",
    ):
        monkeypatch.setenv(name, SECRET)
    result = run_python("import json, os\nprint(json.dumps(dict(os.environ)))", QUICK)
    environment = json.loads(result.stdout)
    assert sorted(environment) == [
        "HOME",
        "LANG",
        "MKL_NUM_THREADS",
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "PATH",
        "PWD",
        "TMPDIR",
    ]  # bubblewrap sets PWD
    assert SECRET not in result.stdout + result.stderr
    assert environment["HOME"] == environment["TMPDIR"] == "/box/work" != os.environ.get("HOME")


def test_reading_the_parents_environment_through_proc_is_denied(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VENDORA_API_KEY", SECRET)
    result = run_python(f"print(open('/proc/{os.getpid()}/environ', 'rb').read())", QUICK)
    assert result.stopped == f"denied: reading outside the sandbox's allowed paths (/proc/{os.getpid()}/environ)"
    assert SECRET not in result.stdout + result.stderr


def test_reading_a_dotenv_file_is_denied(tmp_path: Path) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text(f"VENDORA_API_KEY={SECRET}\n")
    result = run_python(f"print(open({str(dotenv)!r}).read())", QUICK)
    assert result.stopped.startswith("denied: reading outside the sandbox's allowed paths")
    assert SECRET not in result.stdout + result.stderr


# =========================================================================== opening a socket


def test_opening_a_socket_is_denied_and_nothing_connects() -> None:
    with OneShotServer() as server:
        code = f"import socket\nsocket.create_connection(('127.0.0.1', {server.port}), timeout=2)\nprint('connected')"
        result = run_python(code, QUICK)
    assert result.stopped.startswith("denied: network access (socket.")
    assert "connected" not in result.stdout and server.connections == 0


def test_a_denial_the_script_catches_still_fails_the_test() -> None:
    code = (
        "import socket\ntry:\n    socket.socket().connect(('127.0.0.1', 9))\nexcept OSError:\n    pass\n"
        'print(\'{"trials": 10, "violations": 0}\')'
    )
    result = run_python(code, QUICK)
    assert result.stopped == "denied: network access (socket.__new__)"
    assert result.returncode != 0


def test_without_the_audit_hook_the_network_namespace_still_cuts_the_network() -> None:
    with OneShotServer() as server:
        code = (
            f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {server.port}), timeout=2)\n"
            "    print('connected')\nexcept OSError as error:\n    print('refused', error.errno)"
        )
        result = run_python(code, QUICK, guard=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("refused") and server.connections == 0


@pytest.mark.parametrize(
    "code, reason",
    [
        pytest.param("import subprocess\nsubprocess.run(['id'])", "subprocess.Popen", id="subprocess"),
        pytest.param("import os\nos.system('id')", "os.system", id="os-system"),
        pytest.param("import os\nos.fork()", "os.fork", id="fork"),
        pytest.param("import ctypes\nctypes.CDLL(None).getpid()", "ctypes.dlsym", id="ctypes-symbol"),
    ],
)
def test_processes_and_native_calls_are_denied(code: str, reason: str) -> None:
    result = run_python(code, QUICK)
    assert result.stopped.startswith("denied:") and reason in result.stopped


def test_writing_outside_the_scratch_directory_is_denied(tmp_path: Path) -> None:
    target = tmp_path / "escaped.txt"
    result = run_python(f"open({str(target)!r}, 'w').write('x')", QUICK)
    assert result.stopped == f"denied: writing outside the scratch directory ({target})"
    assert not target.exists()


def test_the_script_sees_only_its_own_processes() -> None:
    result = run_python("import os\nprint(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))", QUICK)
    assert json.loads(result.stdout) == [1, 2, 3]  # bubblewrap's init, the supervisor and the script


# =========================================================================== the audit hook's policy

SCRATCH = "/tmp/lemmata-sandbox-policy"


@pytest.fixture
def guard(tmp_path: Path) -> Guard:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "link").symlink_to("/etc/passwd")
    checkout = tmp_path / "checkout"
    (checkout / "pkg").mkdir(parents=True)
    return Guard(str(scratch), ["/opt/python"], [str(checkout)], pid=4242)


@pytest.mark.parametrize(
    "event, args, denied",
    [
        pytest.param("socket.connect", (None, ("127.0.0.1", 80)), "network access (socket.connect)", id="connect"),
        pytest.param("socket.getaddrinfo", ("example.org", 80), "network access (socket.getaddrinfo)", id="dns"),
        pytest.param("urllib.Request", ("https://x",), "network access (urllib.Request)", id="urllib"),
        pytest.param(
            "subprocess.Popen",
            ("id", ["id"], None, None),
            "starting or signalling a process (subprocess.Popen)",
            id="popen",
        ),
        pytest.param("os.kill", (1, 9), "starting or signalling a process (os.kill)", id="kill-other"),
        pytest.param("os.kill", (0, 0), "", id="kill-own-group-probe"),
        pytest.param("ctypes.dlopen", (None,), "", id="dlopen-self-as-numpy-does"),
        pytest.param("ctypes.dlopen", ("libc.so.6",), "native code (ctypes.dlopen)", id="dlopen-library"),
        pytest.param("import", ("socket", None, None, None, None), "", id="importing-is-fine"),
        pytest.param(
            "open", ("/etc/passwd", "r", 0), "reading outside the sandbox's allowed paths (/etc/passwd)", id="read-etc"
        ),
        pytest.param("open", ("/opt/python/lib/json/__init__.py", "r", 0), "", id="read-stdlib"),
        pytest.param("open", ("/dev/urandom", "rb", 0), "", id="read-urandom"),
        pytest.param("open", ("/proc/4242/status", "r", 0), "", id="read-own-proc"),
        pytest.param(
            "open",
            ("/proc/1/environ", "rb", 0),
            "reading outside the sandbox's allowed paths (/proc/1/environ)",
            id="read-other-proc",
        ),
        pytest.param("open", (3, "r", 0), "", id="file-descriptor"),
        pytest.param("open", ("/dev/null", "w", 0), "", id="write-dev-null"),
        pytest.param(
            "os.remove",
            ("/etc/hosts", -1),
            "changing files outside the scratch directory (os.remove /etc/hosts)",
            id="remove-outside",
        ),
    ],
)
def test_the_guard_policy(guard: Guard, event: str, args: tuple, denied: str) -> None:
    assert guard.judge(event, args) == denied


def test_the_guard_allows_the_scratch_directory_and_resolves_links(guard: Guard, tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    assert guard.judge("open", (str(scratch / "out.txt"), "w", 0)) == ""
    assert guard.judge("os.mkdir", (str(scratch / "sub"), 0o777, None)) == ""
    assert guard.judge("open", (str(scratch / "../outside.txt"), "w", 0)).startswith("writing outside")
    assert guard.judge("open", (str(scratch / "link"), "r", 0)).endswith("(/etc/passwd)")
    assert guard.judge("os.open", ()) == ""  # events without paths pass through
    assert guard.judge("open", (str(scratch / "x"), None, os.O_WRONLY | os.O_CREAT)) == ""
    assert guard.judge("open", ("/etc/x", None, os.O_WRONLY | os.O_CREAT)).startswith("writing outside")


def test_a_checkout_on_sys_path_is_readable_only_for_imports(guard: Guard, tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    assert guard.judge("open", (str(checkout / "pkg" / "module.py"), "rb", 0)) == ""
    assert guard.judge("open", (str(checkout / ".env"), "r", 0)).startswith("reading outside")


def test_a_denial_raises_permission_error_and_is_remembered(guard: Guard) -> None:
    with pytest.raises(PermissionError, match="network access"):
        guard("socket.connect", (None, ("127.0.0.1", 80)))
    with pytest.raises(PermissionError):
        guard("subprocess.Popen", ("id", ["id"], None, None))
    assert guard.denied == "network access (socket.connect)"  # the first one


# =========================================================================== stop reasons and limits


@pytest.mark.parametrize(
    "facts, reason",
    [
        pytest.param({"timed_out": True}, "stopped: ran past the 30 s wall-clock limit", id="wall-clock"),
        pytest.param({"signal_number": 24}, "stopped: exceeded the 20 s CPU-time limit", id="sigxcpu"),
        pytest.param(
            {"signal_number": 9, "cpu_seconds": 21.0},
            "stopped: exceeded the 20 s CPU-time limit",
            id="sigkill-at-the-hard-cpu-limit",
        ),
        pytest.param(
            {"signal_number": 9, "cpu_seconds": 0.5},
            "stopped: killed by the system (SIGKILL), probably for lack of memory",
            id="sigkill-otherwise",
        ),
        pytest.param({"limits_hit": {"memory"}}, "stopped: exceeded the 1 GiB memory limit (MemoryError)", id="memory"),
        pytest.param(
            {"limits_hit": {"file size"}}, "stopped: wrote a file past the 10 MiB file-size limit", id="file-size"
        ),
        pytest.param(
            {"denied": "network access (socket.connect)", "timed_out": True},
            "denied: network access (socket.connect); stopped: ran past the 30 s wall-clock limit",
            id="denied-then-timed-out",
        ),
        pytest.param({"signal_number": 11}, "", id="a-segfault-is-a-crash-not-a-stop"),
        pytest.param({}, "", id="ended-by-itself"),
    ],
)
def test_stop_reasons(facts: dict, reason: str) -> None:
    values = {"timed_out": False, "denied": "", "limits_hit": set(), "signal_number": 0, "cpu_seconds": None, **facts}
    assert stop_reason(limits=Limits(), **values) == reason


def test_protections_name_the_box_and_the_hook() -> None:
    result = run_python("print(1)", QUICK)
    assert result.protections[0] == "bubblewrap box" and result.protections[-1] == "audit hook (telemetry)"
    assert (
        "whole-test limits (cgroup v1)" in result.protections or "whole-test limits (cgroup v2)" in result.protections
    )
    assert "audit hook (telemetry)" not in run_python("print(1)", QUICK, guard=False).protections
