"""Whether a move's jam may be played (J7's last rule, J8's full loops), for the masks.

A move is illegal when the jam it starts would push a car that has no legal exit (J7)
or is endless with no road to leave at 4 (a *full loop*, J8; the rules page). Both are
rare: :func:`jam_check_needed` says when they are possible at all, and only then are
jams checked. Every check follows the chain with the one walk of ``jams.py``
(:func:`~trafficenvs.jamming_traffic.rules.jams.walk_chain`), on three sets of counts:

- the live counts before the move (:func:`move_ok_full`; the move's source road one
  car short), for a jam that meets no held road (one chain);
- the same counts through ``legal_mask``'s memo (:func:`chain_code`), shared by every
  move that starts the same jam;
- scratch counts ``sc_cnt``/``sc_held``/``sc_laste`` (:func:`sim_jam`) when a held
  road is involved: the jam may then run in several chains (a held road that took a
  car jams again, J8), and each chain's effect is applied before the next is walked.
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.jit import kernel
from trafficenvs.core.views import as_words
from trafficenvs.jamming_traffic.rules.geometry import pushed_exit
from trafficenvs.jamming_traffic.rules.jams import (
    WALK_DEAD_END,
    WALK_ENDLESS,
    WALK_HELD,
    WALK_KNOWN,
    next_chain,
    walk_chain,
)
from trafficenvs.jamming_traffic.rules.layout import (
    CH_DEAD_END,
    CH_HELD,
    CH_PLAYS_OUT,
    CH_UNKNOWN,
    MAX_ROADS,
)


@kernel
def dead_end_possible(rec, cfg):
    """Whether some jam could push a car that has no legal exit (J7's last rule).

    A pushed car needs an exit at the town it is pushed through, and every road end
    it may take there is tried (straight-on order, or the roundabout's, the U-turn
    last). Off a two-way road the U-turn is always legal, so such a car always has
    an exit. The only road a car may not U-turn onto is the one-way road (J4: one
    sign at a time), and a car leaves it only through its exit end (it was entered
    at the entry end, a jam pushes the far car); there every other road is two-way
    and so enterable. So a car is stuck only when pushed off the one-way road into
    an exit town of degree 1. The one-way road is pushed from only when it is over
    3: with at most 2 cars on it and no held road (so the jam is a single chain, in
    which no road but the over-full one changes its count) that cannot happen.
    """
    ow = rec.ow_road
    if ow < 0:
        return False
    if cfg.deg[cfg.rt[ow, 1 - rec.ow_entry]] >= 2:
        return False
    if rec.cnt[ow] >= 3:
        return True
    return any_held(rec)


@kernel
def any_held(rec):
    """Whether some road is held, read 8 roads at a time (a road past the map's
    roads is never held)."""
    w = as_words(rec.held)
    s = np.uint64(0)
    for i in range(MAX_ROADS // 8):
        s |= w[i]
    return s != 0


@kernel
def full_loop_possible(rec, cfg):
    """Whether the held roads close a loop of pushes (J8's full loop).

    An endless jam cannot rest as J8 says (one road left with 4) only when every road
    on its loop held 4 before the move: the loop then carries one extra car per road
    plus the one the move brought, so each road a car is pushed onto holds 5. Such a
    loop follows pushed exits (fixed during the move phase: pieces are placed first)
    from a held road through held roads only, back to where it began.
    """
    if not any_held(rec):
        return False
    held = rec.held
    for k in range(cfg.n_roads):
        if not held[k]:
            continue
        for e in range(2):
            h0 = 2 * k + e
            h = h0
            for _ in range(2 * MAX_ROADS):
                h = pushed_exit(rec, cfg, h >> 1, 1 - (h & 1))
                if h < 0 or not held[h >> 1]:
                    break
                if h == h0:
                    return True
    return False


@kernel
def jam_check_needed(rec, cfg):
    """Whether some move's jam could be illegal, so that moves must be simulated.

    Two ways: a dead end (:func:`dead_end_possible`, J7's last rule) or a full loop
    of held roads (:func:`full_loop_possible`, J8). Otherwise every jam plays out.
    """
    return dead_end_possible(rec, cfg) or full_loop_possible(rec, cfg)


@kernel
def move_ok(rec, cfg, r, x, o, oe):
    """J7's last rule (and J8's full loops) for one move: cheap unless a jam can fail.

    A move onto a road with room starts no jam (the first test of
    :func:`move_ok_full`), so that is checked before :func:`jam_check_needed`.
    """
    if rec.cnt[o] + (1 if o != r else 0) <= 3:
        return True
    if not jam_check_needed(rec, cfg):
        return True
    return move_ok_full(rec, cfg, r, x, o, oe)


@kernel
def move_ok_full(rec, cfg, r, x, o, oe):
    """J7's last rule and J8's full loops: the jam a move (the car at end ``x`` of road
    ``r`` onto road ``o`` at its end ``oe``) would start can be played out.

    The common case (no held road involved) walks the chain on the live counts
    without copying them, the move's source road one car short. A held road on the
    way means the jam may come in several chains; that rare case is played out on
    scratch counts (:func:`sim_jam`).
    """
    extra = 1 if o != r else 0
    if rec.cnt[o] + extra <= 3:
        return True
    kind, _, _ = walk_chain(rec, cfg, o, oe, False, r if extra == 1 else -1, True, False)
    if kind == WALK_DEAD_END:
        return False
    if kind != WALK_HELD:
        return True  # it ends, or is endless without a held road (so it can rest)
    for k in range(cfg.n_roads):
        rec.sc_cnt[k] = rec.cnt[k]
        rec.sc_held[k] = rec.held[k]
    rec.sc_cnt[r] -= 1
    if rec.sc_held[r]:
        rec.sc_held[r] = 0
    # a held target takes its 5th car: after this chain it jams again from its
    # last-entered end (J8), so the simulation must run that second chain too
    target_held = rec.sc_held[o] != 0
    rec.sc_cnt[o] += 1
    rec.sc_held[o] = 0
    rec.sc_laste[o] = oe
    if rec.sc_cnt[o] <= 3:
        return True
    return sim_jam(rec, cfg, o, oe, target_held)


@kernel
def _push_counts(rec, cfg, r, e, pushes):
    """Play ``pushes`` pushes of a walked chain from state (r, e) on the scratch counts:
    each moves one count on, notes the entered road's last-entered end and unholds a
    held road it feeds. Returns (a held road was fed (``disturbed``), the state then)."""
    disturbed = False
    for _ in range(pushes):
        ex = pushed_exit(rec, cfg, r, 1 - e)
        nr = ex >> 1
        rec.sc_cnt[r] -= 1
        rec.sc_cnt[nr] += 1
        rec.sc_laste[nr] = ex & 1
        if rec.sc_held[nr]:
            rec.sc_held[nr] = 0
            disturbed = True
        r = nr
        e = ex & 1
    return disturbed, r, e


@kernel
def loop_can_rest(rec, cfg, r, e):
    """Whether the endless chain at state (road ``r`` over 3, entered at ``e``) can stop.

    On the scratch counts, one lap from that state (the counts repeat every lap: each
    state of the loop takes one car in and pushes one out). J8's stop leaves the road
    the car went onto with 4 cars, so the loop can rest iff some push on it takes a
    road to exactly 4. It cannot when every road of the loop was held before the move
    (a *full loop*: each road entered holds 5); such a move is illegal (see the rules
    page, J8).
    """
    h0 = 2 * r + e
    rr = r
    ee = e
    for _ in range(2 * MAX_ROADS + 1):
        ex = pushed_exit(rec, cfg, rr, 1 - ee)
        if ex < 0:
            return False
        nr = ex >> 1
        rec.sc_cnt[rr] -= 1
        rec.sc_cnt[nr] += 1
        if rec.sc_cnt[nr] <= 4:
            return True
        rr = nr
        ee = ex & 1
        if 2 * rr + ee == h0:
            return False
    return False


@kernel
def sim_jam(rec, cfg, cur, cur_e, disturbed):
    """Whether a jam starting at road ``cur`` (over 3) can be played out (J7, J8).

    Works on the scratch counts ``sc_cnt``/``sc_held``/``sc_laste`` (set by the
    caller), chain by chain as :func:`~trafficenvs.jamming_traffic.rules.jams.jam` plays
    them: each chain is walked (the shared walk, on the scratch counts), then its
    pushes are applied to the counts. An endless chain is legal when it can rest as
    J8 says (the mover stops it there, :func:`loop_can_rest`). ``disturbed``: a held
    road has already taken a car (the move's own target, when it was held): it jams
    again once this chain is over.
    """
    while True:
        kind, _, n = walk_chain(rec, cfg, cur, cur_e, True, cur, False, False)
        if kind == WALK_DEAD_END:
            _push_counts(rec, cfg, cur, cur_e, n - 1)  # the scratch as the pushes leave it
            return False
        fed, r, e = _push_counts(rec, cfg, cur, cur_e, n)
        if kind == WALK_ENDLESS:
            return loop_can_rest(rec, cfg, r, e)
        if not (disturbed or fed):
            return True
        disturbed = True
        cur, cur_e = next_chain(rec.sc_cnt, rec.sc_held, rec.sc_laste, cfg.n_roads)
        if cur < 0:
            return True


@kernel
def chain_code(rec, cfg, o, oe):
    """Memo for ``legal_mask``: the jam of one more car entering full road ``o`` at ``oe``.

    Walked on the counts as they are (no car taken off anywhere). A move from road
    ``r`` that starts this jam is legal unless the jam dead-ends before it reaches
    ``r`` (which, one car short, takes the pushed car in): so a dead end is stored
    with the set of roads reached before it. Every state the walk passes gets its
    code too (the jam from there on is the same), so one mask walks each state once.
    Returns the ``CH_*`` code (layout.py).
    """
    h0 = 2 * o + oe
    code = rec.ch_code[h0]
    if code != CH_UNKNOWN:
        return code
    kind, h, n = walk_chain(rec, cfg, o, oe, False, -1, True, True)
    code = CH_PLAYS_OUT  # it ends, or is endless (met its own walk again): legal
    tail = np.uint64(0)  # roads reached after the last state, for an inherited dead end
    if kind == WALK_KNOWN:
        code = rec.ch_code[h]
        if code == CH_DEAD_END:
            tail = rec.ch_roads[h] | (np.uint64(1) << np.uint64(h >> 1))
    elif kind == WALK_DEAD_END:
        code = CH_DEAD_END
    elif kind == WALK_HELD:
        code = CH_HELD
    # states on the path, last first: a dead end's road set grows backwards (the
    # road sets are written for dead ends only, to keep the memo's memory small)
    if code == CH_DEAD_END:
        roads = tail
        for i in range(n - 1, -1, -1):
            h = rec.ch_path[i]
            rec.ch_code[h] = CH_DEAD_END
            rec.ch_roads[h] = roads
            roads |= np.uint64(1) << np.uint64(h >> 1)
    else:
        for i in range(n):
            rec.ch_code[rec.ch_path[i]] = code
    return code
