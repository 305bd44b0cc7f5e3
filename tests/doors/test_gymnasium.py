"""The doors users expect: every game by Gymnasium id (single learner, alone and vectorised)
and by PettingZoo name in both spellings."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import trafficenvs  # noqa: F401  (registers the ids)
from trafficenvs.core.spec import specs
from trafficenvs.gym_envs import gymnasium_id

IDS = ["trafficenvs/TrafficJam-v1", "trafficenvs/JammingTraffic-v1",
       "trafficenvs/JakartaTraffic-v1"]


def test_every_game_is_registered_at_its_current_version():
    assert sorted(gymnasium_id(s) for s in specs() if s.rules_page) == sorted(IDS)
    for env_id in IDS:
        assert env_id in gymnasium.registry


@pytest.mark.parametrize("env_id", IDS)
def test_gymnasium_make_plays_against_the_named_opponents_and_passes_check_env(env_id):
    env = gymnasium.make(env_id, opponents="greedy", num_players=3)
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    steps, ended = 0, 0
    while ended < 2 and steps < 20_000:
        mask = info["action_mask"]
        np.testing.assert_array_equal(mask, env.unwrapped.action_masks())
        a = int(np.flatnonzero(mask)[0])
        obs, reward, terminated, truncated, info = env.step(a)
        assert not info.get("illegal_action")
        steps += 1
        if terminated or truncated:
            assert not info["action_mask"].any()
            ended += 1
            obs, info = env.reset()
    assert ended == 2


def test_the_opponents_can_be_a_list_or_a_search_agent_and_a_bad_name_is_refused():
    env = gymnasium.make("trafficenvs/TrafficJam-v1", opponents="random,flatmc:n=2")
    pool = env.unwrapped.vec.pool
    assert [p.name for p in pool.policies] == ["random", "flatmc:n=2"]
    with pytest.raises(ValueError, match="unknown agent"):
        gymnasium.make("trafficenvs/TrafficJam-v1", opponents="grandmaster")


def test_the_same_seed_gives_the_same_episodes():
    def episode(seed):
        env = gymnasium.make("trafficenvs/JammingTraffic-v1", opponents="greedy")
        obs, info = env.reset(seed=seed)
        out = [obs.copy()]
        for _ in range(200):
            obs, r, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
            out.append(obs.copy())
            if term or trunc:
                break
        return np.array(out)

    np.testing.assert_array_equal(episode(5), episode(5))


def test_gymnasium_make_vec_steps_several_games():
    """Gymnasium's next-step autoreset: after a game ends its mask is all False and the
    next step's action for it is ignored (it starts the next game)."""
    venv = gymnasium.make_vec("trafficenvs/TrafficJam-v1", num_envs=3,
                              vectorization_mode="sync", opponents="random")
    obs, infos = venv.reset(seed=1)
    assert obs.shape == (3, *venv.single_observation_space.shape)
    ended = 0
    for _ in range(100):
        acts = np.array([int(np.flatnonzero(m)[0]) if m.any() else 0
                         for m in infos["action_mask"]])
        obs, rew, term, trunc, infos = venv.step(acts)
        ended += int((term | trunc).sum())
        assert venv.single_observation_space.contains(obs[0])
    assert ended >= 3
    venv.close()


def test_pettingzoo_names_in_pettingzoo_style_and_both_spellings_make_the_env():
    for spec in specs():
        if not spec.rules_page:
            continue
        env = trafficenvs.make(f"{spec.name}_v{spec.version}")
        assert env.unwrapped.metadata["name"] == f"{spec.name}_v{spec.version}"
        assert trafficenvs.make(spec.env_id).unwrapped.metadata["name"] == env.metadata["name"]
