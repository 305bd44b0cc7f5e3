"""A seat's observation (C4), written by the observation layout (``layout.obs_layout``).

Nothing is hidden; the row is seen from the observing seat (me first, the others in
turn order). Every field is written at its layout offset ``cfg.ob_<field>`` (the Game
fills them from the layout); the rules page's table is generated from the same layout.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from trafficenvs.jamming_traffic.layout import (
    MAX_PLAYERS,
    OB_ROAD_CARS,
    OB_ROADS,
    ONE_WAY,
    ROAD_SLOTS,
    ROUNDABOUT,
)
from trafficenvs.jamming_traffic.queues import popcount


def _slot_values() -> np.ndarray:
    """``[N, seat, car + 1]``: the observation's value of a road slot (see observe)."""
    t = np.zeros((MAX_PLAYERS + 1, MAX_PLAYERS, 16), np.float32)
    for n in range(1, MAX_PLAYERS + 1):
        for seat in range(n):
            t[n, seat, 1] = 1.0  # a neutral car
            for c in range(1, n + 1):  # seat c - 1's car: 2 + its seat relative to ours
                t[n, seat, c + 1] = 2.0 + (c - 1 - seat) % n
    return t


#: road slot values: 0 empty (car -1), 1 neutral (0), 2 + relative seat (c >= 1)
_SLOT = _slot_values()
#: ``_BITS8[b]``: the 8 bits of byte ``b`` as floats, lowest first
_BITS8 = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.float32)
#: the die value a special face shows
_DIE_ROUNDABOUT = 5.0
_DIE_ONE_WAY = 6.0


@njit(cache=True)
def _bits_out(out, o, bits, n):
    """``out[o + t] = bit t of bits`` for t < n, 8 at a time from ``_BITS8``.

    Writes up to 7 floats past ``o + n``: the caller writes those after.
    """
    U = np.uint64
    for b in range(U((n + 7) // 8)):
        row = (bits >> (U(8) * b)) & U(0xFF)
        ob = o + U(8) * b
        for k in range(U(8)):
            out[ob + k] = _BITS8[row, k]


@njit(cache=True)
def _turn_out(rec, cfg, out):
    """The fields after the seats: phase, moves left, pending placements, dice, the
    roundabout, the one-way sign and the number of held roads."""
    U = np.uint64
    o = U(cfg.ob_phase)
    for k in range(U(5)):
        out[o + k] = 0.0
    out[o + U(rec.phase)] = 1.0
    out[U(cfg.ob_moves_left)] = rec.moves_left
    o = U(cfg.ob_pending)
    out[o] = rec.pend_rb
    out[o + U(1)] = rec.pend_ow
    o = U(cfg.ob_dice)
    for d in range(2):
        f = rec.dice[d]
        v = 0.0
        if f >= 0:
            fv = cfg.face_val[U(f)]
            v = _DIE_ROUNDABOUT if fv == ROUNDABOUT else (_DIE_ONE_WAY if fv == ONE_WAY else fv)
        out[o + U(d)] = v
    o = U(cfg.ob_roundabout)
    out[o] = rec.rb_town + 1
    out[o + U(1)] = rec.rb_dir
    o = U(cfg.ob_one_way)
    out[o] = rec.ow_road + 1
    out[o + U(1)] = rec.ow_entry
    held = rec.held
    nh = 0
    for r in range(U(cfg.n_roads)):
        nh += held[r]
    out[U(cfg.ob_held)] = nh


@njit(cache=True)
def observe(rec, cfg, seat, out):
    """Seat ``seat``'s view (C4), field by field of the observation layout.

    Written without branches on the data (which car sits where, visited bits): a
    road slot's value comes from the table ``_SLOT`` for this seat, bit sets are
    written 8 floats at a time from ``_BITS8`` (each field's spill is overwritten
    by the next field, written later), and indices are unsigned (numba then emits
    no negative-index wraparound, so LLVM keeps plain, vectorised stores).
    """
    N = cfg.num_players
    T = cfg.n_towns
    U = np.uint64
    # field "roads": 4 slots a road, a slot's value from ``_SLOT`` for this seat (a slot
    # past the road's cars holds -1, which reads 0 like an empty slot); at a constant
    # offset (OB_ROADS: the field comes first) and inline, which measured 5% faster
    q = rec.q
    vals = _SLOT[N, seat]
    for r in range(U(cfg.n_roads)):
        o = U(OB_ROADS + OB_ROAD_CARS) + U(ROAD_SLOTS) * r
        out[o] = vals[U(np.int64(q[r, U(0)]) + 1)]
        out[o + U(1)] = vals[U(np.int64(q[r, U(1)]) + 1)]
        out[o + U(2)] = vals[U(np.int64(q[r, U(2)]) + 1)]
        out[o + U(3)] = vals[U(np.int64(q[r, U(3)]) + 1)]
    tt = U(T)
    visited = rec.visited
    home = rec.home
    o = U(cfg.ob_seats)
    # read once: stores into ``out`` could alias ``cfg`` for the compiler
    s_home, s_left, s_stride = U(cfg.ob_seat_home), U(cfg.ob_seat_left), U(cfg.ob_seat_stride)
    for j in range(N):
        p = seat + j
        if p >= N:
            p -= N
        vis = U(visited[U(p)])
        h = U(home[U(p)])
        _bits_out(out, o, vis, tt)
        seen = popcount(vis) - ((vis >> h) & U(1))  # the home is never needed
        out[o + s_home] = h
        out[o + s_left] = np.int64(T) - 1 - np.int64(seen)
        o += s_stride
    _bits_out(out, U(cfg.ob_loop_towns), U(rec.loop_towns), tt)
    _turn_out(rec, cfg, out)
