"""Jamming Traffic beyond the conformance table: real wins in random play, the mask
against ``is_legal`` all game long, and random plays that once broke the engine.

The conformance suite itself runs for every game from ``tests/test_conformance.py``.
"""

from __future__ import annotations

from tests.jamming_traffic.positions import leaf_roads
from trafficenvs.core import sampler
from trafficenvs.jamming_traffic import random_map
from trafficenvs.jamming_traffic.rules.jam_check import full_loop_possible
from trafficenvs.jamming_traffic.rules.layout import MOVE
from trafficenvs.jamming_traffic.rules.legality import is_legal, legal_mask

ENV = "jamming_traffic-v1"


def test_random_play_on_the_small_map_reaches_real_wins():
    """Not only truncations: on a small map random play finishes tours (J9)."""
    import numpy as np

    import trafficenvs

    venv = trafficenvs.make_vec(ENV, num_envs=64, num_players=2, map="small", max_cycles=500)
    out = venv.reset(seed=0)
    rng = np.random.default_rng(0)
    wins = 0
    for _ in range(3000):
        out = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in out.action_mask]))
        wins += int(out.terminated.sum())
        won = out.rewards[out.terminated]
        assert ((won == 1.0).sum(1) == 1).all()
    assert wins >= 20


def test_mask_agrees_with_is_legal_all_game_long():
    """legal_mask memoises jams per (road, entry end); is_legal checks each move alone.

    Both must agree on every action in positions reached by random play (held roads,
    endless jams, pieces and all)."""
    import numpy as np
    from numba import njit

    import trafficenvs

    @njit
    def disagreements(recs, cfg, mask):
        bad = 0
        for i in range(recs.shape[0]):
            legal_mask(recs[i], cfg[0], mask[i])
            for a in range(mask.shape[1]):
                if mask[i, a] != is_legal(recs[i], cfg[0], a):
                    bad += 1
        return bad

    for name in ("default", "grid", "small"):
        venv = trafficenvs.make_vec(ENV, num_envs=32, num_players=3, map=name, max_cycles=300)
        out = venv.reset(seed=7)
        rng = np.random.default_rng(7)
        mask = np.zeros((32, venv.num_actions), np.bool_)
        held = 0
        for t in range(1200):
            out = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in out.action_mask]))
            held += int(venv.records["held"].sum())
            if t % 5 == 0:
                assert disagreements(venv.records, venv.game.cfg, mask) == 0, (name, t)
        if name == "default":
            assert held > 0  # the held-road paths were exercised


# --------------------------------------------------------------------------- regressions
# Random plays that once broke the engine, replayed with the invariants checked after
# every step (cars conserved, no road over its queue, over 3 only when held at 4).


def test_regression_a_full_loop_of_held_roads_is_never_fed_a_sixth_car():
    """Row 46 once met three held roads shuttling between two dead ends (a full loop,
    J8). The move onto it at step 139 made an endless jam that no stop could leave at
    4; the stop held a road with 5 cars and at step 142 a sixth car was written past
    its queue into the next road's. That move is now illegal."""
    import numpy as np

    import trafficenvs


    venv = trafficenvs.make_vec(ENV, num_envs=48, max_cycles=400, num_players=3,
                                map=random_map(towns=16, seed=3))
    out = venv.reset(seed=11)
    states = sampler.rng_states(48, 12)
    acts = np.zeros(48, np.int64)
    recs = venv.records
    cfg = venv.game.cfg[0]
    for t in range(200):
        if t == 139:  # the position of the old bug: the full loop is there, unfed
            assert set(np.flatnonzero(recs["held"][46]).tolist()) == {5, 13, 23}
            assert not out.action_mask[46][venv.game.move_action(16, 2, 5)]
            assert full_loop_possible(recs[46], cfg)
        sampler.sample_legal(out.action_mask, states, acts)
        out = venv.step(acts)
        for i in range(48):
            venv.game.check_invariants(recs[i])


def test_regression_a_held_road_jamming_twice_cannot_strand_a_car():
    """The seed-7 dead-end play of test_jamming_traffic_speed_equivalence: at step 336
    row 6 a move onto a held road was let through because only its first chain was
    checked; the second one dead-ended and left road 13 over-full and not held."""
    import numpy as np
    from numba import njit

    import trafficenvs


    @njit
    def masks(recs, cfg, mask):
        for i in range(recs.shape[0]):
            legal_mask(recs[i], cfg[0], mask[i])

    m = random_map(towns=16, seed=3)
    leaves = leaf_roads(m)
    seed, n = 7, 48
    venv = trafficenvs.make_vec(ENV, num_envs=n, num_players=3, map=m, max_cycles=400)
    out = venv.reset(seed=seed)
    recs = venv.records
    states = sampler.rng_states(n, seed + 1)
    acts = np.zeros(n, np.int64)
    mask = np.zeros((n, venv.num_actions), np.bool_)
    rng = np.random.default_rng(seed)
    for t in range(400):
        legal = out.action_mask
        if t % 4 == 0:  # the one-way sign into a dead-end town, as a placement would
            for i in np.flatnonzero(recs["phase"] == MOVE):
                road, enter_at = leaves[rng.integers(len(leaves))]
                recs["ow_road"][i] = road
                recs["ow_entry"][i] = m.roads[road].index(enter_at)
            masks(recs, venv.game.cfg, mask)
            legal = mask
        sampler.sample_legal(legal, states, acts)
        out = venv.step(acts)
        for i in range(n):
            venv.game.check_invariants(recs[i])
