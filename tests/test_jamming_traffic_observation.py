"""The observation kernel writes exactly the layout documented on the rules page.

``observe`` is written for speed (branch-free road slots that rely on empty queue
slots holding -1, unsigned indices), so these tests check it against a plain Python
reading of the documented table, built from the state dict, from every seat: on a
drawn position and on positions reached by random play (pieces, dice, held roads,
paused endless jams with a fifth car on a road, finished games).
"""

from __future__ import annotations

import numpy as np
import pytest
from jt_positions import Table

import trafficenvs
from trafficenvs.core import driver
from trafficenvs.jamming_traffic import kernels as K
from trafficenvs.jamming_traffic import random_map
from trafficenvs.jamming_traffic.game import DIRECTIONS, JammingTrafficGame

ENV = "jamming_traffic-v0"
DIE = {"roundabout": 5.0, "one-way": 6.0}


def documented_observation(game: JammingTrafficGame, rec: np.void, seat: int) -> np.ndarray:
    """The observation table of docs/rules/jamming_traffic.md, read from the state dict."""
    s = game.to_dict(rec)
    n = game.num_players
    towns = game.map.num_towns
    obs: list[float] = []
    for cars in s["roads"]:  # 4 slots per road from its first town
        slots = [0.0] * 4
        for i, car in enumerate(cars[:4]):
            slots[i] = 1.0 if car == "n" else 2.0 + (car - seat) % n
        obs += slots
    for j in range(n):  # per relative seat: visited flags, home, towns still to visit
        p = (seat + j) % n
        visited = set(s["visited"][p])
        obs += [1.0 if t in visited else 0.0 for t in range(towns)]
        home = s["homes"][p]
        obs += [float(home), float(towns - 1 - len(visited - {home}))]
    loop = int(rec["loop_towns"])
    obs += [float(loop >> t & 1) for t in range(towns)]
    obs += [1.0 if s["phase"] == ph else 0.0 for ph in K.PHASES]
    rb, ow = s["roundabout"], s["one_way"]
    dice = s["dice"] or [None, None]
    obs += [float(s["moves_left"]), float("roundabout" in s["pending"]),
            float("one-way" in s["pending"])]
    obs += [0.0 if f is None else (DIE[f] if f in DIE else float(f)) for f in dice]
    obs += [0.0 if rb is None else rb["town"] + 1.0,
            0.0 if rb is None else float(DIRECTIONS.index(rb["direction"])),
            0.0 if ow is None else ow["road"] + 1.0,
            0.0 if ow is None else float(game.map.roads[ow["road"]].index(ow["enter_at"])),
            float(len(s["held"]))]
    return np.array(obs, np.float32)


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
          visited=[["B"], [], ["A", "B"]],
          roundabout={"town": 1, "direction": "cw"}, one_way={"road": 2, "enter_at": 2})
    rec = t.game.from_dict(t.state())[0]
    obs = np.zeros(t.game.obs_dim, np.float32)
    K.observe(rec, t.game.cfg[0], 1, obs)
    # seat 1 sees its own car as 2, seat 2's as 3, seat 0's as 4
    assert obs[:12].tolist() == [2, 0, 0, 0, 3, 1, 1, 1, 4, 0, 0, 0]
    for seat in range(3):
        K.observe(rec, t.game.cfg[0], seat, obs)
        np.testing.assert_array_equal(obs, documented_observation(t.game, rec, seat))


@pytest.mark.parametrize(("map_", "players"), [
    ("default", 4), ("small", 2), ("grid", 6), (random_map(towns=16, seed=3), 3),
], ids=["default-4", "small-2", "grid-6", "random16-3"])
def test_observation_matches_the_table_from_every_seat_in_random_play(map_, players):
    num_envs = 16
    venv = trafficenvs.make_vec(ENV, num_envs=num_envs, num_players=players, map=map_,
                                max_cycles=300)
    out = venv.reset(seed=5)
    states = driver.rng_states(num_envs, 6)
    acts = np.zeros(num_envs, np.int64)
    game = venv.game
    obs = np.zeros(game.obs_dim, np.float32)
    phases = set()
    checked = 0
    for step in range(800):
        driver.sample_legal(out.action_mask, states, acts)
        out = venv.step(acts)
        if step % 8:
            continue
        for i in range(num_envs):
            rec = venv.records[i]
            phases.add(int(rec["phase"]))
            for seat in range(players):
                K.observe(rec, game.cfg[0], seat, obs)
                np.testing.assert_array_equal(obs, documented_observation(game, rec, seat))
                checked += 1
    assert checked > 300
    assert {K.PLACE, K.MOVE} <= phases
