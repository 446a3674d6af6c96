"""The box's parts as pure functions: the bubblewrap command a box gets, and where its cgroup
goes. The boxes themselves are attacked in test_sandbox_attacks.py and test_tex_attacks.py."""

from __future__ import annotations

import os

import pytest

from lemmata.isolation import box as box_module
from lemmata.isolation.box import BOX_UIDS, BoxSpec, BoxUnavailable, box_identity, open_box
from lemmata.isolation.bubblewrap import Identity, Layout, bwrap_command
from lemmata.isolation.cgroups import _child_path, open_cgroup

LAYOUT = Layout(
    ("/usr/lib", "/usr/lib/python3", "/root/.pyenv/versions/3.11.7", "/nonexistent/path"), "/box/work", 1 << 20
)


def options(command: list[str]) -> list[str]:
    return command[: command.index("--")]


def test_as_root_the_box_has_no_user_namespace_and_setpriv_drops_to_its_own_uid() -> None:
    command = bwrap_command(LAYOUT, Identity(True, 1_800_000_123, 1_800_000_123), {"PATH": "/usr/bin"}, ["python"])
    assert "--unshare-user" not in command and "--unshare-user-try" not in command
    setpriv = command.index("/usr/bin/setpriv")
    assert command[setpriv + 1 : setpriv + 7] == [
        "--reuid=1800000123",
        "--regid=1800000123",
        "--clear-groups",
        "--no-new-privs",
        "--inh-caps=-all",
        "--bounding-set=-all",
    ]
    assert command[-2:] == ["--", "python"]


def test_as_a_user_the_box_is_a_user_namespace_that_allows_no_further_one() -> None:
    command = options(bwrap_command(LAYOUT, Identity(False, 1000, 1000), {}, ["python"]))
    assert {"--unshare-user", "--disable-userns"} <= set(command) and "/usr/bin/setpriv" not in command


def test_the_box_sees_what_it_is_given_read_only_and_nothing_else() -> None:
    command = options(bwrap_command(LAYOUT, Identity(True, 1, 1), {"PATH": "/usr/bin", "HOME": "/box/work"}, ["x"]))
    binds = [command[i + 1] for i, word in enumerate(command) if word == "--ro-bind"]
    assert binds == ["/root/.pyenv/versions/3.11.7", "/usr/lib"]  # inside a bound path or missing: left out
    assert "--bind" not in command  # nothing of the host is writable
    for namespace in ("--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts"):
        assert namespace in command
    assert {"--die-with-parent", "--new-session", "--clearenv"} <= set(command)
    assert command[command.index("--remount-ro") + 1] == "/"
    tmpfs = command.index("--tmpfs")
    assert command[tmpfs - 4 : tmpfs + 2] == ["--perms", "1777", "--size", str(1 << 20), "--tmpfs", "/box/work"]


def test_parents_of_bound_paths_are_made_enterable() -> None:
    """bwrap would make /root 0700, as the host has it: the box's uid could not reach Python."""
    command = options(bwrap_command(LAYOUT, Identity(True, 1, 1), {}, ["x"]))
    made = [command[i + 3] for i, word in enumerate(command) if word == "--perms" and command[i + 1] == "0755"]
    assert made[:4] == ["/root", "/root/.pyenv", "/root/.pyenv/versions", "/usr"]
    assert "/box" in made


def test_the_environment_is_exactly_the_one_given() -> None:
    command = options(bwrap_command(LAYOUT, Identity(True, 1, 1), {"PATH": "/usr/bin", "LANG": "C.UTF-8"}, ["x"]))
    pairs = [(command[i + 1], command[i + 2]) for i, word in enumerate(command) if word == "--setenv"]
    assert pairs == [("PATH", "/usr/bin"), ("LANG", "C.UTF-8")]
    assert command.index("--clearenv") < command.index("--setenv")


def test_as_root_each_box_gets_a_uid_of_its_own_that_is_nobodys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    identities = {box_identity().uid for _ in range(20)}
    assert all(uid in BOX_UIDS for uid in identities) and len(identities) > 1
    with open("/etc/passwd") as passwd:
        assert not {int(line.split(":")[2]) for line in passwd if line.count(":") >= 3} & set(identities)


def test_a_users_box_keeps_the_users_uid(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(os, "getuid", lambda: 1000)
    monkeypatch.setattr(os, "getgid", lambda: 1000)
    assert box_identity() == Identity(False, 1000, 1000)


@pytest.mark.parametrize(
    "mount, own, expected",
    [
        pytest.param(
            ("/sys/fs/cgroup/memory", "/", "cgroup", {"memory"}),
            "/process_api/abc",
            "/sys/fs/cgroup/memory/process_api/abc",
            id="v1-below-our-own",
        ),
        pytest.param(("/sys/fs/cgroup/pids", "/", "cgroup", {"pids"}), "/", "/sys/fs/cgroup/pids", id="v1-at-the-root"),
        pytest.param(
            ("/sys/fs/cgroup", "/docker/x", "cgroup2", set()),
            "/docker/x/sub",
            "/sys/fs/cgroup/sub",
            id="v2-mounted-below-its-root",
        ),
    ],
)
def test_a_box_cgroup_goes_below_lemmatas_own(mount: tuple, own: str, expected: str) -> None:
    path = _child_path(mount, own)
    assert str(path.parent) == expected and path.name.startswith(f"lemmata-box-{os.getpid()}-")


def test_a_cgroup_is_made_and_removed() -> None:
    cgroup = open_cgroup()
    try:
        cgroup.set_limits(64 << 20, 8)
        assert all(directory.is_dir() for directory in cgroup.directories.values())
        assert cgroup.processes() == [] and cgroup.cpu_seconds() == 0
    finally:
        cgroup.remove()
    assert not any(directory.exists() for directory in cgroup.directories.values())


def test_without_bubblewrap_no_box_starts_and_the_message_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(box_module, "_bwrap", lambda: None)
    box_module.box_problem.cache_clear()
    try:
        with pytest.raises(BoxUnavailable, match="apt-get install bubblewrap"):
            with open_box(BoxSpec(["true"], (), {})):
                pass
    finally:
        box_module.box_problem.cache_clear()


def test_a_failed_start_leaves_no_cgroup(monkeypatch: pytest.MonkeyPatch) -> None:
    made = []
    real_open = box_module.open_cgroup

    def recording_open():  # noqa: ANN202
        made.append(real_open())
        return made[-1]

    def failing_popen(*args: object, **kwargs: object) -> None:
        raise OSError("cannot start")

    assert box_module.box_problem() == ""
    monkeypatch.setattr(box_module, "open_cgroup", recording_open)
    monkeypatch.setattr(box_module.subprocess, "Popen", failing_popen)
    with pytest.raises(OSError, match="cannot start"):
        with open_box(BoxSpec(["true"], (), {})):
            pass
    assert made and not any(d.exists() for cgroup in made for d in cgroup.directories.values())
