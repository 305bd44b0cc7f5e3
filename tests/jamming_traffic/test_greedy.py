"""The rule-based Jamming Traffic player: its strategy's rules on drawn positions,
legality everywhere, batch == row by row, and that it beats random.

Positions are drawn as in tests/jamming_traffic/test_rules.py: a small map (towns at
coordinates, x east, y north), then the cars on each road written from its first
town to its second (``"A-B": "n 0"``: a neutral car at A's end, seat 0's car at B's).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.jamming_traffic.positions import Table
from trafficenvs.agents import make_greedy
from trafficenvs.agents.arena import run_arena
from trafficenvs.agents.policy import RandomPolicy
from trafficenvs.jamming_traffic.rules.layout import MOVE, PLACE, SETUP, STOP
from trafficenvs.jamming_traffic.strategy.greedy import JammingTrafficGreedy
from trafficenvs.jamming_traffic.strategy.position import v0_stop_view
from trafficenvs.registry import make_game, make_vec


def greedy_move(t: Table) -> int:
    """The greedy player's action for the player to move on table ``t``."""
    obs = t.env.observe(t.env.agent_selection)
    seat = t.env.possible_agents.index(t.env.agent_selection)
    return int(make_greedy(t.game).act(obs["observation"][None, :],
                                       obs["action_mask"][None, :].astype(bool),
                                       np.array([seat]))[0])


# --------------------------------------------------------------------------- strategy

TEE = {"A": (0, 0), "B": (3, 0), "C": (6, 0), "D": (3, -3)}


def tee() -> Table:
    """A ---- B ---- C
              |
              D
    """
    return Table(TEE, ["A-B", "B-C", "B-D"], homes=["A", "D"])


def test_takes_the_move_that_wins_at_once():
    """A -[n n]- B -[0 n]- C,  B -[n 1]- D.  Seat 0 (home A) has seen C and D: its
    car at B's end of B-C passes B on any move out of it, and that wins."""
    t = tee().set({"A-B": "n n", "B-C": "0 n", "B-D": "n 1"}, visited=[["C", "D"], []])
    a = greedy_move(t)
    assert t.game.decode(a)[0] == "move" and t.game.decode(a)[1][0] == t.r("B-C")
    rewards = t.play(a)
    assert t.over and t.state()["winner"] == [0] and rewards["player_0"] == 1.0


def test_clears_the_neutral_car_in_front_of_its_car_then_drives_through_the_new_town():
    """A -[n n]- B -[0 n]- C -[n n]- E,  B -[n 1]- D,  C -[n n]- F.

    Seat 0 (home A) has seen only B; its car sits at B's end of B-C with a neutral car
    between it and C. First move: take that neutral car off through C (it is in the
    way); second: its car, now alone on B-C, passes C (a new town).
    """
    towns = dict(TEE, E=(9, 0), F=(6, 3))
    t = Table(towns, ["A-B", "B-C", "B-D", "C-E", "C-F"], homes=["A", "D"])
    t.set({"A-B": "n n", "B-C": "0 n", "B-D": "n 1", "C-E": "n n", "C-F": "n n"},
          visited=[["B"], []], moves_left=2)
    a = greedy_move(t)
    kind, (road, end, _) = t.game.decode(a)
    assert kind == "move" and road == t.r("B-C") and t.game.map.roads[road][end] == t.t["C"]
    t.play(a)
    assert t.cars("B-C") == "0"
    t.play(greedy_move(t))
    assert "C" in t.visited(0)


def test_never_hands_the_opponent_the_win_with_a_jam():
    """A -[0]- B -[n n 1]- C -[n n]- D,  B -[n n]- E (below B).  Seat 1 (home D) has
    seen A, B and E: driving seat 0's car onto the full road B-C would push seat 1
    through C, its last town, and lose at once. The greedy player must find
    something else."""
    towns = {"A": (0, 0), "B": (2, 0), "C": (4, 0), "D": (6, 0), "E": (2, -2)}
    t = Table(towns, ["A-B", "B-C", "C-D", "B-E"], homes=["A", "D"])
    t.set({"A-B": "0", "B-C": "n n 1", "C-D": "n n", "B-E": "n n"},
          visited=[[], ["A", "B", "E"]], moves_left=3)
    losing = t.move("A-B", "B", "B-C")
    assert losing in t.legal()
    probe = Table(towns, ["A-B", "B-C", "C-D", "B-E"], homes=["A", "D"])
    probe.env.load_state_dict(t.state())
    probe.play(losing)
    assert probe.over and probe.state()["winner"] == [1]  # the move really loses
    for _ in range(3):
        if t.state()["to_move"] != 0:
            break
        a = greedy_move(t)
        assert a != losing
        t.play(a)
        assert not t.over


def test_fills_the_road_behind_its_car_to_be_pushed_through_a_dead_end():
    """A -[n n]- B -[n 1]- C,  B -[n 0]- D.  D is a dead end: a steered car may not
    turn back, so only a push takes seat 0's car (at D's end of B-D) through D, its
    last town. It moves neutral cars onto B-D behind its car until the road jams
    (3 cars, then a 4th) and the jam pushes its car through D: a win in two moves."""
    t = Table(TEE, ["A-B", "B-C", "B-D"], homes=["A", "C"]).set(
        {"A-B": "n n", "B-C": "n 1", "B-D": "n 0"}, visited=[["B", "C"], []], moves_left=2)
    for _ in range(2):
        t.play(greedy_move(t))
    assert t.over and t.state()["winner"] == [0]


SQUARE = {"A": (0, 0), "B": (4, 0), "C": (4, 4), "D": (0, 4),
          "a": (1, 1), "b": (3, 1), "c": (3, 3), "d": (1, 3)}
SQUARE_ROADS = ["A-B", "B-C", "C-D", "D-A", "A-a", "B-b", "C-c", "D-d"]


def test_drives_into_an_endless_jam_that_carries_its_car_round_the_loop():
    """D ----- C      a ring of four full roads, each corner with a spur inward.
    | d   c |      Seat 0's car is alone on the spur A-a: driven onto the ring it
    | a   b |      starts a jam that circles for ever and carries it through A, B,
    A ----- B      C and D (four new towns in one move). Then it picks a stop on the
                   loop (the jam paused, read back from the observation alone).
    """
    t = Table(SQUARE, SQUARE_ROADS, homes=["a", "c"]).set(
        {"A-B": "n n n", "B-C": "n n n", "C-D": "n n n", "D-A": "n 1 n",
         "A-a": "0", "B-b": "n", "C-c": "n", "D-d": "n"})
    a = greedy_move(t)
    kind, (road, _, _) = t.game.decode(a)
    assert kind == "move" and road == t.r("A-a")
    t.play(a)
    assert t.state()["phase"] == "stop"
    assert t.visited(0) == {"A", "B", "C", "D"}
    stop = greedy_move(t)
    assert stop in t.legal() and t.game.decode(stop)[0] == "stop"
    t.play(stop)
    assert t.state()["phase"] == "move"


def test_sets_up_on_the_road_with_the_fewest_cars_in_its_way():
    """Set-up, seat 0 at home B:  A -[n n]- B -[n n n]- C,  B -[n]- D.

    B-D holds one car: taken, it is the only car there, at both ends, and its next
    move passes D. On A-B a neutral car would stand between it and A, on B-C two
    before C. It picks B-D.
    """
    t = Table(TEE, ["A-B", "B-C", "B-D"], homes=["B", "D"])
    state = t.state()
    state.update(phase="setup", to_move=0, roads=[["n", "n"], ["n", "n", "n"], ["n"]],
                 dice=None, moves_left=0, pending=[], visited=[[], []])
    t.env.load_state_dict(state)
    a = greedy_move(t)
    assert t.game.decode(a) == ("setup", (t.r("B-D"),))


# --------------------------------------------------------------------------- soundness


@pytest.mark.parametrize("players,map_name", [(2, "default"), (3, "wheel"), (4, "grid"),
                                              (2, "small")])
def test_plays_only_legal_actions_over_many_random_positions(players, map_name):
    """96 games driven by random play (so every phase and odd positions come up);
    at every step the greedy player's choice for each row must be in the mask."""
    venv = make_vec("jamming_traffic", num_envs=96, num_players=players, map=map_name)
    out = venv.reset(seed=players)
    me = make_greedy(venv.game)
    rnd = RandomPolicy(seed=1)
    phases = set()
    rows = np.arange(96)
    for k in range(200):
        a = me.act(out.observation, out.action_mask, out.current_player)
        assert out.action_mask[rows, a].all()
        phases |= {int(p) for p in np.argmax(venv.game.obs_layout.slice(out.observation,
                                                                        "phase"), axis=1)}
        # half the rows follow the greedy player, so its own positions come up too
        b = rnd.act(out.observation, out.action_mask, out.current_player)
        out = venv.step(np.where(rows % 2 == (k // 50) % 2, a, b))
    assert {SETUP, PLACE, MOVE} <= phases


def test_batch_result_equals_row_by_row():
    venv = make_vec("jamming_traffic", num_envs=64, num_players=3)
    out = venv.reset(seed=5)
    me = make_greedy(venv.game)
    for _ in range(40):
        out = venv.step(me.act(out.observation, out.action_mask, out.current_player))
    batch = me.act(out.observation, out.action_mask, out.current_player)
    single = [int(me.act(out.observation[i:i + 1], out.action_mask[i:i + 1],
                         out.current_player[i:i + 1])[0]) for i in range(64)]
    assert batch.tolist() == single
    # and a fresh player (no state between calls) agrees
    other = JammingTrafficGreedy(venv.game, seed=123)
    assert other.act(out.observation, out.action_mask, out.current_player).tolist() == single


def test_the_position_rebuilt_from_the_observation_is_the_game_state():
    """What the player simulates on is the game itself, seen from the seat to move:
    every car on every road (a fifth one too), the pieces, the car index, and in the
    stop phase the paused jam's road and entry end (v1 shows them)."""
    venv = make_vec("jamming_traffic", num_envs=64, num_players=4)
    out = venv.reset(seed=2)
    me = make_greedy(venv.game)
    rnd = RandomPolicy(seed=0)
    N, R = 4, venv.game.map.num_roads
    stops = 0
    for step in range(400):
        out = venv.step(rnd.act(out.observation, out.action_mask, out.current_player))
        if step % 20 and not (venv.records["phase"] == STOP).any():
            continue
        seen = me.position(out.observation)
        for i in range(64):
            true, mine = venv.records[i], seen[i]
            cur = int(true["cur"])
            rot = [(cur + j) % N for j in range(N)]  # my seat j is the game's seat rot[j]
            q = true["q"][:R].copy()
            for j, p in enumerate(rot):
                q[true["q"][:R] == p + 1] = j + 1
            assert (mine["q"][:R] == q).all() and (mine["cnt"][:R] == true["cnt"][:R]).all()
            assert mine["car_road"][1:N + 1].tolist() == [true["car_road"][p + 1] for p in rot]
            assert mine["visited"][:N].tolist() == [true["visited"][p] for p in rot]
            assert mine["home"][:N].tolist() == [true["home"][p] for p in rot]
            for f in ("phase", "moves_left", "pend_rb", "pend_ow", "rb_town", "ow_road"):
                assert mine[f] == true[f], f
            if true["rb_town"] >= 0:
                assert mine["rb_dir"] == true["rb_dir"]
            if true["ow_road"] >= 0:
                assert mine["ow_entry"] == true["ow_entry"]
            if true["phase"] == STOP:  # held flags do not matter there (all reset)
                stops += 1
                assert (mine["js_road"], mine["js_end"]) == (true["js_road"], true["js_end"])
                assert mine["loop_towns"] == true["loop_towns"]
            else:
                assert (mine["held"][:R] == true["held"][:R]).all()
                assert mine["js_road"] == -1
    assert stops > 0


def test_the_v0_stop_view_guesses_the_paused_jam_as_v0_did():
    """``stop_as_v0`` (the default, which keeps v0's choices): a fifth car unseen and
    the paused road guessed by its loop; in positions where the guess finds the true
    jam the two views agree on the paused jam."""
    venv = make_vec("jamming_traffic", num_envs=64, num_players=4)
    out = venv.reset(seed=3)
    me = make_greedy(venv.game)
    rnd = RandomPolicy(seed=1)
    cfg = venv.game.cfg[0]
    agree = differ = 0
    for _ in range(600):
        out = venv.step(rnd.act(out.observation, out.action_mask, out.current_player))
        rows = np.flatnonzero(venv.records["phase"] == STOP)
        if not len(rows):
            continue
        seen = me.position(out.observation[rows])
        for rec in seen:
            true = (int(rec["js_road"]), int(rec["js_end"]))
            v0_stop_view(rec, cfg)
            assert (rec["cnt"] <= 4).all() and rec["js_road"] >= 0
            if (int(rec["js_road"]), int(rec["js_end"])) == true:
                agree += 1
            else:
                differ += 1
    assert agree > 0
    assert agree > differ


def test_both_stop_views_play_only_legal_stops():
    venv = make_vec("jamming_traffic", num_envs=64, num_players=4)
    out = venv.reset(seed=4)
    players = [JammingTrafficGreedy(venv.game), JammingTrafficGreedy(venv.game, stop_as_v0=False)]
    rnd = RandomPolicy(seed=2)
    rows = np.arange(64)
    stops = 0
    for _ in range(400):
        for me in players:
            a = me.act(out.observation, out.action_mask, out.current_player)
            assert out.action_mask[rows, a].all()
        stops += int((venv.records["phase"] == STOP).sum())
        out = venv.step(rnd.act(out.observation, out.action_mask, out.current_player))
    assert stops > 0


def test_only_plays_jamming_traffic():
    with pytest.raises(ValueError, match="jamming_traffic"):
        JammingTrafficGreedy(make_game("traffic_jam", num_players=2))


# --------------------------------------------------------------------------- strength


def test_beats_random_in_a_small_arena():
    game = make_game("jamming_traffic", num_players=2)
    res = run_arena("jamming_traffic", [RandomPolicy(seed=0), make_greedy(game)],
                    num_players=2, games=200, seed=3)
    g = res.stats("greedy")
    assert g.win_ci[0] > 0.5, res.table()
    assert res.truncated == 0


def test_wins_most_three_player_games_against_random():
    """Three seats, line-ups mixing greedy and random players (seats rotated)."""
    game = make_game("jamming_traffic", num_players=3)
    res = run_arena("jamming_traffic", [RandomPolicy(seed=0), make_greedy(game)],
                    num_players=3, games=90, seed=4)
    # a random share would be 1/3 per seat; the greedy player should take far more
    assert res.stats("greedy").win_ci[0] > 0.5, res.table()
