"""The multi-armed bandits plugin: regret-bound conventions for the agents (guidance, and the
skills in skills/), and a regret simulator the experiment stage's code can import in the
sandbox (`bandit_regret`)."""

from __future__ import annotations

from pathlib import Path

from lemmata.plugins import DomainPlugin

HERE = Path(__file__).parent

plugin = DomainPlugin(
    name="bandits",
    description="multi-armed bandits: regret bounds, exploration policies, a regret simulator",
    domains=("multi-armed bandits", "bandits", "bandit algorithms", "online learning"),
    guidance={
        "decomposer": "Bandit regret proofs usually split into: a concentration inequality for the empirical "
        "means (Hoeffding or a Chernoff bound), a bound on the number of pulls of each suboptimal "
        "arm, and the regret decomposition R_T = sum_i gap_i E[N_i(T)]. Make each its own lemma.",
        "prover": "State the regret notion (pseudo-regret or expected regret), the reward model (Bernoulli or "
        "sub-Gaussian, bounded in [0, 1]) and the horizon T explicitly; constants matter: keep them.",
        "experiment": "Check regret statements with the bandit_regret module rather than writing a simulator.",
        "writer": "Write R_T for cumulative (pseudo-)regret, Delta_i for the gap of arm i and N_i(T) for its "
        "number of pulls; say which regret notion a bound is about.",
    },
    skills_dir=HERE / "skills",
    sandbox_modules={"bandit_regret": HERE / "regret.py"},
    tools_guide=(
        "The module `bandit_regret` is importable in your code (numpy only): "
        "`simulate(policy, means, horizon, runs=100, seed=0, epsilon=0.1)` with policy one of 'ucb1', "
        "'epsilon-greedy', 'thompson' and Bernoulli arm means in [0, 1] returns a curve with `.mean`, "
        "`.stderr` (numpy arrays, cumulative pseudo-regret after each round) and `.at(t)`; "
        "`ucb1_bound(means, t)` is Auer et al.'s UCB1 bound; `lai_robbins_constant(means)` the constant of "
        "the logarithmic lower bound. A bound holds numerically when the simulated mean regret stays below "
        "it at every horizon you check."
    ),
)
