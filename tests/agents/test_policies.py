"""The policy interface, the random and greedy players."""

from __future__ import annotations

import numpy as np
import pytest

import trafficenvs
from tests.traffic_jam.positions import cards, pair, position
from trafficenvs.agents import act_aec, make_greedy, sample_masked
from trafficenvs.agents.greedy import games_with_greedy
from trafficenvs.registry import list_envs, make_game, make_vec

G2 = make_game("traffic_jam", num_players=2)


def test_random_moves_are_legal_and_uniform():
    mask = np.zeros((20000, 5), bool)
    mask[:, [1, 3, 4]] = True
    acts = sample_masked(np.random.default_rng(0), mask)
    counts = np.bincount(acts, minlength=5) / len(acts)
    assert counts[[0, 2]].sum() == 0
    assert np.allclose(counts[[1, 3, 4]], 1 / 3, atol=0.015)


@pytest.mark.parametrize("players", [2, 4])
def test_greedy_plays_only_legal_moves_through_whole_games(players):
    """Auto-resetting batch of 256 games for 100 moves: the env would raise on any
    illegal move."""
    venv = make_vec("traffic_jam", num_envs=256, num_players=players)
    out = venv.reset(seed=0)
    me = make_greedy(venv.game)
    for _ in range(100):
        a = me.act(out.observation, out.action_mask, out.current_player)
        assert out.action_mask[np.arange(256), a].all()
        out = venv.step(a)


def test_greedy_rides_the_car_likeliest_to_score_and_steers_the_surprise_away():
    """Stage 2 of the first trip, 2 players, seat 0 to move; stage-1 cards:

        morning: van   (size 2 = N: one more card jams it)
        day:     -     (empty)
        night:   bus   (size 1)
    hand: morning cab (3), day cab (4), night van (3), day van (5), morning bus (2)

    The day van (5) fills the day road to 2 and jams on any further card; the day
    cab (4) leaves room for one, so it is likelier to score and worth more. The
    surprise must stay off the day road: of the others, the least joyful card goes,
    the morning bus (2).
    """
    state = position(G2, round=0, trip=0, stage=1, to_move=0,
                     roads=cards(G2, "morning van, night bus"),
                     hands=[cards(G2, "morning cab, day cab, night van, day van, morning bus"),
                            [...]])
    venv = make_vec("traffic_jam", num_envs=1, num_players=2)
    venv.reset(seed=0)
    venv.load_state_dict(0, state)
    out = venv.last
    a = make_greedy(G2).act(out.observation, out.action_mask, out.current_player)[0]
    assert a == pair(G2, *cards(G2, "day cab, morning bus"))


def test_greedy_plays_an_ice_cream_truck_into_a_jam():
    """Stage 2, 2 players, seat 0: the day road already holds van + van (size 4 > 2,
    a jam whatever comes), the other roads are empty. Hand: day ice cream (4),
    night bus (1). Riding the ice cream truck in the jam scores 4 for sure."""
    state = position(G2, round=0, trip=1, stage=1, to_move=0,
                     roads=cards(G2, "day van, day van"),
                     hands=[cards(G2, "day ice, night bus"), [...]])
    venv = make_vec("traffic_jam", num_envs=1, num_players=2)
    venv.reset(seed=0)
    venv.load_state_dict(0, state)
    out = venv.last
    a = make_greedy(G2).act(out.observation, out.action_mask, out.current_player)[0]
    assert a == pair(G2, *cards(G2, "day ice, night bus"))


def test_every_registered_game_with_a_greedy_player_is_a_known_game():
    known = {e.rsplit("-v", 1)[0] for e in list_envs()}
    assert set(games_with_greedy()) <= known


def test_a_policy_plays_the_aec_env_as_a_batch_of_one():
    env = trafficenvs.make("traffic_jam", num_players=3)
    env.reset(seed=1)
    me = make_greedy(make_game("traffic_jam", num_players=3))
    steps = 0
    for _agent in env.agent_iter():
        env.step(act_aec(me, env))
        steps += 1
    assert steps == 36 + 3  # every move, then each agent's final (None) step


@pytest.mark.parametrize("game", ["traffic_jam", "jamming_traffic", "jakarta_traffic"])
def test_a_greedy_player_refuses_rows_of_the_wrong_width_before_compiled_code(game):
    g = make_game(game, num_players=2)
    me = make_greedy(g)
    with pytest.raises(ValueError, match="observation must be"):
        me.act(np.zeros((2, g.obs_dim - 1), np.float32), np.ones((2, g.num_actions), bool),
               np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="action_mask"):
        me.act(np.zeros((2, g.obs_dim), np.float32), np.ones((3, g.num_actions), bool),
               np.zeros(2, np.int64))
