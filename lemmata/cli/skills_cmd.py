"""`lemmata install-skills`: the bundled skills, or one from the external skill registry."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
from pathlib import Path

import click

from lemmata.artifacts import atomic_write_text
from lemmata.cli.errors import reports_errors
from lemmata.errors import LemmataError, UserError
from lemmata.home_layout import SKILLS
from lemmata.settings import lemmata_home, load_environment
from lemmata.skills.registry import BUNDLED_DIR, SkillError, load_file, skill_files

CLIENT_VARIABLE = "LEMMATA_SKILLS_CLIENT"
DEFAULT_CLIENT = "clawhub"
CLIENT_TIMEOUT_S = 300
#: What we installed of each bundled file (sha256), to tell a user's edit from an older bundle.
MANIFEST = ".bundled.json"
SKILL_REF = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
STDERR_LINES = 5


@click.command("install-skills")
@click.argument("skill", required=False, metavar="[OWNER/NAME]")
@click.option(
    "--force",
    is_flag=True,
    help="replace installed bundled skills you changed; with OWNER/NAME, reinstall over an existing copy",
)
@reports_errors
def install_skills(skill: str | None, force: bool) -> None:
    """Install the bundled skills into $LEMMATA_HOME/skills, or OWNER/NAME from the skill registry.

    OWNER/NAME is installed by the registry's client program (LEMMATA_SKILLS_CLIENT, default
    clawhub), which is installed separately."""
    target = lemmata_home() / SKILLS
    if skill is None:
        install_bundled(target, force)
    else:
        install_from_registry(validated_ref(skill), target, force)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def install_bundled(target: Path, force: bool) -> None:
    manifest_path = target / MANIFEST
    manifest = _read_manifest(manifest_path)
    counts = {"installed": 0, "updated": 0, "up to date": 0, "kept": 0, "replaced": 0}
    for source in skill_files(BUNDLED_DIR, top_level_only=True):
        dest, content = target / source.name, source.read_text(encoding="utf-8")
        state = bundled_state(dest, content, manifest.get(source.name), force)
        counts[state] += 1
        if state == "kept":
            click.echo(
                f"kept       {dest}: changed since lemmata installed it (--force replaces it with the bundled one)"
            )
            continue
        if state != "up to date":
            atomic_write_text(dest, content)
            click.echo(f"{state:<10} {dest}")
        manifest[source.name] = sha256(content.encode("utf-8"))
    atomic_write_text(manifest_path, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    total = sum(counts.values())
    if counts["up to date"] == total:
        click.echo(f"all {total} bundled skills are up to date in {target}")
    else:
        click.echo(f"bundled skills in {target}: " + ", ".join(f"{n} {state}" for state, n in counts.items() if n))


def bundled_state(dest: Path, content: str, installed_hash: str | None, force: bool) -> str:
    """installed (new), up to date, updated (ours, older), replaced or kept (changed by the user)."""
    if not dest.is_file():
        return "installed"
    current = sha256(dest.read_bytes())
    if current == sha256(content.encode("utf-8")):
        return "up to date"
    if current == installed_hash:
        return "updated"
    return "replaced" if force else "kept"


def _read_manifest(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}


def validated_ref(ref: str) -> str:
    """OWNER/NAME, each of letters, digits, '-', '_', '.' (not only dots, not a leading '-')."""
    segments = ref.split("/")
    if not SKILL_REF.fullmatch(ref) or any(s.strip(".") == "" or s.startswith("-") for s in segments):
        raise click.UsageError(
            f"{ref!r} is not a skill name of the registry: expected OWNER/NAME, two segments "
            "of letters, digits, '-', '_' and '.' separated by one '/' (e.g. someone/proof-tactics)"
        )
    return ref


def client_command() -> list[str]:
    """The client program and its leading arguments (LEMMATA_SKILLS_CLIENT, e.g. `npx --yes clawhub`)."""
    configured = load_environment().get(CLIENT_VARIABLE, "").strip() or DEFAULT_CLIENT
    try:
        words = shlex.split(configured)
    except ValueError as exc:
        raise UserError(f"{CLIENT_VARIABLE}={configured!r} cannot be split into words: {exc}") from None
    program = shutil.which(words[0])
    if program is None:
        raise UserError(
            f"the skill registry client {words[0]!r} is not on PATH: install it (for ClawHub: "
            f"`npm i -g clawhub`), or set {CLIENT_VARIABLE} to the program to use"
        )
    return [program, *words[1:]]


def install_from_registry(ref: str, target: Path, force: bool) -> None:
    command = client_command()
    home = target.parent
    target.mkdir(parents=True, exist_ok=True)
    # --workdir keeps the client's lock file in $LEMMATA_HOME, not in the current directory;
    # --no-input: stdin is closed, so the client must fail rather than ask.
    argv = [*command, "install", ref, "--workdir", str(home), "--dir", str(target), "--no-input"]
    argv += ["--force"] if force else []
    before = _fingerprints(target)
    done = run_client(argv, ref)
    changed = sorted(p for p, digest in _fingerprints(target).items() if before.get(p) != digest)
    if not changed:
        click.echo(f"lemmata: {Path(command[0]).name} reported success but no skill file changed in {target}", err=True)
        _echo_tail(done.stdout)
        return
    report_installed(changed)


def run_client(argv: list[str], ref: str) -> subprocess.CompletedProcess[str]:
    name = Path(argv[0]).name
    try:
        done = run_in_own_group(argv, CLIENT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise LemmataError(f"{name} install {ref} did not finish within {CLIENT_TIMEOUT_S} s") from None
    except OSError as exc:
        raise UserError(f"the skill registry client {argv[0]} could not be started: {exc.strerror or exc}") from None
    if done.returncode != 0:
        output = done.stderr if done.stderr.strip() else done.stdout
        _echo_tail(output)
        how = (
            f"was killed by signal {-done.returncode}"
            if done.returncode < 0
            else f"exited with status {done.returncode}"
        )
        above = " (its last lines are above)" if output.strip() else ""
        raise LemmataError(f"{name} install {ref} failed: it {how}{above}")
    return done


def run_in_own_group(argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """Run with stdin closed; on a timeout or Ctrl+C the whole process group goes (npx starts node)."""
    with subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise
    return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)


def _echo_tail(output: str) -> None:
    for line in output.strip().splitlines()[-STDERR_LINES:]:
        click.echo(f"  | {line}", err=True)


def _fingerprints(target: Path) -> dict[Path, str]:
    return {p: _digest(p) for p in skill_files(target)}


def _digest(path: Path) -> str:
    try:
        return sha256(path.read_bytes())
    except OSError:
        return ""  # unreadable: load_file reports it


def report_installed(paths: list[Path]) -> None:
    """Each new or changed skill file, parsed as the registry will: usable, or what is wrong."""
    for path in paths:
        try:
            skill = load_file(path)
        except SkillError as exc:
            click.echo(
                f"warning: {path}: {exc}; lemmata skips this skill until it is fixed "
                "(its front matter needs name, description and roles, e.g. `roles: [prover]`)",
                err=True,
            )
        else:
            click.echo(f"installed  {skill.name} ({path}): for {', '.join(skill.roles)}")
