"""Re-record `llm_calls.jsonl`: the scripted even-sum session through the real workflow.

The recording is what the README's quick demo replays (LLM_BACKEND=replay). Re-record it
whenever the workflow asks the model something new. Its answers are the scripted ones of tests/support/even_sum_session.py,
not a real model's; the searches are answered by the fake search services. It is recorded in a
fresh data directory, as a user replays it: there the fake model's checks were never measured, so
no lemma is verified. Usage: python examples/even-sum/record.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# The test support (tests/support: the fake model and search servers, the scripted session) is not
# part of the installed lemmata: it is imported from this checkout's tests/ directory.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))

from support import even_sum_session
from support.fake_llm_server import FakeLLMServer
from support.fake_search_servers import FAST_SEARCH_SETTINGS, FakeSearchServers

HERE = Path(__file__).parent

with tempfile.TemporaryDirectory() as tmp, FakeLLMServer() as server, FakeSearchServers() as search:
    even_sum_session.install(server)
    env = {
        **os.environ,
        "LEMMATA_HOME": f"{tmp}/home",
        "LLM_BACKEND": "local",
        "LOCAL_LLM_BASE_URL": server.openai_base_url,
        **search.settings_values(),
        **{name: str(value) for name, value in FAST_SEARCH_SETTINGS.items()},
    }
    subprocess.run(
        [sys.executable, "-m", "lemmata", "prove", even_sum_session.TASK, "-o", f"{tmp}/out"],
        env=env,
        check=True,
        stdin=subprocess.DEVNULL,
    )
    run_dir = next(Path(tmp, "home", "runs").iterdir())
    shutil.copy(run_dir / "llm_calls.jsonl", HERE / "llm_calls.jsonl")
print(f"wrote {HERE / 'llm_calls.jsonl'}")
