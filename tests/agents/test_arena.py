"""The arena: seat rotation, win shares from the C2 result, ratings, table and JSON."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from trafficenvs.agents import RandomPolicy
from trafficenvs.agents.arena import (
    bounded_mean_ci,
    ci_text,
    lineups_for,
    mean_ci,
    run_arena,
    share_ci,
    win_shares,
)
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


def _wilson(k: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval written out (Wilson 1927), for any count ``k``."""
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return mid - half, mid + half


@pytest.mark.parametrize(("wins", "games", "lo", "hi"), [
    (10, 10, 0.72247, 1.0), (0, 10, 0.0, 0.27753), (5, 10, 0.23659, 0.76341),
    (600, 600, 0.99364, 1.0), (30, 100, 0.21895, 0.39585),
])
def test_win_share_interval_is_scipys_wilson_interval(wins, games, lo, hi):
    from scipy.stats import binomtest

    x = np.array([1.0] * wins + [0.0] * (games - wins))
    m, a, b = share_ci(x)
    ref = binomtest(wins, games).proportion_ci(0.95, method="wilson")
    assert m == wins / games
    assert (a, b) == (ref.low, ref.high)
    assert a == pytest.approx(lo, abs=5e-5) and b == pytest.approx(hi, abs=5e-5)
    assert (a, b) == pytest.approx(_wilson(wins, games))


def test_a_sweep_is_never_a_point_interval():
    """10 of 10: the upper bound is 1 and the lower well below; however many games, the
    table's lower bound (rounded down) stays below 1.000."""
    _, lo, hi = share_ci(np.ones(10))
    assert hi == 1.0 and lo < 0.75
    for n in (10, 4000, 10**6):
        _, lo, hi = share_ci(np.ones(n))
        assert lo < 1.0 and ci_text(lo, hi) != "[1.000, 1.000]"
        _, lo, hi = share_ci(np.zeros(n))
        assert hi > 0.0 and ci_text(lo, hi) != "[0.000, 0.000]"
    assert ci_text(*share_ci(np.ones(10**6))[1:]) == "[0.999, 1.000]"
    assert ci_text(0.2366, 0.7634) == "[0.236, 0.764]"  # rounded outwards


def test_shared_wins_widen_the_interval_never_narrow_it():
    """Ties split the win (a fractional count): the interval brackets Wilson's at that
    count between the whole counts on either side (conservative: a share in [0, 1] has
    at most the Bernoulli variance)."""
    from scipy.stats import binomtest

    x = np.array([1.0] * 6 + [0.5] * 3 + [0.0] * 11)  # 7.5 of 20
    m, lo, hi = share_ci(x)
    assert m == 7.5 / 20
    assert lo == binomtest(7, 20).proportion_ci(method="wilson").low
    assert hi == binomtest(8, 20).proportion_ci(method="wilson").high
    w_lo, w_hi = _wilson(7.5, 20)
    assert lo < w_lo and hi > w_hi
    thirds = np.array([1 / 3] * 9 + [1.0] * 3)  # 6 of 12 in thirds: a whole count
    assert share_ci(thirds)[1:] == share_ci(np.array([1.0] * 6 + [0.0] * 6))[1:]
    with pytest.raises(ValueError):
        share_ci(np.array([1.5, 0.0]))


def test_mean_score_interval_is_scipys_t_interval():
    from scipy import stats

    x = np.array([0.0, 1.0] * 50)
    m, lo, hi = mean_ci(x)
    ref = stats.t.interval(0.95, 99, loc=0.5, scale=stats.sem(x))
    assert m == 0.5 and (lo, hi) == pytest.approx(ref, abs=1e-12)
    assert hi - m == pytest.approx(stats.t.ppf(0.975, 99) * np.std(x, ddof=1) / 10)
    assert all(np.isnan(mean_ci(np.full(5, 3.0))[1:]))  # no spread: no t interval
    assert all(np.isnan(mean_ci(np.array([3.0]))[1:]))


def test_mean_reward_interval_is_the_win_share_interval_rescaled():
    """A C2 reward in [-1/(N-1), 1] rescaled is the win share, so the intervals agree."""
    n = 3
    returns = np.array([[1.0, -0.5, -0.5], [0.25, 0.25, -0.5], [0.0, 0.0, 0.0]] * 7)
    share = win_shares(returns)[:, 0]
    m, lo, hi = bounded_mean_ci(returns[:, 0], -1 / (n - 1), 1.0)
    s, s_lo, s_hi = share_ci(share)
    rescale = lambda v: (n * v - 1) / (n - 1)  # noqa: E731
    assert m == pytest.approx(rescale(s))
    assert (lo, hi) == pytest.approx((rescale(s_lo), rescale(s_hi)))
    _, lo, hi = bounded_mean_ci(np.ones(10), -1.0, 1.0)  # a sweep: not [1, 1]
    assert hi == 1.0 and lo < 0.5
    assert bounded_mean_ci(np.array([2.0, 3.0]), -1.0, 1.0) == mean_ci(np.array([2.0, 3.0]))


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
    assert re.search(r"^\| greedy +\|", res.table(), re.M)  # a row of the table
    data = json.loads(res.to_json())
    assert data["agents"][1]["name"] == "greedy"
    for a in (greedy, rnd):  # the reward interval is the win share's, rescaled (N = 2)
        assert a.reward_ci == pytest.approx((2 * a.win_ci[0] - 1, 2 * a.win_ci[1] - 1))
        assert a.score_ci[0] < a.mean_score < a.score_ci[1]
    assert data["agents"][1]["score_ci"] == list(greedy.score_ci)
    h = res.head_to_head["greedy"]["random"]
    assert h["ci"][0] < h["share"] < h["ci"][1]
    assert "[1.000, 1.000]" not in res.table()


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
    assert re.search(r"^\| greedy +\|", out, re.M) and "win share" in out
    assert json.loads(path.read_text())["games"] == 100


def test_arena_command_prints_plain_text_tables_on_request(capsys):
    """``--format text``: the same columns and rows, without Markdown's pipes."""
    assert main(["arena", "traffic_jam", "--players", "2", "--agents", "random,greedy",
                 "--games", "20", "--format", "text"]) == 0
    out = capsys.readouterr().out
    assert "|" not in out
    assert re.search(r"^agent +win share +95% CI +mean reward", out, re.M)
    assert re.search(r"^greedy +\d\.\d{3} +\[", out, re.M)
    assert re.search(r"^row vs column +random +greedy", out, re.M)


def test_arena_command_plays_network_players_on_its_torch_threads(monkeypatch, capsys):
    """``--threads`` (default 1) is torch's thread count while a network player plays;
    the process's own setting comes back afterwards."""
    th = pytest.importorskip("torch")
    from trafficenvs.agents import arena as arena_module

    seen = []
    real = arena_module.run_arena

    def spy(*args, **kwargs):
        seen.append(th.get_num_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(arena_module, "run_arena", spy)
    shipped = Path(__file__).resolve().parents[2] / "agents/checkpoints/traffic_jam_2p.zip"
    before = th.get_num_threads()
    th.set_num_threads(2)
    try:
        for extra, threads in (([], 1), (["--threads", "2"], 2)):
            assert main(["arena", "traffic_jam", "--games", "4", "--agents",
                         f"greedy,ppo:{shipped}", *extra]) == 0
            assert seen[-1] == threads
            assert th.get_num_threads() == 2
    finally:
        th.set_num_threads(before)


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


def test_the_arena_takes_the_game_its_agents_were_made_for():
    """A Game is used as it is (its options hold); the same games as by its env id."""
    import trafficenvs
    from trafficenvs.agents import RandomPolicy, make_greedy
    from trafficenvs.agents.arena import run_arena

    g = trafficenvs.make_game("traffic_jam", num_players=3)
    by_game = run_arena(g, [RandomPolicy(0), make_greedy(g, seed=1)], games=60, seed=3)
    by_id = run_arena("traffic_jam", [RandomPolicy(0), make_greedy(g, seed=1)], 3, 60, seed=3)
    def played(res):
        return [(a.name, a.seats_played, a.win_share, a.mean_score, a.decisions)
                for a in res.agents]

    assert played(by_game) == played(by_id)
    with pytest.raises(ValueError, match="num_players=2, but the game is for 3 players"):
        run_arena(g, [RandomPolicy(0)], 2, 10)
    with pytest.raises(TypeError, match="a Game carries its own options"):
        run_arena(g, [RandomPolicy(0)], games=10, shaping=True)
    shaped = trafficenvs.make_game("traffic_jam", num_players=2, shaping=True)
    with pytest.raises(ValueError, match="without shaping"):
        run_arena(shaped, [RandomPolicy(0)], games=10)
