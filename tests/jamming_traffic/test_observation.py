"""The v1 observation is the table of the rules page, seen from each seat, nothing hidden.

``observe`` is written for speed (tables, unsigned indices, the derived features'
breadth-first searches on bit sets), so these tests check it against a plain Python
reading of the documented table built from the state dict and the map
(``jt_positions.observation``: distances by a BFS on the map, free runs by a search
over the steered moves): on drawn positions and on thousands of positions from random
play, from every seat. Twin positions that differ only in what a player at the table
sees give different observations; twins that differ only in the generator (the
future dice) give equal ones.

Positions are drawn on small maps (towns at coordinates, x east, y north); a road's
cars are written from its first town to its second (``"A-B": "n 0"``: a neutral car at
A's end, seat 0's car at B's).
"""

from __future__ import annotations

import numpy as np
import pytest

import trafficenvs
from tests.jamming_traffic.positions import Table, car_distance, observation
from trafficenvs.core import sampler
from trafficenvs.jamming_traffic import random_map
from trafficenvs.jamming_traffic.rules.layout import MOVE, PLACE
from trafficenvs.jamming_traffic.rules.observe import observe as observe_kernel

ENV = "jamming_traffic-v1"


def observe(game, rec, seat: int) -> np.ndarray:
    out = np.zeros(game.obs_dim, np.uint8)
    observe_kernel(rec, game.cfg[0], seat, out)
    return out


def field(game, row, name: str) -> list[int]:
    return game.obs_layout.slice(row, name).tolist()


def seat_part(game, row, j: int, part: str) -> list[int]:
    L = game.obs_layout
    f = L.field("seats")
    o = L.at("seats", j, part)
    size = next(p.length for p in f.parts if p.name == part)
    return row[o:o + size].tolist()


def test_drawn_position_reads_as_the_table_from_each_seat():
    """Three players, homes A, B, C; seat 2's car leads a held road::

              C
        [0]  /   \\  [2 n n n]   (B-C held at 4, its first car at B)
            A --- B
              [1]
    """
    t = Table({"A": (0, 0), "B": (2, 0), "C": (1, 2)}, ["A-B", "B-C", "A-C"],
              num_players=3, homes=["A", "B", "C"])
    t.set({"A-B": "1", "B-C": "2 n n n", "A-C": "0"}, held=[1], to_move=1,
          visited=[["B"], [], ["A"]],
          roundabout={"town": 1, "direction": "cw"}, one_way={"road": 2, "enter_at": 2})
    g = t.game
    rec = g.from_dict(t.state())[0]
    row = observe(g, rec, 1)
    assert field(g, row, "road_neutral") == [0] * 5 + [0, 1, 1, 1, 0] + [0] * 5
    assert field(g, row, "road_cars") == [1, 4, 1]
    # seat 1 (me) on A-B alone: at both ends; seat 2 (next) first on B-C; seat 0 on A-C
    assert seat_part(g, row, 0, "road") == [1, 0, 0]
    assert seat_part(g, row, 0, "ends") == [1, 1]
    assert seat_part(g, row, 1, "road") == [0, 1, 0]
    assert seat_part(g, row, 1, "slot") == [1, 0, 0, 0, 0]
    assert seat_part(g, row, 1, "ends") == [1, 0]
    assert seat_part(g, row, 2, "home") == [1, 0, 0]
    assert field(g, row, "roundabout_town") == [0, 1, 0]
    assert field(g, row, "roundabout_dir") == [0, 1]
    assert field(g, row, "one_way_road") == [0, 0, 1] and field(g, row, "one_way_entry") == [0, 1]
    for seat in range(3):
        np.testing.assert_array_equal(observe(g, rec, seat), observation(g, rec, seat))


CONFIGS = {
    "default-4": dict(num_players=4),
    "small-2": dict(num_players=2, map="small"),
    "grid-6": dict(num_players=6, map="grid"),
    "wheel-10-turns": dict(num_players=10, map="wheel", max_turns=200),
    "random16-3": dict(num_players=3, map=random_map(towns=16, seed=3)),
    "random20-5-faces": dict(num_players=5, map=random_map(towns=20, seed=9),
                             faces=[1, 2, 60, "roundabout", "one-way"]),
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_observation_matches_the_table_from_every_seat_in_random_play(name):
    """Every entry, derived features included, from every seat, on positions of random
    play (pieces, dice, held roads, paused endless jams with a fifth car, finished
    games); the free runs of two moves or more must come up."""
    num_envs = 16
    venv = trafficenvs.make_vec(ENV, num_envs=num_envs, max_cycles=300, **CONFIGS[name])
    out = venv.reset(seed=5)
    states = sampler.rng_states(num_envs, 6)
    acts = np.zeros(num_envs, np.int64)
    game = venv.game
    R = game.map.num_roads
    L = game.obs_layout
    phases = set()
    checked = 0
    long_runs = 0
    for step in range(900):
        sampler.sample_legal(out.action_mask, states, acts)
        out = venv.step(acts)
        if step % 9:
            continue
        for i in range(num_envs):
            rec = venv.records[i]
            phases.add(int(rec["phase"]))
            for seat in range(game.num_players):
                row = observe(game, rec, seat)
                np.testing.assert_array_equal(row, observation(game, rec, seat),
                                              f"{name} step {step} row {i} seat {seat}")
                checked += 1
            # a reach entry whose own town is not needed: the run went on over empty roads
            cur = int(rec["cur"])
            reach = np.asarray(field(game, observe(game, rec, cur), "reach")).reshape(R, 2)
            need = set(range(game.map.num_towns)) - {int(rec["home"][cur])} - {
                t for t in range(game.map.num_towns) if int(rec["visited"][cur]) >> t & 1}
            long_runs += sum(1 for r in range(R) for x in range(2)
                             if reach[r, x] and game.map.roads[r][x] not in need)
    assert checked > 1000
    assert {PLACE, MOVE} <= phases
    assert long_runs > 0
    assert L.size == game.obs_dim


# --------------------------------------------------------------------------- derived features

PATH = {"A": (0, 0), "B": (2, 0), "C": (4, 0), "D": (6, 0), "E": (4, 2)}
PATH_ROADS = ["A-B", "B-C", "C-D", "C-E"]


def path_table(**options) -> Table:
    """A --- B --- C --- D
                   |
                   E        seat 0 at home A, seat 1 at home E
    """
    return Table(PATH, PATH_ROADS, homes=["A", "E"], **options)


def test_distance_is_the_fewest_towns_to_pass_counting_the_town_itself():
    """Seat 0's car on A-B: B is 1 town away (its next move passes it), C 2, D and E 3;
    A, its home, is not needed (0). Seat 1's car on C-E (home E, B visited): C 1, D 2,
    A 3 (from C: C, B, A)."""
    t = path_table().set({"A-B": "n 0", "B-C": "n n", "C-D": "n n n", "C-E": "1"},
                         visited=[[], ["B"]])
    g = t.game
    row = observe(g, g.from_dict(t.state())[0], 0)
    # towns in order A B C D E
    assert seat_part(g, row, 0, "dist") == [0, 1, 2, 3, 3]
    assert seat_part(g, row, 0, "nearest") == [1]
    assert seat_part(g, row, 1, "dist") == [3, 0, 1, 2, 0]  # B visited, E home
    assert seat_part(g, row, 1, "nearest") == [1]
    assert car_distance(g, t.r("C-E"), t.t["A"]) == 3


def test_a_seat_with_no_car_yet_shows_no_distances():
    t = path_table()
    s = t.state()
    s.update(phase="setup", to_move=0, roads=[["n", "n"]] * 4, dice=None, moves_left=0,
             pending=[], visited=[[], []])
    t.env.load_state_dict(s)
    g = t.game
    row = observe(g, g.from_dict(t.state())[0], 0)
    for j in range(2):
        assert seat_part(g, row, j, "dist") == [0] * 5
        assert seat_part(g, row, j, "nearest") == [0]
        assert seat_part(g, row, j, "road") == [0] * 4


def reach_of(t: Table, seat: int = 0) -> dict[tuple[str, str], int]:
    """``{(road, town at that end): reach entry}`` of seat ``seat``'s observation."""
    g = t.game
    row = observe(g, g.from_dict(t.state())[0], seat)
    r = field(g, row, "reach")
    names = list(t.t)
    return {(road, names[g.map.roads[i][x]]): r[2 * i + x]
            for road, i in t.roads.items() for x in range(2)}


RUN = {"A": (0, 0), "B": (2, 0), "C": (4, 0), "D": (6, 0), "E": (4, 2), "F": (8, 0)}
RUN_ROADS = ["A-B", "B-C", "C-D", "C-E", "D-F"]
RUN_CARS = {"A-B": "n n 0", "B-C": "", "C-D": "", "C-E": "1 n n", "D-F": "n n n n"}


def run_table(**fields) -> Table:
    """A -[n n 0]- B -[ ]- C -[ ]- D -[n n n n]- F   (D-F held)
                          |
                        [1 n n]
                          E                Seat 0 (home A) needs only D."""
    t = Table(RUN, RUN_ROADS, homes=["A", "E"])
    fields.setdefault("moves_left", 3)
    return t.set(RUN_CARS, held=[t.r("D-F")], visited=[["B", "C", "E", "F"], []], **fields)


def test_a_free_run_carries_the_car_over_empty_roads_within_the_moves_left():
    """Seat 0's car, steered through B (move 1), runs alone over the empty B-C (move 2,
    through C) and C-D (move 3, through D, its last town): the end at B reaches with 3
    moves left, not with 2."""
    assert reach_of(run_table(moves_left=3))[("A-B", "B")] == 1
    assert reach_of(run_table(moves_left=2))[("A-B", "B")] == 0
    assert sum(reach_of(run_table(moves_left=3)).values()) == 1  # only where my car is


def test_a_needed_town_at_my_cars_end_reaches_with_one_move():
    t = path_table().set({"A-B": "n 0", "B-C": "n n", "C-D": "n n n", "C-E": "1"},
                         moves_left=1)
    r = reach_of(t)
    assert r[("A-B", "B")] == 1  # my car at B's end, B needed: the next move passes it
    assert sum(r.values()) == 1  # nothing where my car is not
    # D is a dead end: a steered car has no exit there, so it cannot pass D
    t.set({"A-B": "n n", "B-C": "n n", "C-D": "n n 0", "C-E": "1"}, moves_left=3)
    assert not any(reach_of(t).values())


def test_reach_is_zero_off_my_turn_and_outside_the_move_phase():
    t = path_table().set({"A-B": "n 0", "B-C": "n n", "C-D": "n n n", "C-E": "1"})
    assert any(reach_of(t, 0).values())
    assert not any(reach_of(t, 1).values())  # seat 1 is not to move
    t.set({"A-B": "n 0", "B-C": "n n", "C-D": "n n n", "C-E": "1"}, phase="place",
          dice=["roundabout", 2], pending=["roundabout"], moves_left=2)
    assert not any(reach_of(t, 0).values())


def test_the_one_way_sign_and_the_roundabout_bind_a_free_run():
    """The run of the first test: the one-way sign on C-D entered at D keeps it off
    C-D; the roundabout on C sends a car from B-C to the next road round, C-D one
    way round, C-E (with a car on it: the run ends) the other."""
    t = run_table()
    assert reach_of(t)[("A-B", "B")] == 1
    t = run_table(one_way={"road": t.r("C-D"), "enter_at": t.t["D"]})
    assert reach_of(t)[("A-B", "B")] == 0
    order = t.game.ccw[t.t["C"]]  # C's roads counter-clockwise
    for d, name in enumerate(("ccw", "cw")):
        nxt = order[(order.index(t.r("B-C")) + (1 if d == 0 else -1)) % len(order)]
        t = run_table(roundabout={"town": t.t["C"], "direction": name})
        assert reach_of(t)[("A-B", "B")] == int(nxt == t.r("C-D")), name


# --------------------------------------------------------------------------- twins

SQUARE = {"A": (0, 0), "B": (4, 0), "C": (4, 4), "D": (0, 4),
          "a": (1, 1), "b": (3, 1), "c": (3, 3), "d": (1, 3)}
SQUARE_ROADS = ["A-B", "B-C", "C-D", "D-A", "A-a", "B-b", "C-c", "D-d"]


def stop_position(jam_road: str = "A-B", entry_end: int = 0, cars: dict | None = None):
    """A ring of four full roads, an endless jam paused on one of them (4 cars)."""
    t = Table(SQUARE, SQUARE_ROADS, homes=["a", "c"])
    cars = cars or {"A-B": "n n n n", "B-C": "n n n", "C-D": "n n n", "D-A": "n 1 n",
                    "A-a": "0", "B-b": "", "C-c": "n", "D-d": "n"}
    t.set(cars, phase="stop", moves_left=1, jam={"road": t.r(jam_road), "entry_end": entry_end})
    return t


def obs_of(t: Table, seat: int = 0) -> np.ndarray:
    return observe(t.game, t.game.from_dict(t.state())[0], seat)


def test_twins_the_endless_jams_direction_is_seen():
    """The same cars, the jam paused on A-B having entered it at A, or at B."""
    a, b = obs_of(stop_position(entry_end=0)), obs_of(stop_position(entry_end=1))
    assert not np.array_equal(a, b)
    g = stop_position().game
    assert field(g, a, "jam_end") == [1, 0] and field(g, b, "jam_end") == [0, 1]


def test_twins_the_endless_jams_road_is_seen():
    cars = {"A-B": "n n n n", "B-C": "n n n n", "C-D": "n n n", "D-A": "n 1 n",
            "A-a": "0", "B-b": "", "C-c": "", "D-d": "n"}
    a = obs_of(stop_position("A-B", 0, cars))
    b = obs_of(stop_position("B-C", 0, cars))
    assert not np.array_equal(a, b)


def test_twins_a_fifth_car_on_a_road_is_seen():
    """Stop phase, A-B holding 5 cars for an instant: seat 0's car fourth or fifth
    (v0 showed 4 places, so the fifth car was invisible)."""
    four = {"A-B": "n n n 0 n", "B-C": "n n n", "C-D": "n n n", "D-A": "n 1 n",
            "A-a": "", "B-b": "", "C-c": "n", "D-d": "n"}
    five = dict(four, **{"A-B": "n n n n 0"})
    a, b = obs_of(stop_position(cars=four)), obs_of(stop_position(cars=five))
    assert not np.array_equal(a, b)
    g = stop_position().game
    assert seat_part(g, b, 0, "slot") == [0, 0, 0, 0, 1]
    assert field(g, b, "road_cars")[0] == 5


@pytest.mark.parametrize(("one", "other"), [
    ([3, "roundabout"], [3, "one-way"]),  # which special face
    ([1, 2], [2, 1]),  # which die shows what
    ([4, 4], [4, 3]),  # the number
])
def test_twins_the_dice_are_seen(one, other):
    t = path_table()
    base = {"A-B": "n 0", "B-C": "n n", "C-D": "n n n", "C-E": "1"}
    t.set(base, dice=one)
    a = obs_of(t)
    t.set(base, dice=other)
    assert not np.array_equal(a, obs_of(t))


def test_the_dice_show_numbers_as_counts_and_special_faces_as_flags():
    t = path_table().set({"A-B": "n 0", "B-C": "n n", "C-D": "n n n", "C-E": "1"},
                         dice=["one-way", 4])
    g = t.game
    assert field(g, obs_of(t), "dice") == [0, 0, 1, 4, 0, 0]


def test_twins_the_turn_counter_and_the_turn_cap_are_seen():
    t = path_table(max_turns=50)
    base = {"A-B": "n 0", "B-C": "n n", "C-D": "n n n", "C-E": "1"}
    t.set(base, turn=7)
    a = obs_of(t)
    t.set(base, turn=8)
    b = obs_of(t)
    assert not np.array_equal(a, b)
    g = t.game
    assert field(g, a, "turn") == [7] and field(g, a, "turns_left") == [43]
    u = path_table().set(base, turn=7)  # no cap
    assert field(u.game, obs_of(u), "turns_left") == [255]


def test_twins_hidden_generator_and_forced_dice_give_equal_observations():
    """What no player at the table sees: the generator's key and counter (the future
    dice) and a forced next roll (chance control for tests)."""
    base = {"A-B": "n 0", "B-C": "n n", "C-D": "n n n", "C-E": "1"}
    t = path_table()
    for hidden in ({"rng": {"key": 2, "counter": 5}}, {"forced_dice": [4, "roundabout"]}):
        for seat in range(2):
            t.set(base, rng={"key": 1, "counter": 0})
            a = obs_of(t, seat)
            t.set(base, **hidden)
            np.testing.assert_array_equal(a, obs_of(t, seat))
