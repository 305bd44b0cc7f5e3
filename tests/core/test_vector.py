"""The vectorised env's own features: stepping some games, chosen final views, records."""

from __future__ import annotations

import numpy as np
import pytest

import trafficenvs


def first_legal(out):
    return np.array([np.flatnonzero(m)[0] for m in out.action_mask])


def test_inactive_games_do_not_move_and_report_nothing():
    venv = trafficenvs.make_vec("traffic_jam", num_envs=3, num_players=2)
    out = venv.reset(seed=1)
    before = venv.state_dict(1)
    obs1 = out.observation[1].copy()
    out = venv.step(first_legal(out), active=np.array([True, False, True]))
    assert venv.state_dict(1) == before
    np.testing.assert_array_equal(out.observation[1], obs1)
    assert venv.state_dict(0)["moves"] == 1 and venv.state_dict(2)["moves"] == 1
    assert not out.terminated[1] and (out.rewards[1] == 0).all()


def test_an_inactive_games_action_is_ignored_even_if_illegal():
    venv = trafficenvs.make_vec("traffic_jam", num_envs=2, num_players=2)
    out = venv.reset(seed=1)
    actions = first_legal(out)
    actions[1] = np.flatnonzero(~out.action_mask[1])[0]
    out = venv.step(actions, active=np.array([True, False]))
    actions[0] = first_legal(out)[0]
    with pytest.raises(ValueError, match=r"games \[1\]$"):
        venv.step(actions)


def play_to_the_end(venv, out, final_seat=None):
    for _ in range(100):
        out = venv.step(first_legal(out), final_seat=final_seat)
        if out.terminated.all():
            return out
    raise AssertionError("game did not end")


def test_final_observation_can_be_taken_from_a_chosen_seat():
    """Traffic Jam, 2 players, 24 moves: seat 1 makes the last move."""
    a = trafficenvs.make_vec("traffic_jam", num_envs=1, num_players=2)
    b = trafficenvs.make_vec("traffic_jam", num_envs=1, num_players=2)
    out_a = play_to_the_end(a, a.reset(seed=4))
    out_b = play_to_the_end(b, b.reset(seed=4), final_seat=np.array([0]))
    # joy and victory-pile size per seat, seat-relative (me first): the two views swap
    lay = a.game.obs_layout
    at = [lay.at("seats", j, part) for j in (0, 1) for part in ("joy", "cards")]
    mover = out_a.final_observation[0, at]
    seat0 = out_b.final_observation[0, at]
    assert mover.tolist() == [seat0[2], seat0[3], seat0[0], seat0[1]]


def test_final_record_holds_the_finished_game():
    venv = trafficenvs.make_vec("traffic_jam", num_envs=2, num_players=3)
    out = play_to_the_end(venv, venv.reset(seed=2))
    for i in range(2):
        final = venv.game.to_dict(out.final_records[i])
        assert final["over"] is True and final["moves"] == 36
        assert venv.state_dict(i)["moves"] == 0  # the row itself restarted
        scores = venv.game.scores(out.final_records[i])
        winners = scores == scores.max()
        assert (out.rewards[i][winners] >= 0).all()


def test_observe_gives_any_seats_view_without_moving():
    venv = trafficenvs.make_vec("traffic_jam", num_envs=2, num_players=3)
    out = venv.reset(seed=0)
    mine = venv.observe(out.current_player)
    np.testing.assert_array_equal(mine, out.observation)
    other = venv.observe(np.array([2, 1]))
    env = trafficenvs.make("traffic_jam", num_players=3, wrapped=False)
    env.reset(seed=1)
    np.testing.assert_array_equal(other[1], env.observe("player_1")["observation"])
    with pytest.raises(ValueError, match="seats"):
        venv.observe(np.array([0, 3]))
