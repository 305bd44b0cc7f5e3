"""The doors users of the ecosystem expect.

- ``gymnasium.make_vec(id, num_envs=N)`` gives the numba batch with the opponents
  inside, as a ``gymnasium.vector.VectorEnv`` (not N Python envs): spaces, the
  five-tuple step, Gymnasium's same-step autoreset declared and honoured, the mask in
  ``info["action_mask"]``; a CleanRL-style PPO loop runs on it;
- every registered id has ``max_episode_steps``;
- PettingZoo-style modules: ``from trafficenvs import traffic_jam_v1``;
- the SB3 bridge sets torch's threads (overridable).
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import trafficenvs
from trafficenvs.gym_vector import TrafficVectorEnv

IDS = ["trafficenvs/TrafficJam-v1", "trafficenvs/JammingTraffic-v1",
       "trafficenvs/JakartaTraffic-v1"]


def _legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(row)) for row in mask])


@pytest.mark.parametrize("env_id", IDS)
def test_make_vec_gives_the_numba_batch_as_a_gymnasium_vector_env(env_id):
    env = gymnasium.make_vec(env_id, num_envs=16, opponents="random", max_cycles=30)
    assert isinstance(env, TrafficVectorEnv) and isinstance(env, gymnasium.vector.VectorEnv)
    assert env.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    assert env.observation_space.shape == (16, *env.single_observation_space.shape)
    assert env.action_space.shape == (16,)
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    assert info["action_mask"].shape == (16, env.single_action_space.n)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(120):
        obs, rew, term, trunc, info = env.step(_legal(info["action_mask"], rng))
        assert env.observation_space.contains(obs)
        assert rew.dtype == np.float32 and rew.shape == (16,)
        assert term.dtype == bool and trunc.dtype == bool and not (term & trunc).any()
        done = term | trunc
        if done.any():
            ended += int(done.sum())
            assert (info["_final_obs"] == done).all()
            for i in np.flatnonzero(done):
                assert env.single_observation_space.contains(info["final_obs"][i])
        assert info["action_mask"].any(axis=1).all()  # every game has a next decision
    assert ended > 0
    env.close()


def test_the_vector_env_is_seeded_and_refuses_illegal_actions():
    def run(seed):
        env = gymnasium.make_vec(IDS[0], num_envs=8, opponents="greedy")
        obs, info = env.reset(seed=seed)
        rng = np.random.default_rng(1)
        out = [obs]
        for _ in range(30):
            obs, *_rest, info = env.step(_legal(info["action_mask"], rng))
            out.append(obs)
        return np.stack(out), env, info

    a, env, info = run(5)
    b, _, _ = run(5)
    assert np.array_equal(a, b)
    bad = np.array([int(np.flatnonzero(~m)[0]) for m in info["action_mask"]])
    with pytest.raises(ValueError, match="illegal"):
        env.step(bad)


def test_a_cleanrl_style_ppo_loop_runs_on_the_vector_env():
    """CleanRL's ppo.py in brief (masked logits, GAE, clipped objective), a few thousand
    learner steps: the door works for code written against Gymnasium's vector API."""
    import torch
    from torch import nn

    torch.manual_seed(0)
    n, steps = 16, 64
    env = gymnasium.make_vec(IDS[0], num_envs=n, opponents="random")
    obs_dim = env.single_observation_space.shape[0]
    acts = env.single_action_space.n
    scale = torch.as_tensor(1.0 / np.maximum(env.single_observation_space.high, 1),
                            dtype=torch.float32)
    body = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh())
    actor, critic = nn.Linear(64, acts), nn.Linear(64, 1)
    params = [*body.parameters(), *actor.parameters(), *critic.parameters()]
    opt = torch.optim.Adam(params, lr=3e-4)

    def policy(o, m):
        h = body(torch.as_tensor(o, dtype=torch.float32) * scale)
        logits = actor(h).masked_fill(~torch.as_tensor(m), -1e9)
        return torch.distributions.Categorical(logits=logits), critic(h).squeeze(-1)

    obs, info = env.reset(seed=0)
    total, losses = 0, []
    for _update in range(4):
        buf = {k: [] for k in ("obs", "mask", "act", "logp", "val", "rew", "done")}
        for _ in range(steps):
            with torch.no_grad():
                dist, val = policy(obs, info["action_mask"])
                a = dist.sample()
            buf["obs"].append(obs)
            buf["mask"].append(info["action_mask"])
            buf["act"].append(a)
            buf["logp"].append(dist.log_prob(a))
            buf["val"].append(val)
            obs, rew, term, trunc, info = env.step(a.numpy())
            buf["rew"].append(torch.as_tensor(rew))
            buf["done"].append(torch.as_tensor(term | trunc, dtype=torch.float32))
            total += n
        with torch.no_grad():
            _, nxt = policy(obs, info["action_mask"])
        adv = torch.zeros(steps, n)
        last = torch.zeros(n)
        for t in reversed(range(steps)):
            v_next = nxt if t == steps - 1 else buf["val"][t + 1]
            nonterm = 1.0 - buf["done"][t]
            delta = buf["rew"][t] + 0.99 * v_next * nonterm - buf["val"][t]
            last = delta + 0.99 * 0.95 * nonterm * last
            adv[t] = last
        ret = adv + torch.stack(buf["val"])
        o = np.concatenate(buf["obs"])
        m = np.concatenate(buf["mask"])
        dist, val = policy(o, m)
        ratio = (dist.log_prob(torch.cat(buf["act"])) - torch.cat(buf["logp"])).exp()
        a_flat = adv.reshape(-1)
        a_flat = (a_flat - a_flat.mean()) / (a_flat.std() + 1e-8)
        pg = -torch.min(ratio * a_flat, ratio.clamp(0.8, 1.2) * a_flat).mean()
        loss = pg + 0.5 * ((val - ret.reshape(-1)) ** 2).mean() - 0.01 * dist.entropy().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert total >= 4096 and all(np.isfinite(losses))


def test_every_id_has_max_episode_steps():
    for env_id in IDS:
        assert gymnasium.spec(env_id).max_episode_steps > 0
        assert gymnasium.spec(env_id).vector_entry_point is not None


def test_pettingzoo_style_modules():
    from pettingzoo.test import api_test, parallel_api_test

    from trafficenvs import jakarta_traffic_v1, jamming_traffic_v1, traffic_jam_v1

    api_test(traffic_jam_v1.env(num_players=3), num_cycles=30)
    parallel_api_test(traffic_jam_v1.parallel_env(num_players=2), num_cycles=30)
    for mod in (traffic_jam_v1, jamming_traffic_v1, jakarta_traffic_v1):
        raw = mod.raw_env(num_players=2)
        assert raw.metadata["name"].endswith("_v1")
        assert mod.vec_env(4, num_players=2).num_envs == 4
    assert not hasattr(jamming_traffic_v1, "parallel_env")
    for spec in trafficenvs.specs():  # every game has its module, at its version
        import importlib

        assert importlib.import_module(f"trafficenvs.{spec.name}_v{spec.version}").env


def test_the_sb3_bridge_sets_torch_threads_unless_told_not_to():
    import torch

    from trafficenvs.agents.policy import RandomPolicy
    from trafficenvs.agents.sb3_bridge import SelfPlayVecEnv

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        SelfPlayVecEnv("traffic_jam", 2, RandomPolicy(0), num_players=2)
        assert torch.get_num_threads() == 1
        torch.set_num_threads(2)
        SelfPlayVecEnv("traffic_jam", 2, RandomPolicy(0), num_players=2, torch_threads=None)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
