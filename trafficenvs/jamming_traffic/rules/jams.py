"""Jams (J6-J8): the one chain walk, the real jam, endless loops, laps at once, stops.

A jam runs as *chains*: the over-full road ``cur`` (entered last at end ``cur_e``)
pushes its far car through the town at its other end onto the next road (J7); if that
road now holds more than 3 it is the new over-full road. During a chain every road
but the over-full one keeps its count, so each push's outcome is a function of the
*state* ``(cur, cur_e)`` and of the counts at the chain's start: a road ``nr`` the
pushed car joins overflows iff it held 3 or more before, the chain's first road
counted one car short (its car was pushed on). :func:`walk_chain` is that rule, the
only copy of it: the real jam (:func:`jam`) asks it whether a chain ends, is endless
(a state repeats, which a 128-bit set detects with no history) or dead-ends, and the
legality check (``jam_check.py``) asks it the same on the live counts before a move,
on the memo of ``legal_mask`` and on its scratch counts.

The full configuration (who is where) returns to an endless chain's first repeated
state after a whole number of laps (the pushes on a loop are invertible); :func:`jam`
plays those laps (crediting every town a car passes) and then pauses for the mover's
stop town (J8, :func:`stop_jam`). On a loop through distinct roads the laps' outcome is
known without playing them (:func:`play_laps_at_once`): that keeps endless jams cheap.

A road left with 4 cars by an endless jam is *held* (``held[r] = 1``); a car entering
it starts its jam again (it then clears to 3, J8). A held road that takes a car during
a stop holds 5 and keeps jamming, so no road is left above 4.
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.jit import kernel
from trafficenvs.jamming_traffic.rules.geometry import pushed_exit
from trafficenvs.jamming_traffic.rules.layout import (
    CH_UNKNOWN,
    CH_WALKING,
    MAX_CHAIN_PUSHES,
    MAX_ROADS,
    MOVE,
    QLEN,
    STOP,
)
from trafficenvs.jamming_traffic.rules.queues import needed_towns, popcount, put, take, visit

#: what :func:`walk_chain` found (its first result)
WALK_ENDS = 0  # the pushed car joins a road with room: the chain is over
WALK_ENDLESS = 1  # a state repeats (the second result is that state): an endless jam
WALK_DEAD_END = 2  # a pushed car has no legal exit (J7's last rule)
WALK_HELD = 3  # (``held_ends``) the chain reaches a held road
WALK_KNOWN = 4  # (``memo``) the chain reaches a state whose ``ch_code`` is known

# ----------------------------------------------------------------------------- the walk


@kernel
def walk_chain(rec, cfg, r, e, scratch, less, held_ends, memo):
    """Follow one chain from state (over-full road ``r``, entered at ``e``), moving no car.

    The counts are those at the chain's start: the live ``rec.cnt``, or with
    ``scratch`` the legality simulation's ``rec.sc_cnt`` (a flag rather than the
    array: passing a record field as an array measured slower in the step), with road
    ``less`` counted one car short (the chain's first road, whose car is pushed on; or
    the road a move takes its car from, when the counts are those before the move; -1
    none). A road overflows when it held 3
    or more before the pushed car joined it (J6).

    Returns ``(kind, h, n)``: a ``WALK_*`` kind; ``h`` the repeated state (endless),
    the exit the chain ends on (ends), or the state where the walk stopped; ``n`` the
    states walked (the chain's pushes: ``n`` when it ends or repeats, ``n - 1`` before
    a dead end). ``held_ends`` stops at a held road; ``memo`` (legal_mask's memo)
    stops at a state whose ``ch_code`` is known, marks the walked ones
    ``CH_WALKING`` and lists them in ``rec.ch_path[:n]``.
    """
    v0 = np.uint64(0)
    v1 = np.uint64(0)
    n = 0
    while True:
        h = 2 * r + e
        if h < 64:
            b = np.uint64(1) << np.uint64(h)
            if v0 & b:
                return WALK_ENDLESS, h, n
            v0 |= b
        else:
            b = np.uint64(1) << np.uint64(h - 64)
            if v1 & b:
                return WALK_ENDLESS, h, n
            v1 |= b
        if memo:
            if rec.ch_code[h] != CH_UNKNOWN:
                return WALK_KNOWN, h, n
            rec.ch_code[h] = CH_WALKING
            rec.ch_path[n] = h
        n += 1
        if held_ends and rec.held[r]:
            return WALK_HELD, h, n
        ex = pushed_exit(rec, cfg, r, 1 - e)
        if ex < 0:
            return WALK_DEAD_END, h, n
        nr = ex >> 1
        c = rec.sc_cnt[nr] if scratch else rec.cnt[nr]
        if c - (1 if nr == less else 0) < 3:
            return WALK_ENDS, ex, n
        r = nr
        e = ex & 1


@kernel
def next_chain(cnt, held, laste, n_roads):
    """The next chain of a jam that fed a held road (J8): the first road over 3 cars
    that is not held and the end it was last entered at, or (-1, -1); on the live or
    the scratch counts."""
    for k in range(n_roads):
        if cnt[k] > 3 and held[k] == 0:
            return k, np.int64(laste[k])
    return -1, np.int64(-1)


# ----------------------------------------------------------------------------- loops


@kernel
def loop_towns_of(rec, cfg, r, e):
    """Town set of the endless loop through state (road r, entered at e): the legal
    stop towns (J8). Public: the state dict loader and the greedy player use it."""
    towns = np.uint32(0)
    h0 = 2 * r + e
    h = h0
    for _ in range(2 * MAX_ROADS + 1):
        rr = h >> 1
        x = 1 - (h & 1)
        towns |= np.uint32(1) << np.uint32(cfg.rt[rr, x])
        h = pushed_exit(rec, cfg, rr, x)
        if h == h0 or h < 0:
            break
    return towns


@kernel
def loop_roads(rec, cfg, r, e):
    """Road set of the endless loop through state (road r, entered at e).

    Only these roads change while the loop's laps are played, so comparing them with
    the snapshot compares the whole configuration.
    """
    roads = np.uint64(0)
    h0 = 2 * r + e
    h = h0
    for _ in range(2 * MAX_ROADS + 1):
        rr = h >> 1
        roads |= np.uint64(1) << np.uint64(rr)
        h = pushed_exit(rec, cfg, rr, 1 - (h & 1))
        if h == h0 or h < 0:
            break
    return roads


@kernel
def _snapshot(rec, cfg):
    """``snap`` := the queues (the configuration at an endless loop's first state)."""
    q = rec.q
    snap = rec.snap
    for k in range(cfg.n_roads):
        for i in range(QLEN):
            snap[k, i] = q[k, i]


@kernel
def _same_config(rec, cfg, roads):
    """The roads in road set ``roads`` hold what the snapshot holds."""
    q = rec.q
    snap = rec.snap
    while roads:
        r = 0
        b = roads
        while not b & np.uint64(1):  # lowest set bit
            b >>= np.uint64(1)
            r += 1
        roads &= roads - np.uint64(1)
        for i in range(QLEN):
            if q[r, i] != snap[r, i]:
                return False
    return True


@kernel
def _ring(rec, cfg, h0):
    """The loop from state ``h0`` if it is a ring (passes each road once):
    ``(ok, towns, players)``, its town set and the seats (bit set) with a car on it."""
    h = h0
    roads = np.uint64(0)
    towns = np.uint32(0)
    players = 0
    for _ in range(2 * MAX_ROADS + 1):
        rr = h >> 1
        b = np.uint64(1) << np.uint64(rr)
        if roads & b:
            return False, towns, players
        roads |= b
        x = 1 - (h & 1)
        towns |= np.uint32(1) << np.uint32(cfg.rt[rr, x])
        for i in range(rec.cnt[rr]):
            c = rec.q[rr, i]
            if c > 0:
                players |= 1 << (np.int64(c) - 1)  # int64: an int8 shift drops seats 8-9 unjitted
        h = pushed_exit(rec, cfg, rr, x)
        if h == h0 or h < 0:
            break
    return h == h0, towns, players


@kernel
def play_laps_at_once(rec, cfg, r, e):
    """Play the laps of the endless loop at state (road ``r``, entered at ``e``) at once.

    The laps (J8) end when the configuration is back where it was at this state. On a
    loop that passes each road once the pushes keep the cars in one circular order
    (the car pushed off a road's far end joins the next road's near end), and a lap
    moves every road boundary back by one car: after ``k`` laps the cars sit shifted
    by ``k`` places, so the laps end after ``P`` laps, ``P`` the period of that
    circular sequence. The cars are then where they were, and each boundary (a town)
    has swept ``P`` consecutive cars, one whole period, which holds every player
    with a car on the loop: each such player has passed every town of the loop. Every
    loop road took a car (``held`` cleared, ``laste`` its entry end).

    Returns False, changing nothing, when that shortcut may differ from playing the
    pushes: a loop that passes a road twice (through a dead end's U-turn), or a
    player on the loop whom its towns could complete (the win ends the game at the
    push that completes it, mid-lap). The caller then plays the laps push by push.
    """
    N = cfg.num_players
    h0 = 2 * r + e
    ok, towns, players = _ring(rec, cfg, h0)
    if not ok:
        return False
    for p in range(N):
        if (players >> p) & 1:
            need = needed_towns(rec, cfg, p)
            if (rec.visited[p] | towns) & need == need:
                return False
    for p in range(N):
        if (players >> p) & 1:
            if cfg.shaping:  # 1 a town newly passed, as visit gives push by push
                need = needed_towns(rec, cfg, p)
                rec.reward[p] += popcount(np.uint64(towns & need & ~rec.visited[p]))
            rec.visited[p] |= towns
    h = h0
    for _ in range(2 * MAX_ROADS + 1):
        rr = h >> 1
        rec.held[rr] = 0
        rec.laste[rr] = h & 1
        h = pushed_exit(rec, cfg, rr, 1 - (h & 1))
        if h == h0:
            break
    rec.loop_towns = towns
    return True


# ----------------------------------------------------------------------------- the jam


@kernel
def push(rec, cfg, r, e):
    """Push the far car of road ``r`` (entered last at ``e``) on (J7); returns
    (half-edge it joined, won)."""
    x = 1 - e
    ex = pushed_exit(rec, cfg, r, x)
    if ex < 0:
        # never happens after a legal move (J7's last rule is checked first); the road
        # stays over-full and not held, which check_invariants reports
        return ex, False
    car = take(rec, r, x)
    put(rec, ex >> 1, ex & 1, car)
    won = visit(rec, cfg, car, cfg.rt[r, x])
    return ex, won


@kernel
def _pause(rec, r, e):
    """Pause an endless jam at state (r, e) for the mover's stop town (J8)."""
    rec.js_road = r
    rec.js_end = e
    rec.phase = STOP


@kernel
def jam(rec, cfg, cur, cur_e, laps_at_once):
    """Play out the jam at road ``cur`` (J6-J8). Returns False if paused for a stop choice.

    Each chain is first walked (:func:`walk_chain`), then pushed; an endless one is
    played up to its first repeated state, then its laps (at once by
    :func:`play_laps_at_once` where that applies and ``laps_at_once``, which ``step``
    passes; else push by push until the snapshot is back, the reference the tests
    compare with), then it pauses. A chain leaves no road over 3 but held ones unless
    it fed a held road (4 cars, so 5 once fed: ``disturbed``), which then jams again
    (J8); only then are the roads searched for the next chain.
    """
    disturbed = rec.cnt[cur] > 4
    while True:
        kind, star, _ = walk_chain(rec, cfg, cur, cur_e, False, cur, False, False)  # live
        r = cur
        e = cur_e
        snapped = False
        pushes = 0
        roads = np.uint64(0)
        while True:
            if kind == WALK_ENDLESS and 2 * r + e == star:
                if not snapped:
                    if laps_at_once and play_laps_at_once(rec, cfg, r, e):
                        _pause(rec, r, e)
                        return False
                    _snapshot(rec, cfg)
                    roads = loop_roads(rec, cfg, r, e)
                    snapped = True
                elif pushes > MAX_CHAIN_PUSHES or _same_config(rec, cfg, roads):
                    _pause(rec, r, e)
                    rec.loop_towns = loop_towns_of(rec, cfg, r, e)
                    return False
            ex, won = push(rec, cfg, r, e)
            if won or ex < 0:
                return True
            pushes += 1
            nr = ex >> 1
            if rec.cnt[nr] > 3:
                if rec.cnt[nr] > 4:
                    disturbed = True
                r = nr
                e = ex & 1
                continue
            break
        if not disturbed:
            return True
        cur, cur_e = next_chain(rec.cnt, rec.held, rec.laste, cfg.n_roads)
        if cur < 0:
            return True


@kernel
def stop_jam(rec, cfg, town):
    """J8: go on until a car is pushed through ``town``; roads left with 4 are held.

    If the road that car went onto now holds 5 (it was held at 4 by an earlier stop),
    it keeps jamming: the jam stops at the next road left with 4. Within one lap there
    is one (a move whose loop has none, a full loop, is illegal: :func:`loop_can_rest`),
    so no road is left with more than 4 cars.
    """
    r = rec.js_road
    e = rec.js_end
    for _ in range(4 * MAX_ROADS + 2):
        t = cfg.rt[r, 1 - e]
        ex, won = push(rec, cfg, r, e)
        if won or ex < 0:
            return
        r = ex >> 1
        e = ex & 1
        if t == town:
            town = -1  # passed: stop at the first road left with exactly 4 cars
        if town < 0 and rec.cnt[r] <= 4:
            break
    for k in range(cfg.n_roads):
        if rec.cnt[k] > 3:
            rec.held[k] = 1
    rec.js_road = -1
    rec.js_end = -1
    rec.loop_towns = 0
    rec.phase = MOVE
