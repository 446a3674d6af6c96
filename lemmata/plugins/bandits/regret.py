"""Regret of multi-armed bandit policies on Bernoulli arms, by simulation.

Self-contained (numpy and the standard library only): the experiment agent's code imports it
inside the sandbox as `bandit_regret`, to check a regret bound numerically, e.g.

    from bandit_regret import simulate, ucb1_bound
    curve = simulate("ucb1", [0.5, 0.45], horizon=2000, runs=200, seed=1)
    print(curve.mean[-1], ucb1_bound([0.5, 0.45], 2000))

Policies: "ucb1" (Auer et al. 2002), "epsilon-greedy" (fixed epsilon), "thompson" (Beta(1, 1)
priors). Regret is pseudo-regret: the sum over rounds of the best mean minus the pulled arm's
mean, averaged over independent runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

POLICIES = ("ucb1", "epsilon-greedy", "thompson")


@dataclass(frozen=True)
class RegretCurve:
    """Cumulative pseudo-regret after each round: its mean over the runs and the standard error."""

    policy: str
    means: tuple[float, ...]
    mean: np.ndarray
    stderr: np.ndarray
    runs: int

    def at(self, t: int) -> float:
        """Mean cumulative regret after t rounds (1-based)."""
        return float(self.mean[t - 1])


def _check(means: list[float], horizon: int, runs: int) -> np.ndarray:
    arms = np.asarray(means, dtype=float)
    if arms.ndim != 1 or len(arms) < 2:
        raise ValueError("means: give the mean reward of at least two arms")
    if np.any((arms < 0) | (arms > 1)):
        raise ValueError("means: Bernoulli arms have means in [0, 1]")
    if horizon < 1 or runs < 1:
        raise ValueError("horizon and runs must be positive")
    return arms


def simulate(
    policy: str, means: list[float], horizon: int, runs: int = 100, seed: int = 0, epsilon: float = 0.1
) -> RegretCurve:
    """Cumulative pseudo-regret of `policy` on Bernoulli arms with `means`, over `runs` runs of
    `horizon` rounds each (all runs at once, vectorised)."""
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}")
    arms = _check(means, horizon, runs)
    rng = np.random.default_rng(seed)
    k, best = len(arms), arms.max()
    pulls = np.zeros((runs, k))
    wins = np.zeros((runs, k))
    regret = np.zeros((runs, horizon))
    rows = np.arange(runs)
    total = np.zeros(runs)
    for t in range(horizon):
        if policy == "ucb1":
            if t < k:  # each arm once first
                choice = np.full(runs, t)
            else:
                index = wins / pulls + np.sqrt(2 * math.log(t) / pulls)
                choice = index.argmax(axis=1)
        elif policy == "epsilon-greedy":
            estimate = np.divide(wins, pulls, out=np.full((runs, k), np.inf), where=pulls > 0)
            explore = rng.random(runs) < epsilon
            choice = np.where(explore, rng.integers(0, k, runs), estimate.argmax(axis=1))
        else:
            choice = rng.beta(wins + 1, pulls - wins + 1).argmax(axis=1)
        reward = rng.random(runs) < arms[choice]
        pulls[rows, choice] += 1
        wins[rows, choice] += reward
        total += best - arms[choice]
        regret[:, t] = total
    return RegretCurve(
        policy,
        tuple(float(m) for m in arms),
        regret.mean(axis=0),
        regret.std(axis=0, ddof=1) / math.sqrt(runs) if runs > 1 else np.zeros(horizon),
        runs,
    )


def ucb1_bound(means: list[float], t: int) -> float:
    """Auer, Cesa-Bianchi and Fischer (2002), Theorem 1: UCB1's expected regret after t rounds
    is at most sum over suboptimal arms of 8 ln t / gap + (1 + pi^2 / 3) gap."""
    arms = _check(means, t, 1)
    gaps = arms.max() - arms
    gaps = gaps[gaps > 0]
    return float(np.sum(8 * math.log(t) / gaps + (1 + math.pi**2 / 3) * gaps))


def lai_robbins_constant(means: list[float]) -> float:
    """The constant c of the Lai-Robbins lower bound, regret >= (c - o(1)) ln t for any
    consistent policy: sum over suboptimal arms of gap / KL(mu_i, mu_best), Bernoulli KL."""
    arms = _check(means, 1, 1)
    best = arms.max()

    def kl(p: float, q: float) -> float:
        p, q = min(max(p, 1e-12), 1 - 1e-12), min(max(q, 1e-12), 1 - 1e-12)
        return p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))

    return float(sum((best - m) / kl(m, best) for m in arms if m < best))
