"""Training throughput: MaskablePPO on our VecEnv against PettingZoo's tutorial route.

The tutorial route (PettingZoo's "SB3: Action Masked PPO for Connect Four") wraps
one AEC env as a gymnasium env in which a single model plays every seat, adds
sb3-contrib's ``ActionMasker``, and trains MaskablePPO on that one env. Ours trains
the same MaskablePPO (same network, same rollout size, same PPO settings) on
:class:`~trafficenvs.agents.sb3_bridge.SelfPlayVecEnv`: many games at once, the
learner in one seat, random opponents moving inside ``step``.

Figures: learner decisions (SB3 timesteps) per second of ``model.learn``, and for
ours also every seat's moves (env steps) per second. Needs the ``train`` extra.
"""

from __future__ import annotations

import time
from typing import Any

import gymnasium
import numpy as np

#: PPO settings of both routes: a rollout of 4096 decisions (one env x 4096 steps for
#: the tutorial route, 64 envs x 64 steps for ours), minibatches of 512, 4 epochs;
#: SB3's defaults otherwise (MlpPolicy 64x64, lr 3e-4, gamma 0.99, ...).
ROLLOUT = 4096
PPO_KW = {"batch_size": 512, "n_epochs": 4}


class TutorialRoute(gymnasium.Env):
    """The tutorial's wrapper, rewritten: one AEC env seen as a single-agent env.

    As in the tutorial, the reward of a step is the cumulative reward of the agent
    that just moved, and one model plays every seat. (That route credits a player
    with nothing of what happens after its move until its next turn: PettingZoo
    issue #1147. It is measured here for its speed only.)
    """

    def __init__(self, aec_env: Any):
        self.env = aec_env
        first = aec_env.possible_agents[0]
        self.observation_space = aec_env.observation_space(first)["observation"]
        self.action_space = aec_env.action_space(first)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.env.reset(seed=seed)
        return self.env.observe(self.env.agent_selection)["observation"], {}

    def step(self, action):
        agent = self.env.agent_selection
        self.env.step(int(action))
        nxt = self.env.agent_selection
        return (self.env.observe(nxt)["observation"], self.env._cumulative_rewards[agent],
                self.env.terminations[agent], self.env.truncations[agent], {})

    def action_mask(self) -> np.ndarray:
        return self.env.observe(self.env.agent_selection)["action_mask"].astype(bool)


def _ppo_kw(rollout: int) -> dict[str, int]:
    return {**PPO_KW, "batch_size": min(PPO_KW["batch_size"], rollout)}


def _learn_rate(model: Any, timesteps: int) -> float:
    t0 = time.perf_counter()
    model.learn(total_timesteps=timesteps)
    return timesteps / (time.perf_counter() - t0)


def tutorial_route(game: str, options: dict, timesteps: int, seed: int = 0,
                   rollout: int = ROLLOUT) -> dict[str, float]:
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.wrappers import ActionMasker

    import trafficenvs

    env = ActionMasker(TutorialRoute(trafficenvs.make(game, **options)),
                       lambda e: e.action_mask())
    env.reset(seed=seed)
    model = MaskablePPO("MlpPolicy", env, n_steps=rollout, seed=seed, verbose=0,
                        **_ppo_kw(rollout))
    return {"learner_steps_per_s": _learn_rate(model, timesteps), "num_envs": 1}


def our_route(game: str, options: dict, timesteps: int, seed: int = 0,
              num_envs: int = 64, rollout: int = ROLLOUT) -> dict[str, float]:
    from sb3_contrib import MaskablePPO

    from trafficenvs.agents.policy import RandomPolicy
    from trafficenvs.agents.sb3_bridge import SelfPlayVecEnv

    venv = SelfPlayVecEnv(game, num_envs, RandomPolicy(seed=seed), seed=seed, **options)
    model = MaskablePPO("MlpPolicy", venv, n_steps=rollout // num_envs, seed=seed, verbose=0,
                        **_ppo_kw(rollout))
    t0 = time.perf_counter()
    model.learn(total_timesteps=timesteps)
    dt = time.perf_counter() - t0
    return {"learner_steps_per_s": timesteps / dt, "env_steps_per_s": venv.env_steps / dt,
            "num_envs": num_envs}


def bench_training(game: str, options: dict, timesteps: int, rollout: int = ROLLOUT,
                   num_envs: int = 64) -> dict[str, Any] | None:
    """Both routes on one game, same run; ``None`` without the train extra."""
    try:
        import sb3_contrib  # noqa: F401
    except ImportError:
        return None
    routes = {
        "pettingzoo_tutorial": tutorial_route(game, options, timesteps, rollout=rollout),
        "trafficenvs_vecenv": our_route(game, options, timesteps, num_envs=num_envs,
                                        rollout=rollout),
    }
    ratio = (routes["trafficenvs_vecenv"]["learner_steps_per_s"]
             / routes["pettingzoo_tutorial"]["learner_steps_per_s"])
    return {"game": game, "options": options, "timesteps": timesteps,
            "ppo": {"rollout": rollout, "policy": "MlpPolicy", **_ppo_kw(rollout)},
            "routes": routes, "speedup": ratio}
