"""Ray RLlib route (trafficenvs.rllib): a couple of PPO self-play iterations on a local
Ray with 2 env runners, rewards credited to the right agents, no illegal action.

Skipped where ray is not installed (``pip install "trafficenvs[rllib]"``)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

from trafficenvs.rllib.env import (  # noqa: E402
    TrafficMultiAgentEnv,
    env_config,
    sample_summaries,
)
from trafficenvs.rllib.selfplay import LEARNER, SelfPlayMapping, build_config  # noqa: E402

GAMES = ["traffic_jam", "jamming_traffic", "jakarta_traffic"]


def random_game(env: TrafficMultiAgentEnv, seed: int) -> tuple[dict, dict, int]:
    """Play one game with uniformly random legal moves: (returns, last infos, moves)."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    moves = 0
    while True:
        assert len(obs) == 1, "only the agent to move observes during the game"
        (agent, o), = obs.items()
        assert env.observation_space[agent].contains(o)
        action = int(rng.choice(np.flatnonzero(o["action_mask"])))
        obs, rew, term, trunc, infos = env.step({agent: action})
        moves += 1
        assert set(rew) == set(env.possible_agents), "every agent gets a reward entry"
        for a, r in rew.items():
            returns[a] += r
        if term["__all__"] or trunc["__all__"]:
            assert set(obs) == set(env.possible_agents), "every agent sees the end"
            return returns, infos, moves


@pytest.mark.parametrize("game", GAMES)
def test_final_rewards_go_to_every_seat_zero_sum_and_to_the_winner(game):
    env = TrafficMultiAgentEnv(env_config(game, num_players=3))
    for seed in range(2):
        returns, infos, _ = random_game(env, seed)
        assert sum(returns.values()) == pytest.approx(0.0, abs=1e-6)  # C2
        assert {a: i["return"] for a, i in infos.items()} == pytest.approx(returns)
        scores = {a: i["score"] for a, i in infos.items()}
        winners = [a for a, r in returns.items() if r > 0]
        assert winners, "a finished game (not cut off) has a winner"
        assert all(scores[w] == max(scores.values()) for w in winners)
    assert env.illegal_actions == 0


def test_an_illegal_action_ends_the_game_and_is_counted():
    env = TrafficMultiAgentEnv(env_config("traffic_jam", num_players=2))
    obs, _ = env.reset(seed=0)
    (agent, o), = obs.items()
    bad = int(np.flatnonzero(o["action_mask"] == 0)[0])
    _, rew, term, _, infos = env.step({agent: bad})
    assert term["__all__"] and rew[agent] == -1.0 and infos[agent]["illegal"]
    assert env.illegal_actions == 1


def test_the_mapping_seats_the_learner_once_per_game_and_one_opponent_group():
    mapping = SelfPlayMapping(["self", "greedy"], num_players=3, snapshots=2)

    class Ep:
        def __init__(self, i):
            self.id_ = f"episode-{i}"

    seen = set()
    for i in range(200):
        mods = [mapping(f"player_{s}", Ep(i)) for s in range(3)]
        assert mods.count(LEARNER) == 1
        others = {m for m in mods if m != LEARNER}
        assert len(others) == 1
        seen |= others
        seen.add(mods.index(LEARNER))
    assert seen == {0, 1, 2, "self_0", "self_1", "opp1_greedy"}


def test_masked_module_never_picks_an_illegal_action():
    import gymnasium as gym
    import torch
    from ray.rllib.core.columns import Columns

    from trafficenvs.rllib.modules import MaskedPPOTorchRLModule

    env = TrafficMultiAgentEnv(env_config("jakarta_traffic", num_players=2))
    space = env.observation_spaces["player_0"]
    module = MaskedPPOTorchRLModule(observation_space=space, action_space=gym.spaces.Discrete(
        env.game.num_actions), model_config={"fcnet_hiddens": [32]})
    rng = np.random.default_rng(0)
    rows = [space.sample() for _ in range(64)]
    for k, r in enumerate(rows):  # a few legal actions per row, a lone one in some
        r["action_mask"][:] = rng.random(len(r["action_mask"])) < (0.1 if k % 2 else 0.0)
        r["action_mask"][rng.integers(len(r["action_mask"]))] = 1
    batch = {Columns.OBS: {k: torch.as_tensor(np.stack([r[k] for r in rows]))
                           for k in ("observations", "action_mask")}}
    out = module.forward_exploration(batch)
    dist = module.get_exploration_action_dist_cls().from_logits(out[Columns.ACTION_DIST_INPUTS])
    actions = torch.stack([dist.sample() for _ in range(50)])
    mask = batch[Columns.OBS]["action_mask"]
    assert (mask.gather(1, actions.T) == 1).all()


@pytest.fixture(scope="module")
def ray_local():
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"NUMBA_NUM_THREADS": "1"}})
    yield ray
    ray.shutdown()


def test_ppo_self_play_two_env_runners_traffic_jam(ray_local):
    envc = env_config("traffic_jam", num_players=2)
    algo = build_config(envc, ["self", "random", "greedy"], num_env_runners=2, snapshots=2,
                        hiddens=(64, 64), train_batch_size=600, minibatch_size=200,
                        num_epochs=2).build_algo()
    try:
        from trafficenvs.rllib.training import refresh_snapshot

        def count(r):
            return sum(e.unwrapped.illegal_actions for e in r.env.envs)

        # RLlib's env check at start-up steps one random (mostly illegal) action
        before = algo.env_runner_group.foreach_env_runner(count, local_env_runner=False)
        for it in range(2):
            result = algo.train()
            er = result["env_runners"]
            assert er["num_env_steps_sampled"] >= 600
            assert er.get("illegal_actions", 0) == 0
            refresh_snapshot(algo, f"self_{it}")
        assert "learner" in result["learners"]
        runs = algo.env_runner_group.foreach_env_runner(
            lambda r: sample_summaries(r, 3), local_env_runner=False)
        assert len(runs) == 2
        n = 0
        for (episodes, illegal), start in zip(runs, before):
            assert illegal == start, "the masked modules played an illegal action"
            for ep in episodes:
                assert list(ep["modules"].values()).count(LEARNER) == 1
                if not ep["terminated"]:
                    continue
                n += 1
                rets = ep["returns"]
                # RLlib's per-agent returns are the game's own tally: nothing lost to the
                # agent that did not make the last move, nothing credited twice
                assert rets == pytest.approx({a: i["return"] for a, i in ep["infos"].items()})
                assert sum(rets.values()) == pytest.approx(0.0, abs=1e-6)
                scores = {a: i["score"] for a, i in ep["infos"].items()}
                for a, r in rets.items():
                    if r > 0:
                        assert scores[a] == max(scores.values())
        assert n >= 3
    finally:
        algo.stop()


@pytest.mark.parametrize("game", ["jamming_traffic", "jakarta_traffic"])
def test_one_iteration_on_the_other_games(ray_local, game):
    envc = env_config(game, num_players=2)
    algo = build_config(envc, ["self", "greedy"], num_env_runners=0, snapshots=1,
                        hiddens=(32,), train_batch_size=400, minibatch_size=200,
                        num_epochs=1).build_algo()
    try:
        result = algo.train()
        assert result["env_runners"]["num_env_steps_sampled"] >= 400
        assert result["env_runners"].get("illegal_actions", 0) == 0
    finally:
        algo.stop()


def test_train_command_with_rllib_backend_prints_iterations_and_writes_a_checkpoint(
        ray_local, tmp_path, capsys):
    import json

    from trafficenvs.cli import main

    out = tmp_path / "run" / "checkpoint"
    assert main(["train", "traffic_jam", "--backend", "rllib", "--num-env-runners", "2",
                 "--num-envs", "8", "--timesteps", "100", "--net", "32",
                 "--opponents", "self,greedy", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "[iter    1," in text and "illegal 0" in text and "done: 1 iterations" in text
    assert (out / "rllib_checkpoint.json").exists()
    summary = json.loads(out.with_suffix(".json").read_text())
    assert summary["backend"] == "rllib" and summary["illegal_actions"] == 0
    assert summary["env_steps"] >= 100 and summary["config"]["num_env_runners"] == 2
    assert ray_local.is_initialized(), "a Ray the run joined is left running"


def test_every_game_is_registered_with_rllib_by_name():
    from ray.tune.registry import ENV_CREATOR, _global_registry

    from trafficenvs.rllib import register_envs

    names = register_envs()
    assert "trafficenvs/traffic_jam-v1" in names and len(names) == 3
    for name in names:
        env = _global_registry.get(ENV_CREATOR, name)({"num_players": 2})
        obs, _ = env.reset(seed=0)
        assert obs and env.game.name == name.split("/")[1].rsplit("-v", 1)[0]
