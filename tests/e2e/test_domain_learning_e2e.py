"""Issue 10 end to end: lemmata learns per domain, and a domain plugin works in a real run.

Three runs of the real CLI and workflow on one data directory, with the fake model (the
even-sum session) and fake search services: two with `--domain parity`, then one with
`--domain "multi-armed bandits"`, which the shipped bandits plugin serves and whose experiment
agent (scripted) calls the plugin's regret simulator. What each run learned is read from the
memory store; what each run was told is read from its own `llm_calls.jsonl`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import cli_environment

from lemmata.plugins.bandits import plugin as bandits
from lemmata.run.record import DataHome
from support import even_sum_session
from support.fake_llm_server import FakeLLMServer
from support.fake_search_servers import FakeSearchServers

#: The experiment agent's test in the bandits run: UCB1's simulated regret against its bound.
BANDIT_CHECK = """import json
from bandit_regret import simulate, ucb1_bound

means = [0.6, 0.4]
series = []
for horizon in (200, 500, 1000):
    curve = simulate("ucb1", means, horizon=horizon, runs=50, seed=1)
    held = curve.at(horizon) <= ucb1_bound(means, horizon)
    series.append({"x": horizon, "trials": 1, "violations": 0 if held else 1})
print(json.dumps({"trials": len(series), "violations": sum(p["violations"] for p in series),
                  "series": series, "x_label": "T"}))
"""


def calls(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "llm_calls.jsonl").read_text(encoding="utf-8").splitlines()]


def system_prompts(run_dir: Path, role: str) -> list[str]:
    return [call["messages"][0]["content"] for call in calls(run_dir) if call["role"] == role]


def index(home: Path, domain: str) -> dict:
    return json.loads((home / "memory" / "domains" / domain / "_index.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[Path]]]:
    """(home, [parity run 1, parity run 2, bandits run]), run one after the other."""
    home = tmp_path_factory.mktemp("learning") / "home"
    run_dirs: list[Path] = []
    with FakeLLMServer() as llm, FakeSearchServers() as search:
        even_sum_session.install(llm)
        env = cli_environment(
            home, LLM_BACKEND="local", LOCAL_LLM_BASE_URL=llm.openai_base_url, **search.settings_values()
        )
        for number, domain in enumerate(("parity", "parity", "multi-armed bandits")):
            if domain == "multi-armed bandits":
                llm.set_default("experiment", json.dumps({"code": BANDIT_CHECK, "rationale": "UCB1 against its bound"}))
            result = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "lemmata",
                    "prove",
                    even_sum_session.TASK,
                    "--domain",
                    domain,
                    "-o",
                    str(home / f"out-{number}"),  # a folder per run: a second run may not take the first's
                ],
                env=env,
                cwd=home.parent,
                capture_output=True,
                text=True,
                timeout=300,
                stdin=subprocess.DEVNULL,
            )
            assert result.returncode == 0, result.stderr[-3000:]
            records = DataHome(home).run_records()
            run_dirs.append(DataHome(home).run_dir(records[-1].session_id))
        yield home, run_dirs


def test_a_run_writes_what_it_learned_under_its_own_domain(three_runs: tuple[Path, list[Path]]) -> None:
    home, (first, second, _) = three_runs
    learned = json.loads((first / "learned.json").read_text(encoding="utf-8"))
    assert learned["memory_domain"] == "parity"
    entries = [entry for entry in index(home, "parity")["entries"] if entry["session_id"] == first.name]
    assert {entry["kind"] for entry in entries} == {"strategy", "failure"}
    assert {entry["file"] for entry in entries} == {memory["file"] for memory in learned["memories"]}
    assert all(len(entry["embedding"]) == 384 for entry in entries)
    texts = {entry["kind"]: (home / "memory" / "domains" / "parity" / entry["file"]).read_text() for entry in entries}
    assert "L2" in texts["strategy"] and "2 of 4 lemmas verified" in texts["strategy"]  # L2, L3 passed the checks
    # The session's L4 stays unverified: its memory keeps the open gap and the refiner's idea.
    assert "taken from the axioms without proof" in texts["failure"]
    assert "ring axioms" in texts["failure"]
    assert sorted(p.name for p in (home / "memory" / "domains").iterdir()) == ["bandits", "parity"]


def test_a_later_run_of_the_same_domain_is_told_those_memories(three_runs: tuple[Path, list[Path]]) -> None:
    home, (first, second, _) = three_runs
    titles = [entry["title"] for entry in index(home, "parity")["entries"] if entry["session_id"] == first.name]
    briefing = json.loads((second / "briefing.json").read_text(encoding="utf-8"))
    assert {memory["session_id"] for memory in briefing["memories"]} == {first.name}
    assert all(memory["similarity"] is not None for memory in briefing["memories"])
    for role in ("decomposer", "prover"):
        prompts = system_prompts(second, role)
        assert prompts and all("Lessons from earlier runs" in p and all(t in p for t in titles) for p in prompts), role
    assert not any("Lessons from earlier runs" in p for p in system_prompts(second, "verifier"))
    # The first run found nothing to learn from: its requests carry no memories.
    assert not any("Lessons from earlier runs" in call["messages"][0]["content"] for call in calls(first))


def test_a_run_of_another_domain_is_not_told_them_and_keeps_its_own(three_runs: tuple[Path, list[Path]]) -> None:
    home, (first, second, bandit_run) = three_runs
    parity_titles = {entry["title"] for entry in index(home, "parity")["entries"]}
    everything_sent = (bandit_run / "llm_calls.jsonl").read_text(encoding="utf-8")
    assert "Lessons from earlier runs" not in everything_sent
    assert not any(json.dumps(title)[1:-1] in everything_sent for title in parity_titles)
    assert {entry["session_id"] for entry in index(home, "bandits")["entries"]} == {bandit_run.name}
    assert {entry["session_id"] for entry in index(home, "parity")["entries"]} == {first.name, second.name}


def test_a_bandits_run_uses_the_plugins_simulator_in_its_experiment(three_runs: tuple[Path, list[Path]]) -> None:
    _, (_, _, bandit_run) = three_runs
    experiment = json.loads((bandit_run / "experiment.json").read_text(encoding="utf-8"))
    assert [check["lemma_id"] for check in experiment["checks"]] == ["L1", "L4"]  # the unverified lemmas
    for check in experiment["checks"]:
        assert (check["outcome"], check["trials"], check["violations"]) == ("ran", 3, 0)
        assert "from bandit_regret import" in check["code"] and "audit hook (telemetry)" in check["sandbox"]
        assert [point["x"] for point in check["series"]] == [200, 500, 1000]
    requests = [call for call in calls(bandit_run) if call["role"] == "experiment"]
    assert len(requests) == 2 and all(bandits.tools_guide in r["messages"][-1]["content"] for r in requests)


def test_a_bandits_run_gives_the_plugins_guidance_and_skills_to_its_agents(three_runs: tuple[Path, list[Path]]) -> None:
    _, (_, _, bandit_run) = three_runs
    briefing = json.loads((bandit_run / "briefing.json").read_text(encoding="utf-8"))
    assert (briefing["plugin"], briefing["memory_domain"]) == ("bandits", "bandits")
    for role in ("decomposer", "prover", "experiment", "writer"):
        prompts = system_prompts(bandit_run, role)
        assert prompts and all(bandits.guidance[role] in p for p in prompts), role
    assert all("### regret-bounds" in p for p in system_prompts(bandit_run, "prover"))
    assert not any("### regret-bounds" in p for p in system_prompts(bandit_run, "writer"))


def test_a_parity_run_gets_no_bandit_guidance_skills_or_tools(three_runs: tuple[Path, list[Path]]) -> None:
    _, (first, _, _) = three_runs
    everything_sent = (first / "llm_calls.jsonl").read_text(encoding="utf-8")
    assert "regret-bounds" not in everything_sent and "bandit_regret" not in everything_sent
    assert "### lemma-decomposition" in system_prompts(first, "decomposer")[0]  # bundled skills apply everywhere
