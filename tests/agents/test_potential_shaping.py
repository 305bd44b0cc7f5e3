"""Potential-based shaping in the self-play env (``SelfPlayVecEnv.set_potential``).

Ng, Harada and Russell (1999): a reward ``F = w * (phi(s') - phi(s))`` with
``phi(end) = 0`` changes a game's return by ``-w * phi(s_0)`` only, so the ranking of
policies by their results is unchanged. Here ``phi`` is the game's own position
estimate (its ``evaluate`` verb) for the learner's seat at each of its decisions.
"""

from __future__ import annotations

import numpy as np
import pytest

from trafficenvs.agents import make_greedy
from trafficenvs.agents.sb3_bridge import SelfPlayVecEnv
from trafficenvs.core.verbs import EVAL_SCRATCH, k_evaluate
from trafficenvs.registry import make_game


def _env(game, weight, n=16, seed=0, gamma=1.0):
    g = make_game(game, num_players=2)
    return SelfPlayVecEnv(game, n, [make_greedy(g)], seed=seed, num_players=2,
                          potential=weight, potential_gamma=gamma)


def _play(env, games, seed=0, gamma=1.0):
    """Random legal learner moves until ``games`` games ended: per game the reward the
    learner got, summed with discount ``gamma`` per learner step, its result
    discounted the same way (it comes at the last step), and the estimate of its
    first position."""
    rng = np.random.default_rng(seed)
    env.reset()
    start = env._phi.copy()  # noqa: SLF001
    total = np.zeros(env.num_envs)
    disc = np.ones(env.num_envs)
    ended = []
    while len(ended) < games:
        mask = env.action_masks()
        env.step_async(np.array([rng.choice(np.flatnonzero(m)) for m in mask]))
        _, rewards, done, infos = env.step_wait()
        total += disc * rewards
        last = disc.copy()
        disc *= gamma
        for i in np.flatnonzero(done):
            ended.append((total[i], last[i] * infos[i]["episode"]["r"], start[i]))
            total[i] = 0.0
            disc[i] = 1.0
        start = np.where(done, env._phi, start)  # noqa: SLF001
    return np.array(ended)


@pytest.mark.parametrize("game", ["jamming_traffic", "jakarta_traffic"])
def test_the_shaped_return_is_the_result_less_the_first_positions_estimate(game):
    got = _play(_env(game, 0.5), games=40)
    assert np.allclose(got[:, 0], got[:, 1] - 0.5 * got[:, 2], atol=1e-5)
    assert (got[:, 2] != 0).any()  # the estimate has an opinion before the end


def test_with_a_discount_the_shaped_discounted_return_is_still_the_result_less_it():
    """``w * (gamma * phi(s') - phi(s))`` telescopes in the discounted sum too (the
    plain rewards come only at the end here: no shaping option, zero-sum C2)."""
    got = _play(_env("jakarta_traffic", 0.5, gamma=0.97), games=30, gamma=0.97)
    assert np.allclose(got[:, 0], got[:, 1] - 0.5 * got[:, 2], atol=1e-5)


def test_the_potential_is_the_games_estimate_for_the_learners_seat():
    env = _env("jakarta_traffic", 1.0)
    env.reset()
    for i in range(env.num_envs):
        ret = np.zeros(2)
        k_evaluate(env.venv.records[i], env.game.cfg[0], ret, np.zeros(EVAL_SCRATCH))
        assert env._phi[i] == pytest.approx(ret[env.learner_seat[i]])  # noqa: SLF001


def test_weight_zero_gives_the_plain_rewards():
    a, b = _env("jakarta_traffic", 0.0, seed=3), _env("jakarta_traffic", 0.0, seed=3)
    b.set_potential(1.0)
    b.set_potential(0.0)
    ra, rb = _play(a, games=20, seed=1), _play(b, games=20, seed=1)
    assert np.array_equal(ra[:, :2], rb[:, :2])
    assert np.array_equal(ra[:, 0], ra[:, 1])


def test_a_game_without_an_estimate_or_a_negative_weight_is_refused():
    with pytest.raises(ValueError, match="traffic_jam has no position estimate"):
        _env("traffic_jam", 1.0)
    with pytest.raises(ValueError, match="potential weight must be"):
        _env("jakarta_traffic", -1.0)
    with pytest.raises(ValueError, match="potential gamma must be"):
        _env("jakarta_traffic", 1.0, gamma=0.0)


def test_train_anneals_the_potential_and_records_it(tmp_path):
    import json

    from trafficenvs.cli import main

    out = tmp_path / "pot.zip"
    assert main([
        "train", "jamming_traffic", "--players", "2", "--timesteps", "256",
        "--potential", "1.0", "--potential-until", "0.5", "--num-envs", "8",
        "--n-steps", "16", "--batch-size", "64", "--eval-every", "0", "--eval-games", "4",
        "--net", "16,16", "--opponents", "greedy", "--out", str(out), "--no-progress",
    ]) == 0
    cfg = json.loads(out.with_suffix(".json").read_text())["config"]
    assert cfg["potential"] == 1.0 and cfg["potential_until"] == 0.5


def test_the_weight_falls_linearly_to_zero_and_stays_there():
    from trafficenvs.agents.training import potential_weight

    assert potential_weight(2.0, 0.5, 0, 1000) == 2.0
    assert potential_weight(2.0, 0.5, 250, 1000) == pytest.approx(1.0)
    assert potential_weight(2.0, 0.5, 500, 1000) == 0.0
    assert potential_weight(2.0, 0.5, 900, 1000) == 0.0


@pytest.mark.parametrize(("argv", "message"), [
    (["train", "jamming_traffic", "--potential", "1", "--backend", "rllib"], "sb3 backend"),
    (["train", "jamming_traffic", "--potential", "1", "--potential-until", "0"],
     "--potential-until must be in"),
])
def test_potential_where_it_cannot_work_is_a_users_mistake(argv, message, capsys):
    from trafficenvs.cli import main

    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_which_games_have_their_own_estimate():
    from trafficenvs.core.verbs import has_verb

    def dtype(name):
        return make_game(name, num_players=2).record_dtype

    assert has_verb(dtype("jakarta_traffic"), "evaluate")
    assert has_verb(dtype("jamming_traffic"), "evaluate")
    assert not has_verb(dtype("traffic_jam"), "evaluate")
    with pytest.raises(ValueError, match="unknown verb"):
        has_verb(dtype("traffic_jam"), "fly")
