"""Expert iteration with fixed opponents in its self-play games (``opponents=``,
``train --algo exit --exit-opponents``): the line-ups rotate among games and seats,
the opponent's moves are its agent's and are neither kept nor counted, and the kept
decisions carry the search's seat's result."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from trafficenvs.agents.expert_iteration import ExpertIteration  # noqa: E402
from trafficenvs.registry import make_game  # noqa: E402

from .exit_tiny import TINY, TINY_TRAIN  # noqa: E402


@pytest.fixture(scope="module")
def game():
    return make_game("traffic_jam", num_players=2)


class Recorder:
    """Wraps an agent and records the seats it was asked to move."""

    def __init__(self, agent):
        self.agent, self.seats, self.rows = agent, [], 0
        self.needs_records = getattr(agent, "needs_records", False)

    def act(self, observation, action_mask, current_player, **kw):
        self.seats.append(np.array(current_player))
        self.rows += len(current_player)
        return self.agent.act(observation, action_mask, current_player, **kw)


@pytest.fixture(scope="module")
def mixed(game):
    """One game in every row: rows 0, 2, ... self-play, rows 1, 3, ... against greedy
    (entry ``(i + k) % 2`` of ``self,greedy`` for row ``i``'s ``k``-th game)."""
    x = ExpertIteration(game, seed=5, opponents=("self", "greedy"), **TINY)
    start_seat = x._opp_seat.copy()
    x.opponents[1] = rec = Recorder(x.opponents[1])
    x.self_play()
    return x, rec, start_seat


def test_line_ups_rotate_among_games_and_the_opponents_seat_among_seats(mixed):
    x, _, start = mixed
    rows = np.arange(TINY["num_envs"])
    # first games: odd rows against greedy, its seat (i // 2) % 2: 0, 1, 0, 1, ...
    assert (start[rows % 2 == 0] == -1).all()
    assert start[1::2].tolist() == [(i // 2) % 2 for i in rows[1::2]]
    # every row's game ended after 24 moves: the next game takes the next entry
    assert (x._game_no == 1).all()
    assert (x._opp_seat[rows % 2 == 1] == -1).all()
    assert x._opp_seat[0::2].tolist() == [((i + 1) // 2) % 2 for i in rows[0::2]]


def test_the_opponents_moves_are_its_agents_and_are_not_kept(mixed):
    """8 self-play games keep 24 decisions each, 8 games against greedy 12 (the search's
    seat's); greedy made the other 12 of those, in its own seat only."""
    x, rec, start = mixed
    assert x.games == 16
    assert x.buffer.size == 8 * 24 + 8 * 12 == x.decisions
    assert x.opponent_decisions == 8 * 12 == rec.rows
    seats = np.concatenate(rec.seats)
    assert np.bincount(seats, minlength=2).tolist() == [
        12 * int((start == 0).sum()), 12 * int((start == 1).sum())]


def test_kept_decisions_carry_the_search_seats_result(mixed):
    """Games end on the same step and are kept row by row: row 0's 24 decisions, row
    1's 12, ... A self-play game's values hold both seats' results (+r twelve times,
    -r twelve times); a game against greedy only the search's seat's."""
    x, _, _ = mixed
    v = x.buffer.value[:x.buffer.size]
    at = 0
    for i in range(TINY["num_envs"]):
        n = 24 if i % 2 == 0 else 12
        game_values = v[at:at + n]
        assert set(np.unique(game_values).tolist()) <= {-1.0, 0.0, 1.0}
        if i % 2 == 0:
            assert game_values.sum() == 0
        else:
            assert len(np.unique(game_values)) == 1
        at += n
    p = x.buffer.policy[:x.buffer.size]
    assert np.allclose(p.sum(axis=1), 1.0, atol=1e-5)  # no opponent's empty row kept


def test_pure_self_play_is_unchanged_by_naming_self(game):
    a = ExpertIteration(game, seed=3, **TINY)
    b = ExpertIteration(game, seed=3, opponents=("self",), **TINY)
    a.self_play()
    b.self_play()
    n = a.buffer.size
    assert n == b.buffer.size == 16 * 24 and b.opponent_decisions == 0
    assert np.array_equal(a.buffer.policy[:n], b.buffer.policy[:n])
    assert np.array_equal(a.buffer.value[:n], b.buffer.value[:n])


@pytest.mark.parametrize("bad, match", [(("gredy",), "did you mean 'greedy'"),
                                        ((), "at least one"), (("self", " "), "at least one")])
def test_unknown_or_empty_opponents_are_refused(game, bad, match):
    with pytest.raises(ValueError, match=match):
        ExpertIteration(game, opponents=bad, **TINY)


def test_train_exit_opponents_counts_the_searchs_decisions(tmp_path):
    """``--timesteps`` counts the search's decisions: 16 games against greedy keep 192
    an iteration, so 500 takes three."""
    from trafficenvs.cli import main

    out = tmp_path / "tj.zip"
    assert main([*TINY_TRAIN, "--timesteps", "500", "--eval-every", "0",
                 "--eval-games", "4", "--eval-against", "random",
                 "--exit-opponents", "greedy", "--out", str(out)]) == 0
    summary = json.loads(out.with_suffix(".json").read_text())
    assert summary["iterations"] == 3
    assert summary["decisions"] == summary["opponent_decisions"] == 3 * 192
    assert summary["config"]["exit_opponents"] == "greedy"


def test_ppo_refuses_exit_opponents(capsys):
    from trafficenvs.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["train", "traffic_jam", "--timesteps", "10", "--exit-opponents", "greedy"])
    assert exit_.value.code == 2
    assert "--exit-opponents" in capsys.readouterr().err
