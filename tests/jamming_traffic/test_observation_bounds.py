"""Every v1 observation lies in its exact bounds, for every player count and option.

``testing.check_observation_bounds`` plays random games in the vectorised env and
checks every seat's view (``observe(seats)``), the movers' and the final observations
entry by entry against the layout's bounds, and the AEC env's
``observation_space(agent).contains``. On top: one-hot fields never hold more than one
1 (exactly one where something is always there), and the bounds that a game must
reach are reached (a count's bound is its true maximum, not a loose cap).
"""

from __future__ import annotations

import numpy as np
import pytest

import trafficenvs
from trafficenvs import testing
from trafficenvs.core import sampler
from trafficenvs.jamming_traffic import random_map

ENV = "jamming_traffic-v1"

OPTIONS = {
    "2p-small": dict(num_players=2, map="small"),
    "3p-wheel-shaping": dict(num_players=3, map="wheel", shaping=True),
    "4p-default": dict(num_players=4),
    "5p-grid-turns": dict(num_players=5, map="grid", max_turns=30),
    "6p-default-long-cap": dict(num_players=6, max_turns=400),
    "7p-random16": dict(num_players=7, map=random_map(towns=16, seed=3)),
    "8p-random20": dict(num_players=8, map=random_map(towns=20, seed=9)),
    "9p-grid-faces": dict(num_players=9, map="grid", faces=[5, 6, "one-way"]),
    "10p-default-faces-60": dict(num_players=10, faces=[60, 1, "roundabout", "one-way"]),
    "2p-faces-60-only": dict(num_players=2, map="small", faces=[60]),
    "3p-no-numbers": dict(num_players=3, map="small", faces=["roundabout", "one-way"],
                          max_turns=20),
}

#: one-hot fields / parts: at most one entry set (``exact``: always exactly one)
ONE_HOT = {"phase": True, "roundabout_town": False, "roundabout_dir": False,
           "one_way_road": False, "one_way_entry": False, "jam_road": False,
           "jam_end": False}
SEAT_ONE_HOT = {"home": True, "road": False, "slot": False}


@pytest.mark.parametrize("name", list(OPTIONS))
def test_every_observation_is_inside_its_exact_bounds(name):
    options = OPTIONS[name]
    seen = testing.check_observation_bounds(ENV, seeds=range(1), num_envs=32, steps=300,
                                            every=5, aec_games=1, **options)
    game = trafficenvs.make_game(ENV, **options)
    L = game.obs_layout
    high = game.obs_high.astype(np.int64)
    assert (seen <= high).all()
    # bounds a game reaches at once: the set-up and move (or place) phases, a full
    # set of towns to visit, the clocks at their start (255: the whole horizon, or no cap)
    phase = L.slice(seen, "phase")
    assert phase[0] == 1 and max(phase[1], phase[2]) == 1
    assert seen[L.at("seats", 0, "towns_left")] == game.map.num_towns - 1
    for f in ("horizon_left", "turns_left"):
        assert L.slice(seen, f)[0] == L.field(f).high
    faces = [f for f in game.faces if f > 0]
    assert L.field("moves_left").high == 2 * max(faces, default=0)
    assert L.field("dice").parts[0].high == max(faces, default=0)


def test_faces_up_to_60_reach_their_bounds():
    """With the only face 60, every turn has 120 moves: the bounds 120 and 60 are
    reached (v0's space capped every entry at 60)."""
    seen = testing.check_observation_bounds(ENV, seeds=range(1), num_envs=8, steps=60,
                                            every=3, aec_games=1, num_players=2, map="small",
                                            faces=[60])
    game = trafficenvs.make_game(ENV, num_players=2, map="small", faces=[60])
    L = game.obs_layout
    assert L.slice(seen, "moves_left")[0] == 120 == L.field("moves_left").high
    assert L.slice(seen, "dice")[0] == 60


def test_the_turn_counter_is_capped_at_its_bound():
    """A cap over 255 turns: the counter and the turns left stop at 255."""
    game = trafficenvs.make_game(ENV, num_players=2, max_turns=400)
    L = game.obs_layout
    assert L.field("turn").high == 255 == L.field("turns_left").high
    game = trafficenvs.make_game(ENV, num_players=2, max_turns=30)
    assert game.obs_layout.field("turn").high == 30


@pytest.mark.parametrize("name", ["4p-default", "7p-random16", "10p-default-faces-60"])
def test_one_hot_fields_hold_at_most_one_one(name):
    options = OPTIONS[name]
    venv = trafficenvs.make_vec(ENV, num_envs=32, max_cycles=300, **options)
    game = venv.game
    L = game.obs_layout
    seats_f = L.field("seats")
    parts = {p.name: p for p in seats_f.parts}
    out = venv.reset(seed=1)
    states = sampler.rng_states(32, 2)
    acts = np.zeros(32, np.int64)
    seats = np.zeros(32, np.int64)
    for t in range(300):
        rows = [out.observation]
        if t % 10 == 0:
            for j in range(game.num_players):
                seats[:] = (np.arange(32) + j) % game.num_players
                rows.append(venv.observe(seats))
        for row in rows:
            for f, exact in ONE_HOT.items():
                s = L.slice(row, f).astype(int).sum(axis=1)
                assert (s == 1).all() if exact else (s <= 1).all(), f
            for j in range(game.num_players):
                for part, exact in SEAT_ONE_HOT.items():
                    o = L.at("seats", j, part)
                    s = row[:, o:o + parts[part].length].astype(int).sum(axis=1)
                    assert (s == 1).all() if exact else (s <= 1).all(), part
        sampler.sample_legal(out.action_mask, states, acts)
        out = venv.step(acts)
