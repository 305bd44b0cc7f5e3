"""The greedy player's view of a position: the game record rebuilt from an observation.

The observation holds the whole position (open information), so the record the
greedy player searches on is rebuilt from it alone: seat to move as seat 0, the
others in turn order (C4), the generator and the scratch fields not the game's.
Every offset read is the observation layout's (``cfg.ob_*``, ``layout.obs_layout``).
In the stop phase the paused jam (its road and the end its last car entered at) is
observed (``jam_road``, ``jam_end``); :func:`find_paused_jam` is how v0, which did
not show it, guessed it (:func:`v0_stop_view`, the greedy player's ``stop_as_v0``).

Also here: the copy of a record's state part the look-ahead uses (64-bit words).
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.jit import kernel
from trafficenvs.jamming_traffic.rules.jams import loop_towns_of
from trafficenvs.jamming_traffic.rules.layout import QLEN, RECORD_DTYPE

#: fields of the game record that are the kernels' scratch space, not game state:
#: a copy for a look-ahead need not carry them (``step`` writes them before reading)
SCRATCH_FIELDS = ("sc_cnt", "sc_held", "sc_laste", "snap", "ch_code", "ch_roads", "ch_path")


def state_words(dtype: np.dtype = RECORD_DTYPE) -> int:
    """64-bit words from the start of a record that cover every non-scratch field.

    Computed from the dtype, so a field added or moved later is still copied.
    """
    end = 0
    for name in dtype.names:
        if name not in SCRATCH_FIELDS:
            ftype, off = dtype.fields[name][:2]
            end = max(end, off + ftype.itemsize)
    return (end + 7) // 8


@kernel
def copy_state(src, dst):
    """Copy the state part of one record (64-bit words: numba's byte-slice copy is
    15x slower, and the scratch fields after the state are 3/4 of the record)."""
    for k in range(src.shape[0]):
        dst[k] = src[k]


@kernel
def _clear(rec):
    """The fields the observation does not show: a fixed generator, no moves, empty
    roads and seats (filled in by the steps below)."""
    rec.rng_key = np.uint64(0x9E3779B97F4A7C15)
    rec.rng_ctr = np.uint64(0)
    rec.moves = 0
    rec.turn = 0
    for j in range(rec.reward.shape[0]):
        rec.reward[j] = 0.0
        rec.visited[j] = 0
        rec.home[j] = -1
        rec.winner[j] = 0
    for c in range(rec.car_road.shape[0]):
        rec.car_road[c] = -1
    for r in range(rec.q.shape[0]):
        for i in range(rec.q.shape[1]):
            rec.q[r, i] = -1
        rec.cnt[r] = 0
        rec.held[r] = 0
        rec.laste[r] = 0


@kernel
def _read_roads(ob, cfg, N, rec):
    """Each road's queue (a neutral car 0, relative seat j's car j + 1) from the road
    fields and the seats' ``road`` and ``slot``; a road over 3 cars is held."""
    R = cfg.n_roads
    for r in range(R):
        o = cfg.ob_road_neutral + QLEN * r
        for i in range(QLEN):
            if ob[o + i]:
                rec.q[r, i] = 0
        n = ob[cfg.ob_road_cars + r]
        rec.cnt[r] = n
        rec.held[r] = 1 if n >= 4 else 0
    o = cfg.ob_seats
    for j in range(N):
        for r in range(R):
            if ob[o + cfg.ob_seat_road + r]:
                rec.car_road[j + 1] = r
                for i in range(QLEN):
                    if ob[o + cfg.ob_seat_slot + i]:
                        rec.q[r, i] = j + 1
        o += cfg.ob_seat_stride


@kernel
def _read_seats(ob, cfg, N, rec):
    """Each seat's visited towns and home, and the endless jam's loop towns."""
    T = cfg.n_towns
    o = cfg.ob_seats
    for j in range(N):
        v = np.uint32(0)
        for t in range(T):
            if ob[o + cfg.ob_seat_visited + t]:
                v |= np.uint32(1) << np.uint32(t)
            if ob[o + cfg.ob_seat_home + t]:
                rec.home[j] = t
        rec.visited[j] = v
        o += cfg.ob_seat_stride
    lt = np.uint32(0)
    o = cfg.ob_loop_towns
    for t in range(T):
        if ob[o + t]:
            lt |= np.uint32(1) << np.uint32(t)
    rec.loop_towns = lt


@kernel
def _one_hot(ob, o, n):
    """The index of the set entry of the one-hot ``ob[o:o + n]``, -1 if none is set."""
    for k in range(n):
        if ob[o + k]:
            return k
    return -1


@kernel
def _read_turn(ob, cfg, rec):
    """The phase, moves left, pending pieces and where the pieces stand; the dice and
    the forced roll get fixed values; in the stop phase the paused jam (its road no
    longer held). The turn counter is not read: the look-ahead plays no turn cap."""
    ph = _one_hot(ob, cfg.ob_phase, 5)
    rec.phase = max(ph, 0)
    rec.cur = 0
    rec.moves_left = ob[cfg.ob_moves_left]
    rec.pend_rb = 1 if ob[cfg.ob_pending] else 0
    rec.pend_ow = 1 if ob[cfg.ob_pending + 1] else 0
    rec.dice[0] = 0
    rec.dice[1] = 0
    rec.forced[0] = -1
    rec.forced[1] = -1
    rec.rb_town = _one_hot(ob, cfg.ob_roundabout_town, cfg.n_towns)
    rec.rb_dir = max(_one_hot(ob, cfg.ob_roundabout_dir, 2), 0)
    rec.ow_road = _one_hot(ob, cfg.ob_one_way_road, cfg.n_roads)
    rec.ow_entry = max(_one_hot(ob, cfg.ob_one_way_entry, 2), 0)
    rec.js_road = _one_hot(ob, cfg.ob_jam_road, cfg.n_roads)
    rec.js_end = _one_hot(ob, cfg.ob_jam_end, 2)
    if rec.js_road >= 0:
        rec.held[rec.js_road] = 0


@kernel
def rebuild(ob, cfg, N, rec):
    """The game record seen from ``ob`` (seat to move = seat 0, the others in turn order)."""
    _clear(rec)
    _read_roads(ob, cfg, N, rec)
    _read_seats(ob, cfg, N, rec)
    _read_turn(ob, cfg, rec)


@kernel
def v0_stop_view(rec, cfg):
    """Stop phase: the rebuilt record as the v0 observation showed it (the greedy
    player's ``stop_as_v0``): a road's fifth car not seen (4 places were shown), every
    road over 3 cars held, and the paused jam guessed by :func:`find_paused_jam`
    (the jam was not shown). Keeps the v0 player's choices exactly."""
    for r in range(cfg.n_roads):
        if rec.cnt[r] > 4:
            c = rec.q[r, 4]
            if c > 0:
                rec.car_road[c] = -1
            rec.q[r, 4] = -1
            rec.cnt[r] = 4
        rec.held[r] = 1 if rec.cnt[r] >= 4 else 0
    rec.js_road = -1
    rec.js_end = -1
    find_paused_jam(rec, cfg)


@kernel
def find_paused_jam(rec, cfg):
    """Stop phase: set the paused jam (``js_road``, ``js_end``, its road no longer held)
    to the first road over 3 cars whose loop is the observed one; False if none is."""
    for r in range(cfg.n_roads):
        if rec.cnt[r] < 4:
            continue
        for e in range(2):
            if loop_towns_of(rec, cfg, r, e) == rec.loop_towns:
                rec.js_road = r
                rec.js_end = e
                rec.held[r] = 0
                return True
    return False


@kernel
def rebuild_batch(obs, cfg_arr, N, recs):
    """The game records the player sees in each observation row (seat to move = 0)."""
    for i in range(obs.shape[0]):
        rebuild(obs[i], cfg_arr[0], N, recs[i])
