"""Settings: the spec's Limits table plus backend selection, validated once.

This model is the single source of truth: `config/config.yaml` and `config/schema.yaml`
are generated from it (`python -m lemmata.settings`), and a test fails if they drift.
Values come from, highest first: environment variables, the values saved from the browser's
Settings tab (`$LEMMATA_HOME/settings.json`), `./.env`, `$LEMMATA_HOME/.env`, the defaults below. Credentials are not settings: they stay in the environment and never
reach a config file, a log or an artifact. `./.env` (the working directory's, perhaps a cloned
repository's) may not say where keys and research go (REDIRECTING_SETTINGS), and no key goes over
plain http to another machine (KEYED_BASE_URLS).
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import yaml
from dotenv import dotenv_values
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from lemmata.errors import SettingsError
from lemmata.files import write_text_atomically
from lemmata.home_layout import DOTENV, RUNS

CONFIG_DIR = Path(__file__).parent / "config"

#: Environment variables that carry secrets: read from the environment (or a `.env` file) only,
#: never stored, and redacted from everything lemmata writes or shows (`lemmata.redaction`, which
#: adds the provider CLI's login tokens). The one list: a test fails on a credential-like
#: variable name in the code that is missing here.
CREDENTIAL_VARIABLES = (
    "VENDORA_API_KEY",
    "ANTHROPIC_API_KEY",
    "COMPAT_API_KEY",
    "VENDORX_API_KEY",  # model providers
    "BRAVE_SEARCH_API_KEY",
    "SEMANTIC_SCHOLAR_API_KEY",  # search services (lemmata/tools)
    "LEMMATA_API_TOKEN",  # the HTTP API's token (lemmata/server/access.py)
)

#: Base URLs a key is sent to (an API key; the provider CLI's login, through its proxy, for
#: VENDORA_BASE_URL): plain http to another machine would show the key to the network.
KEYED_BASE_URLS = ("VENDORA_BASE_URL", "COMPAT_BASE_URL", "VENDORX_BASE_URL", "SCHOLAR_BASE_URL", "WEB_SEARCH_BASE_URL")

BACKEND_ALIASES = {"anthropic": "vendora"}
#: Settings saved from the browser's Settings tab, in the data directory.
SAVED_SETTINGS = "settings.json"


#: The highest token limit a setting may have: no model answers more in one call (the largest
#: output windows are 128k tokens), so a value above it is a typo that would be sent to every call.
MAX_TOKENS_CEILING = 1_000_000


def _tokens(default: int, applies_to: str) -> Any:
    return Field(default, gt=0, le=MAX_TOKENS_CEILING, description=f"max output tokens: {applies_to}")


class Settings(BaseModel):
    """Every setting lemmata reads; field names are the environment variable names."""

    # NaN and infinity are no timeouts or thresholds: a .env's `nan` is refused, not compared.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    MAX_TOKENS_AGENT: int = _tokens(8192, "all agent reasoning loops")
    MAX_TOKENS_PROVER: int = _tokens(4096, "proof generation")
    MAX_TOKENS_PLANNER: int = _tokens(4096, "research direction planning")
    MAX_TOKENS_DECOMPOSER: int = _tokens(2048, "lemma decomposition")
    MAX_TOKENS_FORMALIZER: int = _tokens(2048, "formalization, refiner, counterexample")
    MAX_TOKENS_VERIFIER: int = _tokens(1024, "proof verification")
    MAX_TOKENS_COMPRESS: int = _tokens(512, "context compression")
    MAX_TOKENS_ASSEMBLER: int = _tokens(4096, "assembler")
    MAX_TOKENS_CRYSTALLIZER: int = _tokens(2500, "theorem crystallizer")
    MAX_TOKENS_ARCHITECT: int = _tokens(3000, "proof architect")
    MAX_TOKENS_ANALYST: int = _tokens(1600, "analysis stages")
    MAX_TOKENS_SKETCH: int = _tokens(600, "proof sketch")
    SURVEY_MAX_TURNS: int = Field(8, gt=0, description="tool-use turns of the survey agent")
    THEORY_STAGE_MAX_TURNS: int = Field(6, gt=0, description="turns per theory stage")
    WRITER_MAX_TURNS: int = Field(
        4,
        gt=0,
        description="turns for paper generation: the writer's first answer, then further calls for what it "
        "lacked (an answer cut off at its token cap, parts left out, a part that does not compile)",
    )
    PROSE_CLAIM_CHECKS: int = Field(
        2,
        ge=0,
        description="sentences of the paper's prose stating a general claim that are formalized and checked "
        "by the machines (a formalizer call or two each); one they refute is removed and listed in "
        "Limitations; 0: none",
    )
    EXPERIMENT_MAX_TURNS: int = Field(
        5,
        gt=0,
        description="turns of the experiment agent per low-confidence lemma: a failed numerical test goes back "
        "to the model for a corrected one",
    )
    PREPRINT_MAX_RESULTS: int = Field(10, gt=0, description="hard cap on preprint search results")
    LLM_RETRY_ATTEMPTS: int = Field(
        5,
        ge=0,
        description="retries of a model call after a rate limit, a 5xx, a connection error or a timeout: 5 means "
        "up to 6 attempts, 0 none",
    )
    LLM_RETRY_WAIT_MIN: float = Field(4.0, ge=0, description="exponential backoff lower bound, seconds")
    LLM_RETRY_WAIT_MAX: float = Field(90.0, ge=0, description="exponential backoff upper bound, seconds")
    LLM_TIMEOUT: float = Field(600.0, gt=0, description="seconds before one model request times out (then retried)")
    LATEX_PASS_TIMEOUT: float = Field(
        60.0,
        gt=0,
        description="seconds one pdflatex or bibtex pass may run before it is killed (an endless macro loop)",
    )
    SEARCH_TOOLS: bool = Field(
        True,
        description="false: the agents get no literature or web search (a machine without network); "
        "nothing can then be cited",
    )
    PREPRINT_BASE_URL: str = Field(
        "http://export.arxiv.org/api/query", description="arXiv API query endpoint (preprint_search)"
    )
    SCHOLAR_BASE_URL: str = Field(
        "https://api.semanticscholar.org/graph/v1", description="Semantic Scholar Graph API base URL (scholar_search)"
    )
    WEB_SEARCH_BASE_URL: str = Field(
        "https://api.search.brave.com/res/v1/web/search", description="Brave Search API web endpoint (web_search)"
    )
    PDF_BASE_URL: str = Field("https://arxiv.org/pdf", description="where preprint PDFs are fetched: <base>/<arXiv id>")
    SEARCH_TIMEOUT: float = Field(
        20.0, gt=0, description="seconds before one search or PDF request times out (then retried)"
    )
    SEARCH_RETRY_ATTEMPTS: int = Field(
        3, gt=0, description="attempts per search or PDF request on timeouts, connection errors, 429 and 5xx"
    )
    SEARCH_RETRY_WAIT_MIN: float = Field(1.0, ge=0, description="search retry backoff lower bound, seconds")
    SEARCH_RETRY_WAIT_MAX: float = Field(
        20.0, ge=0, description="search retry backoff upper bound, seconds; also caps a service's Retry-After"
    )
    SEARCH_MIN_INTERVAL_SCALE: float = Field(
        1.0,
        ge=0,
        description="factor on the polite minimum interval between requests to one service "
        "(arXiv 3 s, Semantic Scholar 1 s, web search 1 s); 0 turns the spacing off",
    )
    MEMORY_TOP_K: int = Field(
        4,
        ge=0,
        description="memories of earlier runs in the run's domain given to the planning and proving agents: "
        "the k most similar to the task; 0: none",
    )
    MEMORY_BUDGET_CHARS: int = Field(
        2400,
        ge=0,
        description="characters of prompt those memories may take (whole memories only); the embedded backend takes "
        "at most 1800",
    )
    SKILLS_BUDGET_CHARS: int = Field(
        6000,
        ge=0,
        description="characters of prompt the skills of one agent role may take (whole skills only); "
        "the embedded backend, slow to read long prompts on a CPU, takes at most 1800",
    )
    CONTEXT_COMPRESS_AFTER_TURNS: int = Field(6, gt=0, description="agent history compression period, turns")
    AUTO_VERIFY_CONFIDENCE: float = Field(
        0.85,
        ge=0,
        le=1,
        description="auto-accept threshold for verification: a proof rated at least this is accepted "
        "without a call (its turns end), but not verified, since nothing checked it",
    )
    CHECK_CONFIDENT_PROOFS: bool = Field(
        False,
        description="true: proofs rated at or above AUTO_VERIFY_CONFIDENCE are checked too (verifier and "
        "refuter calls), so that they can be verified; false: the specification's auto-accept",
    )
    STAGNATION_WINDOW: int = Field(3, gt=0, description="stagnant iterations before forced refinement")
    GATE_MODE: Literal["none", "auto", "human"] = Field(
        "auto",
        description="reviews after survey, directions and experiment: none; auto (they ask once a lemma is not "
        "verified); human (they always ask); the theory review always asks",
    )
    EXPERIMENT_MODE: Literal["auto", "true", "false"] = Field(
        "auto",
        description="auto: run only when the formal statement has quantitative signals (an inequality, a sum or limit, a growth rate, a probability, a numerical function, a congruence, arithmetic on whole numbers)",
    )
    ENFORCE_PROOF_STYLE: bool = Field(True, description="writer proof-style rules")
    LLM_BACKEND: Literal["", "vendora", "router", "local", "vendorx", "embedded", "replay"] = Field(
        "",
        description="model backend; empty: vendora when an Anthropic credential exists, else embedded "
        "(anthropic is an alias of vendora)",
    )
    LEMMATA_ACTIVE_MODEL: str = Field("", description="overrides the backend's active model")
    LEMMATA_FAST_MODEL: str = Field("", description="overrides the backend's fast model")
    VENDORA_BASE_URL: str = Field("", description="Anthropic API base URL; empty: the SDK default")
    VENDORA_CREDENTIALS_FILE: str = Field(
        "",
        description="the provider CLI's credentials file, used through a local proxy when no key is set; "
        "empty: ~/.claude/.credentials.json",
    )
    COMPAT_BASE_URL: str = Field("https://openrouter.ai/api/v1", description="router backend base URL")
    LOCAL_LLM_BASE_URL: str = Field("http://localhost:8000/v1", description="local OpenAI-compatible server")
    LOCAL_LLM_MODEL: str = Field("local-model", description="model name sent to the local server")
    VENDORX_BASE_URL: str = Field("https://api.novita.ai/v3/openai", description="vendorx backend base URL")
    VENDORX_MODEL: str = Field("deepseek/deepseek-v3.1", description="vendorx model name")
    LEMMATA_EMBEDDED_MODEL: str = Field(
        "", description="GGUF file for the embedded backend; empty: the bundled default model"
    )
    LEMMATA_EMBEDDED_CONTEXT: int = Field(16384, ge=2048, description="embedded model context window, tokens")
    LEMMATA_EMBEDDED_MAX_TOKENS: int = Field(
        2048,
        gt=0,
        description="cap on every answer of the embedded model (its answers past ~2k tokens are loops or padding)",
    )
    LEMMATA_EMBEDDED_THREADS: int = Field(0, ge=0, description="embedded model threads; 0: one per available core")
    LEMMATA_REPLAY: str = Field(
        "", description="recorded llm_calls.jsonl (or a script of that shape) for LLM_BACKEND=replay"
    )

    @field_validator("LLM_BACKEND", mode="before")
    @classmethod
    def _backend_alias(cls, value: Any) -> Any:
        return BACKEND_ALIASES.get(value, value) if isinstance(value, str) else value

    @field_validator("EXPERIMENT_MODE", mode="before")
    @classmethod
    def _experiment_mode_from_yaml_bool(cls, value: Any) -> Any:
        # YAML and `snakemake --config` turn a bare true/false into booleans.
        return str(value).lower() if isinstance(value, bool) else value

    @model_validator(mode="after")
    def _backoff_bounds_in_order(self) -> Settings:
        for prefix in ("LLM", "SEARCH"):
            if getattr(self, f"{prefix}_RETRY_WAIT_MIN") > getattr(self, f"{prefix}_RETRY_WAIT_MAX"):
                raise ValueError(f"{prefix}_RETRY_WAIT_MIN must not exceed {prefix}_RETRY_WAIT_MAX")
        return self

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> Settings:
        """Validate the known names in `values`; one-line SettingsError on a bad value."""
        known = {name: values[name] for name in cls.model_fields if name in values}
        try:
            settings = cls(**known)
        except ValidationError as exc:
            raise SettingsError(_one_line(exc, known)) from None
        for name in KEYED_BASE_URLS:
            url = getattr(settings, name)
            if _plain_http_to_another_machine(url):
                raise SettingsError(
                    f"{name}={url!r} would send a key over plain http to another machine: use https://, "
                    "or http:// to a loopback address (127.0.0.1, localhost, [::1])"
                )
        return settings

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Settings:
        return cls.from_mapping(load_environment(environ))

    def workflow_config(self) -> dict[str, Any]:
        """The settings as Snakemake config values (no credentials: they are not settings)."""
        return self.model_dump()


#: What a `./.env` may not set: where keys are sent (every base URL), which login is used, where
#: research is written, and the HTTP API's token (a token its writer knows opens `lemmata serve` to
#: them). A `.env` in the working directory may be a cloned repository's, written by anyone; these
#: come from the environment, the saved settings or $LEMMATA_HOME/.env (SECURITY.md).
REDIRECTING_SETTINGS = (
    *(name for name in Settings.model_fields if name.endswith("_BASE_URL")),
    "VENDORA_CREDENTIALS_FILE",
    "LEMMATA_HOME",
    "LEMMATA_API_TOKEN",
)
_warned_about: set[Path] = set()  # the ./.env files whose ignored settings were named already


def lemmata_home(environ: Mapping[str, str] | None = None) -> Path:
    """$LEMMATA_HOME from the environment (never from `./.env`: working_directory_dotenv says so), else
    ~/.lemmata."""
    environ = os.environ if environ is None else environ
    return Path(environ["LEMMATA_HOME"]).expanduser() if environ.get("LEMMATA_HOME") else Path.home() / ".lemmata"


def data_home_of(run_dir: Path) -> Path:
    """The data directory a run belongs to (memories, installed skills, prices): the one it lives
    in (`<home>/runs/<id>/`); for a workflow run by hand elsewhere, $LEMMATA_HOME."""
    return run_dir.parent.parent if run_dir.parent.name == RUNS else lemmata_home()


def load_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The process environment over the saved settings over `./.env` over `$LEMMATA_HOME/.env`."""
    environ = dict(os.environ if environ is None else environ)
    home = lemmata_home(environ)
    merged: dict[str, str] = {}
    if (home / DOTENV).is_file():
        merged.update({k: v for k, v in read_dotenv(home / DOTENV).items() if v is not None})
    merged.update(working_directory_dotenv(home))
    merged.update({name: str(value) for name, value in saved_settings(environ).items()})
    merged.update(environ)
    return merged


def read_dotenv(path: Path) -> dict[str, str | None]:
    """The variables of a `.env` file (none if there is no file); SettingsError naming it when it
    cannot be read or is not UTF-8 text."""
    try:
        return dict(dotenv_values(path)) if path.is_file() else {}
    except UnicodeDecodeError:
        raise SettingsError(f"{path} is not UTF-8 text: save it as UTF-8, or remove it") from None
    except OSError as exc:
        raise SettingsError(f"{path} cannot be read ({exc.strerror}): fix its permissions, or remove it") from None


def working_directory_dotenv(home: Path) -> dict[str, str]:
    """`./.env`'s values but REDIRECTING_SETTINGS, which are named once per process on stderr (the
    data home's own `.env`, when the working directory is the home, is trusted as such)."""
    dotenv = Path.cwd() / DOTENV
    if not dotenv.is_file():
        return {}
    values = {k: v for k, v in read_dotenv(dotenv).items() if v is not None}
    if dotenv.resolve() == (home / DOTENV).resolve():
        return values
    ignored = [name for name in values if name in REDIRECTING_SETTINGS]
    if ignored and dotenv.resolve() not in _warned_about:
        _warned_about.add(dotenv.resolve())
        where = "the environment" if ignored == ["LEMMATA_HOME"] else f"the environment or in {home / DOTENV}"
        which = "which is" if len(ignored) == 1 else "which are"
        sys.stderr.write(
            f"lemmata: warning: {dotenv} sets {', '.join(ignored)}, {which} ignored there (they decide where "
            f"your keys and research go and who reaches your server): set {'it' if len(ignored) == 1 else 'them'} in {where}\n"
        )
    return {k: v for k, v in values.items() if k not in ignored}


def _plain_http_to_another_machine(url: str) -> bool:
    parts = urlsplit(url.strip())
    if parts.scheme.lower() != "http":
        return False
    host = (parts.hostname or "").rstrip(".")
    if host == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name: it could resolve anywhere
        return True


def saved_settings_path(environ: Mapping[str, str] | None = None) -> Path:
    return lemmata_home(environ) / SAVED_SETTINGS


def saved_settings(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The settings saved from the browser; a file that is not what we write counts as none
    (the Settings tab shows the defaults then, and saving writes it anew)."""
    try:
        saved = json.loads(saved_settings_path(environ).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in saved.items() if k in Settings.model_fields} if isinstance(saved, dict) else {}


def save_settings(values: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> None:
    """Validate `values` together with what is saved already, then save them all (atomically);
    SettingsError naming the first bad one, and nothing written."""
    unknown = sorted(set(values) - set(Settings.model_fields))
    if unknown:
        raise SettingsError(f"{unknown[0]} is not a setting")
    merged = {**saved_settings(environ), **values}
    Settings.from_mapping(merged)
    path = saved_settings_path(environ)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(path, json.dumps(merged, indent=2, sort_keys=True) + "\n")


def _one_line(exc: ValidationError, values: Mapping[str, Any]) -> str:
    error = exc.errors()[0]
    if not error["loc"]:  # a rule across settings: the backoff bounds of LLM_ or SEARCH_ retries
        bound = re.search(r"(\w+)_RETRY_WAIT_MIN", error["msg"])
        assert bound is not None  # the one model-level rule, _backoff_bounds_in_order, names it
        prefix = bound.group(1)
        low, high = f"{prefix}_RETRY_WAIT_MIN", f"{prefix}_RETRY_WAIT_MAX"
        wait_min = values.get(low, Settings.model_fields[low].default)
        wait_max = values.get(high, Settings.model_fields[high].default)
        return f"{low}={wait_min!r} exceeds {high}={wait_max!r}: lower the first or raise the second"
    name = str(error["loc"][0])
    shown = repr(values.get(name))
    shown = shown if len(shown) <= 40 else shown[:37] + "..."  # a pasted paragraph is not echoed whole
    return f"{name}={shown} is not valid: {allowed_values(name)}"


def allowed_values(name: str) -> str:
    """Human wording of what a setting accepts, from its field definition."""
    schema = Settings.model_json_schema()["properties"][name]
    if "enum" in schema:
        shown = ["(empty)" if v == "" else str(v) for v in schema["enum"]]
        extra = " (anthropic is an alias of vendora)" if name == "LLM_BACKEND" else ""
        return "allowed values are " + ", ".join(shown) + extra
    kind = {"integer": "an integer", "number": "a number", "boolean": "true or false", "string": "a string"}[
        schema["type"]
    ]
    bounds = []
    if "exclusiveMinimum" in schema:
        bounds.append(f"greater than {_number(schema['exclusiveMinimum'])}")
    if "minimum" in schema:
        bounds.append(f"at least {_number(schema['minimum'])}")
    if "maximum" in schema:
        bounds.append(f"at most {_number(schema['maximum'])}")
    return "expected " + kind + (" " + " and ".join(bounds) if bounds else "")


def _number(value: float) -> str:
    """A bound as people write it: 1000000, 0.5 (not 1e+06)."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def render_config_yaml() -> str:
    header = "# Generated from lemmata/settings.py by `python -m lemmata.settings`; do not edit.\n"
    return header + yaml.safe_dump(Settings().workflow_config(), sort_keys=False)


def render_schema_yaml() -> str:
    schema = Settings.model_json_schema()
    properties = {}
    for name, prop in schema["properties"].items():
        prop = {k: v for k, v in prop.items() if k not in ("title", "default")}
        if name == "EXPERIMENT_MODE":
            prop.pop("type", None)
            prop["enum"] = [*prop["enum"], True, False]
        if name == "LLM_BACKEND":
            prop["enum"] = [*prop["enum"], *BACKEND_ALIASES]
        properties[name] = prop
    document = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "description": "lemmata workflow configuration (generated from lemmata/settings.py)",
        "type": "object",
        "properties": properties,
    }
    header = "# Generated from lemmata/settings.py by `python -m lemmata.settings`; do not edit.\n"
    return header + yaml.safe_dump(document, sort_keys=False)


def write_config_files(directory: Path = CONFIG_DIR) -> None:
    (directory / "config.yaml").write_text(render_config_yaml(), encoding="utf-8")
    (directory / "schema.yaml").write_text(render_schema_yaml(), encoding="utf-8")


if __name__ == "__main__":
    write_config_files()
    sys.stdout.write(f"wrote {CONFIG_DIR}/config.yaml and schema.yaml\n")
