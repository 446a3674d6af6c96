"""The boxes as an ordinary user sees them (issue 22: the attacks "would also hold as a normal
user"). CI runs as root, so these tests run lemmata as `nobody`, with the system's Python 3 of
the same minor version and this venv's packages: bubblewrap then makes a user namespace
instead of switching users, and no cgroup can be made.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

import lemmata

SYSTEM_PYTHON = Path("/usr/bin/python3")
NOBODY = 65534
PACKAGES = [str(Path(lemmata.__file__).parent.parent), sysconfig.get_paths()["purelib"]]


def _usable() -> str:
    """Why these tests cannot run here; "" when they can."""
    if os.geteuid() != 0:
        return "needs root, to become nobody"
    if not SYSTEM_PYTHON.exists():
        return "no system Python 3"
    version = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True
    ).stdout.strip()
    if version != str(tuple(sys.version_info[:2])):
        return f"the system Python is {version}, not {tuple(sys.version_info[:2])}"
    if not all(os.access(path, os.R_OK | os.X_OK) for path in PACKAGES):
        return "nobody cannot read this venv"
    probe = as_nobody("import lemmata.isolation.sandbox", {}, check=False)
    return "" if probe.returncode == 0 else f"lemmata does not import as nobody: {probe.stderr[-300:]}"


def as_nobody(code: str, environment: dict[str, str], check: bool = True) -> subprocess.CompletedProcess[str]:
    command = [
        "setpriv",
        f"--reuid={NOBODY}",
        f"--regid={NOBODY}",
        "--clear-groups",
        str(SYSTEM_PYTHON),
        "-c",
        textwrap.dedent(code),
    ]
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "PYTHONPATH": os.pathsep.join(PACKAGES), **environment}
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd="/tmp", timeout=120)
    if check:
        assert done.returncode == 0, done.stderr[-3000:]
    return done


pytestmark = pytest.mark.skipif(bool(_usable()), reason=_usable())


def test_without_a_cgroup_a_user_is_refused_experiments_with_what_to_do() -> None:
    done = as_nobody(
        """
        from lemmata.isolation.sandbox import sandbox_problem
        print(sandbox_problem())
    """,
        {},
    )
    assert "none can be made here" in done.stdout and "LEMMATA_SANDBOX_LIMITS=per-process" in done.stdout


#: The attack inside the box: the audit hook switched off, then the host reached for.
ATTACK = textwrap.dedent("""\
    import gc
    for guard in [o for o in gc.get_objects() if type(o).__name__ == "Guard"]:
        guard._busy = True
    import json, os, socket
    def attempt(action):
        try:
            return str(action())
        except OSError as error:
            return error.strerror
    status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
    print(json.dumps({"root": sorted(os.listdir("/")), "caps": status["CapEff"].strip(), "env": sorted(os.environ),
                      "connect": attempt(lambda: socket.create_connection(("127.0.0.1", 22), 2)),
                      "pth": attempt(lambda: open(os.path.dirname(os.__file__) + "/x.pth", "w"))}))
    """)


def test_with_per_process_limits_accepted_the_box_still_holds() -> None:
    done = as_nobody(
        """
        import json, os
        from lemmata.isolation.sandbox import Limits, run_python
        result = run_python(os.environ["ATTACK"], Limits())
        print(json.dumps({"stdout": result.stdout, "stopped": result.stopped, "protections": result.protections}))
    """,
        {"LEMMATA_SANDBOX_LIMITS": "per-process", "VENDORA_API_KEY": "sk-user-secret", "ATTACK": ATTACK},
    )
    outcome = json.loads(done.stdout)
    report = json.loads(outcome["stdout"].splitlines()[-1])
    assert outcome["stopped"] == "" and "per-process limits only" in outcome["protections"]
    assert "user namespace" in outcome["protections"]
    assert report["connect"] in ("Network is unreachable", "Connection refused")
    assert report["pth"] == "Read-only file system" and report["caps"] == "0000000000000000"
    assert not {"home", "root", "run", "var"} & set(report["root"])
    assert "VENDORA_API_KEY" not in report["env"] and "ATTACK" not in report["env"]


def test_tex_runs_in_its_box_for_a_user_and_reads_nothing_of_the_host(tmp_path: Path) -> None:
    tmp_path.chmod(0o777)
    (tmp_path / "notes.tex").write_text("SECRETNOTES\n")
    (tmp_path / "notes.tex").chmod(0o644)
    done = as_nobody(
        r"""
        from lemmata.latex.trial import trial_compile
        document = "\\documentclass{article}\\begin{document}\\IfFileExists{^^24HOME/notes.tex}{\\input{^^24HOME/notes.tex}\\undefinedmacro}{fine}\\end{document}"
        print([error.message for error in trial_compile(document, timeout=30)])
    """,
        {"HOME": str(tmp_path)},
    )
    assert done.stdout.strip() == "[]"  # the file was absent: no \undefinedmacro error
