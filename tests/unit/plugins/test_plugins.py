"""Domain plugins: found through the `lemmata.plugins` entry points (the shipped bandits plugin
and a third party's), matched to a run's domain; the bandits plugin's regret simulator."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from lemmata.errors import UserError
from lemmata.plugins import DomainPlugin, installed_plugins, normalised_domain, plugin_for
from lemmata.plugins.bandits import plugin as bandits
from lemmata.plugins.bandits.regret import lai_robbins_constant, simulate, ucb1_bound


def test_the_shipped_plugin_is_found_through_its_entry_point_and_serves_its_domains():
    assert "bandits" in [p.name for p in installed_plugins()]
    for domain in ("multi-armed bandits", "Multi-Armed_Bandits", "  bandits ", "online  learning"):
        assert plugin_for(domain) is not None and plugin_for(domain).name == "bandits", domain
    assert plugin_for("") is None and plugin_for("algebraic topology") is None
    assert normalised_domain("Multi-Armed_Bandits ") == "multi-armed bandits"


def third_party(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module_source: str, target: str) -> None:
    """An installed distribution publishing `target` under lemmata.plugins (its dist-info on sys.path)."""
    (tmp_path / "lemmata_queueing.py").write_text(textwrap.dedent(module_source))
    info = tmp_path / "lemmata_queueing-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lemmata-queueing\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[lemmata.plugins]\nqueueing = {target}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "lemmata_queueing", raising=False)  # each test's own version


def test_a_third_party_plugin_plugs_in_through_the_entry_point_group(tmp_path, monkeypatch):
    third_party(
        tmp_path,
        monkeypatch,
        """
        from lemmata.plugins import DomainPlugin

        def make():
            return DomainPlugin(name="queueing", description="queues", domains=("queueing theory",),
                                guidance={"prover": "Use Little's law."})
        """,
        "lemmata_queueing:make",
    )
    found = plugin_for("Queueing_Theory")
    assert found is not None and found.guidance == {"prover": "Use Little's law."}
    assert [p.name for p in installed_plugins()] == ["bandits", "queueing"]


@pytest.mark.parametrize(
    "source, target, message",
    [
        pytest.param(
            "import not_a_module\n", "lemmata_queueing:plugin", "failed to load: No module named", id="import-error"
        ),
        pytest.param(
            "plugin = 42\n",
            "lemmata_queueing:plugin",
            "is a int, not a lemmata.plugins.DomainPlugin",
            id="not-a-plugin",
        ),
        pytest.param("x = 1\n", "lemmata_queueing:plugin", "failed to load", id="missing-attribute"),
    ],
)
def test_a_broken_plugin_is_a_clear_error_naming_it(tmp_path, monkeypatch, source, target, message):
    third_party(tmp_path, monkeypatch, source, target)
    with pytest.raises(UserError, match="domain plugin 'queueing'") as raised:
        installed_plugins()
    assert message in str(raised.value)


def test_the_bandits_plugin_gives_guidance_and_a_sandbox_tool():
    assert isinstance(bandits, DomainPlugin)
    assert set(bandits.guidance) <= {"decomposer", "prover", "experiment", "writer"}
    assert "bandit_regret" in bandits.tools_guide and set(bandits.sandbox_modules) == {"bandit_regret"}


def test_the_sandbox_tool_imports_nothing_but_numpy_and_the_standard_library(tmp_path):
    """Copied alone into a scratch folder, as the sandbox will, it imports and runs."""
    module = bandits.sandbox_modules["bandit_regret"]
    (tmp_path / "bandit_regret.py").write_text(module.read_text())
    check = (
        "import sys; sys.path.insert(0, sys.argv[1]); from bandit_regret import simulate; "
        "print(round(simulate('ucb1', [0.6, 0.4], 50, 4).at(50), 3)); "
        "print(sorted(m for m in sys.modules if m.startswith('lemmata')))"
    )
    result = subprocess.run(
        [sys.executable, "-I", "-c", check, str(tmp_path)], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1] == "[]"


def test_simulations_are_reproducible_and_check_their_input():
    first, again = simulate("thompson", [0.5, 0.4], 300, 20, seed=3), simulate("thompson", [0.5, 0.4], 300, 20, seed=3)
    assert np.array_equal(first.mean, again.mean)
    assert np.all(np.diff(first.mean) >= 0)  # cumulative pseudo-regret never decreases
    for bad in ([0.5], [0.5, 1.2], [[0.5, 0.4]]):
        with pytest.raises(ValueError, match="means"):
            simulate("ucb1", bad, 10)
    with pytest.raises(ValueError, match="policy must be one of"):
        simulate("softmax", [0.5, 0.4], 10)


def test_ucb1_stays_below_its_bound_and_grows_logarithmically_while_epsilon_greedy_grows_linearly():
    means = [0.7, 0.5, 0.4]
    ucb = simulate("ucb1", means, 8000, runs=40, seed=1)
    greedy = simulate("epsilon-greedy", means, 8000, runs=40, seed=1, epsilon=0.2)
    for t in (100, 1000, 8000):
        assert ucb.at(t) <= ucb1_bound(means, t)
    # Doubling the horizon: linear regret doubles, logarithmic regret grows by far less.
    assert greedy.at(8000) / greedy.at(4000) > 1.8
    assert ucb.at(8000) / ucb.at(4000) < 1.3
    assert simulate("thompson", means, 8000, runs=40, seed=1).at(8000) < ucb.at(8000)


def test_the_lai_robbins_constant_of_two_arms():
    kl = 0.45 * math.log(0.45 / 0.5) + 0.55 * math.log(0.55 / 0.5)
    assert lai_robbins_constant([0.5, 0.45]) == pytest.approx(0.05 / kl)
    assert ucb1_bound([0.5, 0.45], 100) == pytest.approx(8 * math.log(100) / 0.05 + (1 + math.pi**2 / 3) * 0.05)
