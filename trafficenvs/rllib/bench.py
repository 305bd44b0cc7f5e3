"""Env steps/s of the RLlib route: ``python -m trafficenvs.rllib.bench``.

Three measures, all with uniformly random legal moves (so they time the env and
RLlib's machinery, not a network):

- ``env``: :class:`TrafficMultiAgentEnv` stepped in a Python loop (one game);
- ``vec``: the vectorised env (``make_vec``, ``num_envs`` games per call) stepped
  the same way, bare and with the per-game ``MultiAgentEnv`` dicts built from each
  batch (what a vectorised wrapper would have to hand RLlib's env runner, which
  keeps one episode object per game and takes per-game dicts);
- ``runners``: RLlib env runners sampling (``EnvRunner.sample``) with 1 and 2 runners
  in parallel, a random-policy module on every seat.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np


def env_loop(game: str, players: int, seconds: float = 3.0, seed: int = 0) -> float:
    """Env steps/s of one :class:`TrafficMultiAgentEnv` under random play."""
    from trafficenvs.rllib.env import TrafficMultiAgentEnv, env_config

    env = TrafficMultiAgentEnv(env_config(game, players))
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(200):
            (agent, o), = obs.items()
            legal = np.flatnonzero(o["action_mask"])
            obs, _, term, trunc, _ = env.step({agent: int(legal[rng.integers(len(legal))])})
            steps += 1
            if term["__all__"] or trunc["__all__"]:
                obs, _ = env.reset()
    return steps / (time.perf_counter() - t0)


def vec_loop(game: str, players: int, num_envs: int = 64, seconds: float = 3.0,
             as_dicts: bool = False, seed: int = 0) -> float:
    """Env steps/s (moves, all games) of the vectorised env under random play;
    ``as_dicts`` also builds the per-game dicts a ``MultiAgentEnv`` returns."""
    from trafficenvs.agents.policy import sample_masked
    from trafficenvs.registry import make_vec
    from trafficenvs.rllib.env import obs_scale

    venv = make_vec(game, num_envs=num_envs, num_threads=1, num_players=players)
    scale = obs_scale(venv.game)
    agents = [f"player_{i}" for i in range(players)]
    rng = np.random.default_rng(seed)
    out = venv.reset(seed=seed)
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(20):
            out = venv.step(sample_masked(rng, out.action_mask))
            steps += num_envs
            if as_dicts:
                x = out.observation.astype(np.float32) * scale
                m = out.action_mask.astype(np.float32)
                for i in range(num_envs):
                    a = agents[out.current_player[i]]
                    _ = ({a: {"observations": x[i], "action_mask": m[i]}},
                         {b: float(out.rewards[i, k]) for k, b in enumerate(agents)},
                         {"__all__": bool(out.terminated[i])},
                         {"__all__": bool(out.truncated[i])})
    return steps / (time.perf_counter() - t0)


def runner_rates(game: str, players: int, runners: int, num_envs_per_runner: int = 1,
                 timesteps: int = 4000, repeats: int = 2) -> float:
    """Env steps/s of ``runners`` RLlib env runners sampling at once (random modules on
    every seat; the best of ``repeats`` rounds, after a warm-up round)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from trafficenvs.rllib.env import TrafficMultiAgentEnv, env_config
    from trafficenvs.rllib.modules import MaskedPPOTorchRLModule

    envc = env_config(game, players)
    cfg = (PPOConfig()
           .environment(TrafficMultiAgentEnv, env_config=envc)
           .env_runners(num_env_runners=runners, num_envs_per_env_runner=num_envs_per_runner,
                        num_cpus_per_env_runner=0)
           .multi_agent(policies={"p"}, policy_mapping_fn=lambda *a, **k: "p")
           .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"p": RLModuleSpec(
               module_class=MaskedPPOTorchRLModule, model_config={"fcnet_hiddens": [64]})})))
    algo = cfg.build_algo()
    try:
        group = algo.env_runner_group
        best = 0.0
        for k in range(repeats + 1):
            t0 = time.perf_counter()
            done = group.foreach_env_runner(
                lambda r, n=timesteps: sum(len(e) for e in r.sample(num_timesteps=n)),
                local_env_runner=False)
            rate = sum(done) / (time.perf_counter() - t0)
            if k:
                best = max(best, rate)
        return best
    finally:
        algo.stop()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m trafficenvs.rllib.bench", description=__doc__)
    p.add_argument("--game", default="traffic_jam")
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--runners", default="1,2", help="env runner counts to time")
    p.add_argument("--timesteps", type=int, default=4000, help="per runner per round")
    p.add_argument("--envs-per-runner", default="1,16",
                   help="games per env runner to time (RLlib's num_envs_per_env_runner)")
    p.add_argument("--json", default=None)
    a = p.parse_args(argv)
    res: dict[str, Any] = {"game": a.game, "players": a.players}
    res["env_loop"] = round(env_loop(a.game, a.players, a.seconds))
    res["vec64_bare"] = round(vec_loop(a.game, a.players, 64, a.seconds))
    res["vec64_dicts"] = round(vec_loop(a.game, a.players, 64, a.seconds, as_dicts=True))
    print(json.dumps(res), flush=True)
    if a.runners:
        import ray

        ray.init(include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": {"NUMBA_NUM_THREADS": "1"}})
        try:
            for e in (int(x) for x in a.envs_per_runner.split(",")):
                for k in (int(x) for x in a.runners.split(",")):
                    res[f"runners_{k}_envs_{e}"] = round(runner_rates(
                        a.game, a.players, k, num_envs_per_runner=e, timesteps=a.timesteps))
                    print(json.dumps(res), flush=True)
        finally:
            ray.shutdown()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
