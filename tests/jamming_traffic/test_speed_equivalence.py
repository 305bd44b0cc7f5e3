"""The fast Jamming Traffic mask decides exactly what the exhaustive one decides.

``legal_mask`` skips J7's jam simulation ("a move whose jam would push a car that has
no legal exit at all is illegal") unless ``dead_end_possible``: only a car pushed off
the one-way road into an exit town of degree 1 can be stuck (off a two-way road the
U-turn is always legal). ``legal_mask_exhaustive`` is the old mask, which simulates
the jam of every move onto a full road. These tests compare the two, and ``is_legal``,
on positions reached by random play (held roads, endless jams, pieces and all), and
on positions where the one-way sign is forced onto a road into a dead-end town::

    ... - B ==one-way==> L      (L has no other road: a car pushed into L is stuck)
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

import trafficenvs
from tests.jamming_traffic.positions import Table, leaf_roads
from trafficenvs.core import sampler
from trafficenvs.jamming_traffic import random_map
from trafficenvs.jamming_traffic.rules.jam_check import dead_end_possible
from trafficenvs.jamming_traffic.rules.layout import MOVE, OVER, PLACE, STOP
from trafficenvs.jamming_traffic.rules.legality import (
    is_legal,
    legal_mask,
    legal_mask_exhaustive,
    mask_without_dead_ends,
)
from trafficenvs.jamming_traffic.rules.turns import move as _move
from trafficenvs.jamming_traffic.rules.turns import step

ENV = "jamming_traffic-v1"


@njit
def _compare(recs, cfg, fast, ref, free):
    """(mask cells where fast != exhaustive, actions where is_legal != fast mask,
    MOVE positions where the dead-end corner is live, those where skipping the jam
    simulation there would have been wrong)."""
    bad_mask = 0
    bad_legal = 0
    live = 0
    matters = 0
    for i in range(recs.shape[0]):
        rec = recs[i]
        legal_mask(rec, cfg[0], fast[i])
        legal_mask_exhaustive(rec, cfg[0], ref[i])
        for a in range(fast.shape[1]):
            if fast[i, a] != ref[i, a]:
                bad_mask += 1
            if fast[i, a] != is_legal(rec, cfg[0], a):
                bad_legal += 1
        if rec.phase == MOVE and dead_end_possible(rec, cfg[0]):
            live += 1
            mask_without_dead_ends(rec, cfg[0], free[i])
            for a in range(fast.shape[1]):
                if free[i, a] != ref[i, a]:
                    matters += 1
                    break
    return bad_mask, bad_legal, live, matters


@njit
def _masks(recs, cfg, mask):
    for i in range(recs.shape[0]):
        legal_mask(recs[i], cfg[0], mask[i])


def _play(map_, seed: int, steps: int, num_envs: int = 48, force_leaf: bool = False,
          **options):
    """Random play; every few steps a snapshot of all records. With ``force_leaf``
    the one-way sign is put on a road into a dead-end town, pointing into it, in every
    game in the move phase, before each snapshot, and play goes on from there (so
    jams meet the dead end). The sign is set in the record, as a placement would."""
    venv = trafficenvs.make_vec(ENV, num_envs=num_envs, num_players=3, map=map_,
                                max_cycles=400, **options)
    out = venv.reset(seed=seed)
    recs = venv.records
    states = sampler.rng_states(num_envs, seed + 1)
    acts = np.zeros(num_envs, np.int64)
    mask = np.zeros((num_envs, venv.num_actions), np.bool_)
    leaves = leaf_roads(venv.game.map) if force_leaf else []
    rng = np.random.default_rng(seed)
    snaps = []
    for t in range(steps):
        m = out.action_mask
        if force_leaf and t % 4 == 0:
            for i in np.flatnonzero(recs["phase"] == MOVE):
                road, enter_at = leaves[rng.integers(len(leaves))]
                recs["ow_road"][i] = road
                recs["ow_entry"][i] = venv.game.map.roads[road].index(enter_at)
            _masks(recs, venv.game.cfg, mask)
            m = mask
        if t % 4 == 0:
            snaps.append(recs.copy())
        sampler.sample_legal(m, states, acts)
        out = venv.step(acts)
    return venv, np.concatenate(snaps)


def _check(venv, recs):
    cfg = venv.game.cfg
    n, a = recs.shape[0], venv.num_actions
    fast, ref, free = (np.zeros((n, a), np.bool_) for _ in range(3))
    return _compare(recs, cfg, fast, ref, free)


MAPS = ["default", "small", "wheel", "grid", random_map(towns=16, seed=3),
        random_map(towns=12, seed=5)]
IDS = [getattr(m, "name", m) for m in MAPS]


@pytest.mark.parametrize("map_", MAPS, ids=IDS)
def test_fast_mask_equals_exhaustive_mask_and_is_legal_in_random_play(map_):
    venv, recs = _play(map_, seed=11, steps=600)
    bad_mask, bad_legal, _, _ = _check(venv, recs)
    assert bad_mask == 0
    assert bad_legal == 0
    phases = set(np.unique(recs["phase"]).tolist())
    assert {PLACE, MOVE} <= phases
    if map_ == "default":
        assert (recs["held"].sum(1) > 0).any()  # held roads were met
        assert STOP in phases  # and endless jams


@pytest.mark.parametrize("seed", [3, 7])
def test_one_way_into_dead_end_town_keeps_the_jam_check(seed):
    """The one corner where J7's last rule can bite: the sign points into a town of
    degree 1. There the fast mask falls back to the simulation, and it must: in some
    of these positions skipping it would allow a move that strands a car."""
    m = random_map(towns=16, seed=3)
    assert leaf_roads(m), "the map needs a dead-end town"
    venv, recs = _play(m, seed=seed, steps=400, force_leaf=True)
    bad_mask, bad_legal, live, matters = _check(venv, recs)
    assert bad_mask == 0
    assert bad_legal == 0
    assert live > 50
    assert matters > 0


def test_dead_end_is_possible_only_with_the_sign_into_a_degree_one_town():
    """A -[0]- B -[n n 1]-> C (C a dead end). With the sign entering at B the corner is
    live; entering at C (exit B, degree 2) or with no sign, no jam can strand a car;
    with the one-way road holding 2 cars and no held road, none either."""
    t = Table({"A": (0, 0), "B": (2, 0), "C": (4, 0)}, ["A-B", "B-C"], homes=["A", "C"])
    cases = [
        ({"A-B": "0", "B-C": "n n 1"}, {"road": 1, "enter_at": 1}, True),
        ({"A-B": "0", "B-C": "n n 1"}, {"road": 1, "enter_at": 2}, False),
        ({"A-B": "0", "B-C": "n n 1"}, None, False),
        ({"A-B": "0 n", "B-C": "n 1"}, {"road": 1, "enter_at": 1}, False),
    ]
    for roads, ow, live in cases:
        t.set(roads, one_way=ow)
        rec = t.game.from_dict(t.state())
        assert dead_end_possible(rec[0], t.game.cfg[0]) == live, (roads, ow)


@njit
def _jam_moves(recs, cfg, fast, ref):
    """Every legal move onto a full road in ``recs``, played by ``step`` into ``fast``
    and by the reference (an endless jam's laps played push by push) into ``ref``.
    Returns how many were written (at most ``fast.shape[0]``)."""
    c = cfg[0]
    k = 0
    for i in range(recs.shape[0]):
        if recs[i].phase != MOVE:
            continue
        for a in range(c.n_moves):
            if k >= fast.shape[0]:
                return k
            if not is_legal(recs[i], c, a):
                continue
            r = c.mv_road[a]
            o = c.inc[c.rt[r, c.mv_end[a]], c.mv_k[a]]
            if recs[i].cnt[o] + (1 if o != r else 0) <= 3:
                continue
            fast[k] = recs[i]
            step(fast[k], c, a)
            ref[k] = recs[i]
            for j in range(c.num_players):  # as step does before a move
                ref[k].reward[j] = 0.0
            _move(ref[k], c, a, False)
            k += 1
    return k


SCRATCH = ("sc_cnt", "sc_held", "sc_laste", "snap", "ch_code", "ch_roads", "ch_path")


@pytest.mark.parametrize("map_,shaping", [(m, False) for m in MAPS]
                         + [("default", True), ("grid", True)],
                         ids=IDS + ["default-shaping", "grid-shaping"])
def test_endless_jam_laps_at_once_equal_the_laps_played_push_by_push(map_, shaping):
    """``_laps_at_once`` knows an endless jam's laps without playing them (each car
    keeps its place in the loop's circular order). Every jam a legal move could start,
    in positions from random play, ends the same as when every push is played:
    cars, visits, held roads, stop choices, wins, and with ``shaping`` the rewards."""
    venv, recs = _play(map_, seed=5, steps=800, shaping=shaping)
    n_fast = 4096
    fast = venv.game.new_records(n_fast)
    ref = venv.game.new_records(n_fast)
    endless = wins = cases = paid = 0
    for start in range(0, recs.shape[0], 64):
        k = _jam_moves(recs[start:start + 64], venv.game.cfg, fast, ref)
        assert k < n_fast
        for f in recs.dtype.names:
            if f not in SCRATCH:
                np.testing.assert_array_equal(fast[f][:k], ref[f][:k], err_msg=f)
        endless += int((ref["phase"][:k] == STOP).sum())
        wins += int((ref["phase"][:k] == OVER).sum())
        cases += k
        if shaping:
            paid += int((ref["reward"][:k] > 0).sum())
    assert cases > 1000
    assert paid > 1000 or not shaping
    if map_ == "default":
        assert endless > 50
