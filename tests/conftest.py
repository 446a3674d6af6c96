"""Shared fixtures: every test is isolated from the user's real lemmata data and keys."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from lemmata.artifacts import atomic_write_text
from lemmata.run.record import DataHome, RunRecord, save_record
from lemmata.settings import lemmata_home
from support import even_sum_session
from support.completed_run import completed_home_in, shared_folder
from support.fake_llm_server import FakeLLMServer
from support.fake_search_servers import FAST_SEARCH_SETTINGS, FakeSearchServers, unused_port

#: The developer's (or CI's) real lemmata home, read before any test isolates it: the one
#: place the embedded smoke test looks for the installed model.
REAL_LEMMATA_HOME = lemmata_home()

#: Credentials and backend selection that must never leak in from the developer's shell.
ISOLATED_VARIABLES = (
    "VENDORA_API_KEY",
    "ANTHROPIC_API_KEY",
    "COMPAT_API_KEY",
    "VENDORX_API_KEY",
    "LLM_BACKEND",
    "GATE_MODE",
    "LEMMATA_REPLAY",
    "LEMMATA_EMBEDDED_MODEL",
    "LEMMATA_API_TOKEN",
    "SEMANTIC_SCHOLAR_API_KEY",
    "BRAVE_SEARCH_API_KEY",
)
#: Proxies would route 127.0.0.1 traffic of the SDKs elsewhere.
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


#: The folders of end-to-end tests: every test in them is marked `e2e` by where it is, so no file
#: can forget the mark, and `-m "not e2e"` (bin/check) is the rest of the suite.
END_TO_END_FOLDERS = ("e2e", "faults")
TESTS_ROOT = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.resolve().relative_to(TESTS_ROOT).parts[0] in END_TO_END_FOLDERS:
            item.add_marker(pytest.mark.e2e)
    # The `long` tests first (a stable sort: each module's tests stay together, in their order), so
    # that a worker starts each of them early and none is the suite's last minutes (bin/test).
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


def session_directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test session's temporary folder, shared by its xdist workers (each has one below it)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if base.name.startswith("popen-gw") else base


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """LEMMATA_HOME in a tmp dir, no keys, no backend choice, no MAX_TOKENS_*, cwd in another tmp dir."""
    home = tmp_path_factory.mktemp("lemmata_home")
    workdir = tmp_path_factory.mktemp("cwd")
    monkeypatch.setenv("LEMMATA_HOME", str(home))
    # One cache of TeX formats for the whole session (latex/formats.py): made once, not per test.
    monkeypatch.setenv("XDG_CACHE_HOME", str(session_directory(tmp_path_factory) / "xdg-cache"))
    # A developer's real provider-CLI login must never be picked up by backend resolution.
    monkeypatch.setenv("VENDORA_CREDENTIALS_FILE", str(home / "no-cli-credentials.json"))
    for name in ISOLATED_VARIABLES + PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name in list(os.environ):
        if name.startswith("MAX_TOKENS_"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(workdir)
    # The CLI run in-process (CliRunner) makes this process's files private (lemmata/private_files.py):
    # the next test starts from the umask and environment the session had.
    monkeypatch.delenv("LEMMATA_USER_UMASK", raising=False)
    umask = os.umask(0o022)
    os.umask(umask)
    yield home
    os.umask(umask)


@pytest.fixture
def lemmata_home(isolated_environment: Path) -> Path:
    """The tmp dir LEMMATA_HOME points at during this test."""
    return isolated_environment


@pytest.fixture
def fake_llm() -> Iterator[FakeLLMServer]:
    """A started fake OpenAI + Anthropic provider on 127.0.0.1, stopped after the test."""
    server = FakeLLMServer().start()
    try:
        yield server
    finally:
        server.stop()


#: Fast retries and a bounded timeout: no test waits on real backoff or a 600 s timeout.
FAST_RETRY_SETTINGS = {"LLM_RETRY_WAIT_MIN": 0, "LLM_RETRY_WAIT_MAX": 0.01, "LLM_TIMEOUT": 5}


@pytest.fixture
def llm_client(fake_llm: FakeLLMServer, tmp_path: Path) -> Callable[..., Any]:
    """Factory: a real client from `make_client`, its backend pointed at the fake server.

    `llm_client(backend="local", environ=None, run_dir=None, scope="", **settings)`; the run
    directory defaults to `tmp_path / "run"`. Credentials for router/vendorx/vendora default
    to test keys unless `environ` is given.
    """
    from lemmata.agents.client import make_client
    from lemmata.settings import Settings

    def factory(
        backend: str = "local",
        environ: Mapping[str, str] | None = None,
        run_dir: Path | None = None,
        scope: str = "",
        **settings: Any,
    ) -> Any:
        urls = {
            "local": {"LOCAL_LLM_BASE_URL": fake_llm.openai_base_url},
            "router": {"COMPAT_BASE_URL": fake_llm.openai_base_url},
            "vendorx": {"VENDORX_BASE_URL": fake_llm.openai_base_url},
            "vendora": {"VENDORA_BASE_URL": fake_llm.anthropic_base_url},
        }
        keys = {
            "router": {"COMPAT_API_KEY": "compat-test-key-1"},
            "vendorx": {"VENDORX_API_KEY": "vendorx-test-key-1"},
            "vendora": {"VENDORA_API_KEY": "vendora-test-key-1"},
        }
        values = {"LLM_BACKEND": backend, **urls.get(backend, {}), **FAST_RETRY_SETTINGS, **settings}
        env = dict(keys.get(backend, {})) if environ is None else dict(environ)
        return make_client(Settings.from_mapping(values), env, run_dir or tmp_path / "run", scope=scope)

    return factory


#: The API token of the servers tests start: cli_environment gives it to `lemmata serve`,
#: api_client to the in-process app; a test client sends it as the page does.
TEST_API_TOKEN = "test-api-token-not-a-secret-0123456789abcdef"
#: The address the in-process app believes it serves: its Host check is the real one.
TEST_SERVER = ("127.0.0.1", 8765)


def api_client(data_home: DataHome | None = None, environ: Mapping[str, str] | None = None):
    """Starlette's test client on the app as `lemmata serve` guards it on TEST_SERVER with
    TEST_API_TOKEN (Host, Origin and token checks all in force), sending what the page sends:
    that Host and the token."""
    from starlette.testclient import TestClient

    from lemmata.server.access import ServerAccess
    from lemmata.server.app import create_app

    access = ServerAccess.for_bind(*TEST_SERVER, token=TEST_API_TOKEN)
    return TestClient(
        create_app(data_home, environ, access=access),
        base_url="http://{}:{}".format(*TEST_SERVER),
        headers={"Authorization": f"Bearer {TEST_API_TOKEN}"},
    )


def cli_environment(home: Path, **extra: str) -> dict[str, str]:
    """The environment for a `lemmata` subprocess: this process's, minus every lemmata, model and
    credential variable, with LEMMATA_HOME at `home`, fast retries and the tests' API token."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LLM_", "LEMMATA_", "MAX_TOKENS_", "VENDORA", "ANTHROPIC", "COMPAT", "VENDORX", "SEARCH_"))
        and k not in ISOLATED_VARIABLES + PROXY_VARIABLES
    }
    env.update(
        {
            "LEMMATA_HOME": str(home),
            "LEMMATA_API_TOKEN": TEST_API_TOKEN,
            "LLM_RETRY_WAIT_MIN": "0",
            "LLM_RETRY_WAIT_MAX": "0.01",
            "TEXMFVAR": str(home / "texmf-var"),
            **SEARCH_SERVICES_DOWN,
            **extra,
        }
    )
    home.mkdir(mode=0o700, parents=True, exist_ok=True)  # as lemmata makes it (lemmata/private_files.py)
    # The fake model plays a measured, trusted checker, so that verified lemmas are seen end to end;
    # tests of untrusted checkers remove $LEMMATA_HOME/calibration or use another model.
    even_sum_session.trust_the_fake_model(home)
    return env


#: Every search service at a port nobody listens on, with fast retries: no test reaches the
#: network; a test that wants results passes a FakeSearchServers' settings_values().
_DOWN = f"http://127.0.0.1:{unused_port()}"
SEARCH_SERVICES_DOWN = {
    "PREPRINT_BASE_URL": _DOWN + "/arxiv/api/query",
    "SCHOLAR_BASE_URL": _DOWN + "/s2/graph/v1",
    "WEB_SEARCH_BASE_URL": _DOWN + "/brave",
    "PDF_BASE_URL": _DOWN + "/arxiv/pdf",
    **{name: str(value) for name, value in FAST_SEARCH_SETTINGS.items()},
}


def write_cli_login(
    path: Path, token: str | None = "sk-ant-oat01-first-secret-token", expires_at: float | None = None, **entry: Any
) -> Path:
    """A credentials file shaped like Anthropic's CLI writes it; expires_at in seconds (the file
    holds milliseconds), default an hour from now; token None leaves it out."""
    oauth: dict[str, Any] = {"refreshToken": "sk-ant-ort01-refresh", "scopes": ["user:inference"], **entry}
    if token is not None:
        oauth["accessToken"] = token
    oauth["expiresAt"] = int(((time.time() + 3600) if expires_at is None else expires_at) * 1000)
    path.write_text(json.dumps({"claudeAiOauth": oauth}), encoding="utf-8")
    return path


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> DataHome:
    """A data directory of hand-made runs (`make_run`), LEMMATA_HOME pointing at it."""
    monkeypatch.setenv("LEMMATA_HOME", str(tmp_path / "home"))
    return DataHome(tmp_path / "home")


DECIDED = '{"gate": "g", "approved": true, "decided_by": "automatic"}'
#: The survey's artifact and its two gates' decisions: the survey stage is done.
SURVEY_DONE = {"survey.json": "{}", "gates/survey_papers.json": DECIDED, "gates/survey_review.json": DECIDED}


def make_run(data_home: DataHome, session_id: str, status: str = "completed", **files: str) -> Path:
    """A hand-made run: its record, and `files` by name (`__` for `/`) with their text."""
    data_home.home.mkdir(mode=0o700, parents=True, exist_ok=True)  # as lemmata makes it (lemmata/private_files.py)
    run_dir = data_home.run_dir(session_id)
    record = RunRecord(
        session_id=session_id,
        mode="prove",
        task="the sum of two even integers is even",
        output_dir="/tmp/out",
        gate_mode="auto",
        backend="local",
        status=status,
    )
    save_record(run_dir, record)
    for name, text in files.items():
        atomic_write_text(run_dir / name.replace("__", "/"), text)
    return run_dir


@pytest.fixture(scope="module")
def services() -> Iterator[tuple[FakeLLMServer, FakeSearchServers]]:
    """(fake model, fake search services) for a module: the model scripted with the even-sum
    session, which a run of `even_sum_session.TASK` completes with."""
    with FakeLLMServer() as llm, FakeSearchServers() as search:
        even_sum_session.install(llm)
        yield llm, search


@pytest.fixture(scope="session")
def completed_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory with one completed run of the even-sum task (the real CLI, workflow and
    pdflatex), made once a session for all workers (support/completed_run.py). Read-only: tests
    work on copies made by `copy_completed_home`, which point the copy at their own services."""
    return completed_home_in(shared_folder(tmp_path_factory.getbasetemp()), local_environment)


def local_environment(home: Path, llm: FakeLLMServer, search: FakeSearchServers) -> dict[str, str]:
    """The CLI's environment for a run on the fake model and search services."""
    return cli_environment(
        home, LLM_BACKEND="local", LOCAL_LLM_BASE_URL=llm.openai_base_url, **search.settings_values()
    )


@pytest.fixture
def needs_coq() -> None:
    """Coq in its box: skipped where it cannot run, unless LEMMATA_REQUIRE_COQ=1 (bin/test sets it:
    bin/setup installs Coq), where its absence fails the test instead of hiding it."""
    from lemmata.formal.coq import coq_problem

    problem = coq_problem()
    if problem:
        if os.environ.get("LEMMATA_REQUIRE_COQ") == "1":
            pytest.fail(problem)
        pytest.skip(problem)
