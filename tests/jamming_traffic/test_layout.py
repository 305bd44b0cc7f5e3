"""The observation and action layouts are the kernel's: the rules page shows them, the
observation's named fields hold what the state says, and the named action ranges are
where the mask puts each phase's actions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import trafficenvs
from trafficenvs.core import sampler
from trafficenvs.core.layout import check_doc
from trafficenvs.jamming_traffic import random_map
from trafficenvs.jamming_traffic.game import DIRECTIONS, JammingTrafficGame
from trafficenvs.jamming_traffic.rules.layout import PHASES, QLEN
from trafficenvs.jamming_traffic.spec import SPEC

ROOT = Path(__file__).resolve().parents[2]
ENV = "jamming_traffic-v1"
#: the phase whose actions each action range holds
RANGE_PHASES = {"move": "move", "end": "move", "roundabout": "place", "one_way": "place",
                "setup": "setup", "stop": "stop"}


def test_rules_page_tables_are_the_layouts():
    game = JammingTrafficGame(**SPEC.doc_options)
    check_doc(game.obs_layout, ROOT / SPEC.rules_page, "observation")
    check_doc(game.action_layout, ROOT / SPEC.rules_page, "action")


@pytest.mark.parametrize("options", [
    {"num_players": 4},
    {"num_players": 3, "map": "wheel"},
    {"num_players": 10, "map": "grid"},
    {"num_players": 2, "map": random_map(towns=20, seed=3)},
])
def test_layouts_cover_the_row_and_the_actions_exactly(options):
    game = JammingTrafficGame(**options)
    for layout, size in ((game.obs_layout, game.obs_dim), (game.action_layout,
                                                          game.num_actions)):
        assert layout.size == size
        starts = [f.offset for f in layout]
        stops = [f.stop for f in layout]
        assert starts[0] == 0 and stops[-1] == size and starts[1:] == stops[:-1]
    c = game.cfg[0]
    for f in game.obs_layout:
        assert c[f"ob_{f.name}"] == f.offset
    assert game.action_layout.field("end").offset == c["a_end"] == game.num_actions - 1
    assert game.action_layout.field("stop").offset == c["a_stop"]


def _played(options, games=48, steps=500, seed=3):
    """(game, records, observations, masks) of positions from random play."""
    venv = trafficenvs.make_vec(ENV, num_envs=games, max_cycles=400, **options)
    out = venv.reset(seed=seed)
    states = sampler.rng_states(games, seed)
    acts = np.zeros(games, np.int64)
    recs, obs, masks = [], [], []
    for t in range(steps):
        if t % 5 == 0:
            recs.append(venv.records.copy())
            obs.append(out.observation.copy())
            masks.append(out.action_mask.copy())
        sampler.sample_legal(out.action_mask, states, acts)
        out = venv.step(acts)
    return (venv.game, np.concatenate(recs), np.concatenate(obs), np.concatenate(masks))


@pytest.fixture(scope="module")
def played():
    return _played({"num_players": 3, "map": "small"})


def test_named_observation_fields_hold_what_the_state_says(played):
    game, recs, obs, _ = played
    L = game.obs_layout
    n, towns, R = game.num_players, game.map.num_towns, game.map.num_roads
    for rec, row in zip(recs, obs):
        s = game.to_dict(rec)
        me = s["to_move"]
        assert L.slice(row, "moves_left")[0] == s["moves_left"]
        assert L.slice(row, "phase").tolist() == [int(p == s["phase"]) for p in PHASES]
        assert L.slice(row, "pending").tolist() == [int("roundabout" in s["pending"]),
                                                    int("one-way" in s["pending"])]
        rb, ow = s["roundabout"], s["one_way"]
        assert L.slice(row, "roundabout_town").tolist() == [
            int(rb is not None and rb["town"] == t) for t in range(towns)]
        assert L.slice(row, "roundabout_dir").tolist() == (
            [0, 0] if rb is None else [int(d == DIRECTIONS.index(rb["direction"]))
                                       for d in range(2)])
        assert L.slice(row, "one_way_road").tolist() == [
            int(ow is not None and ow["road"] == r) for r in range(R)]
        assert L.slice(row, "turn")[0] == min(s["turn"], 255)
        loop = L.slice(row, "loop_towns")
        assert set(np.flatnonzero(loop)) == ({t for t in range(towns)
                                              if int(rec["loop_towns"]) >> t & 1}
                                             if s["phase"] == "stop" else set())
        for j in range(n):  # relative seat j is seat (me + j) % n
            p = (me + j) % n
            home = row[L.at("seats", j, "home"):][:towns]
            assert np.flatnonzero(home).tolist() == [s["homes"][p]]
            visited = row[L.at("seats", j, "visited"):][:towns]
            assert set(np.flatnonzero(visited)) == set(s["visited"][p])
            road = row[L.at("seats", j, "road"):][:R]
            assert np.flatnonzero(road).tolist() == [r for r, cars in enumerate(s["roads"])
                                                     if p in cars]
        assert L.slice(row, "road_cars").tolist() == [len(q) for q in s["roads"]]
        neutral = L.slice(row, "road_neutral").reshape(R, QLEN)
        assert neutral.sum(1).tolist() == [q.count("n") for q in s["roads"]]


def test_every_legal_action_is_in_the_range_of_its_phase(played):
    game, recs, _, masks = played
    L = game.action_layout
    seen = set()
    for rec, mask in zip(recs, masks):
        phase = PHASES[int(rec["phase"])]
        ranges = [f for f in L if RANGE_PHASES[f.name] == phase]
        legal = np.flatnonzero(mask)
        if phase != "over":
            assert len(legal)
        for a in legal:
            f = next(f for f in L if f.offset <= a < f.stop)
            assert f in ranges, (phase, f.name, a)
            kind, _ = game.decode(int(a))
            assert kind == f.name
            seen.add(phase)
    assert {"setup", "place", "move", "stop"} <= seen
