"""A seat's observation (C4), written by the observation layout (``layout.obs_layout``).

Nothing is hidden but the generator (the future dice); the row is seen from the
observing seat (me first, the others in turn order). Every field is written at its
layout offset ``cfg.ob_<field>`` (the Game fills them from the layout); the rules
page's table is generated from the same layout. Entries are uint8: flags, one-hots
and small counts with exact bounds.

The derived features (the rules page, "Derived features"):

- per seat, ``dist`` and ``nearest``: the map distance from its car to each town it
  still needs, read from the tables ``cfg.rd8`` and ``cfg.lev`` (built once per map,
  ``tables.fill_distances``);
- ``reach``: at the road ends where my car is, whether it passes a town I still need
  within the moves left on a *free run* (each later move steers it on through the
  far end of an empty road), :func:`free_run`.
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.clock import horizon_left
from trafficenvs.core.jit import kernel
from trafficenvs.core.views import flat
from trafficenvs.jamming_traffic.rules.geometry import can_leave, rb_exit
from trafficenvs.jamming_traffic.rules.layout import (
    MOVE,
    OB_ROAD_NEUTRAL,
    OBS_CAP,
    QLEN,
    STOP,
)
from trafficenvs.jamming_traffic.rules.queues import popcount

U = np.uint64
_ONE = np.uint64(1)
_B32 = np.uint32(1)
_EVEN = np.uint64(0x5555555555555555)

#: ``_BITS8[b, k]``: bit ``k`` of byte ``b`` (0/1), and ``_MASK64[b]`` the 8 bits of ``b``
#: as 8 bytes 0x00/0xFF: bit sets are written 8 entries at a time (``_bits_out``,
#: the seats' visits and distances)
_BITS8 = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.uint8)
_MASK64 = np.array([sum(0xFF << (8 * k) for k in range(8) if b >> k & 1)
                    for b in range(256)], np.uint64)
#: the lowest set bit's index from ``(b & -b) * _DEBRUIJN >> 58`` (no per-bit loop)
_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DEBRUIJN_INDEX = np.zeros(64, np.uint8)
for _k in range(64):
    _DEBRUIJN_INDEX[((1 << _k) * 0x03F79D71B4CB0A89 % 2**64) >> 58] = _k


@kernel
def _lowest(b):
    """The index of the lowest set bit of ``b`` (a nonzero uint64)."""
    return U(_DEBRUIJN_INDEX[((b & (~b + _ONE)) * _DEBRUIJN) >> U(58)])


@kernel(inline="always")
def _flags8(out, o, bits, c):
    """``out[o + 8 c + k] = bit 8 c + k of bits`` for ``k < 8``: one 8-byte store.

    The seat block calls it twice for a map of 9 to 16 towns rather than through
    :func:`_bits_out`'s loop of ``(T + 7) // 8`` turns: with a fixed count LLVM keeps
    the block's values in registers (the batched env ran 2% faster, measured)."""
    row = (bits >> (U(8) * c)) & U(0xFF)
    oc = o + U(8) * c
    for k in range(U(8)):
        out[oc + k] = _BITS8[row, k]


@kernel
def _bits_out(out, o, bits, n):
    """``out[o + t] = bit t of bits`` for ``t < n``, 8 entries at a time.

    Writes up to 7 entries past ``o + n`` (zeros: ``bits`` has no bit from ``n`` on);
    the caller writes what lies there after.
    """
    for c in range((n + U(7)) >> U(3)):
        _flags8(out, o, bits, c)


@kernel(inline="always")
def _dist8(out, o, rd8, need, c):
    """The distances to towns ``8 c .. 8 c + 7`` (``rd8[c]``, a byte each), 0 for the
    towns not in ``need``, at ``out[o + 8 c ..]``: one 8-byte store."""
    dw = rd8[c] & _MASK64[(need >> (U(8) * c)) & U(0xFF)]
    oc = o + U(8) * c
    for k in range(U(8)):
        out[oc + k] = np.uint8((dw >> (U(8) * k)) & U(0xFF))


@kernel
def _spread(x):
    """Each of the 32 low bits of ``x`` twice: bit ``r`` to bits ``2 r`` and ``2 r + 1``
    (a road set to its half-edges)."""
    x = (x | (x << U(16))) & U(0x0000FFFF0000FFFF)
    x = (x | (x << U(8))) & U(0x00FF00FF00FF00FF)
    x = (x | (x << U(4))) & U(0x0F0F0F0F0F0F0F0F)
    x = (x | (x << U(2))) & U(0x3333333333333333)
    x = (x | (x << U(1))) & U(0x5555555555555555)
    return x | (x << _ONE)


@kernel
def _exits(rec, cfg, h):
    """The steered exits of a car at half-edge ``h`` (J7: not back onto its own road;
    at the roundabout only its exit; the one-way road not left through its entry end
    nor entered at its exit end), as a set ``(e0, e1)`` of the half-edges it may
    enter; empty if it may not leave its road there."""
    r = h >> 1
    x = 1 - (h & 1)
    if not can_leave(rec, r, x):
        return U(0), U(0)
    t = cfg.rt[r, x]
    if t == rec.rb_town:
        ex = rb_exit(rec, cfg, r, x)
        if ex < 0:
            return U(0), U(0)
        if ex < 64:
            return _ONE << U(ex), U(0)
        return U(0), _ONE << U(ex - 64)
    # the half-edges entering the roads at t: its arrivals with the end flipped
    a0 = cfg.arr[t, 0]
    a1 = cfg.arr[t, 1]
    e0 = ((a0 >> _ONE) & _EVEN) | ((a0 & _EVEN) << _ONE)
    e1 = ((a1 >> _ONE) & _EVEN) | ((a1 & _EVEN) << _ONE)
    own = 2 * r + x  # its own road, entered again there (the U-turn)
    if own < 64:
        e0 &= ~(_ONE << U(own))
    else:
        e1 &= ~(_ONE << U(own - 64))
    if rec.ow_road >= 0:
        k = 2 * rec.ow_road + 1 - rec.ow_entry
        if k < 64:
            e0 &= ~(_ONE << U(k))
        else:
            e1 &= ~(_ONE << U(k - 64))
    return e0, e1


@kernel
def free_run(rec, cfg, r, x, need, empty, moves):
    """Whether a car at end ``x`` of road ``r``, steered through that end's town,
    passes a town of ``need`` within ``moves`` moves on a free run: the first move by
    J7's steered exits, each further one steering it on through the far end of the
    road it is on, every road after the first one empty (so the car is alone there);
    the run ends at its first needed town, passed by a move with an exit there.

    Breadth first over the half-edges ``2 o + e`` (the car on empty road ``o``,
    entered at end ``e``) the run can be at after each move, as 128-bit sets.
    """
    e0, e1 = _exits(rec, cfg, 2 * r + 1 - x)
    if not (e0 | e1):
        return 0
    if (need >> np.uint32(cfg.rt[r, x])) & _B32:
        return 1
    c0 = _spread(empty & U(0xFFFFFFFF))  # the half-edges of the empty roads
    c1 = _spread(empty >> U(32))
    f0 = e0 & c0  # after the first move: alone on an empty road
    f1 = e1 & c1
    s0 = f0
    s1 = f1
    used = 1
    while (f0 | f1) and used < moves:
        n0 = U(0)
        n1 = U(0)
        for w in range(2):
            rest = f0 if w == 0 else f1
            while rest:
                h = 64 * w + np.int64(_lowest(rest))
                rest &= rest - _ONE
                x0, x1 = _exits(rec, cfg, h)
                if (x0 | x1) and (need >> np.uint32(cfg.ht[h ^ 1])) & _B32:
                    return 1  # the next move passes a needed town
                n0 |= x0
                n1 |= x1
        f0 = n0 & c0 & ~s0
        f1 = n1 & c1 & ~s1
        s0 |= f0
        s1 |= f1
        used += 1
    return 0


# ----------------------------------------------------------------------------- the row


@kernel
def observe(rec, cfg, seat, out):
    """Seat ``seat``'s view (C4), field by field of the observation layout.

    One function for the fields written per entry (numba calls between compiled
    functions are real calls, each costing about as much as a short loop): the road
    fields; then everything after them is zeroed and the set entries of the flags,
    one-hots and counts are stored, seat by seat (each car found through the index
    ``car_road``); then ``reach`` (:func:`free_run` at my car's ends) and the turn
    fields. Bit sets are written 8 entries at a time from tables, the dice from a
    per-face table; indices are unsigned (numba then emits no negative-index
    wraparound, so LLVM keeps plain, merged or vectorised stores).
    """
    N = cfg.num_players
    R = U(cfg.n_roads)
    T = U(cfg.n_towns)
    qf = flat(rec.q)  # the queues as one run: road r's place i at QLEN r + i, -1 empty
    cnt = rec.cnt
    # fields "road_neutral" and "road_cars"
    n = U(QLEN) * R
    for k in range(n):
        out[U(OB_ROAD_NEUTRAL) + k] = qf[k] == 0
    o = U(cfg.ob_road_cars)
    empty = U(0)
    for r in range(R):
        c = cnt[r]
        out[o + r] = c
        empty |= U(c == 0) << r
    for k in range(U(cfg.ob_seats), U(cfg.obs_size)):
        out[k] = 0
    # field "seats": per relative seat j (seat p) its car (road, slot, ends,
    # distances), visits, home and towns left
    o0 = U(cfg.ob_seats)
    stride = U(cfg.ob_seat_stride)
    s_road, s_slot = U(cfg.ob_seat_road), U(cfg.ob_seat_slot)
    s_ends, s_dist = U(cfg.ob_seat_ends), U(cfg.ob_seat_dist)
    s_near = U(cfg.ob_seat_nearest)
    s_vis, s_home = U(cfg.ob_seat_visited), U(cfg.ob_seat_home)
    s_left = U(cfg.ob_seat_towns_left)
    all_towns = U(cfg.all_towns)
    chunks = (T + U(7)) >> U(3)
    dist_high = U(cfg.dist_high)
    b = o0
    for j in range(N):
        p = seat + j
        if p >= N:
            p -= N
        vis = U(rec.visited[U(p)])
        h = U(rec.home[U(p)])
        need = all_towns & ~(_ONE << h) & ~vis
        ov = b + s_vis  # 8 flags at a time: the spill goes onto "home" (zeros)
        if chunks == U(2):  # up to 16 towns (every shipped map): a fixed count
            _flags8(out, ov, vis, U(0))
            _flags8(out, ov, vis, _ONE)
        else:
            _bits_out(out, ov, vis, T)
        out[b + s_home + h] = 1
        seen = popcount(vis) - ((vis >> h) & _ONE)  # the home is never needed
        out[b + s_left] = T - _ONE - seen
        cr = rec.car_road[U(p + 1)]
        if cr >= 0:  # its car is on the board (not during set-up before its choice)
            r = U(cr)
            car = np.int8(p + 1)
            # its place on the road (car_road says it is there), without a branch:
            # the slot is unpredictable, and a mispredicted loop exit cost more
            qr = U(QLEN) * r
            i = (U(qf[qr + U(1)] == car) + U(2) * U(qf[qr + U(2)] == car)
                 + U(3) * U(qf[qr + U(3)] == car) + U(4) * U(qf[qr + U(4)] == car))
            out[b + s_road + r] = 1
            out[b + s_slot + i] = 1
            out[b + s_ends] = i == U(0)
            out[b + s_ends + _ONE] = i == U(cnt[r] - 1)
            # its distances, 8 towns a word masked by the needed ones; up to 7 zeros
            # past the part (rd8 and need are 0 from T on) onto "nearest", written
            # below, and the next repeat's "visited", written in the next iteration
            od = b + s_dist
            if chunks == U(2):
                _dist8(out, od, cfg.rd8[r], need, U(0))
                _dist8(out, od, cfg.rd8[r], need, _ONE)
            else:
                for c in range(chunks):
                    _dist8(out, od, cfg.rd8[r], need, c)
            # the least distance with a needed town at it (0: none): 1 + the number
            # of distances short of it, counted over the cumulative town sets without
            # a branch (the first level that has one is unpredictable)
            some = U(need != U(0))
            near = some
            within = U(0)
            for d in range(_ONE, dist_high):
                within |= U(cfg.lev[r, d])
                near += U((within & need) == U(0)) & some
            out[b + s_near] = near
        b += stride
    # field "reach": at the ends where my car is (it may be taken there), whether it
    # passes a town I still need within the moves left on a free run (free_run);
    # move phase, my turn; else all 0
    if rec.phase == MOVE and seat == rec.cur:
        need = cfg.all_towns & ~(_B32 << np.uint32(rec.home[seat])) & ~rec.visited[seat]
        cr = rec.car_road[seat + 1]
        if need != 0 and cr >= 0:
            r = U(cr)
            car = np.int8(seat + 1)
            o = U(cfg.ob_reach) + U(2) * r
            ml = rec.moves_left
            if qf[U(QLEN) * r] == car:
                out[o] = free_run(rec, cfg, r, 0, need, empty, ml)
            if qf[U(QLEN) * r + U(cnt[r] - 1)] == car:
                out[o + _ONE] = free_run(rec, cfg, r, 1, need, empty, ml)
    # the paused jam, phase, moves left, dice, pending placements, the pieces and the
    # clocks
    ph = rec.phase
    if ph == STOP:  # the loop's spill: onto "jam_road" (zeros), set below
        _bits_out(out, U(cfg.ob_loop_towns), U(rec.loop_towns), U(cfg.n_towns))
        out[U(cfg.ob_jam_road) + U(rec.js_road)] = 1
        out[U(cfg.ob_jam_end) + U(rec.js_end)] = 1
    out[U(cfg.ob_phase) + U(ph)] = 1
    out[U(cfg.ob_moves_left)] = rec.moves_left
    o = U(cfg.ob_dice)
    fo = cfg.face_obs  # per face + 1 (0: not rolled) its 3 entries, no branch
    for d in range(U(2)):
        f = U(rec.dice[d] + 1)
        for k in range(U(3)):
            out[o + U(3) * d + k] = fo[f, k]
    o = U(cfg.ob_pending)
    out[o] = rec.pend_rb
    out[o + U(1)] = rec.pend_ow
    if rec.rb_town >= 0:
        out[U(cfg.ob_roundabout_town) + U(rec.rb_town)] = 1
        out[U(cfg.ob_roundabout_dir) + U(rec.rb_dir)] = 1
    if rec.ow_road >= 0:
        out[U(cfg.ob_one_way_road) + U(rec.ow_road)] = 1
        out[U(cfg.ob_one_way_entry) + U(rec.ow_entry)] = 1
    turn = np.int64(rec.turn)
    mt = cfg.max_turns
    if mt > 0:
        cap = min(mt, OBS_CAP)
        out[U(cfg.ob_turn)] = min(turn, cap)
        out[U(cfg.ob_turns_left)] = min(max(mt - turn, 0), cap)
    else:
        out[U(cfg.ob_turn)] = min(turn, OBS_CAP)
        out[U(cfg.ob_turns_left)] = OBS_CAP
    out[U(cfg.ob_horizon_left)] = horizon_left(rec.moves, cfg.horizon)
