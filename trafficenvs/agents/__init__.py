"""Agents for every game: the shared policy interface, random and rule-based
players, a bridge to stable-baselines3 (MaskablePPO with self-play), training and
a batched arena with ratings.

Only the package's public API is used (``make``, ``make_vec``, ``make_game``,
``VecStep``, the game objects). The torch/SB3 parts (``sb3_bridge``, ``ppo``,
``training``) import those libraries when first used; install them with
``pip install trafficenvs[train]``.
"""

from __future__ import annotations

from trafficenvs.agents.greedy import games_with_greedy, has_greedy, make_greedy
from trafficenvs.agents.policy import Policy, RandomPolicy, act_aec, sample_masked

__all__ = [
    "Policy", "RandomPolicy", "act_aec", "sample_masked", "games_with_greedy", "has_greedy",
    "make_greedy",
]
