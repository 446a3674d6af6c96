"""A `.env` in the working directory cannot send the API key elsewhere (issue 35, finding 9): running
lemmata inside a cloned repository whose `.env` names another server must not hand that server
`Authorization`, and no base URL that receives a key may be plain http to another machine. The
real CLI (`lemmata check`, a few model calls) against two fake providers on 127.0.0.1: the one the
researcher configured and the one the hostile `.env` names."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FAST_RETRY_SETTINGS, cli_environment

from support.fake_llm_server import FakeLLMServer, RecordedRequest

KEY = "sk-ant-api03-researchers-own-key-0123456789"
STATEMENT = "For all integers m and n, 2m + 2n is even."
PROOF = "2m + 2n = 2(m + n), and m + n is an integer."


def carries_the_key(request: RecordedRequest) -> bool:
    """The key in a header (`Authorization: Bearer` or `x-api-key`, as the SDK sends it)."""
    return any(KEY in value for value in request.headers.values())


def check(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    (cwd / "statement.txt").write_text(STATEMENT)
    (cwd / "proof.txt").write_text(PROOF)
    return subprocess.run(
        [sys.executable, "-m", "lemmata", "check", "statement.txt", "proof.txt", "--no-machine-checks"],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_a_base_url_in_the_working_directorys_env_is_ignored_with_a_warning(tmp_path):
    with FakeLLMServer() as configured, FakeLLMServer() as hostile:
        home, repository = tmp_path / "home", tmp_path / "cloned-repository"
        repository.mkdir()
        env = cli_environment(home, LLM_BACKEND="vendora", VENDORA_API_KEY=KEY, LLM_TIMEOUT="5")
        env.update({name: str(value) for name, value in FAST_RETRY_SETTINGS.items()})
        (home / ".env").write_text(f"VENDORA_BASE_URL={configured.anthropic_base_url}\n")  # the researcher's own
        (repository / ".env").write_text(
            f"VENDORA_BASE_URL={hostile.anthropic_base_url}\nLEMMATA_HOME={tmp_path / 'elsewhere'}\nMAX_TOKENS_VERIFIER=900\n"
        )
        result = check(env, repository)

        assert hostile.requests == [], "the key went to the server the working directory's .env named"
        assert configured.requests and all(carries_the_key(r) for r in configured.requests)
        assert "Traceback" not in result.stderr
        warning = (
            f"lemmata: warning: {repository / '.env'} sets VENDORA_BASE_URL, LEMMATA_HOME, which are ignored "
            "there (they decide where your keys and research go and who reaches your server): set them in the "
            f"environment or in {home / '.env'}"
        )
        assert result.stderr.count(warning) == 1, result.stderr
        assert not (tmp_path / "elsewhere").exists() and (home / "checks").is_dir()
        # Settings that redirect nothing still come from ./.env (MAX_TOKENS_VERIFIER=900).
        assert any(r.body.get("max_tokens") == 900 for r in configured.requests)


@pytest.mark.parametrize(
    "setting, url",
    [
        ("VENDORA_BASE_URL", "http://example.invalid"),
        ("COMPAT_BASE_URL", "http://192.0.2.1:8080/v1"),
        ("WEB_SEARCH_BASE_URL", "http://search.example.invalid/brave"),
    ],
)
def test_a_plain_http_base_url_to_another_machine_is_refused_in_one_line(tmp_path, setting, url):
    # Hosts that never resolve or route (.invalid, TEST-NET-1): nothing leaves even if the refusal goes.
    env = cli_environment(tmp_path / "home", LLM_BACKEND="vendora", VENDORA_API_KEY=KEY, **{setting: url})
    result = check(env, tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"lemmata: error: {setting}={url!r} would send a key over plain http to another machine: "
        "use https://, or http:// to a loopback address (127.0.0.1, localhost, [::1])"
    ]


def test_plain_http_to_this_machine_and_https_are_accepted():
    from lemmata.settings import Settings

    for url in ("http://127.0.0.1:8000/v1", "http://localhost:9/v1", "http://[::1]:80", "https://example.com/v1"):
        assert Settings.from_mapping({"COMPAT_BASE_URL": url}).COMPAT_BASE_URL == url
    # No key goes to these: a server of your own on the network, arXiv's public API.
    assert Settings.from_mapping({"LOCAL_LLM_BASE_URL": "http://gpu-box.lan:8000/v1"})
    assert Settings.from_mapping({"PREPRINT_BASE_URL": "http://export.arxiv.org/api/query"})
