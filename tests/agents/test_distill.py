"""Learning from a teacher (``agents/distill.py``, ``trafficenvs train --teacher``).

The references are independent of the collector: the teacher is asked again for its
move on the recorded observation, and a game replayed by hand in the vectorised env
gives each seat's final return.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from trafficenvs.agents.distill import Demonstrations, collect, fit  # noqa: E402
from trafficenvs.agents.policy import RandomPolicy  # noqa: E402
from trafficenvs.agents.zoo import make_agent  # noqa: E402
from trafficenvs.cli import main  # noqa: E402
from trafficenvs.registry import make_game, make_vec  # noqa: E402


def _student(game_name: str, net=(64, 64), seed: int = 0):
    from sb3_contrib import MaskablePPO

    from trafficenvs.agents.ppo import DEFAULT_POLICY_KWARGS
    from trafficenvs.agents.sb3_bridge import OpponentPool, SelfPlayVecEnv

    game = make_game(game_name, num_players=2)
    pool = OpponentPool()
    pool.add(make_agent("random", game, seed=1))
    env = SelfPlayVecEnv(game_name, 4, pool, seed=0, num_players=2)
    kw = dict(DEFAULT_POLICY_KWARGS, net_arch={"pi": list(net), "vf": list(net)})
    return MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=64, policy_kwargs=kw,
                       device="cpu", seed=seed)


def test_every_label_is_the_teachers_legal_move_from_the_movers_own_view():
    """Jamming's greedy player is deterministic and reads only the observation, so a
    fresh copy asked on the recorded observation must choose the recorded move."""
    game = make_game("jamming_traffic", num_players=2)
    d = collect("jamming_traffic", 2, make_agent("greedy", game), 600, num_envs=16, seed=4)
    assert len(d) == 600
    assert d.observation.shape == (600, game.obs_dim)
    assert d.action_mask[np.arange(600), d.action].all()
    again = make_agent("greedy", game).act(d.observation, d.action_mask, np.zeros(600, int))
    np.testing.assert_array_equal(again, d.action)


def test_each_decision_carries_the_movers_final_return():
    """One game at a time: a game replayed by hand (same seed, the teacher's moves)
    gives the seat of each decision and the seats' summed rewards."""
    game = make_game("traffic_jam", num_players=2)
    teacher = make_agent("greedy", game, seed=5)
    d = collect("traffic_jam", 2, teacher, 400, num_envs=1, seed=11)
    venv = make_vec("traffic_jam", num_envs=1, num_players=2)
    out = venv.reset(seed=11)
    seats, total = [], np.zeros(2)
    k = 0
    while True:
        np.testing.assert_array_equal(out.observation[0], d.observation[k])
        seats.append(int(out.current_player[0]))
        out = venv.step(d.action[k:k + 1].copy())
        total += out.rewards[0]
        k += 1
        if out.terminated[0] or out.truncated[0]:
            break
    assert 10 < k < 400
    np.testing.assert_allclose(d.ret[:k], total[seats], atol=1e-6)
    assert total.sum() == pytest.approx(0.0, abs=1e-6)  # zero-sum (C2)
    assert np.isnan(d.ret[-1])  # the game under way at the end has no result yet


def test_dagger_lets_the_student_play_while_the_teacher_labels_every_decision():
    game = make_game("jamming_traffic", num_players=2)
    greedy = make_agent("greedy", game)
    own = collect("jamming_traffic", 2, greedy, 500, num_envs=8, seed=2)
    mixed = collect("jamming_traffic", 2, greedy, 500, student=RandomPolicy(3), beta=0.0,
                    num_envs=8, seed=2)
    # the random student chose every move, so the positions differ after the first ones
    assert not np.array_equal(own.observation, mixed.observation)
    again = greedy.act(mixed.observation, mixed.action_mask, np.zeros(500, int))
    np.testing.assert_array_equal(again, mixed.action)


def test_a_search_teacher_is_given_the_games_and_labels_legal_moves():
    """A search agent needs the rows' records (``needs_records``); the collector passes
    them, and the search's moves are legal labels."""
    game = make_game("traffic_jam", num_players=2)
    teacher = make_agent("flatmc:n=2,rollout=greedy", game, seed=3)
    d = collect("traffic_jam", 2, teacher, 96, num_envs=16, seed=6)
    assert len(d) == 96 and teacher.decisions >= 96
    assert d.action_mask[np.arange(96), d.action].all()


@pytest.mark.parametrize("kwargs,message", [
    ({"decisions": 0}, "decisions"),
    ({"beta": 1.5}, "beta"),
    ({"beta": 0.5}, "student"),
])
def test_bad_collection_arguments_are_refused(kwargs, message):
    game = make_game("traffic_jam", num_players=2)
    args = {"decisions": 10, **kwargs}
    with pytest.raises(ValueError, match=message):
        collect("traffic_jam", 2, make_agent("greedy", game), **args)


def test_fitting_makes_the_network_choose_the_teachers_moves_and_value_the_results():
    from trafficenvs.agents.ppo import PPOPolicy

    game = make_game("traffic_jam", num_players=2)
    d = collect("traffic_jam", 2, make_agent("greedy", game, seed=1), 4000, num_envs=64,
                seed=8)
    held = collect("traffic_jam", 2, make_agent("greedy", game, seed=1), 1000, num_envs=64,
                   seed=99)
    model = _student("traffic_jam")
    me = PPOPolicy(model.policy)

    def agreement(demos: Demonstrations) -> float:
        return float(np.mean(me.act(demos.observation, demos.action_mask,
                                    np.zeros(len(demos), int)) == demos.action))

    before = agreement(held)
    first = fit(model.policy, d, epochs=1, seed=0)
    last = fit(model.policy, d, epochs=8, seed=0)
    after = agreement(held)
    assert after > before + 0.3, (before, after)
    assert last["policy_loss"] < first["policy_loss"]
    assert last["value_loss"] < first["value_loss"]
    with pytest.raises(ValueError, match="no demonstrations"):
        fit(model.policy, Demonstrations(d.observation[:0], d.action_mask[:0], d.action[:0],
                                         d.ret[:0]))


def test_train_with_a_teacher_distils_then_evaluates_each_round(tmp_path, capsys):
    out = tmp_path / "jam.zip"
    assert main([
        "train", "jamming_traffic", "--players", "2", "--timesteps", "0",
        "--teacher", "greedy", "--teacher-decisions", "1500", "--teacher-rounds", "2",
        "--teacher-epochs", "2", "--num-envs", "16", "--eval-games", "20",
        "--net", "32,32", "--out", str(out), "--no-progress", "--seed", "1",
    ]) == 0
    summary = json.loads(out.with_suffix(".json").read_text())
    assert [h["round"] for h in summary["history"]] == [1, 2]
    assert all(0.0 <= h["agreement"] <= 1.0 for h in summary["history"])
    assert summary["learner_steps"] == 0
    assert "distil round 2/2" in capsys.readouterr().out
    assert out.with_suffix(".curve.csv").read_text().startswith("timesteps,round")
    # the distilled network plays in the arena
    assert main(["arena", "jamming_traffic", "--players", "2", "--games", "10",
                 "--agents", f"greedy,ppo:{out}"]) == 0


@pytest.mark.parametrize("argv", [
    ["train", "traffic_jam", "--timesteps", "0", "--no-progress"],
    # the rllib backend has no distillation: refused before Ray starts
    ["train", "traffic_jam", "--backend", "rllib", "--teacher", "greedy"],
    ["train", "traffic_jam", "--backend", "rllib", "--timesteps", "0", "--teacher", "greedy"],
])
def test_zero_timesteps_without_a_teacher_or_a_teacher_on_rllib_is_a_users_mistake(
        argv, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert "teacher" in capsys.readouterr().err
