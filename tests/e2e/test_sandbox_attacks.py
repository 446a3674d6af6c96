"""Attacks on the experiment sandbox written to get around the audit hook (issue 22): each runs
with the hook switched off from inside, as pure Python can, or without it, and the box must
hold anyway. Each test fails when the OS layer it names is taken away (the README's sandbox
section and SECURITY.md say which).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import textwrap
import threading
from pathlib import Path

import pytest

from lemmata.isolation import staging
from lemmata.isolation.box import BOX_UIDS, python_paths
from lemmata.isolation.sandbox import Limits, run_python
from support.waiting import wait_until

SECRET = "sk-attack-secret-31337"
#: What any model-written script can do to the audit hook: find it and make it wave everything through.
HOOK_OFF = textwrap.dedent("""\
    import gc
    for guard in [o for o in gc.get_objects() if type(o).__name__ == "Guard"]:
        guard._busy = True
    """)
SMALL = Limits(
    wall_seconds=20, cpu_seconds=10, memory_bytes=256 << 20, processes=16, scratch_bytes=16 << 20, file_bytes=8 << 20
)


def attack(code: str, limits: Limits = SMALL) -> dict:
    """Run `code` with the hook switched off; its last stdout line is a JSON report."""
    result = run_python(HOOK_OFF + textwrap.dedent(code), limits)
    assert result.stopped == "" and result.returncode == 0, (result.stopped, result.stderr[-2000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_hook_really_is_off_after_the_switch() -> None:
    """Else every attack below would be stopped by the hook, and prove nothing about the box."""
    report = attack("""
        import json, socket
        socket.socket().close()
        print(json.dumps({"socket": "made"}))
    """)
    assert report == {"socket": "made"}


def test_the_host_file_system_is_absent(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    lemmata_home = tmp_path / "lemmata-home"
    (lemmata_home / "runs").mkdir(parents=True)
    (lemmata_home / ".env").write_text(f"VENDORA_API_KEY={SECRET}\n")
    monkeypatch.setenv("LEMMATA_HOME", str(lemmata_home))
    report = attack(f"""
        import json, os
        def seen(path):
            try:
                return sorted(os.listdir(path))
            except OSError as error:
                return error.strerror
        paths = ["/", "/etc", "/root", "/tmp", "/home", "/run", "/var", {str(lemmata_home)!r}, {str(Path.home())!r}]
        print(json.dumps({{path: seen(path) for path in paths}}))
    """)
    assert report["/etc"] == ["ld.so.cache"]  # no shadow, no passwd, no credentials
    assert "shadow" not in json.dumps(report) and ".lemmata" not in json.dumps(report)
    assert all(report[path] == "No such file or directory" for path in ("/home", "/run", "/var", str(lemmata_home)))
    # Of the host's /tmp, only the test's inputs, and the way to Python when it lives there (a CI clone).
    python_ways = {Path(path).parts[2] for path in python_paths() if Path(path).parts[1:2] == ("tmp",)}
    assert report["/tmp"] and all(name.startswith(staging.PREFIX) or name in python_ways for name in report["/tmp"])
    assert tmp_path.parts[2] not in report["/tmp"]  # the host's own /tmp content (this test's files) is absent
    assert SECRET not in json.dumps(report)


def test_an_open_directory_descriptor_reaches_nothing_more() -> None:
    """dir_fd once slipped past the hook's path check: in the box there is nothing to reach."""
    report = attack("""
        import json, os
        root = os.open("/", os.O_RDONLY)
        found = {}
        for name in ("etc/shadow", "etc/passwd", "proc/1/environ", "root/.lemmata"):
            try:
                os.close(os.open(name, os.O_RDONLY, dir_fd=root))
                found[name] = "opened"
            except OSError as error:
                found[name] = error.strerror
        print(json.dumps(found))
    """)
    assert report["etc/shadow"] == report["etc/passwd"] == report["root/.lemmata"] == "No such file or directory"
    assert report["proc/1/environ"] == "Permission denied"  # bubblewrap's init runs as root, the test does not


def test_nothing_of_the_installation_can_be_written() -> None:
    """A .pth file in site-packages would run code in the next lemmata process, with its keys."""
    report = attack("""
        import json, os, site, sys
        tried = {}
        for directory in [*site.getsitepackages(), sys.base_prefix, os.path.dirname(os.__file__)]:
            try:
                with open(os.path.join(directory, "zz_lemmata_attack.pth"), "w") as handle:
                    handle.write("import os; os.system('id')\\n")
                tried[directory] = "written"
            except OSError as error:
                tried[directory] = error.strerror
        print(json.dumps(tried))
    """)
    # Debian's site module also names dist-packages folders that do not exist: nothing to write there.
    assert set(report.values()) <= {"Read-only file system", "No such file or directory"}, report
    assert report[sysconfig.get_path("purelib")] == report[sys.base_prefix] == "Read-only file system", report
    for directory in report:
        assert not (Path(directory) / "zz_lemmata_attack.pth").exists()


@pytest.mark.parametrize(
    "spawn",
    [
        pytest.param("os.posix_spawn(sys.executable, [sys.executable, '-c', CHILD], {})", id="posix_spawn"),
        pytest.param(
            "_posixsubprocess.fork_exec([sys.executable, '-c', CHILD], [sys.executable.encode()], True, (), None,"
            " None, -1, -1, -1, -1, -1, -1, *os.pipe(), False, False, -1, None, None, None, -1, None, False)",
            id="fork_exec",
        ),
    ],
)
def test_a_process_started_behind_the_hooks_back_is_as_confined(spawn: str) -> None:
    report = attack(f"""
        import _posixsubprocess, json, os, sys
        CHILD = "import os; print(os.getuid(), os.path.exists('/etc/shadow'), os.path.exists('/bin/sh'), flush=True)"
        read, write = os.pipe()
        stdout = os.dup(1)
        os.dup2(write, 1)
        pid = {spawn}
        os.waitpid(pid, 0)
        os.close(write)
        os.dup2(stdout, 1)
        line = os.read(read, 1000).decode().split()
        print(json.dumps({{"uid": int(line[0]), "shadow": line[1], "shell": line[2]}}))
    """)
    assert report["uid"] in BOX_UIDS or (os.geteuid() != 0 and report["uid"] == os.getuid())
    assert report["shadow"] == report["shell"] == "False"


def test_the_test_runs_without_privilege() -> None:
    report = attack("""
        import json, os
        status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
        print(json.dumps({"uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(),
                          "caps": [status[k].strip() for k in ("CapPrm", "CapEff", "CapBnd", "CapAmb")],
                          "no_new_privs": status["NoNewPrivs"].strip(), "uid_map": open("/proc/self/uid_map").read().split()}))
    """)
    assert report["caps"] == ["0000000000000000"] * 4 and report["no_new_privs"] == "1"
    if os.geteuid() == 0:  # no user namespace: the uid inside is the uid outside, and it is the box's own
        assert report["uid_map"] == ["0", "0", "4294967295"]
        assert report["uid"] in BOX_UIDS and report["gid"] in BOX_UIDS and report["groups"] == []


class Listeners:
    """A TCP server on the host's loopback, a Unix socket in a host directory and an abstract
    Unix socket, each counting connections."""

    def __init__(self, directory: Path) -> None:
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.unix_path = directory / "host.sock"
        self.unix = socket.socket(socket.AF_UNIX)
        self.unix.bind(str(self.unix_path))
        self.abstract_name = f"\0lemmata-attack-{os.getpid()}"
        self.abstract = socket.socket(socket.AF_UNIX)
        self.abstract.bind(self.abstract_name)
        self.connections = 0
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._serve, args=(s,), daemon=True) for s in (self.tcp, self.unix, self.abstract)
        ]

    def _serve(self, server: socket.socket) -> None:
        server.listen()
        server.settimeout(0.1)
        while not self._stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            self.connections += 1
            connection.close()

    def __enter__(self) -> Listeners:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()
        for server in (self.tcp, self.unix, self.abstract):
            server.close()


def test_no_socket_of_the_host_is_reachable(tmp_path: Path) -> None:
    with Listeners(tmp_path) as host:
        report = attack(f"""
            import json, socket
            def connect(family, address):
                try:
                    with socket.socket(family) as client:
                        client.settimeout(2)
                        client.connect(address)
                    return "connected"
                except OSError as error:
                    return error.strerror
            print(json.dumps({{
                "tcp": connect(socket.AF_INET, ("127.0.0.1", {host.tcp.getsockname()[1]})),
                "unix": connect(socket.AF_UNIX, {str(host.unix_path)!r}),
                "abstract": connect(socket.AF_UNIX, {host.abstract_name!r}),
                "dns": connect(socket.AF_INET, ("example.org", 80)) if False else "skipped",
            }}))
        """)
    assert host.connections == 0, report
    assert report["unix"] == "No such file or directory"
    assert report["abstract"] == "Connection refused"
    assert report["tcp"] in ("Network is unreachable", "Connection refused")


def test_only_the_tests_own_processes_are_visible(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VENDORA_API_KEY", SECRET)
    report = attack("""
        import json, os
        pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
        environ = {}
        for pid in pids:
            try:
                environ[pid] = open(f"/proc/{pid}/environ", "rb").read().decode(errors="replace")
            except OSError as error:
                environ[pid] = error.strerror
        print(json.dumps({"pids": pids, "environ": environ, "env": dict(os.environ)}))
    """)
    assert report["pids"] == [1, 2, 3]
    assert SECRET not in json.dumps(report)
    assert sorted(report["env"]) == [
        "HOME",
        "LANG",
        "MKL_NUM_THREADS",
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "PATH",
        "PWD",
        "TMPDIR",
    ]


def test_filling_the_disk_in_many_files_stops_at_the_scratch_size() -> None:
    result = run_python(
        HOOK_OFF
        + textwrap.dedent("""
        import os
        written = 0
        for index in range(10_000):
            with open(f"fill-{index}", "wb") as handle:
                handle.write(b"x" * (4 << 20))
            written += 4 << 20
            print(written, flush=True)
    """),
        SMALL,
    )
    written = int(result.stdout.split()[-1]) if result.stdout.split() else 0
    assert written <= SMALL.scratch_bytes
    assert result.stopped == "stopped: filled the 16 MiB scratch directory"


def test_a_fork_loop_stops_at_the_process_cap() -> None:
    result = run_python(
        HOOK_OFF
        + textwrap.dedent("""
        import os, time
        children = 0
        while children < 1000:
            if os.fork() == 0:
                time.sleep(30)
                os._exit(0)
            children += 1
            print(children, flush=True)
    """),
        SMALL,
    )
    children = int(result.stdout.split()[-1])
    assert children < SMALL.processes
    assert result.stopped == "stopped: tried to run more than 16 processes at once"


def test_memory_spread_over_many_processes_is_capped_for_the_whole_test() -> None:
    """Each child stays under the per-process limit; together they pass the test's memory."""
    limits = Limits(wall_seconds=30, cpu_seconds=20, memory_bytes=256 << 20, processes=16, scratch_bytes=8 << 20)
    result = run_python(
        HOOK_OFF
        + textwrap.dedent("""
        import os, time
        children = []
        for _ in range(6):
            pid = os.fork()
            if pid == 0:
                block = b"x" * (100 << 20)
                time.sleep(3)
                os._exit(0)
            children.append(pid)
        killed = sum(os.WIFSIGNALED(os.waitpid(pid, 0)[1]) for pid in children)
        print(killed)
    """),
        limits,
    )
    assert int(result.stdout.split()[-1]) >= 3  # 600 MiB asked for, about 256 MiB held at most
    assert result.stopped == "stopped: its processes together exceeded the 256 MiB memory limit"


def test_cpu_time_is_capped_for_the_whole_test() -> None:
    """Two spinning processes, each under the per-process limit, together pass the test's."""
    limits = Limits(wall_seconds=30, cpu_seconds=2, processes=16)
    result = run_python(HOOK_OFF + "import os\nos.fork()\nwhile True:\n    pass\n", limits)
    assert result.stopped == "stopped: exceeded the 2 s CPU-time limit"
    assert result.cpu_seconds is not None and 2 <= result.cpu_seconds < 3.5


def test_the_box_dies_with_its_parent(tmp_path: Path) -> None:
    """Killing lemmata (SIGKILL: no cleanup runs) leaves no process of the box behind."""
    script = tmp_path / "parent.py"
    script.write_text(
        textwrap.dedent("""
        from lemmata.isolation.sandbox import Limits, run_python
        run_python("import time\\nprint('started', flush=True)\\ntime.sleep(60)", Limits(wall_seconds=60))
    """)
    )
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:  # the box: bwrap, its init, the supervisor and the test
        box = wait_until(
            lambda: found if len(found := descendants(parent.pid)) >= 4 else None,
            20,
            message=lambda: f"the box never started: {descendants(parent.pid)}",
        )
    finally:
        parent.kill()
        parent.wait()
    wait_until(lambda: not alive(box), 5, message=None)
    assert alive(box) == set()


def descendants(pid: int) -> set[int]:
    """Every process below `pid`, from the parent links in /proc."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pids: set[int]) -> set[int]:
    """The pids still running (a zombie has ended)."""
    running = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            running.add(pid)
    return running


def test_the_runs_model_server_is_out_of_reach_of_model_written_code() -> None:
    """The run's shared embedded model (llm/model_server.py) listens on a Unix socket in a folder
    of our user's (/tmp/lemmata-model-*, mode 0700): a test in the box cannot see it, so cannot
    make the model write anything, nor hold it up."""
    from unit.llm.test_embedded_backend import FakeLlama
    from unit.llm.test_model_server import embedded, running_server

    llama = FakeLlama()
    with running_server(embedded(llama)) as socket_path:
        report = attack(f"""
            import json, socket
            try:
                with socket.socket(socket.AF_UNIX) as client:
                    client.settimeout(2)
                    client.connect({str(socket_path)!r})
                outcome = "connected"
            except OSError as error:
                outcome = error.strerror
            print(json.dumps({{"model": outcome}}))
        """)
    assert report == {"model": "No such file or directory"} and llama.calls == []


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another local user")
def test_another_local_user_cannot_call_the_runs_model_server() -> None:
    from unit.llm.test_embedded_backend import FakeLlama
    from unit.llm.test_model_server import embedded, running_server

    llama = FakeLlama()
    code = (
        "import socket, sys\n"
        "try:\n"
        "    socket.socket(socket.AF_UNIX).connect(sys.argv[1]); print('connected')\n"
        "except OSError as error:\n"
        "    print(error.strerror)\n"
    )
    with running_server(embedded(llama)) as socket_path:
        other = subprocess.run(
            # the system's python: this one may live under /root, which another user cannot enter
            [shutil.which("python3", path="/usr/bin:/bin") or "python3", "-c", code, str(socket_path)],
            user=65534,
            group=65534,
            extra_groups=[],
            capture_output=True,
            text=True,
            cwd="/",
        )
    assert other.stdout.strip() == "Permission denied" and llama.calls == []
