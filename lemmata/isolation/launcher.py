"""The inside of the sandbox: run one model-written script under a supervisor and an audit hook.

`lemmata.isolation.sandbox` starts `python -I -B <copy of this file> <script> <status fd>` inside a box
(`lemmata.isolation`): the script and this file in a read-only input directory, a scratch tmpfs
as working directory. The file imports nothing of lemmata: the box shows only the interpreter.

Two processes. The supervisor (this process) forks the worker, waits for it and writes how it
ended, exit status or signal and CPU seconds, as one JSON line on the status pipe: only a
parent can read a killed child's CPU time. The worker installs the audit hook and runs the
script as `__main__`. A denied action raises PermissionError in the script, and whatever the
script does about it, the worker ends with EXIT_DENIED and the reason on the status pipe: a test
that reached for the network may have counted the wrong thing.

The audit hook is telemetry: it tells the model *why* an ordinary test failed ("network
access", "starting a process"). It is no boundary (PEP 578: pure Python can switch it off,
native code goes around it); the box is, and it holds with the hook gone.
"""

from __future__ import annotations

import errno
import json
import os
import runpy
import sys
import traceback

EXIT_DENIED = 112
EXIT_MEMORY = 113

NETWORK_EVENTS = (
    "socket.",
    "urllib.Request",
    "http.client.",
    "ftplib.",
    "smtplib.",
    "imaplib.",
    "nntplib.",
    "poplib.",
    "telnetlib.",
    "webbrowser.",
)
PROCESS_EVENTS = (
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "pty.spawn",
    "os.startfile",
    "os.kill",
    "os.killpg",
    "signal.pthread_kill",
)
# ctypes.dlopen(None) is what `import ctypes` (and so numpy) does; a named library, or looking up
# a symbol in one, is the way to call libc's fork or connect behind the hook's back.
NATIVE_EVENTS = (
    "ctypes.dlsym",
    "ctypes.dlsym/handle",
    "ctypes.call_function",
    "ctypes.string_at",
    "ctypes.wstring_at",
    "ctypes.cdata",
    "ctypes.cdata/buffer",
)
# Events that change the file system, and which of their arguments are paths.
WRITE_EVENTS = {
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.mkdir": (0,),
    "os.rename": (0, 1),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.truncate": (0,),
    "os.link": (0, 1),
    "os.symlink": (1,),
    "os.utime": (0,),
    "os.setxattr": (0,),
    "os.removexattr": (0,),
    "os.chflags": (0,),
    "os.lchflags": (0,),
    "os.lchmod": (0,),
    "shutil.rmtree": (0,),
    "shutil.chown": (0,),
}
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
# Read-only system files ordinary numerical code (the stdlib, numpy) may open from Python.
SYSTEM_READS = (
    "/dev/null",
    "/dev/zero",
    "/dev/urandom",
    "/dev/random",
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/sys/devices/system/cpu/",
    "/etc/localtime",
    "/usr/share/zoneinfo/",
    "/usr/lib/",
    "/usr/share/",
)
# Outside the Python installation, a sys.path entry (an editable checkout, say) is readable
# only for what imports need: not its .env files.
IMPORT_SUFFIXES = (".py", ".pyc", ".so", ".pth", ".typed")


class SandboxDenied(PermissionError):
    """Raised inside the script for an action the sandbox does not allow."""


class Guard:
    """The audit hook: the first denial is kept in `denied`; every denial raises."""

    def __init__(
        self,
        scratch: str,
        install_roots: list[str],
        import_roots: list[str],
        pid: int,
        status_fd: int | None = None,
        inputs: str | None = None,
    ) -> None:
        self.status_fd = status_fd
        self.scratch = _directory(scratch)
        self.inputs = _directory(inputs) if inputs else None  # the script and its modules, read-only
        self.install_roots = [_directory(root) for root in install_roots]
        self.import_roots = [_directory(root) for root in import_roots]
        self.own_proc = (f"/proc/{pid}/", "/proc/self/", "/proc/thread-self/")
        self.denied = ""
        self._busy = False

    def __call__(self, event: str, args: tuple) -> None:
        if self._busy:  # resolving a path may raise events of its own
            return
        self._busy = True
        try:
            reason = self.judge(event, args)
        finally:
            self._busy = False
        if reason:
            if not self.denied and self.status_fd is not None:
                _report(self.status_fd, {"denied": reason})  # now: the script may yet be killed
            self.denied = self.denied or reason
            raise SandboxDenied(f"lemmata sandbox: {reason}")

    def judge(self, event: str, args: tuple) -> str:
        """Why `event` is denied, or "" when it is allowed."""
        if event.startswith(NETWORK_EVENTS):
            return f"network access ({event})"
        if event in PROCESS_EVENTS:
            return "" if _signals_itself(event, args) else f"starting or signalling a process ({event})"
        if event in NATIVE_EVENTS or (event == "ctypes.dlopen" and args and args[0] is not None):
            return f"native code ({event})"
        if event == "open":
            return self._judge_open(args)
        for index in WRITE_EVENTS.get(event, ()):
            path = _resolved(args[index]) if index < len(args) else None
            if path is not None and not self._writable(path):
                return f"changing files outside the scratch directory ({event} {path})"
        return ""

    def _judge_open(self, args: tuple) -> str:
        path = _resolved(args[0])
        if path is None:  # a file descriptor: it was opened under this hook
            return ""
        mode, flags = args[1] if len(args) > 1 else None, args[2] if len(args) > 2 else 0
        writing = any(c in (mode or "") for c in "wax+") or bool((flags or 0) & WRITE_FLAGS)
        if writing and not self._writable(path):
            return f"writing outside the scratch directory ({path})"
        if not writing and not self._readable(path):
            return f"reading outside the sandbox's allowed paths ({path})"
        return ""

    def _writable(self, path: str) -> bool:
        return _inside(path, self.scratch) or path == "/dev/null"

    def _readable(self, path: str) -> bool:
        if self._writable(path) or any(_inside(path, root) for root in self.install_roots):
            return True
        if self.inputs and _inside(path, self.inputs):
            return True
        if path.startswith(self.own_proc) or any(
            path == p or (p.endswith("/") and path.startswith(p)) for p in SYSTEM_READS
        ):
            return True
        return path.endswith(IMPORT_SUFFIXES) and any(_inside(path, root) for root in self.import_roots)


def _signals_itself(event: str, args: tuple) -> bool:
    """os.kill(os.getpid(), ...) is how some code raises a signal on itself: harmless."""
    return event == "os.kill" and bool(args) and args[0] in (0, os.getpid())


def _directory(path: str) -> str:
    return os.path.realpath(path).rstrip("/") + "/"


def _inside(path: str, directory: str) -> bool:
    return path + "/" == directory or path.startswith(directory)


def _resolved(path: object) -> str | None:
    """The absolute, symlink-free path of an audit argument; None for file descriptors."""
    if isinstance(path, int) or path is None:
        return None
    try:
        text = os.fsdecode(os.fspath(path))  # type: ignore[call-overload]  # any object: TypeError if not a path
    except TypeError:
        return None
    try:
        return os.path.realpath(os.path.join(os.getcwd(), text))
    except (OSError, ValueError):  # e.g. a NUL byte: the call itself will fail
        return text


def install_guard(scratch: str, inputs: str, status_fd: int) -> Guard:
    prefixes = {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix}
    imports = [entry for entry in sys.path if entry and os.path.isdir(entry)]
    guard = Guard(scratch, sorted(prefixes), imports, os.getpid(), status_fd, inputs)
    sys.addaudithook(guard)
    return guard


def run_worker(script: str, status_fd: int) -> None:
    """Run the script under the guard; never returns."""
    sys.argv = [script]
    inputs = os.path.dirname(os.path.abspath(script))
    # As `python check.py` would, without -I: the script's directory, where the sandbox copied
    # the domain plugin's modules, comes first on the import path.
    sys.path.insert(0, inputs)
    guard = install_guard(os.getcwd(), inputs, status_fd)
    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        if not isinstance(exit_.code, (int, type(None))):
            print(exit_.code, file=sys.stderr)  # sys.exit("message") prints it, as Python would
    except MemoryError:
        code = EXIT_MEMORY
    except OSError as error:
        traceback.print_exc()
        code = 1
        if error.errno == errno.EFBIG:  # Python ignores SIGXFSZ: the file-size limit surfaces here
            _report(status_fd, {"limit": "file size"})
        elif error.errno == errno.ENOSPC:  # the scratch tmpfs is full
            _report(status_fd, {"limit": "scratch"})
    except BaseException:  # the script's own error: its traceback is the crash report
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if guard.denied:
        code = EXIT_DENIED
    elif code == EXIT_MEMORY:
        _report(status_fd, {"limit": "memory"})
    os._exit(code)


def supervise(script: str, status_fd: int) -> int:
    """Fork the worker, wait, report its end and CPU time; the exit code mirrors the worker's."""
    sys.stdout.flush()
    worker = os.fork()
    if worker == 0:
        run_worker(script, status_fd)
    _, status, usage = os.wait4(worker, 0)
    cpu = round(usage.ru_utime + usage.ru_stime, 3)
    if os.WIFSIGNALED(status):
        _report(status_fd, {"signal": os.WTERMSIG(status), "cpu_seconds": cpu})
        return 128 + os.WTERMSIG(status)
    code = os.WEXITSTATUS(status)
    _report(status_fd, {"exit": code, "cpu_seconds": cpu})
    return code


def _report(status_fd: int, record: dict) -> None:
    try:
        os.write(status_fd, (json.dumps(record) + "\n").encode())
    except OSError:  # the parent stopped listening: nothing left to tell
        pass


if __name__ == "__main__":
    sys.exit(supervise(sys.argv[1], int(sys.argv[2])))
