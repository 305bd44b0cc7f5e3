"""The rule-based Jakarta Traffic player (trafficenvs/agents/greedy/jakarta_traffic.py).

Boards are drawn in the code of ``jk_positions`` (``Pb2`` = pick-up bend turned twice,
``Ch0`` = charging hub, ``Bb0Sp`` = the Spa building, a bend). Cells in code are
``(row, col)`` from 0. On the default order board of ``position`` the Bakso order
(top slot, 7 stars) wants the Spa, r3c1 = (2, 0).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.jakarta_traffic.positions import (
    PLAIN,
    drive,
    game,
    legal,
    pick,
    play,
    position,
    star_piles,
    vec_at,
)
from trafficenvs.agents import RandomPolicy, make_greedy
from trafficenvs.agents.arena import run_arena
from trafficenvs.jakarta_traffic.rules.board import trace
from trafficenvs.jakarta_traffic.rules.layout import (
    A_ACCEPT,
    A_CELL,
    A_DECLINE,
    A_DETOUR,
    A_DRIVE,
    A_ROTATE,
    ADDRESSES,
    DRIVE,
    TYPES,
)
from trafficenvs.jakarta_traffic.strategy.greedy import JakartaTrafficGreedy, drive_targets
from trafficenvs.registry import make_vec

G2 = game(2)
SPA = (2, 0)


def greedy_action(venv, g=G2) -> int:
    out = venv.last
    return int(make_greedy(g).act(out.observation, out.action_mask, out.current_player)[0])


def play_turn(venv, g=G2) -> list[int]:
    """Let the greedy player take every decision of the current turn; its actions."""
    seat = venv.state_dict(0)["to_move"]
    done = []
    while venv.state_dict(0)["to_move"] == seat and not venv.state_dict(0)["over"]:
        a = greedy_action(venv, g)
        done.append(a)
        play(venv, a)
    return done


# --------------------------------------------------------------------------- delivering


def test_drives_to_the_address_of_the_order_it_holds_and_delivers():
    """Seat 0 on r3c2 holds Bakso (7 stars, wants the Spa). Driving west parks on the Spa:

        r3:  [Spa bend N,E]  <-W-  [me, hub]
    """
    venv = vec_at(G2, position(G2, PLAIN, mopeds=[(2, 1), (4, 2)],
                               players=[{"orders": ["Bakso"]}]))
    assert greedy_action(venv) == drive("W")
    play_turn(venv)
    s = venv.state_dict(0)
    assert s["mopeds"][0] == [2, 0]
    assert s["players"][0]["stars"] == [7] and s["players"][0]["orders"] == []


SPA_TURNED = PLAIN.replace("Bb0Sp", "Bb2Sp")


def test_honks_to_open_the_path_to_its_delivery():
    """The Spa is turned so its east end bends north: driving west from r3c2 slips past it
    to r2c1. Turning the Spa back (a half turn, or a quarter turn anticlockwise) opens it.

        r2:  [hub]                               [hub]
               ^                                   |
        r3:  [Spa: E->N, spot S,W] <-W- [me]  =>  [Spa: spot N,E] <-W- [me]
    """
    venv = vec_at(G2, position(G2, SPA_TURNED, mopeds=[(2, 1), (4, 2)],
                               players=[{"orders": ["Bakso"]}]))
    assert drive_targets(venv.last.observation)[0, 3] == 5  # west: r2c1, as the game says
    actions = play_turn(venv)
    assert A_ROTATE + 3 * 10 <= actions[0] < A_ROTATE + 3 * 11  # rotates the Spa
    s = venv.state_dict(0)
    assert s["mopeds"][0] == [2, 0]
    assert s["players"][0]["stars"] == [7]


@pytest.mark.parametrize(("opponent_stars", "delivers"), [([3, 3], True), ([7, 7, 7], False)],
                         ids=["ahead-ends-it", "behind-plays-on"])
def test_takes_the_fourth_star_only_when_it_ends_the_game_in_the_lead(opponent_stars,
                                                                      delivers):
    """Seat 0 holds three 3-point stars and Bakso (7) with the Spa one drive west:

        me after delivering: 9 + 7 stars + 2 energy = 18
        opponent [3, 3]: 6 + 3 energy = 9     -> deliver, the game ends in the lead
        opponent [7, 7, 7]: 21 + 3 energy = 24 -> ending the game now loses: drive elsewhere
    """
    mine = [3, 3, 3]
    players = [{"orders": ["Bakso"], "stars": mine,
                "delivered": ["Nasi Goreng", "Sate", "Ibu"]},
               {"stars": opponent_stars,
                "delivered": ["Nasi Goreng", "Sate", "Bapak"][: len(opponent_stars)]}]
    st = position(G2, PLAIN, mopeds=[(2, 1), (4, 2)], players=players,
                  order_board={"orders": list(TYPES), "addresses": list(ADDRESSES),
                               "star_piles": star_piles(mine, opponent_stars)})
    venv = vec_at(G2, st)
    play_turn(venv)
    s = venv.state_dict(0)
    assert (len(s["players"][0]["stars"]) == 4) == delivers
    assert s["end_triggered"] == delivers


def test_parks_on_its_delivery_after_a_double_six():
    venv = vec_at(G2, position(G2, PLAIN, mopeds=[(0, 0), (4, 2)], phase="detour_pick",
                               last_dice=[6, 6], players=[{"orders": ["Bakso"]}]))
    assert greedy_action(venv) == pick(SPA)


# --------------------------------------------------------------------------- orders, energy


def test_accepts_an_order_it_can_deliver():
    """Seat 0 parked on the Sate stack (r3c2) with full energy and nothing held."""
    venv = vec_at(G2, position(G2, PLAIN, mopeds=[(2, 1), (4, 2)], phase="accept",
                               pending="Sate", turn_start=[0, 1],
                               stacks={"Sate": ((2, 1), 3)}))
    assert greedy_action(venv) == A_ACCEPT


def test_declines_an_order_on_its_last_turn():
    """Seat 0 triggered the end (4 stars); seat 1 moves last: an order only costs energy."""
    players = [{"stars": [3, 3, 3, 3], "delivered": ["Bakso", "Nasi Goreng", "Ibu", "Bapak"]},
               {}]
    venv = vec_at(G2, position(G2, PLAIN, mopeds=[(4, 2), (2, 1)], phase="accept",
                               to_move=1, pending="Sate", turn_start=[0, 1],
                               end_triggered=True, players=players,
                               stacks={"Sate": ((2, 1), 3)},
                               order_board={"orders": list(TYPES),
                                            "addresses": list(ADDRESSES),
                                            "star_piles": star_piles([3, 3, 3, 3])}))
    assert greedy_action(venv) == A_DECLINE


def test_an_empty_battery_sends_it_to_a_charging_station():
    """Seat 0 on r1c2 holds Bakso but has no energy, so it cannot deliver; r1c1 (west, and
    north through the alley) is a charging station.

        .---.
        |   |
      [Ch0] <-W- [me, 0 energy]
    """
    venv = vec_at(G2, position(G2, PLAIN, mopeds=[(0, 1), (4, 2)],
                               players=[{"orders": ["Bakso"], "energy": 0}]))
    play_turn(venv)
    s = venv.state_dict(0)
    r, c = s["mopeds"][0]
    assert s["board"][r][c].startswith("charging")
    assert s["players"][0]["energy"] == 3


def one_turn_reach(g, state: dict, seat: int) -> set[int]:
    """The cells ``seat`` can park on in one turn (any honk, then a drive), by the game."""
    st = dict(state, to_move=seat, phase="honk", pending=None, turn_start=None)
    venv = vec_at(g, st)
    reach = set()
    for a in legal(venv):
        if a >= A_DETOUR:
            continue
        v = venv if a >= A_DRIVE else vec_at(g, st)
        if a < A_DRIVE:
            play(v, a)
        for e in range(4):
            if v.last.action_mask[0, A_DRIVE + e]:
                reach.add(int(trace(v.records[0], g.cfg[0], v.records[0]["pos"][seat], e)))
    return reach


def test_puts_the_rest_of_the_stack_where_the_competitor_cannot_reach_next_turn():
    """Seat 0 took a Sate on r3c2; the competitor waits on r1c4. The rest of the stack goes
    to a vacant pick-up tile that the competitor cannot reach in one turn, honk included."""
    base = position(G2, PLAIN, mopeds=[(2, 1), (0, 3)], players=[{"orders": ["Sate"]}],
                    stacks={"Sate": ((2, 1), 2)})
    venv = vec_at(G2, dict(base, phase="place_stack", pending="Sate", turn_start=[0, 1]))
    a = greedy_action(venv)
    reach = one_turn_reach(G2, base, 1)
    vacant = [x - A_CELL for x in legal(venv)]
    assert any(x in reach for x in vacant)  # the choice matters here
    assert a - A_CELL in vacant and a - A_CELL not in reach


def test_spends_a_free_honk_to_keep_the_next_player_from_its_delivery():
    """Seat 0 on r4c3 delivers Nasi Goreng at the Residency by a plain drive west. Seat 1
    on r3c2 holds Bakso, which now wants the Spa, one drive west of it:

        r3:  [Spa bend N,E] <-W- [seat 1]
        r4:  [hub] [Residency bend N,E] <-W- [seat 0]

    Seat 0 does not need its honk, so it turns the Spa away from seat 1 (the marker then
    keeps seat 1 from turning it back), and still delivers.
    """
    st = position(G2, PLAIN, mopeds=[(3, 2), (2, 1)],
                  players=[{"orders": ["Nasi Goreng"]}, {"orders": ["Bakso"]}])
    spa = 2 * 5 + 0
    assert spa in one_turn_reach(G2, st, 1)
    venv = vec_at(G2, st)
    actions = play_turn(venv)
    assert actions[0] < A_DRIVE  # a honk
    s = venv.state_dict(0)
    assert s["players"][0]["stars"] == [5]
    assert spa not in one_turn_reach(G2, s, 1)


# --------------------------------------------------------------------------- the interface


def test_its_reading_of_the_maze_matches_the_game():
    """On random positions the paths it traces from the observation end where the game's
    drives do (the drive names come from the game)."""
    venv = make_vec("jakarta_traffic", num_envs=64, num_players=3)
    out = venv.reset(seed=3)
    rnd = RandomPolicy(seed=3)
    checked = 0
    for _ in range(40):
        targets = drive_targets(out.observation)
        for i in range(64):
            rec = venv.records[i]
            if rec["phase"] > DRIVE:
                continue
            for e in range(4):
                name = venv.game.action_name(rec, A_DRIVE + e)
                want = name.rsplit(" r", 1)[1] if " to r" in name else None
                got = targets[i, e]
                assert (want is None) == (got < 0)
                if got >= 0:
                    assert want == f"{got // 5 + 1}c{got % 5 + 1}"
                    assert bool(out.action_mask[i, A_DRIVE + e]) == (got != rec["start"])
                checked += 1
        out = venv.step(rnd.act(out.observation, out.action_mask, out.current_player))
    assert checked > 1000


@pytest.mark.parametrize("players", [2, 3, 4])
def test_plays_only_legal_moves_over_many_random_positions(players):
    """Greedy decides every position of 64 auto-resetting games (half of the seats play
    randomly, so the positions vary); the env would also raise on an illegal move."""
    venv = make_vec("jakarta_traffic", num_envs=64, num_players=players)
    out = venv.reset(seed=players)
    me = make_greedy(venv.game)
    rnd = RandomPolicy(seed=players)
    for _ in range(150):
        a = me.act(out.observation, out.action_mask, out.current_player)
        assert a.dtype == np.int64 and out.action_mask[np.arange(64), a].all()
        r = rnd.act(out.observation, out.action_mask, out.current_player)
        out = venv.step(np.where(out.current_player % 2 == 0, a, r))


def test_a_batch_decides_as_its_rows_do_alone():
    venv = make_vec("jakarta_traffic", num_envs=48, num_players=4)
    out = venv.reset(seed=11)
    rnd = RandomPolicy(seed=11)
    for _ in range(30):
        out = venv.step(rnd.act(out.observation, out.action_mask, out.current_player))
    me = JakartaTrafficGreedy(venv.game)
    batch = me.act(out.observation, out.action_mask, out.current_player)
    rows = [me.act(out.observation[i:i + 1], out.action_mask[i:i + 1],
                   out.current_player[i:i + 1])[0] for i in range(48)]
    assert batch.tolist() == rows


def test_refuses_another_game():
    from trafficenvs.registry import make_game

    with pytest.raises(ValueError, match="jakarta_traffic"):
        JakartaTrafficGreedy(make_game("traffic_jam", num_players=2))


# --------------------------------------------------------------------------- strength


def test_beats_random_in_a_small_arena():
    """400 games, seats rotated: the lower end of greedy's 95% win-share interval > 0.8."""
    g = make_vec("jakarta_traffic", num_envs=1, num_players=2).game
    res = run_arena("jakarta_traffic", [RandomPolicy(seed=5), make_greedy(g)], 2, 400, seed=5)
    assert res.stats("greedy").win_ci[0] > 0.8
    assert res.truncated == 0


def test_wins_most_four_player_games_against_random():
    """One greedy among three random players (every seat in turn): it wins far more than
    its fair quarter."""
    g = make_vec("jakarta_traffic", num_envs=1, num_players=4).game
    agents = [make_greedy(g), RandomPolicy(1, "r1"), RandomPolicy(2, "r2"), RandomPolicy(3, "r3")]
    res = run_arena("jakarta_traffic", agents, 4, 120, seed=2)
    assert res.stats("greedy").win_ci[0] > 0.5
