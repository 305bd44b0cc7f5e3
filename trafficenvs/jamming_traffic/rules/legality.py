"""The legal actions (C3): ``is_legal`` for one action, ``legal_mask`` for all of them.

Set-up (J3), placements (J4) and stop towns (J8) are read off the record. A move (J5)
is legal when its car may be taken (neutral or the mover's, at a road end, J2), may
leave its road there and enter its exit (J7: one-way sign, roundabout, no U-turn when
steered), and its jam can be played out (J7's last rule, J8's full loops:
``jam_check.py``). The mask has two paths with one result: the fast one
(:func:`mask_without_dead_ends`) when no jam can be illegal, else
:func:`legal_mask_exhaustive`.
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.jit import kernel
from trafficenvs.core.views import as_bytes
from trafficenvs.jamming_traffic.rules.geometry import can_enter, can_leave, rb_exit
from trafficenvs.jamming_traffic.rules.jam_check import (
    chain_code,
    jam_check_needed,
    move_ok,
    move_ok_full,
)
from trafficenvs.jamming_traffic.rules.layout import (
    CH_DEAD_END,
    CH_PLAYS_OUT,
    CH_UNKNOWN,
    MAX_PLAYERS,
    MOVE,
    OVER,
    PLACE,
    QLEN,
    SETUP,
    STOP,
)


@kernel
def move_legal(rec, cfg, r, x, k):
    """Move the car at end ``x`` of road ``r`` onto the k-th road of that end's town."""
    n = rec.cnt[r]
    if n == 0:
        return False
    car = rec.q[r, 0] if x == 0 else rec.q[r, n - 1]
    if car != 0 and car != rec.cur + 1:
        return False
    if not can_leave(rec, r, x):
        return False
    t = cfg.rt[r, x]
    o = cfg.inc[t, k]
    oe = cfg.inc_end[t, k]
    if t == rec.rb_town:
        if rb_exit(rec, cfg, r, x) != 2 * o + oe:
            return False
    elif o == r or not can_enter(rec, o, oe):
        return False
    return move_ok(rec, cfg, r, x, o, oe)


@kernel
def is_legal(rec, cfg, action):
    """Whether ``action`` is legal (the same decision as the mask's entry)."""
    ph = rec.phase
    if ph == OVER or action < 0 or action >= cfg.num_actions:
        return False
    if ph == SETUP:
        a = action - cfg.a_setup
        if a < 0 or a >= cfg.n_roads:
            return False
        h = rec.home[rec.cur]
        return cfg.rt[a, 0] == h or cfg.rt[a, 1] == h
    if ph == PLACE:
        if rec.pend_rb and cfg.a_rb <= action < cfg.a_ow:
            return True
        return bool(rec.pend_ow) and cfg.a_ow <= action < cfg.a_setup
    if ph == STOP:
        a = action - cfg.a_stop
        if a < 0 or a >= cfg.n_towns:
            return False
        return ((rec.loop_towns >> np.uint32(a)) & np.uint32(1)) == 1
    # MOVE
    if action == cfg.a_end:
        return True
    if action >= cfg.n_moves:
        return False
    return move_legal(rec, cfg, cfg.mv_road[action], cfg.mv_end[action], cfg.mv_k[action])


@kernel
def _mask_not_moving(rec, cfg, out):
    """The mask of the set-up, place and stop phases (``out`` zeroed)."""
    ph = rec.phase
    if ph == SETUP:
        h = rec.home[rec.cur]
        for r in range(cfg.n_roads):
            if cfg.rt[r, 0] == h or cfg.rt[r, 1] == h:
                out[cfg.a_setup + r] = 1
    elif ph == PLACE:
        if rec.pend_rb:
            for a in range(cfg.a_rb, cfg.a_ow):
                out[a] = 1
        if rec.pend_ow:
            for a in range(cfg.a_ow, cfg.a_setup):
                out[a] = 1
    elif ph == STOP:
        for t in range(cfg.n_towns):
            if (rec.loop_towns >> np.uint32(t)) & np.uint32(1):
                out[cfg.a_stop + t] = 1


@kernel
def _moves_from(rec, cfg, out, r, x):
    """Mark the legal moves of the car at end ``x`` of road ``r`` (it may be taken and
    leave there), reading the jams' memo."""
    t = cfg.rt[r, x]
    base = cfg.mv_base[r, x]
    if t == rec.rb_town:
        ex = rb_exit(rec, cfg, r, x)
        if ex >= 0:
            o = ex >> 1
            if move_ok_full(rec, cfg, r, x, o, ex & 1):
                out[base + cfg.pos[o, ex & 1]] = 1
        return
    for k in range(cfg.deg[t]):
        o = cfg.inc[t, k]
        if o == r:
            continue
        oe = cfg.inc_end[t, k]
        if not can_enter(rec, o, oe):
            continue
        if rec.cnt[o] < 3:
            out[base + k] = 1
            continue
        code = rec.ch_code[2 * o + oe]
        if code == CH_PLAYS_OUT:
            out[base + k] = 1
        elif code == CH_DEAD_END:
            if (rec.ch_roads[2 * o + oe] >> np.uint64(r)) & np.uint64(1):
                out[base + k] = 1
        elif move_ok_full(rec, cfg, r, x, o, oe):
            out[base + k] = 1


@kernel
def legal_mask_exhaustive(rec, cfg, out):
    """The reference mask: every move onto a full road has its jam checked (J7, J8).

    Each jam state is walked at most once per call: the outcome of a jam started by
    one more car on a full road is memoised per (road, entry end) by
    :func:`~trafficenvs.jamming_traffic.rules.jam_check.chain_code`, shared by every move
    that starts it. Used by :func:`legal_mask` when a jam can be illegal, and kept
    (compiled) so tests can check the fast path against it.
    """
    out[:] = 0
    ph = rec.phase
    if ph == OVER:
        return
    if ph != MOVE:
        _mask_not_moving(rec, cfg, out)
        return
    out[cfg.a_end] = 1
    me = rec.cur + 1
    for h in range(2 * cfg.n_roads):
        rec.ch_code[h] = CH_UNKNOWN
    # every jam a move could start, walked once up front (each state at most once)
    for o in range(cfg.n_roads):
        if rec.cnt[o] >= 3:
            for oe in range(2):
                if rec.ch_code[2 * o + oe] == CH_UNKNOWN:
                    chain_code(rec, cfg, o, oe)
    for r in range(cfg.n_roads):
        n = rec.cnt[r]
        if n == 0:
            continue
        for x in range(2):
            car = rec.q[r, 0] if x == 0 else rec.q[r, n - 1]
            if car != 0 and car != me:
                continue
            if not can_leave(rec, r, x):
                continue
            _moves_from(rec, cfg, out, r, x)


@kernel
def legal_mask(rec, cfg, out):
    """The legal actions (C3). Same result as :func:`legal_mask_exhaustive`, faster.

    Unless :func:`~trafficenvs.jamming_traffic.rules.jam_check.jam_check_needed` (a one-way
    road into a dead-end town, or held roads closing a loop), no jam can break J7's
    last rule or J8's stop, so a move is legal when its car may be taken and its exit
    entered: no jam is simulated.
    """
    if rec.phase != MOVE or jam_check_needed(rec, cfg):
        legal_mask_exhaustive(rec, cfg, out)
        return
    mask_without_dead_ends(rec, cfg, out)


@kernel
def _end1_slot(n):
    """The queue slot of the car at end 1 of a road holding ``n`` cars, branch-free:
    ``n - 1``, or for an empty road its last slot, which holds -1 (empty) like every
    slot past a road's cars."""
    m = np.int64(n) - 1
    return np.uint64(m + (QLEN & (m >> 63)))


#: ``_MOVABLE[me, car + 1]``: all ones if player ``me`` (seat + 1) may take ``car``
#: (a neutral car or their own), else 0; ``car`` -1 (an empty slot) gives 0
_MOVABLE = np.zeros((MAX_PLAYERS + 1, 16), np.uint64)
_MOVABLE[1:, 1] = ~np.uint64(0)
_MOVABLE[np.arange(1, MAX_PLAYERS + 1), np.arange(2, MAX_PLAYERS + 2)] = ~np.uint64(0)


@kernel
def mask_without_dead_ends(rec, cfg, out):
    """The MOVE-phase mask when no jam can be illegal (see :func:`legal_mask`).

    A move is legal when its car may be taken (neutral or the mover's, at a road
    end, not through a one-way road's entry end) and its exit entered: every road at
    the town but the one it came from and the one-way road's exit end, or the
    roundabout's exit. Written with few branches (which car sits at an end is
    unpredictable): the moves of road end ``(r, x)`` are the slots
    ``mv_base[r, x] + k`` in increasing ``(r, x)`` order, so each end's block is
    written as one 8-byte word, the end's precomputed pattern ``cfg.mv_tpl[r, x]``
    (every road at the town but the U-turn) or 0 (the spill is overwritten by the
    next block, the last one's by the zeroed actions after the moves); then the
    pieces are fixed up, the roundabout's town (:func:`_fix_roundabout`), then the
    one-way road (:func:`_fix_one_way`). The fix-ups run after the loop rather than
    in it: a call in the loop's body made it keep its values on the stack (measured:
    the mask took 105 ns with the roundabout in the loop, 88 ns with the fix-ups).
    Public so tests can show that the dead-end corner matters where the simulation
    is kept.
    """
    me = np.uint64(rec.cur + 1)
    q = rec.q
    cnt = rec.cnt
    mv_base = cfg.mv_base
    tpl = cfg.mv_tpl
    o8 = as_bytes(out)  # a no-copy view (numba's view costs more than this loop)
    # unsigned indices: numba then skips the negative-index wraparound, which lets
    # LLVM merge the 8 byte stores of a block into one 8-byte store
    for rd in range(np.uint64(cfg.n_roads)):
        c0 = np.int64(q[rd, np.uint64(0)])
        c1 = np.int64(q[rd, _end1_slot(cnt[rd])])
        w0 = tpl[rd, np.uint64(0)] & _MOVABLE[me, np.uint64(c0 + 1)]
        w1 = tpl[rd, np.uint64(1)] & _MOVABLE[me, np.uint64(c1 + 1)]
        _put8(o8, np.uint64(mv_base[rd, np.uint64(0)]), w0)
        _put8(o8, np.uint64(mv_base[rd, np.uint64(1)]), w1)
    for ai in range(np.uint64(cfg.n_moves), np.uint64(cfg.num_actions)):
        o8[ai] = 0
    out[cfg.a_end] = 1
    if rec.rb_town >= 0:
        _fix_roundabout(rec, cfg, o8, me)
    if rec.ow_road >= 0:
        _fix_one_way(rec, cfg, o8)


#: ``_LOW[d]``: the low ``d`` bytes of a word set (a road end's block of ``d`` moves)
_LOW = np.array([(1 << (8 * d)) - 1 for d in range(9)], np.uint64)


@kernel(inline="always")
def _get8(o8, b):
    """The 8 mask bytes from ``b`` on as a little-endian word (LLVM merges the byte
    loads into one load)."""
    w = np.uint64(0)
    for k in range(8):
        w |= np.uint64(o8[b + np.uint64(k)]) << np.uint64(8 * k)
    return w


@kernel(inline="always")
def _put8(o8, b, w):
    """Store word ``w`` as the 8 mask bytes from ``b`` on (one 8-byte store)."""
    for k in range(8):
        o8[b + np.uint64(k)] = np.uint8(w >> np.uint64(8 * k))


@kernel(inline="always")
def _fix_roundabout(rec, cfg, o8, me):
    """The fast mask's roundabout fix-up: a car leaving a road at the roundabout's
    town takes its exit only (J7), the next road round in the roundabout's direction,
    or the one after it when the next is the one-way road's exit end (the same exit
    as :func:`~trafficenvs.jamming_traffic.rules.geometry.rb_exit`; at a town of degree 1
    or 2 the second try is the car's own road). Each such end's block of ``deg``
    bytes is rewritten through a word, the bytes past it kept (a plain word would
    spill onto the next block, already written; a byte loop of ``deg`` iterations
    mispredicted its exit). The car that may not leave through the one-way road's
    entry end is left to :func:`_fix_one_way`, which runs after and zeroes that block.
    """
    t = rec.rb_town
    d = np.int64(cfg.deg[t])
    kx = np.int64(-1)  # the place at t of the one-way road's exit end, if it is there
    ow = rec.ow_road
    if ow >= 0:
        xe = 1 - rec.ow_entry
        if cfg.rt[ow, xe] == t:
            kx = np.int64(cfg.pos[ow, xe])
    step = np.int64(1) if rec.rb_dir == 0 else d - 1  # the next place round
    low = _LOW[d]
    for p in range(d):  # the road end at place p of t
        e = p + step
        if e >= d:
            e -= d
        if e == kx:
            e += step
            if e >= d:
                e -= d
        w = np.uint64(0) if e == kx else np.uint64(1) << np.uint64(8 * e)
        r = np.uint64(cfg.inc[t, p])
        x = np.uint64(cfg.inc_end[t, p])
        s = np.uint64(0) if x == 0 else _end1_slot(rec.cnt[r])
        w &= _MOVABLE[me, np.uint64(np.int64(rec.q[r, s]) + 1)]
        b = np.uint64(cfg.mv_base[r, x])
        _put8(o8, b, (w & low) | (_get8(o8, b) & ~low))


@kernel(inline="always")
def _fix_one_way(rec, cfg, o8):
    """The fast mask's one-way fix-up: no car leaves the one-way road through its entry
    end, nor enters it at its exit end (J7)."""
    rt = cfg.rt
    deg = cfg.deg
    inc = cfg.inc
    inc_end = cfg.inc_end
    mv_base = cfg.mv_base
    ow = rec.ow_road
    x = rec.ow_entry
    b = np.uint64(mv_base[ow, x])  # no car leaves through the entry end
    _put8(o8, b, _get8(o8, b) & ~_LOW[deg[rt[ow, x]]])
    t = rt[ow, 1 - x]
    kk = np.uint64(cfg.pos[ow, 1 - x])
    for j in range(deg[t]):  # nor enters at the exit end
        o8[np.uint64(mv_base[inc[t, j], inc_end[t, j]]) + kk] = 0
