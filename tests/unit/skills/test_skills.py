"""Skills: front matter, loading order, selection within a budget, and `lemmata install-skills`."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from lemmata.agents.roles import ROLES
from lemmata.cli import skills_cmd
from lemmata.cli.main import cli
from lemmata.skills.registry import (
    BUNDLED_DIR,
    HEADING,
    STAGES,
    Skill,
    SkillError,
    load_registry,
    load_skills,
    parse_skill,
    render_skills,
    select_skills,
    skill_files,
)


def skill_text(name: str = "demo", roles: str = "[prover]", body: str = "Do the thing.", **fields: str) -> str:
    extra = "".join(f"{key}: {value}\n" for key, value in fields.items())
    return f"---\nname: {name}\ndescription: A demo skill.\nroles: {roles}\n{extra}---\n{body}\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def skill(name: str, roles: tuple[str, ...] = ("prover",), body: str = "Guidance.", **fields: object) -> Skill:
    return Skill(name=name, description="d", roles=roles, body=body, path=Path(f"{name}.md"), **fields)


# --- front matter -------------------------------------------------------------------------


def test_a_skill_parses_with_its_fields_and_body():
    text = skill_text(
        stages="[theory, experiment]",
        domains="[Graph_Theory ]",
        priority="3",
        homepage="https://example.org",
        body="Line one.\n\nLine two.",
    )
    parsed = parse_skill(text, Path("s.md"))
    assert (parsed.name, parsed.roles, parsed.stages, parsed.priority) == (
        "demo",
        ("prover",),
        ("theory", "experiment"),
        3,
    )
    assert parsed.domains == ("graph theory",)  # as domain plugins match: case, spaces, underscores
    assert parsed.body == "Line one.\n\nLine two."


def test_a_single_role_may_be_written_without_a_list():
    assert parse_skill(skill_text(roles="verifier"), Path("s.md")).roles == ("verifier",)


@pytest.mark.parametrize(
    "text, message",
    [
        pytest.param("# Just markdown\n\nNo front matter.\n", "no front matter", id="no-front-matter"),
        pytest.param("---\nname: x\ndescription: d\nroles: [prover]\nBody.\n", "not closed", id="unclosed"),
        pytest.param("---\nname: x\nroles: [prover\n---\nBody.\n", "not valid YAML", id="bad-yaml"),
        pytest.param("---\n- a\n- b\n---\nBody.\n", "not a mapping", id="front-matter-a-list"),
        pytest.param(skill_text(roles="[prover, provr]"), "unknown agent role 'provr'", id="unknown-role"),
        pytest.param(skill_text(roles="[]"), "roles", id="no-roles"),
        pytest.param(
            "---\ndescription: d\nroles: [prover]\n---\nBody.\n", "field 'name' is missing", id="missing-name"
        ),
        pytest.param("---\nname: x\ndescription: d\n---\nBody.\n", "field 'roles' is missing", id="missing-roles"),
        pytest.param(skill_text(name="Not A Slug"), "not a slug", id="name-not-a-slug"),
        pytest.param(skill_text(name='"slug\\n"'), "not a slug", id="name-with-a-final-newline"),
        pytest.param(skill_text(stages="[proofs]"), "stages[0]", id="unknown-stage"),
        pytest.param(skill_text(priority="high"), "priority", id="priority-not-an-int"),
        pytest.param(skill_text(role="prover"), "unknown field 'role'", id="singular-role-key"),
        pytest.param(skill_text(body=""), "body is empty", id="empty-body"),
        pytest.param(
            "---\nname: x\ndescription: ''\nroles: [prover]\n---\nBody.\n", "one non-empty line", id="empty-description"
        ),
    ],
)
def test_malformed_skills_say_what_is_wrong(text, message):
    with pytest.raises(SkillError, match=message.replace("[", r"\[")):
        parse_skill(text, Path("bad.md"))


def test_bad_yaml_names_the_line_in_the_file():
    with pytest.raises(SkillError, match=r"mapping values are not allowed here \(line 3\)"):
        parse_skill("---\nname: x\ndescription: a: b\nroles: [prover]\n---\nBody.\n", Path("bad.md"))


# --- loading --------------------------------------------------------------------------------


def test_a_later_source_replaces_an_earlier_skill_of_the_same_name(tmp_path):
    bundled = write(tmp_path / "a" / "demo.md", skill_text(body="bundled"))
    installed = write(tmp_path / "b" / "demo.md", skill_text(body="installed"))
    domain = write(tmp_path / "c" / "demo" / "SKILL.md", skill_text(body="domain"))
    other = write(tmp_path / "a" / "other.md", skill_text(name="other"))
    assert load_registry([[bundled, other], [installed]]).skills["demo"].body == "installed"
    registry = load_registry([[bundled, other], [installed], [domain]])
    assert registry.skills["demo"].body == "domain" and registry.skills["demo"].path == domain
    assert set(registry.skills) == {"demo", "other"} and registry.problems == ()


def test_malformed_files_are_skipped_with_a_problem_naming_the_path(tmp_path):
    good = write(tmp_path / "good.md", skill_text(name="good"))
    bad = write(tmp_path / "bad.md", "no front matter")
    binary = tmp_path / "binary.md"
    binary.write_bytes(b"\xff\xfe\x00bad")
    twin = write(tmp_path / "z-twin.md", skill_text(name="good"))
    registry = load_registry([[bad, binary, good, twin]])
    assert list(registry.skills) == ["good"] and registry.skills["good"].path == good
    problems = {p.path: str(p) for p in registry.problems}
    assert set(problems) == {bad, binary, twin}
    assert problems[bad].startswith(f"{bad}: no front matter")
    assert "cannot be read" in problems[binary] and "already in" in problems[twin]


def test_installed_skills_are_top_level_files_and_skill_md_in_folders(tmp_path):
    skills = tmp_path / "skills"
    top = write(skills / "mine.md", skill_text(name="mine"))
    nested = write(skills / "@someone" / "tactic" / "SKILL.md", skill_text(name="tactic"))
    write(skills / "@someone" / "tactic" / "references" / "notes.md", "not a skill")
    write(skills / "README.md", "not a skill either")
    write(skills / ".clawhub" / "lock.json", "{}")
    assert skill_files(skills) == sorted([top, nested])
    registry = load_skills(tmp_path, domain_dirs=[tmp_path / "no-such-domain"])
    assert {"mine", "tactic"} <= set(registry.skills) and registry.problems == ()


def test_bundled_skills_load_first_and_installed_ones_override_them(tmp_path):
    write(tmp_path / "skills" / "small-cases-first.md", skill_text(name="small-cases-first", body="my version"))
    registry = load_skills(tmp_path)
    assert registry.skills["small-cases-first"].body == "my version"
    assert "verifier-friendly-proofs" in registry.skills


def test_every_bundled_skill_is_valid_and_names_existing_roles():
    files = skill_files(BUNDLED_DIR, top_level_only=True)
    assert 4 <= len(files) <= 6
    registry = load_registry([files])
    assert registry.problems == ()
    for name, found in registry.skills.items():
        assert found.path.name == f"{name}.md"
        assert set(found.roles) <= set(ROLES) and set(found.stages) <= set(STAGES)
        assert 10 <= len(found.body.splitlines()) <= 30, name
        assert name in (BUNDLED_DIR / "README.md").read_text(encoding="utf-8")


# --- selection and rendering ---------------------------------------------------------------


def test_selection_by_role_stage_and_domain():
    skills = [
        skill("any-stage"),
        skill("theory-only", stages=("theory",)),
        skill("writer-only", roles=("writer",)),
        skill("graphs", domains=("graph theory",)),
    ]
    names = lambda role, stage, domain=None: [s.name for s in select_skills(skills, role, stage, domain)]  # noqa: E731
    assert names("prover", "theory") == ["any-stage", "theory-only"]
    assert names("prover", "experiment") == ["any-stage"]
    assert names("prover", "theory", "Graph Theory") == ["any-stage", "graphs", "theory-only"]
    assert names("prover", "theory", "number theory") == ["any-stage", "theory-only"]
    assert names("writer", "writer") == ["writer-only"]
    assert names("verifier", "theory") == []


def test_selection_orders_by_priority_then_name():
    skills = [skill("b"), skill("a"), skill("z-first", priority=5), skill("last", priority=-1)]
    assert [s.name for s in select_skills(skills, "prover", "theory", None)] == ["z-first", "a", "b", "last"]


def test_unknown_role_or_stage_is_our_bug():
    with pytest.raises(ValueError, match="unknown agent role"):
        select_skills([], "provr", "theory", None)
    with pytest.raises(ValueError, match="unknown stage"):
        select_skills([], "prover", "proving", None)


@pytest.mark.parametrize("budget", [0, 50, 150, 200, 260, 400, 10_000])
def test_the_budget_takes_whole_skills_only(budget):
    skills = [skill("a", body="x" * 100, priority=2), skill("b", body="y" * 30, priority=1), skill("c", body="z" * 60)]
    chosen = select_skills(skills, "prover", "theory", None, budget_chars=budget)
    block = render_skills(chosen)
    assert len(block) <= budget
    for s in skills:  # each skill is in the block whole, or not at all
        assert (s.body in block) == (s in chosen)
        assert (s.body[:5] in block) == (s in chosen)


def test_a_skill_that_does_not_fit_leaves_room_for_a_smaller_one():
    big, small = skill("big", body="x" * 500, priority=1), skill("small", body="y" * 20)
    chosen = select_skills([big, small], "prover", "theory", None, budget_chars=len(HEADING) + 60)
    assert chosen == [small]


def test_rendering_has_a_heading_and_each_skill_name_and_body():
    block = render_skills([skill("first", body="Body one."), skill("second", body="Body two.")])
    assert block.startswith(HEADING)
    assert "### first\nBody one." in block and block.index("### first") < block.index("### second")
    assert render_skills([]) == ""


def test_registry_prompt_block_for_the_prover_uses_bundled_skills(tmp_path):
    registry = load_skills(tmp_path)
    block = registry.prompt_block("prover", "theory")
    assert "### verifier-friendly-proofs" in block and "### latex-theorem-proof" not in block
    assert registry.prompt_block("writer", "writer", budget_chars=10) == ""


# --- lemmata install-skills: the bundled skills ---------------------------------------------


def bundled_names() -> list[str]:
    return [p.name for p in skill_files(BUNDLED_DIR, top_level_only=True)]


def test_install_bundled_then_up_to_date(lemmata_home):
    first = CliRunner().invoke(cli, ["install-skills"])
    assert first.exit_code == 0, first.output
    target = lemmata_home / "skills"
    for name in bundled_names():
        assert (target / name).read_bytes() == (BUNDLED_DIR / name).read_bytes()
        assert f"installed  {target / name}" in first.output
    assert not (target / "README.md").exists()
    second = CliRunner().invoke(cli, ["install-skills"])
    assert second.exit_code == 0
    assert second.output.strip() == f"all {len(bundled_names())} bundled skills are up to date in {target}"


def test_a_modified_installed_skill_is_kept_unless_forced(lemmata_home):
    CliRunner().invoke(cli, ["install-skills"])
    mine = lemmata_home / "skills" / "small-cases-first.md"
    edited = mine.read_text(encoding="utf-8") + "\nMy own extra rule.\n"
    mine.write_text(edited, encoding="utf-8")
    kept = CliRunner().invoke(cli, ["install-skills"])
    assert kept.exit_code == 0
    assert f"kept       {mine}: changed since lemmata installed it" in kept.output and "1 kept" in kept.output
    assert mine.read_text(encoding="utf-8") == edited
    forced = CliRunner().invoke(cli, ["install-skills", "--force"])
    assert forced.exit_code == 0 and f"replaced   {mine}" in forced.output
    assert mine.read_bytes() == (BUNDLED_DIR / mine.name).read_bytes()


def test_an_older_bundled_copy_lemmata_installed_is_updated(lemmata_home):
    CliRunner().invoke(cli, ["install-skills"])
    target = lemmata_home / "skills"
    old = target / "lemma-decomposition.md"
    old.write_text(skill_text(name="lemma-decomposition", roles="[decomposer]", body="old advice"), encoding="utf-8")
    manifest = json.loads((target / ".bundled.json").read_text(encoding="utf-8"))
    manifest[old.name] = hashlib.sha256(old.read_bytes()).hexdigest()  # as if an older lemmata installed it
    (target / ".bundled.json").write_text(json.dumps(manifest), encoding="utf-8")
    result = CliRunner().invoke(cli, ["install-skills"])
    assert f"updated    {old}" in result.output and old.read_bytes() == (BUNDLED_DIR / old.name).read_bytes()


# --- lemmata install-skills OWNER/NAME: the registry client ---------------------------------

FAKE_CLIENT = """#!{python}
import json, os, sys
from pathlib import Path
args = sys.argv[1:]
Path(os.environ["FAKE_CLIENT_LOG"]).write_text(json.dumps(args))
if os.environ.get("FAKE_CLIENT_SLEEP"):
    import time
    time.sleep(float(os.environ["FAKE_CLIENT_SLEEP"]))
if os.environ.get("FAKE_CLIENT_FAIL"):
    print("resolving...", file=sys.stderr)
    print("Error: skill not found: " + args[1], file=sys.stderr)
    sys.exit(3)
target = Path(args[args.index("--dir") + 1]) / ("@" + args[1].split("/")[0]) / args[1].split("/")[1]
target.mkdir(parents=True, exist_ok=True)
(target / "SKILL.md").write_text(os.environ["FAKE_CLIENT_SKILL"])
(target / "notes.md").write_text("extra file, not a skill")
print("OK. Installed " + args[1] + " -> " + str(target))
"""


@pytest.fixture
def fake_client(tmp_path, monkeypatch):
    """An executable `clawhub` first on PATH that logs its argv and writes a SKILL.md into --dir."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "clawhub"
    program.write_text(FAKE_CLIENT.format(python=sys.executable), encoding="utf-8")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_CLIENT_LOG", str(tmp_path / "argv.json"))
    monkeypatch.setenv("FAKE_CLIENT_SKILL", skill_text(name="proof-tactics", roles="[prover, verifier]"))
    monkeypatch.delenv("LEMMATA_SKILLS_CLIENT", raising=False)
    return tmp_path / "argv.json"


def test_install_from_the_registry_runs_the_client_and_validates_what_it_installed(lemmata_home, fake_client):
    result = CliRunner().invoke(cli, ["install-skills", "someone/proof-tactics"])
    assert result.exit_code == 0, result.output
    target = lemmata_home / "skills"
    argv = json.loads(fake_client.read_text())
    assert argv == [
        "install",
        "someone/proof-tactics",
        "--workdir",
        str(lemmata_home),
        "--dir",
        str(target),
        "--no-input",
    ]
    installed = target / "@someone" / "proof-tactics" / "SKILL.md"
    assert f"installed  proof-tactics ({installed}): for prover, verifier" in result.output
    assert "proof-tactics" in load_skills(lemmata_home).skills


def test_force_is_passed_on_to_the_client(lemmata_home, fake_client):
    assert CliRunner().invoke(cli, ["install-skills", "--force", "someone/proof-tactics"]).exit_code == 0
    assert json.loads(fake_client.read_text())[-1] == "--force"


def test_a_malformed_installed_skill_is_reported(lemmata_home, fake_client, monkeypatch):
    monkeypatch.setenv("FAKE_CLIENT_SKILL", "---\nname: foreign\ndescription: no roles here\n---\nBody.\n")
    result = CliRunner().invoke(cli, ["install-skills", "someone/foreign"])
    assert result.exit_code == 0
    assert "warning:" in result.stderr and "field 'roles' is missing" in result.stderr
    assert "lemmata skips this skill until it is fixed" in result.stderr


def test_the_client_program_comes_from_the_setting(lemmata_home, fake_client, monkeypatch):
    (fake_client.parent / "bin" / "clawhub").rename(fake_client.parent / "bin" / "other-client")
    monkeypatch.setenv("LEMMATA_SKILLS_CLIENT", "other-client")
    assert CliRunner().invoke(cli, ["install-skills", "a/b"]).exit_code == 0
    assert json.loads(fake_client.read_text())[:2] == ["install", "a/b"]


def test_a_missing_client_is_a_clear_user_error(lemmata_home, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("LEMMATA_SKILLS_CLIENT", "no-such-skill-client")
    result = CliRunner().invoke(cli, ["install-skills", "someone/proof-tactics"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "lemmata: error: the skill registry client 'no-such-skill-client' is not on PATH: install it "
        "(for ClawHub: `npm i -g clawhub`), or set LEMMATA_SKILLS_CLIENT to the program to use"
    ]
    assert "Traceback" not in result.output


def test_a_failing_client_reports_its_status_and_last_stderr_lines(lemmata_home, fake_client, monkeypatch):
    monkeypatch.setenv("FAKE_CLIENT_FAIL", "1")
    result = CliRunner().invoke(cli, ["install-skills", "someone/missing"])
    assert result.exit_code == 1
    lines = result.stderr.rstrip().splitlines()
    assert lines[-3:] == [
        "  | resolving...",
        "  | Error: skill not found: someone/missing",
        "lemmata: error: clawhub install someone/missing failed: it exited with status 3 (its last lines are above)",
    ]


def test_a_client_that_changes_nothing_is_reported(lemmata_home, fake_client):
    CliRunner().invoke(cli, ["install-skills", "someone/proof-tactics"])
    again = CliRunner().invoke(cli, ["install-skills", "someone/proof-tactics"])
    assert again.exit_code == 0
    assert "clawhub reported success but no skill file changed" in again.stderr
    assert "  | OK. Installed someone/proof-tactics" in again.stderr


def test_a_client_that_hangs_is_stopped(lemmata_home, fake_client, monkeypatch):
    monkeypatch.setattr(skills_cmd, "CLIENT_TIMEOUT_S", 0.3)
    monkeypatch.setenv("FAKE_CLIENT_SLEEP", "5")
    result = CliRunner().invoke(cli, ["install-skills", "someone/slow"])
    assert result.exit_code == 1 and "did not finish within 0.3 s" in result.stderr


@pytest.mark.parametrize("bad", ["proof-tactics", "a/b/c", "/b", "a/", "a b/c", "../etc", "a/..", "-x/y", "a/b;rm"])
def test_a_bad_skill_name_is_a_usage_error(lemmata_home, fake_client, bad):
    result = CliRunner().invoke(cli, ["install-skills", "--", bad])
    assert result.exit_code == 2
    assert "expected OWNER/NAME" in result.output
    assert not fake_client.exists()  # the client never ran


def test_the_skills_of_the_prover_and_the_writer_hold_no_sentence_to_paste():
    """Malformed model output, the README's main command on the embedded model (2026-11-25): the
    prover opened every proof with the skill's example restatement ("Let n >= 1 and let a_1, ...,
    a_n be reals ...", "Fix eps > 0", "Let x in A be arbitrary") and proved that instead of its
    lemma. Skills a small model reads give instructions, not sentences in quotes."""
    for name in ("verifier-friendly-proofs", "latex-theorem-proof"):
        body = (BUNDLED_DIR / f"{name}.md").read_text(encoding="utf-8").split("---", 2)[2]
        assert '"' not in body, name
        assert "Let n >= 1" not in body and "Fix eps" not in body
