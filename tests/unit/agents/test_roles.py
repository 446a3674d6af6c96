"""Agent roles: the 19 names, their token-limit settings and tiers, and `lemmata roles`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

import lemmata
from lemmata.agents.roles import ROLES, role
from lemmata.cli.main import cli
from lemmata.settings import Settings
from support.scripted_backend import scripted_client

EXPECTED_SETTING = {
    "survey": "MAX_TOKENS_AGENT",
    "extractor": "MAX_TOKENS_ANALYST",
    "ideation": "MAX_TOKENS_PLANNER",
    "planner": "MAX_TOKENS_PLANNER",
    "decomposer": "MAX_TOKENS_DECOMPOSER",
    "architect": "MAX_TOKENS_ARCHITECT",
    "prover": "MAX_TOKENS_PROVER",
    "verifier": "MAX_TOKENS_VERIFIER",
    "refuter": "MAX_TOKENS_VERIFIER",  # the verifier's second, adversarial check (issue 21)
    "assembler": "MAX_TOKENS_ASSEMBLER",
    "consistency": "MAX_TOKENS_VERIFIER",
    "crystallizer": "MAX_TOKENS_CRYSTALLIZER",
    "formalizer": "MAX_TOKENS_FORMALIZER",
    "refiner": "MAX_TOKENS_FORMALIZER",
    "counterexample": "MAX_TOKENS_FORMALIZER",
    "analyst": "MAX_TOKENS_ANALYST",
    "sketch": "MAX_TOKENS_SKETCH",
    "compress": "MAX_TOKENS_COMPRESS",
    "experiment": "MAX_TOKENS_AGENT",
    "writer": "MAX_TOKENS_AGENT",
    "qa": "MAX_TOKENS_AGENT",
}
#: Roles whose answer is parsed as JSON (they have an answer schema).
JSON_ROLES = {
    "survey",
    "extractor",
    "ideation",
    "planner",
    "decomposer",
    "architect",
    "verifier",
    "refuter",
    "consistency",
    "experiment",
    "formalizer",
}


def run_roles(*args: str, env: dict[str, str] | None = None):
    result = CliRunner().invoke(cli, ["roles", *args], env=env)
    assert result.exit_code == 0, result.output
    return result


def test_exactly_the_twenty_one_roles() -> None:
    assert list(ROLES) == list(EXPECTED_SETTING)
    assert len(ROLES) == 21


@pytest.mark.parametrize("name", list(EXPECTED_SETTING))
def test_role_maps_to_an_existing_max_tokens_setting_and_a_tier(name: str) -> None:
    spec = role(name)
    assert spec.name == name
    assert spec.max_tokens_setting == EXPECTED_SETTING[name]
    assert spec.max_tokens_setting in Settings.model_fields
    assert spec.tier in ("active", "fast")
    assert spec.purpose
    assert spec.max_tokens(Settings()) == Settings.model_fields[spec.max_tokens_setting].default


def test_role_limit_follows_the_setting() -> None:
    settings = Settings.from_mapping({"MAX_TOKENS_FORMALIZER": "77", "MAX_TOKENS_COMPRESS": "33"})
    assert [role(n).max_tokens(settings) for n in ("formalizer", "refiner", "counterexample")] == [77, 77, 77]
    assert role("compress").max_tokens(settings) == 33
    assert role("prover").max_tokens(settings) == 4096


def test_unknown_role_is_refused() -> None:
    with pytest.raises(ValueError, match="nobody"):
        role("nobody")


def test_json_schema_exactly_for_json_answering_roles() -> None:
    for name, spec in ROLES.items():
        schema = spec.json_schema()
        if name in JSON_ROLES:
            assert isinstance(schema, dict) and schema.get("type") == "object", name
            jsonschema.Draft202012Validator.check_schema(schema)
        else:
            assert schema is None, name


def test_only_the_sketch_and_the_papers_prose_are_asked_in_the_models_own_words() -> None:
    """Their echoes are ended by the embedded backend; a proof, an assembly or a formal statement
    may restate what its prompt holds."""
    assert sorted(name for name, spec in ROLES.items() if spec.own_words) == ["sketch", "writer"]
    client, backend = scripted_client({"sketch": ["By [L1]."], "prover": ["Proof."]})
    client.complete("sketch", "system", "user")
    client.complete("prover", "system", "user")
    assert backend.calls("sketch")[0].own_words and not backend.calls("prover")[0].own_words


def test_roles_command_prints_the_table() -> None:
    lines = run_roles().stdout.splitlines()
    assert lines[0].split()[:4] == ["role", "setting", "tokens", "tier"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert list(rows) == list(EXPECTED_SETTING)
    for name, cells in rows.items():
        spec = ROLES[name]
        assert cells[1:4] == [spec.max_tokens_setting, str(spec.max_tokens(Settings())), spec.tier]
        assert ("(JSON answer)" in " ".join(cells)) == (name in JSON_ROLES)


def test_roles_command_table_shows_resolved_limits() -> None:
    lines = run_roles(env={"MAX_TOKENS_SKETCH": "4321"}).stdout.splitlines()
    sketch = next(line for line in lines if line.startswith("sketch "))
    assert sketch.split()[2] == "4321"


def test_roles_json_is_valid_and_complete() -> None:
    table = json.loads(run_roles("--json").stdout)
    assert [row["role"] for row in table] == list(EXPECTED_SETTING)
    for row in table:
        name = row["role"]
        assert row["max_tokens_setting"] == EXPECTED_SETTING[name]
        assert row["max_tokens"] == Settings.model_fields[row["max_tokens_setting"]].default
        assert row["model_tier"] in ("active", "fast")
        assert (row["answer_schema"] is not None) == (name in JSON_ROLES), name
        if row["answer_schema"] is not None:
            assert row["answer_schema"] == ROLES[name].json_schema()


def test_roles_json_follows_max_tokens_prover_from_the_environment() -> None:
    table = {row["role"]: row for row in json.loads(run_roles("--json", env={"MAX_TOKENS_PROVER": "1234"}).stdout)}
    assert table["prover"]["max_tokens"] == 1234
    assert table["assembler"]["max_tokens"] == 4096


def test_the_roles_said_not_to_be_called_are_called_nowhere_and_the_others_somewhere() -> None:
    """Issue 23: MAX_TOKENS_SKETCH was a setting no call used, unsaid (issue 36 gave it its call).
    Each role no stage calls
    says why (`lemmata roles`); a scan of the package keeps the claim true both ways."""
    package = Path(lemmata.__file__).parent
    sources = "\n".join(
        path.read_text(encoding="utf-8") for path in package.rglob("*.py") if "testing" not in path.parts
    )
    # A role is called as client.complete("<role>", ...), complete_reply(...), or through an agent
    # loop, AgentSpec("<role>", ...).
    called = re.compile(r"""(?:\.complete(?:_reply)?|AgentSpec)\(\s*["'](\w+)["']""")
    named = set(called.findall(sources))
    assert {name for name, r in ROLES.items() if r.not_called} == {"counterexample", "analyst"}
    assert named == {name for name, r in ROLES.items() if not r.not_called}
    table = {row["role"]: row for row in json.loads(run_roles("--json").stdout)}
    assert table["analyst"]["called"] is False and "the extractor" in table["analyst"]["not_called"]
    assert table["sketch"]["called"] is True  # the theory review's sketch (issue 36)
    analyst = next(line for line in run_roles().stdout.splitlines() if line.startswith("analyst "))
    assert analyst.endswith("(no call: see `lemmata roles --json`)")


def test_the_prover_is_given_the_proof_style_rules_the_paper_prints_its_proofs_under() -> None:
    """The spec's proof-style rules are the writer's, but lemmata prints the prover's proofs as they
    are: the prover is told them (issue 54: it was not told that every inequality names its source)."""
    from lemmata.agents.prompts import _template

    system, _ = _template("prover")
    assert "Every inequality names the lemma or theorem it uses" in system
    assert '"clearly"' in system and "without the justification right after" in system
