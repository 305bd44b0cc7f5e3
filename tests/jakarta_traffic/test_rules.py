"""Jakarta Traffic rules (rulebook 002, rulings K1-K9), one test per rule.

Boards are drawn in the code of ``jk_positions`` (``Pb2`` = pick-up bend turned twice,
``Ch0`` = charging hub, ``Bb0Re`` = the Residency building, a bend). Rows r1-r5 top
to bottom, columns c1-c5 left to right; cells in code are ``(row, col)`` from 0.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.jakarta_traffic.positions import (
    PLAIN,
    TEST_TILES,
    deliver,
    drive,
    game,
    legal,
    pick,
    play,
    position,
    rotate,
    star_piles,
    swap,
    vec_at,
)
from trafficenvs.jakarta_traffic.rules.board import trace
from trafficenvs.jakarta_traffic.rules.layout import (
    A_ACCEPT,
    A_CELL,
    A_DECLINE,
    A_DETOUR,
    A_DRIVE,
    ACCEPT,
    ADDRESSES,
    DRIVE,
    HONK,
    NUM_ACTIONS,
    PLACE,
    TYPES,
)
from trafficenvs.jakarta_traffic.rules.legality import is_legal


def state(venv) -> dict:
    return venv.state_dict(0)


# --------------------------------------------------------------------------- driving (K3, K6)

PATH_BOARD = """
Ch0 Pb2 Ps0 Ps0 Pb1
Ph0 Ph0 Bh0BC Ph0 Ph0
Bb0Sp Ph0 Ph0 Ch0 Bs0Wo
Ph0 Bb0Re Ph0 Ch0 Ph0
Ch0 Ph0 Ph0 Bs0Ma Ch0
"""


def test_path_runs_through_alley_bend_bridges_and_back_into_the_grid():
    """Leave r1c1 north:

         alley         alley
        .-----.       .--.
        |     |       |  |
      [r1c1] [r1c2 bend N->E] = [r1c3 bridge W->E] = [r1c4 bridge W->E] = [r1c5 bend W->N]
                                                                            N -> alley -> E:
                                                                            park on r1c5
    """
    g = game(2)
    venv = vec_at(g, position(g, PATH_BOARD, mopeds=[(0, 0), (4, 0)]))
    assert trace(venv.records[0], g.cfg[0], 0, 0) == 4
    play(venv, drive("N"))
    s = state(venv)
    assert s["mopeds"][0] == [0, 4]
    assert s["to_move"] == 1 and s["phase"] == "honk"


def test_each_exit_of_a_hub_follows_its_own_path():
    g = game(2)
    venv = vec_at(g, position(g, PATH_BOARD, mopeds=[(0, 0), (4, 0)]))
    rec, c = venv.records[0], g.cfg[0]
    # east: into the bend's west end, which leads to its parking spot
    assert trace(rec, c, 0, 1) == 1
    # south: the hub below; west: the alley r1c1 W - r2c1 W, also the hub below
    assert trace(rec, c, 0, 2) == 5
    assert trace(rec, c, 0, 3) == 5


def test_a_path_that_returns_to_its_start_is_illegal():
    """r1c5 is a hub in the corner: its N and E ends are joined by an alley.

        .--.
        |  |
      -[hub]--'   north and east lead straight back to r1c5: not a drive
    """
    g = game(2)
    venv = vec_at(g, position(g, PLAIN, mopeds=[(0, 4), (4, 0)]))
    drives = [a - A_DRIVE for a in legal(venv) if A_DRIVE <= a < A_DETOUR]
    assert drives == [2, 3]  # south and west only
    assert A_DETOUR in legal(venv)  # a detour is always possible


def test_a_tile_edge_that_passes_by_the_parking_spot_is_no_exit():
    """A bridge (Ps0) links N and S to its spot; E and W pass across it."""
    g = game(2)
    venv = vec_at(g, position(g, PATH_BOARD, mopeds=[(0, 2), (4, 0)]))
    drives = [a - A_DRIVE for a in legal(venv) if A_DRIVE <= a < A_DETOUR]
    assert drives == [0, 2]


# --------------------------------------------------------------------------- detour (K6)


@pytest.mark.parametrize(
    ("dice", "where"),
    [([2, 4], [3, 1]), ([6, 3], [2, 2]), ([4, 6], [3, 3]), ([1, 1], [0, 0])],
    ids=["column-2-row-4", "a-6-copies-the-row-die", "a-6-copies-the-column-die",
         "back-where-it-started"],
)
def test_detour_parks_on_the_dice_coordinates(dice, where):
    g = game(2)
    venv = vec_at(g, position(g, mopeds=[(0, 0), (4, 0)], forced_dice=dice))
    play(venv, A_DETOUR)
    s = state(venv)
    assert s["mopeds"][0] == where
    assert s["last_dice"] == dice and s["forced_dice"] == []
    assert s["to_move"] == 1


def test_double_six_lets_the_driver_pick_any_tile_even_its_own():
    g = game(2)
    venv = vec_at(g, position(g, mopeds=[(0, 0), (4, 0)], forced_dice=[6, 6]))
    play(venv, A_DETOUR)
    assert state(venv)["phase"] == "detour_pick"
    assert legal(venv) == [A_CELL + x for x in range(25)]
    play(venv, pick((0, 0)))
    assert state(venv)["mopeds"][0] == [0, 0] and state(venv)["to_move"] == 1


# --------------------------------------------------------------------------- honk (K5)


def honk_position(g):
    """p0 on r1c1, p1 on r3c3, the Sate stack on r2c2, the marker on r2c4."""
    return position(g, mopeds=[(0, 0), (2, 2)], stacks={"Sate": ((1, 1), 3)},
                    marker=[1, 3], spares=["pickup bend", "pickup bridge"])


@pytest.mark.parametrize("blocked", [(1, 1), (2, 2), (0, 0), (1, 3)],
                         ids=["order-stack", "competitor-moped", "own-moped", "marker"])
def test_rotation_and_swap_are_refused_on_tiles_with_an_order_a_moped_or_the_marker(blocked):
    g = game(2)
    venv = vec_at(g, honk_position(g))
    ok = legal(venv)
    for k in (1, 2, 3):
        assert rotate(blocked, k) not in ok
    for r in range(4):
        assert swap(blocked, r) not in ok


def test_buildings_may_be_rotated_but_never_swapped():
    g = game(2)
    venv = vec_at(g, honk_position(g))
    ok = legal(venv)
    assert rotate((0, 3), 1) in ok  # the Business Center
    assert all(swap((0, 3), r) not in ok for r in range(4))
    assert swap((1, 4), 2) in ok  # a charging station can be swapped
    assert swap((1, 2), 0) in ok  # a pick-up tile too


def test_rotating_moves_the_marker_to_the_tile_and_parking_there_removes_it():
    g = game(2)
    venv = vec_at(g, position(g, mopeds=[(2, 2), (4, 0)], marker=[1, 3]))
    play(venv, rotate((1, 2), 1))
    s = state(venv)
    assert s["marker"] == [1, 2] and s["board"][1][2] == "pickup hub 1"
    assert s["phase"] == "drive" and s["to_move"] == 0
    assert all(a >= A_DRIVE for a in legal(venv))  # one honk a turn
    play(venv, drive("N"))
    assert state(venv)["mopeds"][0] == [1, 2]
    assert state(venv)["marker"] is None


def test_swapping_places_the_spare_in_the_chosen_rotation_and_keeps_the_old_tile():
    g = game(2)
    venv = vec_at(g, honk_position(g))
    play(venv, swap((1, 4), 3))
    s = state(venv)
    assert s["board"][1][4] == "pickup bend 3"
    assert s["spares"][0] == "charging hub"
    assert s["marker"] == [1, 4]


def test_a_swapped_in_tile_changes_the_maze():
    """A bend swapped onto r1c2 at rotation 1 (spot linked E and S, curve W-N):

        .--alley--.
        |         |
      [r1c1 hub] -> W of r1c2 curves to N -> alley -> back into r1c1 from the north:
      the east exit of r1c1 now returns to its start, so it is no longer a drive.
    """
    g = game(2)
    venv = vec_at(g, position(g, mopeds=[(0, 0), (4, 0)], spares=["pickup bend", "pickup bridge"]))
    assert drive("E") in legal(venv)
    play(venv, swap((0, 1), 1))
    drives = [a - A_DRIVE for a in legal(venv) if A_DRIVE <= a < A_DETOUR]
    assert 1 not in drives


# --------------------------------------------------------------------------- encounters (K7)


def test_chat_charges_everyone_there_and_gives_the_mover_a_speech_bubble():
    g = game(3)
    st = position(g, mopeds=[(0, 0), (0, 1), (0, 1)],
                  players=[{"energy": 1}, {"energy": 2}, {"energy": 3}])
    venv = vec_at(g, st)
    play(venv, drive("E"))
    pl = state(venv)["players"]
    assert [p["energy"] for p in pl] == [2, 3, 3]
    assert [p["bubbles"] for p in pl] == [1, 0, 0]


def test_a_fourth_chat_gives_energy_but_no_bubble():
    g = game(2)
    venv = vec_at(g, position(g, mopeds=[(0, 0), (0, 1)],
                              players=[{"energy": 0, "bubbles": 3}, {"energy": 0}]))
    play(venv, drive("E"))
    pl = state(venv)["players"]
    assert [p["energy"] for p in pl] == [1, 1] and [p["bubbles"] for p in pl] == [3, 0]


def test_a_charging_station_fills_the_battery_to_three():
    g = game(2)
    venv = vec_at(g, position(g, mopeds=[(0, 1), (4, 2)], players=[{"energy": 0}]))
    play(venv, drive("W"))  # r1c1 is a charging station
    assert state(venv)["players"][0]["energy"] == 3


def test_accepting_an_order_costs_one_energy_and_the_rest_of_the_stack_moves_on():
    g = game(2)
    venv = vec_at(g, position(g, mopeds=[(0, 0), (4, 0)], players=[{"energy": 2}],
                              stacks={"Sate": ((0, 1), 3)}))
    play(venv, drive("E"))
    s = state(venv)
    assert s["phase"] == "accept" and s["pending"] == "Sate" and s["to_move"] == 0
    assert legal(venv) == [A_ACCEPT, A_DECLINE]
    play(venv, A_ACCEPT)
    s = state(venv)
    assert s["players"][0]["energy"] == 1 and s["players"][0]["orders"] == ["Sate"]
    assert s["phase"] == "place_stack" and s["stacks"]["Sate"]["count"] == 2
    # a vacant pick-up tile: no stack and no moped on it (never a charging station or building)
    stacked = {tuple(v["at"]) for v in s["stacks"].values() if v["at"]}
    vacant = [r * 5 + c for r in range(5) for c in range(5)
              if s["board"][r][c].startswith("pickup") and (r, c) not in stacked
              and [r, c] not in s["mopeds"]]
    assert legal(venv) == [A_CELL + x for x in vacant]
    play(venv, pick((2, 2)))
    s = state(venv)
    assert s["stacks"]["Sate"] == {"at": [2, 2], "count": 2}
    assert s["to_move"] == 1 and s["pending"] is None


def test_the_last_order_of_a_stack_leaves_nothing_to_move():
    g = game(2)
    venv = vec_at(g, position(
        g, mopeds=[(0, 0), (4, 0)],
        players=[{}, {"orders": ["Sate"], "delivered": ["Sate"]}],
        stacks={"Sate": ((0, 1), 1)}))
    play(venv, drive("E"))
    play(venv, A_ACCEPT)
    s = state(venv)
    assert s["stacks"]["Sate"] == {"at": None, "count": 0} and s["to_move"] == 1


def test_declining_an_order_leaves_the_stack_and_the_energy():
    g = game(2)
    venv = vec_at(g, position(g, mopeds=[(0, 0), (4, 0)], stacks={"Sate": ((0, 1), 3)}))
    play(venv, drive("E"))
    play(venv, A_DECLINE)
    s = state(venv)
    assert s["stacks"]["Sate"] == {"at": [0, 1], "count": 3}
    assert s["players"][0]["energy"] == 3 and s["to_move"] == 1


@pytest.mark.parametrize(
    ("me", "stack"),
    [
        ({"energy": 0}, "Sate"),
        ({"orders": ["Bakso", "Nasi Goreng"]}, "Sate"),
        ({"orders": ["Sate"]}, "Sate"),
        ({"orders": ["Ibu"]}, "Bapak"),
        ({"orders": ["Bapak"]}, "Ibu"),
    ],
    ids=["no-energy", "two-orders-already", "one-of-that-type-already", "a-passenger-already",
         "the-other-passenger-already"],
)
def test_an_order_that_cannot_be_accepted_is_not_offered(me, stack):
    g = game(2)
    count = 3 - (stack in me.get("orders", []))
    venv = vec_at(g, position(g, mopeds=[(0, 0), (4, 0)], players=[me],
                              stacks={stack: ((0, 1), count)}))
    play(venv, drive("E"))
    s = state(venv)
    assert s["to_move"] == 1 and s["phase"] == "honk"
    assert s["stacks"][stack] == {"at": [0, 1], "count": count}


def test_chat_comes_before_the_order_so_its_energy_pays_for_it():
    g = game(2)
    venv = vec_at(g, position(g, mopeds=[(0, 0), (0, 1)], players=[{"energy": 0}],
                              stacks={"Sate": ((0, 1), 3)}))
    play(venv, drive("E"))
    assert state(venv)["phase"] == "accept"
    play(venv, A_ACCEPT)
    assert state(venv)["players"][0]["energy"] == 0


# --------------------------------------------------------------------------- delivery (K7, K8)


def test_delivery_pays_the_slots_star_and_shifts_the_board():
    """Order board (default): Bakso 7 -> Spa, Nasi Goreng 5 -> Residency, Sate 4 ->
    Workshop, Ibu 3 -> Mall, Bapak 3 -> Mall; Business Center is out. Nasi Goreng goes
    to Residency (r4c2, reached by a detour 2/4): it pays 5, goes to the bottom, and the
    Residency goes up to "out" (the rulebook's example)."""
    g = game(2)
    venv = vec_at(g, position(g, mopeds=[(0, 0), (4, 0)],
                              players=[{"energy": 2, "orders": ["Nasi Goreng"]}],
                              forced_dice=[2, 4]))
    play(venv, A_DETOUR)
    s = state(venv)
    assert s["phase"] == "deliver"
    assert legal(venv) == [A_DECLINE, deliver("Nasi Goreng")]
    play(venv, deliver("Nasi Goreng"))
    s = state(venv)
    me = s["players"][0]
    assert me["energy"] == 1 and me["stars"] == [5] and me["orders"] == []
    assert me["delivered"] == ["Nasi Goreng"]
    assert s["order_board"] == {
        "orders": ["Bakso", "Sate", "Ibu", "Bapak", "Nasi Goreng"],
        "addresses": ["Residency", "Business Center", "Spa", "Workshop", "Mall"],
        "star_piles": [5, 4, 5, 5, 5],
    }
    assert s["to_move"] == 1


def test_two_orders_to_one_address_are_delivered_for_one_energy_in_the_chosen_order():
    """Orders Sate and Bakso sit in the two lowest slots: both point at the Mall."""
    g = game(2)
    ob = {"orders": ["Ibu", "Bapak", "Nasi Goreng", "Sate", "Bakso"],
          "addresses": list(ADDRESSES), "star_piles": [5, 5, 5, 5, 5]}
    venv = vec_at(g, position(g, mopeds=[(0, 0), (4, 0)], order_board=ob,
                              players=[{"energy": 2, "orders": ["Bakso", "Sate"]}],
                              forced_dice=[4, 5]))
    play(venv, A_DETOUR)
    assert legal(venv) == [A_DECLINE, deliver("Bakso"), deliver("Sate")]
    play(venv, deliver("Sate"))
    s = state(venv)
    me = s["players"][0]
    assert me["energy"] == 1 and me["stars"] == [3, 3] and me["orders"] == []
    assert s["order_board"]["orders"] == ["Ibu", "Bapak", "Nasi Goreng", "Bakso", "Sate"]
    assert s["order_board"]["addresses"] == ["Mall", "Business Center", "Spa", "Residency",
                                             "Workshop"]


def test_delivery_needs_energy():
    g = game(2)
    venv = vec_at(g, position(g, mopeds=[(0, 0), (4, 0)],
                              players=[{"energy": 0, "orders": ["Nasi Goreng"]}],
                              forced_dice=[2, 4]))
    play(venv, A_DETOUR)
    s = state(venv)
    assert s["to_move"] == 1 and s["players"][0]["orders"] == ["Nasi Goreng"]


def test_an_order_is_delivered_only_to_its_current_address():
    g = game(2)
    venv = vec_at(g, position(g, mopeds=[(0, 0), (4, 0)],
                              players=[{"orders": ["Sate"]}], forced_dice=[2, 4]))
    play(venv, A_DETOUR)  # Residency; the Sate wants the Workshop
    assert state(venv)["to_move"] == 1


def test_no_delivery_on_the_tile_where_the_turn_started():
    g = game(2)
    venv = vec_at(g, position(g, mopeds=[(3, 1), (4, 0)],
                              players=[{"orders": ["Nasi Goreng"]}], forced_dice=[2, 4]))
    play(venv, A_DETOUR)  # the dice bring the moped back to the Residency
    s = state(venv)
    assert s["mopeds"][0] == [3, 1] and s["to_move"] == 1
    assert s["players"][0]["orders"] == ["Nasi Goreng"]


def test_an_empty_star_pile_pays_the_best_token_left_below_it():
    g = game(2)
    p0 = {"stars": [5, 5], "orders": ["Nasi Goreng"]}
    p1 = {"stars": [5, 5, 5]}  # the 5-point pile is empty
    ob = {"orders": list(TYPES), "addresses": list(ADDRESSES),
          "star_piles": star_piles(p0["stars"], p1["stars"])}
    venv = vec_at(g, position(g, mopeds=[(0, 0), (4, 0)], order_board=ob,
                              players=[p0, p1], forced_dice=[2, 4]))
    play(venv, A_DETOUR)
    play(venv, deliver("Nasi Goreng"))
    s = state(venv)
    assert s["players"][0]["stars"] == [5, 5, 4]
    assert s["order_board"]["star_piles"] == [5, 0, 4, 5, 5]


# --------------------------------------------------------------------------- end (K9)


def test_the_game_ends_only_when_the_round_is_complete():
    """player_1 of 3 delivers a fourth star: player_2 still has a turn."""
    g = game(3)
    p1 = {"stars": [7, 4, 3], "orders": ["Nasi Goreng"], "delivered": ["Bakso"] * 3}
    ob = {"orders": list(TYPES), "addresses": list(ADDRESSES),
          "star_piles": star_piles(p1["stars"])}
    st = position(g, mopeds=[(0, 0), (0, 4), (4, 0)], players=[{}, p1], order_board=ob,
                  to_move=1, forced_dice=[2, 4, 2, 2])
    venv = vec_at(g, st)
    play(venv, A_DETOUR)
    out = play(venv, deliver("Nasi Goreng"))
    s = state(venv)
    assert s["end_triggered"] and not s["over"] and s["to_move"] == 2
    assert not out.terminated[0]
    out = play(venv, A_DETOUR)  # player_2's last turn
    assert out.terminated[0]
    np.testing.assert_allclose(out.rewards[0], [-0.5, 1.0, -0.5])


def test_the_last_seat_triggering_the_end_ends_the_game_at_once():
    g = game(2)
    p1 = {"stars": [7, 4, 3], "orders": ["Nasi Goreng"], "delivered": ["Bakso"] * 3}
    ob = {"orders": list(TYPES), "addresses": list(ADDRESSES),
          "star_piles": star_piles(p1["stars"])}
    venv = vec_at(g, position(g, mopeds=[(0, 0), (0, 4)], players=[{}, p1], order_board=ob,
                              to_move=1, forced_dice=[2, 4]))
    play(venv, A_DETOUR)
    out = play(venv, deliver("Nasi Goreng"))
    assert out.terminated[0]
    np.testing.assert_allclose(out.rewards[0], [-1.0, 1.0])


def test_rulebook_scoring_example_is_23():
    """3 stars worth 15, a bubble bonus of 5, a full battery: 15 + 5 + 3 = 23. (The
    rulebook calls that bonus "two speech bubbles"; its own table gives 5 for three,
    which K9 follows; see the rules page.)"""
    g = game(2)
    venv = vec_at(g, position(g, players=[{"stars": [7, 5, 3], "bubbles": 3, "energy": 3}],
                              order_board={"orders": list(TYPES),
                                           "addresses": list(ADDRESSES),
                                           "star_piles": star_piles([7, 5, 3])}))
    assert g.scores(venv.records[0])[0] == 23


@pytest.mark.parametrize(("bubbles", "bonus"), [(0, 0), (1, 1), (2, 3), (3, 5)])
def test_speech_bubbles_score_1_3_5(bubbles, bonus):
    g = game(2)
    venv = vec_at(g, position(g, players=[{"bubbles": bubbles, "energy": 0}]))
    assert g.scores(venv.records[0])[0] == bonus


def finish(p0: dict, p1: dict) -> np.ndarray:
    """Play player_1's last turn (a detour to r2c2, no encounter); the final rewards."""
    g = game(2)
    ob = {"orders": list(TYPES), "addresses": list(ADDRESSES),
          "star_piles": star_piles(p0["stars"], p1["stars"])}
    venv = vec_at(g, position(g, mopeds=[(0, 0), (0, 4)], players=[p0, p1], order_board=ob,
                              to_move=1, end_triggered=True, forced_dice=[2, 2]))
    out = play(venv, A_DETOUR)
    assert out.terminated[0]
    return out.rewards[0]


def test_tie_broken_by_passengers_delivered():
    p0 = {"stars": [7, 5, 3, 3], "energy": 0,
          "delivered": ["Ibu", "Bakso", "Sate", "Nasi Goreng"]}
    p1 = {"stars": [7, 5, 3, 3], "energy": 0, "delivered": ["Ibu", "Bapak", "Sate", "Bakso"]}
    np.testing.assert_allclose(finish(p0, p1), [-1, 1])


def test_tie_then_broken_by_number_of_stars():
    p0 = {"stars": [7, 5, 4, 3], "energy": 0,
          "delivered": ["Bakso", "Sate", "Nasi Goreng", "Bakso"]}
    p1 = {"stars": [7, 7, 5], "energy": 0, "delivered": ["Sate", "Nasi Goreng", "Sate"]}
    np.testing.assert_allclose(finish(p0, p1), [1, -1])


def test_tie_then_broken_by_energy_left():
    p0 = {"stars": [7, 5, 3, 3], "energy": 1,
          "delivered": ["Bakso", "Sate", "Nasi Goreng", "Bakso"]}
    p1 = {"stars": [7, 5, 4, 3], "energy": 0,
          "delivered": ["Sate", "Nasi Goreng", "Sate", "Bakso"]}
    np.testing.assert_allclose(finish(p0, p1), [1, -1])


def test_a_complete_tie_shares_the_win():
    p = {"stars": [7, 5, 3, 3], "energy": 1,
         "delivered": ["Bakso", "Sate", "Nasi Goreng", "Ibu"]}
    np.testing.assert_allclose(finish(p, dict(p)), [0, 0])


# --------------------------------------------------------------------------- set-up (K4)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_set_up_follows_every_constraint_over_many_seeds(n):
    import trafficenvs

    venv = trafficenvs.make_vec("jakarta_traffic", num_envs=300, num_players=n)
    venv.reset(seed=1000 * n)
    g = venv.game
    for i in range(venv.num_envs):
        s = venv.state_dict(i)
        kinds = [[c.split()[0] for c in row] for row in s["board"]]
        for row in kinds:
            assert sorted(row) == ["building", "charging", "pickup", "pickup", "pickup"]
        for r in range(5):
            for c in range(5):
                if kinds[r][c] == "building":
                    assert r == 4 or kinds[r + 1][c] != "building"
                    assert c == 4 or kinds[r][c + 1] != "building"
        cells = [v["at"] for v in s["stacks"].values()]
        assert all(v["count"] == n + 1 for v in s["stacks"].values())
        assert sorted(r for r, _ in cells) == list(range(5))
        assert sorted(c for _, c in cells) == list(range(5))
        assert all(kinds[r][c] == "pickup" for r, c in cells)
        assert len({tuple(m) for m in s["mopeds"]}) == n
        assert all(kinds[r][c] == "charging" for r, c in s["mopeds"])
        assert all(p["energy"] == 3 for p in s["players"])
        assert all(sp.startswith("pickup") for sp in s["spares"])
        assert sorted(s["order_board"]["orders"]) == sorted(TYPES)
        assert sorted(s["order_board"]["addresses"]) == sorted(ADDRESSES)
        assert s["marker"] is None and s["phase"] == "honk" and s["to_move"] == 0
        g.check_invariants(venv.records[i])
    # rotations and layouts really vary
    boards = {str(venv.state_dict(i)["board"]) for i in range(venv.num_envs)}
    assert len(boards) == venv.num_envs


def test_the_plain_board_helper_is_a_legal_position():
    g = game(4)
    venv = vec_at(g, position(g))
    g.check_invariants(venv.records[0])
    assert sum(c.startswith("B") for c in PLAIN.split()) == 5


# --------------------------------------------------------------------------- masks and shaping


def test_the_mask_is_exactly_the_legal_actions_in_every_phase():
    import trafficenvs

    venv = trafficenvs.make_vec("jakarta_traffic", num_envs=4, num_players=3)
    out = venv.reset(seed=21)
    rng = np.random.default_rng(0)
    c = venv.game.cfg[0]
    phases = set()
    for _ in range(400):
        for i in range(4):
            rec = venv.records[i]
            phases.add(int(rec["phase"]))
            legal_by_kernel = [a for a in range(NUM_ACTIONS) if is_legal(rec, c, a)]
            assert np.flatnonzero(out.action_mask[i]).tolist() == legal_by_kernel
        out = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in out.action_mask]))
    assert phases >= {HONK, DRIVE, ACCEPT, PLACE}


def test_shaping_rewards_stars_and_bubble_bonus_as_they_come():
    import trafficenvs

    g = game(2)
    venv = trafficenvs.make_vec("jakarta_traffic", num_envs=1, num_players=2, tiles=TEST_TILES,
                                shaping=True)
    venv.reset(seed=0)
    venv.load_state_dict(0, position(g, mopeds=[(0, 0), (3, 1)],
                                     players=[{"orders": ["Nasi Goreng"]}],
                                     forced_dice=[2, 4]))
    out = play(venv, A_DETOUR)  # onto the Residency, where player_1 waits: a chat
    assert out.rewards[0].tolist() == [1.0, 0.0]  # bubble bonus 0 -> 1
    out = play(venv, deliver("Nasi Goreng"))  # 5 stars
    assert out.rewards[0].tolist() == [5.0, 0.0]
    assert state(venv)["players"][0]["bubbles"] == 1
