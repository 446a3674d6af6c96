"""Settings: the Limits table defaults, env/.env precedence, one-line errors, generated config files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from lemmata.cli.main import cli
from lemmata.errors import SettingsError, UserError
from lemmata.settings import CONFIG_DIR, Settings, render_config_yaml, render_schema_yaml

#: The spec's Limits table (plus our choices STAGNATION_WINDOW and EXPERIMENT_MODE).
LIMITS_DEFAULTS = {
    "MAX_TOKENS_AGENT": 8192,
    "MAX_TOKENS_PROVER": 4096,
    "MAX_TOKENS_PLANNER": 4096,
    "MAX_TOKENS_DECOMPOSER": 2048,
    "MAX_TOKENS_FORMALIZER": 2048,
    "MAX_TOKENS_VERIFIER": 1024,
    "MAX_TOKENS_COMPRESS": 512,
    "MAX_TOKENS_ASSEMBLER": 4096,
    "MAX_TOKENS_CRYSTALLIZER": 2500,
    "MAX_TOKENS_ARCHITECT": 3000,
    "MAX_TOKENS_ANALYST": 1600,
    "MAX_TOKENS_SKETCH": 600,
    "SURVEY_MAX_TURNS": 8,
    "THEORY_STAGE_MAX_TURNS": 6,
    "WRITER_MAX_TURNS": 4,
    "PREPRINT_MAX_RESULTS": 10,
    "LLM_RETRY_ATTEMPTS": 5,
    "LLM_RETRY_WAIT_MIN": 4,
    "LLM_RETRY_WAIT_MAX": 90,
    "CONTEXT_COMPRESS_AFTER_TURNS": 6,
    "AUTO_VERIFY_CONFIDENCE": 0.85,
    "STAGNATION_WINDOW": 3,
    "GATE_MODE": "auto",
    "EXPERIMENT_MODE": "auto",
    "ENFORCE_PROOF_STYLE": True,
    "LOCAL_LLM_BASE_URL": "http://localhost:8000/v1",
}

#: A non-default value for each setting, as an environment variable would carry it.
OTHER_VALUES = {
    "MAX_TOKENS_AGENT": ("1001", 1001),
    "MAX_TOKENS_PROVER": ("1002", 1002),
    "MAX_TOKENS_PLANNER": ("1003", 1003),
    "MAX_TOKENS_DECOMPOSER": ("1004", 1004),
    "MAX_TOKENS_FORMALIZER": ("1005", 1005),
    "MAX_TOKENS_VERIFIER": ("1006", 1006),
    "MAX_TOKENS_COMPRESS": ("1007", 1007),
    "MAX_TOKENS_ASSEMBLER": ("1008", 1008),
    "MAX_TOKENS_CRYSTALLIZER": ("1009", 1009),
    "MAX_TOKENS_ARCHITECT": ("1010", 1010),
    "MAX_TOKENS_ANALYST": ("1011", 1011),
    "MAX_TOKENS_SKETCH": ("1012", 1012),
    "SURVEY_MAX_TURNS": ("11", 11),
    "THEORY_STAGE_MAX_TURNS": ("12", 12),
    "WRITER_MAX_TURNS": ("13", 13),
    "PREPRINT_MAX_RESULTS": ("14", 14),
    "LLM_RETRY_ATTEMPTS": ("2", 2),
    "LLM_RETRY_WAIT_MIN": ("0.5", 0.5),
    "LLM_RETRY_WAIT_MAX": ("7.5", 7.5),
    "CONTEXT_COMPRESS_AFTER_TURNS": ("9", 9),
    "AUTO_VERIFY_CONFIDENCE": ("0.5", 0.5),
    "STAGNATION_WINDOW": ("5", 5),
    "GATE_MODE": ("human", "human"),
    "EXPERIMENT_MODE": ("false", "false"),
    "ENFORCE_PROOF_STYLE": ("false", False),
    "LOCAL_LLM_BASE_URL": ("http://127.0.0.1:9999/v1", "http://127.0.0.1:9999/v1"),
}

#: (variable, wrong value, a word of the allowed-values wording that must appear).
WRONG_VALUES = [
    ("MAX_TOKENS_PROVER", "abc", "integer"),
    ("MAX_TOKENS_SKETCH", "0", "greater than 0"),
    ("MAX_TOKENS_AGENT", "-5", "greater than 0"),
    ("SURVEY_MAX_TURNS", "many", "integer"),
    ("LLM_RETRY_ATTEMPTS", "-1", "at least 0"),
    ("GATE_MODE", "sometimes", "none, auto, human"),
    ("EXPERIMENT_MODE", "perhaps", "auto, true, false"),
    ("LLM_RETRY_WAIT_MIN", "-1", "at least 0"),
    ("LLM_RETRY_WAIT_MAX", "-0.5", "at least 0"),
    ("AUTO_VERIFY_CONFIDENCE", "2", "at most 1"),
    ("AUTO_VERIFY_CONFIDENCE", "-0.1", "at least 0"),
    ("LLM_BACKEND", "x", "vendora, router, local, vendorx, embedded, replay"),
    ("ENFORCE_PROOF_STYLE", "maybe", "true or false"),
]


def write_dotenv(directory: Path, **values: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / ".env").write_text("".join(f"{k}={v}\n" for k, v in values.items()), encoding="utf-8")


# --- defaults and sources -------------------------------------------------------------------


def test_every_limit_has_its_spec_default() -> None:
    settings = Settings.from_environment()
    actual = {name: getattr(settings, name) for name in LIMITS_DEFAULTS}
    assert actual == LIMITS_DEFAULTS
    for name in ("MAX_TOKENS_PROVER", "SURVEY_MAX_TURNS", "LLM_RETRY_ATTEMPTS"):
        assert type(getattr(settings, name)) is int


@pytest.mark.parametrize("name", sorted(OTHER_VALUES))
def test_each_setting_is_read_from_the_environment_variable_of_its_name(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw, parsed = OTHER_VALUES[name]
    monkeypatch.setenv(name, raw)
    settings = Settings.from_environment()
    assert getattr(settings, name) == parsed
    # Only that setting moved.
    others = {n: getattr(settings, n) for n in LIMITS_DEFAULTS if n != name}
    assert others == {n: v for n, v in LIMITS_DEFAULTS.items() if n != name}


def test_an_explicit_mapping_replaces_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_TOKENS_PROVER", "111")
    assert Settings.from_environment({"MAX_TOKENS_PROVER": "222"}).MAX_TOKENS_PROVER == 222


def test_home_dotenv_is_read(lemmata_home: Path) -> None:
    write_dotenv(lemmata_home, MAX_TOKENS_PROVER="3001", GATE_MODE="none")
    settings = Settings.from_environment()
    assert (settings.MAX_TOKENS_PROVER, settings.GATE_MODE) == (3001, "none")


def test_working_directory_dotenv_is_read() -> None:
    write_dotenv(Path.cwd(), MAX_TOKENS_VERIFIER="777", ENFORCE_PROOF_STYLE="false")
    settings = Settings.from_environment()
    assert (settings.MAX_TOKENS_VERIFIER, settings.ENFORCE_PROOF_STYLE) == (777, False)


def test_precedence_environment_over_cwd_dotenv_over_home_dotenv_over_default(
    lemmata_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_dotenv(lemmata_home, MAX_TOKENS_PROVER="1", MAX_TOKENS_PLANNER="1", MAX_TOKENS_ARCHITECT="1")
    write_dotenv(Path.cwd(), MAX_TOKENS_PROVER="2", MAX_TOKENS_PLANNER="2")
    monkeypatch.setenv("MAX_TOKENS_PROVER", "3")
    settings = Settings.from_environment()
    assert settings.MAX_TOKENS_PROVER == 3  # environment wins
    assert settings.MAX_TOKENS_PLANNER == 2  # ./.env over $LEMMATA_HOME/.env
    assert settings.MAX_TOKENS_ARCHITECT == 1  # $LEMMATA_HOME/.env over default
    assert settings.MAX_TOKENS_AGENT == 8192  # default


def test_dotenv_of_another_directory_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_dotenv(tmp_path / "elsewhere", MAX_TOKENS_PROVER="5")
    monkeypatch.chdir(tmp_path)
    assert Settings.from_environment().MAX_TOKENS_PROVER == 4096
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert Settings.from_environment().MAX_TOKENS_PROVER == 5


def test_wrong_value_in_a_dotenv_file_is_reported_too(lemmata_home: Path) -> None:
    write_dotenv(lemmata_home, GATE_MODE="sometimes")
    with pytest.raises(SettingsError, match="GATE_MODE"):
        Settings.from_environment()


@pytest.mark.parametrize("alias", ["anthropic", "vendora"])
def test_anthropic_is_an_alias_of_vendora(alias: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_BACKEND", alias)
    assert Settings.from_environment().LLM_BACKEND == "vendora"


def test_experiment_mode_accepts_yaml_booleans() -> None:
    # `snakemake --config EXPERIMENT_MODE=true` and YAML turn it into a bool.
    assert Settings.from_mapping({"EXPERIMENT_MODE": True}).EXPERIMENT_MODE == "true"
    assert Settings.from_mapping({"EXPERIMENT_MODE": False}).EXPERIMENT_MODE == "false"


# --- wrong values ---------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "value", "allowed"), WRONG_VALUES)
def test_wrong_value_is_one_line_naming_variable_and_allowed_values(
    name: str, value: str, allowed: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as caught:
        Settings.from_environment()
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{name}=")
    assert value in message
    assert allowed in message
    assert isinstance(caught.value, UserError) and caught.value.exit_code == 2


def test_wrong_backend_message_mentions_the_alias(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_BACKEND", "x")
    with pytest.raises(SettingsError, match="anthropic is an alias of vendora"):
        Settings.from_environment()


# --- generated config files -----------------------------------------------------------------

REGENERATE = "config files drifted from lemmata/settings.py: run `python -m lemmata.settings`"


def test_committed_config_yaml_is_generated_from_settings() -> None:
    committed = (CONFIG_DIR / "config.yaml").read_text(encoding="utf-8")
    assert committed == render_config_yaml(), REGENERATE


def test_committed_schema_yaml_is_generated_from_settings() -> None:
    committed = (CONFIG_DIR / "schema.yaml").read_text(encoding="utf-8")
    assert committed == render_schema_yaml(), REGENERATE


def load_config_and_schema() -> tuple[dict, dict]:
    config = yaml.safe_load((CONFIG_DIR / "config.yaml").read_text(encoding="utf-8"))
    schema = yaml.safe_load((CONFIG_DIR / "schema.yaml").read_text(encoding="utf-8"))
    return config, schema


def test_config_yaml_validates_against_schema_yaml_and_holds_the_defaults() -> None:
    config, schema = load_config_and_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(config)
    assert {name: config[name] for name in LIMITS_DEFAULTS} == LIMITS_DEFAULTS
    assert set(config) == set(Settings.model_fields)
    # No credential ever reaches the config file.
    assert not any("API_KEY" in name for name in config)


@pytest.mark.parametrize(
    ("name", "bad"),
    [
        ("MAX_TOKENS_PROVER", "abc"),
        ("MAX_TOKENS_PROVER", 0),
        ("GATE_MODE", "sometimes"),
        ("AUTO_VERIFY_CONFIDENCE", 2),
        ("LLM_RETRY_WAIT_MIN", -1),
        ("ENFORCE_PROOF_STYLE", "maybe"),
        ("LLM_BACKEND", "x"),
        ("EXPERIMENT_MODE", "perhaps"),
    ],
)
def test_bad_value_fails_schema_validation(name: str, bad: object) -> None:
    config, schema = load_config_and_schema()
    config[name] = bad
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(config)


def test_schema_accepts_yaml_boolean_experiment_mode() -> None:
    config, schema = load_config_and_schema()
    config["EXPERIMENT_MODE"] = True
    jsonschema.Draft202012Validator(schema).validate(config)


# --- through the CLI ------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "value", "allowed"), WRONG_VALUES)
def test_cli_reports_a_wrong_setting_as_one_line_with_exit_code_2(name: str, value: str, allowed: str) -> None:
    result = CliRunner().invoke(cli, ["roles"], env={name: value})
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert name in lines[0] and allowed in lines[0]
    assert "Traceback" not in result.stderr


def test_cli_reads_a_wrong_value_from_the_home_dotenv(lemmata_home: Path) -> None:
    write_dotenv(lemmata_home, MAX_TOKENS_PROVER="abc")
    result = CliRunner().invoke(cli, ["roles"])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "MAX_TOKENS_PROVER" in result.stderr


def test_real_lemmata_process_exits_2_with_one_stderr_line() -> None:
    executable = Path(sys.executable).with_name("lemmata")
    command = [str(executable), "roles"] if executable.exists() else [sys.executable, "-m", "lemmata.cli.main", "roles"]
    env = {**os.environ, "MAX_TOKENS_PROVER": "abc"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "MAX_TOKENS_PROVER" in lines[0] and "abc" in lines[0] and "integer" in lines[0]


def test_backoff_bounds_out_of_order_are_one_line() -> None:
    with pytest.raises(SettingsError) as caught:
        Settings.from_mapping({"LLM_RETRY_WAIT_MIN": "10", "LLM_RETRY_WAIT_MAX": "2"})
    assert str(caught.value) == (
        "LLM_RETRY_WAIT_MIN='10' exceeds LLM_RETRY_WAIT_MAX='2': lower the first or raise the second"
    )
    with pytest.raises(SettingsError) as caught:
        Settings.from_mapping({"SEARCH_RETRY_WAIT_MIN": "30"})
    assert str(caught.value) == (
        "SEARCH_RETRY_WAIT_MIN='30' exceeds SEARCH_RETRY_WAIT_MAX=20.0: lower the first or raise the second"
    )


def test_schema_accepts_the_anthropic_alias_like_settings_do() -> None:
    schema = yaml.safe_load((CONFIG_DIR / "schema.yaml").read_text())
    jsonschema.validate({"LLM_BACKEND": "anthropic"}, schema)
    assert Settings.from_mapping({"LLM_BACKEND": "anthropic"}).LLM_BACKEND == "vendora"


def test_the_working_directorys_env_cannot_set_the_api_token(tmp_path, monkeypatch, capsys) -> None:
    """A cloned repository's `.env` naming LEMMATA_API_TOKEN would open `lemmata serve` to whoever
    wrote it: ignored there, with the warning; the data home's `.env` still sets it."""
    from lemmata.settings import load_environment

    repository = tmp_path / "repository"
    repository.mkdir()
    (repository / ".env").write_text("LEMMATA_API_TOKEN=known-to-the-repository-author\nMAX_TOKENS_VERIFIER=900\n")
    monkeypatch.chdir(repository)

    loaded = load_environment()

    assert "LEMMATA_API_TOKEN" not in loaded and loaded["MAX_TOKENS_VERIFIER"] == "900"
    assert "sets LEMMATA_API_TOKEN, which is ignored there" in capsys.readouterr().err
    home = Path(os.environ["LEMMATA_HOME"])
    (home / ".env").write_text("LEMMATA_API_TOKEN=the-researchers-own\n")
    assert load_environment()["LEMMATA_API_TOKEN"] == "the-researchers-own"
