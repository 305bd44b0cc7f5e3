"""The arena: seat rotation, win shares from the C2 result, ratings, table and JSON."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from trafficenvs.agents import RandomPolicy
from trafficenvs.agents.arena import lineups_for, mean_ci, run_arena, win_shares
from trafficenvs.agents.zoo import make_agents
from trafficenvs.cli import main
from trafficenvs.registry import make_game


def test_every_agent_sits_in_every_seat_equally_often():
    """3 agents, 2 seats: the 3 pairs, each in both seat orders."""
    lu = lineups_for(3, 2)
    assert sorted(map(tuple, lu)) == [(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]
    for seat in range(2):
        assert Counter(lu[:, seat].tolist()) == {0: 2, 1: 2, 2: 2}


def test_fewer_agents_than_seats_mix_agents_in_every_lineup():
    """2 agents, 3 seats: every assignment except all-the-same (2**3 - 2 = 6)."""
    lu = lineups_for(2, 3)
    assert len(lu) == 6 and all(len(set(row)) == 2 for row in lu.tolist())


def test_win_share_counts_shared_wins_and_cuts():
    """C2 results: lone win, 2-way shared win of 3, all-way tie / move-limit cut."""
    returns = np.array([[1.0, -0.5, -0.5], [0.25, 0.25, -0.5], [0.0, 0.0, 0.0]])
    assert win_shares(returns).tolist() == [
        [1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [1 / 3, 1 / 3, 1 / 3]
    ]


def test_confidence_interval_is_the_normal_approximation():
    m, lo, hi = mean_ci(np.array([0.0, 1.0] * 50))
    assert m == 0.5 and hi - m == pytest.approx(1.96 * np.std([0, 1] * 50, ddof=1) / 10, 1e-3)


def test_greedy_beats_random_and_the_table_says_so():
    g = make_game("traffic_jam", num_players=2)
    res = run_arena("traffic_jam", make_agents(["random", "greedy"], g), 2, 600, seed=1)
    assert res.games == 600 and res.truncated == 0
    greedy, rnd = res.stats("greedy"), res.stats("random")
    assert greedy.seats_played == rnd.seats_played == 600
    assert greedy.win_ci[0] > 0.5
    assert greedy.win_share + rnd.win_share == pytest.approx(1.0)
    assert greedy.rating["ordinal"] > rnd.rating["ordinal"]
    assert greedy.mean_score > rnd.mean_score
    assert res.mean_length == 24.0  # 6 trips x 2 stages x 2 players
    assert res.head_to_head["greedy"]["random"]["share"] == pytest.approx(greedy.win_share)
    assert "| greedy |" in res.table()
    data = json.loads(res.to_json())
    assert data["agents"][1]["name"] == "greedy"


def test_random_against_random_is_even_when_seats_rotate():
    """Two copies of one agent: the shares sum to 1 and 0.5 is inside both intervals."""
    agents = [RandomPolicy(1, name="a"), RandomPolicy(2, name="b")]
    res = run_arena("traffic_jam", agents, 3, 900, seed=2)
    a, b = res.stats("a"), res.stats("b")
    assert res.games == 900
    assert a.seats_played + b.seats_played == 2700
    assert a.win_ci[0] < 1 / 3 < a.win_ci[1] and b.win_ci[0] < 1 / 3 < b.win_ci[1]


def test_same_seed_same_results():
    g = make_game("traffic_jam", num_players=2)
    r1 = run_arena("traffic_jam", make_agents(["random", "greedy"], g, seed=4), 2, 200, seed=4)
    r2 = run_arena("traffic_jam", make_agents(["random", "greedy"], g, seed=4), 2, 200, seed=4)
    assert r1.stats("greedy").win_share == r2.stats("greedy").win_share


def test_arena_refuses_shaped_rewards():
    with pytest.raises(ValueError, match="shaping"):
        run_arena("traffic_jam", [RandomPolicy(0)], 2, 10, shaping=True)


def test_arena_command_prints_the_table_and_writes_json(tmp_path, capsys):
    path = tmp_path / "arena.json"
    assert main(["arena", "traffic_jam", "--players", "2", "--agents", "random,greedy",
                 "--games", "100", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "| greedy |" in out and "win share" in out
    assert json.loads(path.read_text())["games"] == 100


def test_unknown_agent_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown agent 'smart'"):
        make_agents(["smart"], make_game("traffic_jam", num_players=2))


def test_per_game_arrays_agree_with_the_summary_and_the_final_records():
    """The arrays behind the table: one row per game, and the final records they came from."""
    g = make_game("traffic_jam", num_players=3)
    res = run_arena("traffic_jam", make_agents(["random", "greedy"], g, seed=5), 3, 120,
                    seed=5, keep_records=True)
    d = res.games_data
    assert d["lineup"].shape == d["returns"].shape == d["scores"].shape == (120, 3)
    assert d["length"].shape == d["truncated"].shape == (120,)
    share = win_shares(d["returns"])
    mine = share[d["lineup"] == 1].mean()
    assert mine == pytest.approx(res.stats("greedy").win_share)
    assert res.mean_length == pytest.approx(d["length"].mean())
    recs = res.final_records
    assert recs is not None and len(recs) == 120
    np.testing.assert_array_equal(recs["joy"][:, :3], d["scores"])
    np.testing.assert_array_equal(recs["moves"], d["length"])
    assert "games_data" not in json.loads(res.to_json())
    assert run_arena("traffic_jam", [RandomPolicy(0)], 2, 10).final_records is None
