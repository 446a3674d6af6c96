"""The inside of the TeX box: run TeX commands in a build directory on the box's tmpfs, on request.

`lemmata.latex.texbox` starts `python -I -S <copy of this file> <inputs>` inside a box whose
only writable place is a size-capped tmpfs, the working directory. This file imports nothing of
lemmata (the box shows only the interpreter's standard library). It waits for {"op": "load"}:
the box may be started before its inputs exist (a spare, texbox.py), and they are put in the
input directory, which the box sees as it changes. Then it copies the inputs (the .tex, .bib and
support files, figures/) into the working directory, says it is ready, and answers requests, one
JSON line each on stdin, until stdin closes:
- {"op": "run", "argv": [...], "timeout": seconds} -> {"returncode": n, "timed_out": bool}: the
  command's output goes nowhere (its .log holds everything); on the timeout its whole session
  is killed;
- {"op": "read", "name": "paper.log", "limit": n, "tail": bool} -> {"size": k} followed by k raw
  bytes: at most `limit` bytes of the file, its end when `tail` (a flooded log is not read
  whole); {"missing": true} when there is no such file.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys


def copy_inputs(inputs: str) -> None:
    for name in os.listdir(inputs):
        source = os.path.join(inputs, name)
        if os.path.isdir(source):
            shutil.copytree(source, name)
        elif name != os.path.basename(__file__):
            shutil.copyfile(source, name)


def run(argv: list[str], timeout: float) -> dict:
    try:
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
    except OSError as error:  # not installed, say: the shell's status for a missing command
        return {"returncode": 127, "timed_out": False, "error": f"{argv[0]}: {error.strerror}"}
    if wait_for_exit(process, timeout):
        return {"returncode": process.returncode, "timed_out": False}
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return {"returncode": process.wait(), "timed_out": True}


def wait_for_exit(process: subprocess.Popen[bytes], timeout: float) -> bool:
    """Whether `process` ended within `timeout` seconds, woken by the kernel the moment it ends:
    Popen's own wait with a timeout polls, sleeping up to 50 ms between looks, and each TeX pass
    ended on average 25 ms late. A copy of lemmata/process_exit.py's (the box shows this file the
    standard library alone); tests/unit/test_process_exit.py tests both."""
    if process.poll() is not None:
        return True
    try:
        pidfd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        ended, _, _ = select.select([pidfd], [], [], max(0.0, timeout))
    finally:
        os.close(pidfd)
    return bool(ended) and process.poll() is not None


def read(name: str, limit: int, tail: bool) -> tuple[dict, bytes]:
    if os.path.isabs(name) or ".." in name.split("/") or not os.path.isfile(name):
        return {"missing": True}, b""
    with open(name, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if tail and size > limit:
            handle.seek(size - limit)
        data = handle.read(limit)
    return {"size": len(data)}, data


def answer(header: dict, data: bytes = b"") -> None:
    sys.stdout.buffer.write(json.dumps(header).encode() + b"\n" + data)
    sys.stdout.buffer.flush()


def main() -> None:
    first = sys.stdin.readline()
    if not first or json.loads(first).get("op") != "load":
        return  # closed unused (a spare no one took), or not asked properly: nothing to do
    copy_inputs(sys.argv[1])
    answer({"ready": True})
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "run":
            answer(run(request["argv"], float(request["timeout"])))
        else:
            answer(*read(request["name"], int(request["limit"]), bool(request.get("tail"))))


if __name__ == "__main__":
    main()
