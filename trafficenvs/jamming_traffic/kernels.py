"""Jamming Traffic rules as numba kernels over one game record (rulings J1-J9).

Roads are queues (J2): ``q[r, 0..cnt[r]-1]`` lists road ``r``'s cars from its end 0
(town ``rt[r, 0]``) to its end 1. A car is ``0`` (neutral) or ``p + 1`` (seat p);
empty slots hold ``-1``. A *half-edge* ``h = 2 * r + x`` is road ``r`` seen from its
end ``x``.

Jams (J6-J8) run as *chains*: the over-full road ``cur`` (entered last at end
``cur_e``) pushes its far car through the town at the other end onto the next road
(J7); if that road is now over 3 it is the new ``cur``. During a chain every road
but ``cur`` keeps its count, so the counts are a function of ``(cur, cur_e)``: a
chain is endless exactly when such a pair repeats, which a 128-bit set detects with
no history. The full configuration (who is where) returns at that pair after a
whole number of laps (the pushes on a loop are invertible); the kernel plays those
laps (crediting every town a car passes) and then asks the mover where to stop. On a
loop through distinct roads the laps' outcome is known without playing them
(:func:`_laps_at_once`): that is what keeps endless jams cheap.

A road left with 4 cars by an endless jam is *held* (``held[r] = 1``); a car
entering it starts its jam again (it then clears to 3, J8). A held road that takes a
car during a stop holds 5 and keeps jamming, so no road is left above 4; a move whose
endless jam has no road to leave at 4 (a loop of held roads, a *full loop*) is
illegal (the rules page, J8 full loops). The legality check (J7's last rule and full
loops) is skipped unless :func:`jam_check_needed`.

Decisions (C3), one action space (offsets in ``cfg``):
``[moves | roundabout town x dir | one-way road x entry end | set-up road | jam stop
town | end turn]``; a move is (road, end, k-th road at that end's town in
counter-clockwise order).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from trafficenvs.core.rewards import write_zero_sum
from trafficenvs.core.rng import rng_below, rng_seed

MAX_PLAYERS = 10
MAX_TOWNS = 32
MAX_ROADS = 64
MAX_DEGREE = 8
MAX_MOVES = 1024
MAX_FACES = 12
QLEN = 5  # 3 cars, 4 on a held road, 5 for an instant while a held road jams again
ROUNDABOUT = -1
ONE_WAY = -2
#: a chain that has not repeated its configuration after this many pushes is
#: treated as repeated (never reached on the shipped maps; see the rules page)
MAX_CHAIN_PUSHES = 200_000

SETUP, PLACE, MOVE, STOP, OVER = range(5)
PHASES = ("setup", "place", "move", "stop", "over")

CFG_DTYPE = np.dtype(
    [
        ("num_players", np.int64),
        ("n_towns", np.int64),
        ("n_roads", np.int64),
        ("n_moves", np.int64),
        ("a_rb", np.int64),
        ("a_ow", np.int64),
        ("a_setup", np.int64),
        ("a_stop", np.int64),
        ("a_end", np.int64),
        ("num_actions", np.int64),
        ("max_turns", np.int64),
        ("n_faces", np.int64),
        ("shaping", np.bool_),
        ("all_towns", np.uint32),
        ("face_val", np.int8, MAX_FACES),
        ("home_given", np.int8, MAX_PLAYERS),
        ("rt", np.int8, (MAX_ROADS, 2)),
        ("deg", np.int8, MAX_TOWNS),
        ("inc", np.int8, (MAX_TOWNS, MAX_DEGREE)),
        ("inc_end", np.int8, (MAX_TOWNS, MAX_DEGREE)),
        ("pos", np.int8, (MAX_ROADS, 2)),
        ("st", np.int8, (MAX_ROADS, 2, MAX_DEGREE)),
        ("st_end", np.int8, (MAX_ROADS, 2, MAX_DEGREE)),
        ("st_h", np.int16, (MAX_ROADS, 2)),
        ("mv_base", np.int16, (MAX_ROADS, 2)),
        ("mv_road", np.int8, MAX_MOVES),
        ("mv_end", np.int8, MAX_MOVES),
        ("mv_k", np.int8, MAX_MOVES),
        # the moves of road end (r, x) as 8 mask bytes (little-endian): 1 for every
        # road at that end's town but the U-turn (see mask_without_dead_ends)
        ("mv_tpl", np.uint64, (MAX_ROADS, 2)),
    ],
    align=True,
)

RECORD_DTYPE = np.dtype(
    [
        ("rng_key", np.uint64),
        ("rng_ctr", np.uint64),
        ("moves", np.int32),
        ("turn", np.int32),
        ("reward", np.float32, MAX_PLAYERS),
        ("visited", np.uint32, MAX_PLAYERS),
        ("loop_towns", np.uint32),
        ("q", np.int8, (MAX_ROADS, QLEN)),
        ("cnt", np.int8, MAX_ROADS),
        ("held", np.uint8, MAX_ROADS),
        ("laste", np.int8, MAX_ROADS),
        ("home", np.int8, MAX_PLAYERS),
        ("winner", np.uint8, MAX_PLAYERS),
        ("phase", np.int8),
        ("cur", np.int8),
        ("moves_left", np.int8),
        ("pend_rb", np.uint8),
        ("pend_ow", np.uint8),
        ("dice", np.int8, 2),
        ("forced", np.int8, 2),
        ("rb_town", np.int8),
        ("rb_dir", np.int8),
        ("ow_road", np.int8),
        ("ow_entry", np.int8),
        ("js_road", np.int8),
        ("js_end", np.int8),
        # scratch (not part of the game state): a jam simulated for legality, and the
        # configuration snapshot of an endless chain
        ("sc_cnt", np.int8, MAX_ROADS),
        ("sc_held", np.uint8, MAX_ROADS),
        ("sc_laste", np.int8, MAX_ROADS),
        ("snap", np.int8, (MAX_ROADS, QLEN)),
        # legal_mask's memo of the jam started by a car entering road r at end x:
        # 0 unknown, 1 plays out, 2 dead end (after the roads in ch_roads), 3 held road
        ("ch_code", np.int8, 2 * MAX_ROADS),
        ("ch_roads", np.uint64, 2 * MAX_ROADS),
        ("ch_path", np.int8, 2 * MAX_ROADS),
    ],
    align=True,
)


def obs_dim(num_players: int, n_towns: int, n_roads: int) -> int:
    """Length of one observation row (layout on docs/rules/jamming_traffic.md)."""
    return 4 * n_roads + num_players * (n_towns + 2) + n_towns + 15


# ----------------------------------------------------------------------------- geometry


@njit(cache=True)
def _can_enter(rec, r, x):
    """A car may enter road ``r`` at its end ``x`` (one-way sign, J7)."""
    return r != rec.ow_road or x == rec.ow_entry


@njit(cache=True)
def _can_leave(rec, r, x):
    """A car may leave road ``r`` through its end ``x``."""
    return r != rec.ow_road or x != rec.ow_entry


@njit(cache=True)
def _rb_exit(rec, cfg, r, x):
    """The roundabout's exit for a car arriving from road ``r`` end ``x``: half-edge or -1.

    The next road round in the roundabout's direction, or the one after it when the
    next is the one-way road entered at its exit end. Only one road end at a town can
    be closed that way (roads join distinct towns, one sign), so two tries are enough;
    at a town of degree 1 or 2 the second try is the car's own road (the U-turn).
    """
    t = cfg.rt[r, x]
    d = cfg.deg[t]
    p = cfg.pos[r, x]
    if rec.rb_dir == 0:
        p1 = p + 1 if p + 1 < d else p + 1 - d
        p2 = p1 + 1 if p1 + 1 < d else p1 + 1 - d
    else:
        p1 = p - 1 if p >= 1 else p - 1 + d
        p2 = p1 - 1 if p1 >= 1 else p1 - 1 + d
    c = cfg.inc[t, p1]
    ce = cfg.inc_end[t, p1]
    if _can_enter(rec, c, ce):
        return 2 * c + ce
    c = cfg.inc[t, p2]
    ce = cfg.inc_end[t, p2]
    if _can_enter(rec, c, ce):
        return 2 * c + ce
    return -1


@njit(cache=True)
def pushed_exit(rec, cfg, r, x):
    """Where a car pushed off road ``r`` through end ``x`` goes (J7): half-edge or -1."""
    t = cfg.rt[r, x]
    first = cfg.st_h[r, x]
    ow = rec.ow_road
    if t != rec.rb_town and r != ow and (first >> 1) != ow:
        return first  # no piece in the way: the precomputed straight-on exit
    if not _can_leave(rec, r, x):
        return -1
    if t == rec.rb_town:
        return _rb_exit(rec, cfg, r, x)
    for k in range(cfg.deg[t]):
        c = cfg.st[r, x, k]
        ce = cfg.st_end[r, x, k]
        if _can_enter(rec, c, ce):
            return 2 * c + ce
    return -1


# ----------------------------------------------------------------------------- queues


@njit(cache=True)
def _take(rec, r, x):
    """Remove and return the car at end ``x`` of road ``r``."""
    n = rec.cnt[r]
    if x == 0:
        car = rec.q[r, 0]
        for i in range(n - 1):
            rec.q[r, i] = rec.q[r, i + 1]
    else:
        car = rec.q[r, n - 1]
    rec.q[r, n - 1] = -1
    rec.cnt[r] = n - 1
    if rec.held[r] and n - 1 <= 3:
        rec.held[r] = 0
    return car


@njit(cache=True)
def _put(rec, r, x, car):
    """A car joins road ``r`` at its end ``x``, behind the cars already there."""
    n = rec.cnt[r]
    if x == 0:
        for i in range(n, 0, -1):
            rec.q[r, i] = rec.q[r, i - 1]
        rec.q[r, 0] = car
    else:
        rec.q[r, n] = car
    rec.cnt[r] = n + 1
    rec.laste[r] = x
    rec.held[r] = 0


@njit(cache=True)
def _needed(rec, cfg, p):
    """The towns seat ``p`` must pass to win (J9): every town but its home."""
    return cfg.all_towns & ~(np.uint32(1) << np.uint32(rec.home[p]))


@njit(cache=True)
def _visit(rec, cfg, car, t):
    """Car ``car`` passes through town ``t`` (J9); True if that wins the game.

    With ``shaping``, a town its owner still needed is worth 1 to that owner.
    """
    if car <= 0:
        return False
    p = car - 1
    bit = np.uint32(1) << np.uint32(t)
    need = _needed(rec, cfg, p)
    if cfg.shaping and (need & ~rec.visited[p] & bit):
        rec.reward[p] += 1.0
    rec.visited[p] |= bit
    if rec.visited[p] & need == need:
        _win(rec, cfg, p)
        return True
    return False


@njit(cache=True)
def _win(rec, cfg, p):
    N = cfg.num_players
    for j in range(N):
        rec.winner[j] = 1 if j == p else 0
    rec.phase = OVER
    write_zero_sum(rec.reward, rec.winner, N)


# ----------------------------------------------------------------------------- jams


@njit(cache=True)
def _chain_sim(rec, cfg, cur, cur_e):
    """Follow one chain on the live counts without moving a car.

    Returns ``(kind, h)``: kind 0 the chain ends on a road with room, 1 it is
    endless and ``h`` is the first half-edge state it repeats (the loop's start),
    -1 a pushed car has no legal exit.
    """
    r = cur
    e = cur_e
    c0 = cur
    v0 = np.uint64(0)
    v1 = np.uint64(0)
    while True:
        h = 2 * r + e
        if h < 64:
            b = np.uint64(1) << np.uint64(h)
            if v0 & b:
                return 1, h
            v0 |= b
        else:
            b = np.uint64(1) << np.uint64(h - 64)
            if v1 & b:
                return 1, h
            v1 |= b
        ex = pushed_exit(rec, cfg, r, 1 - e)
        if ex < 0:
            return -1, -1
        nr = ex >> 1
        base = rec.cnt[nr] - (1 if nr == c0 else 0)
        if base >= 3:
            r = nr
            e = ex & 1
            continue
        return 0, -1


@njit(cache=True)
def _loop_can_rest(rec, cfg, r, e):
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


@njit(cache=True)
def _sim_jam(rec, cfg, cur, cur_e, disturbed):
    """Whether a jam starting at road ``cur`` (over 3) can be played out (J7, J8).

    Works on the scratch counts ``sc_cnt``/``sc_held`` (set by the caller). An endless
    jam is legal when it can rest as J8 says (the mover stops it there), see
    :func:`_loop_can_rest`. ``disturbed``: a held road has already taken a car (the
    move's own target, when it was held): it jams again once this chain is over.
    """
    while True:
        v0 = np.uint64(0)
        v1 = np.uint64(0)
        r = cur
        e = cur_e
        while True:
            h = 2 * r + e
            if h < 64:
                b = np.uint64(1) << np.uint64(h)
                if v0 & b:
                    return _loop_can_rest(rec, cfg, r, e)
                v0 |= b
            else:
                b = np.uint64(1) << np.uint64(h - 64)
                if v1 & b:
                    return _loop_can_rest(rec, cfg, r, e)
                v1 |= b
            x = 1 - e
            ex = pushed_exit(rec, cfg, r, x)
            if ex < 0:
                return False
            nr = ex >> 1
            rec.sc_cnt[r] -= 1
            rec.sc_cnt[nr] += 1
            rec.sc_laste[nr] = ex & 1
            if rec.sc_held[nr]:
                rec.sc_held[nr] = 0
                disturbed = True
            if rec.sc_cnt[nr] > 3:
                r = nr
                e = ex & 1
                continue
            break
        if not disturbed:
            return True
        cur = -1
        for k in range(cfg.n_roads):
            if rec.sc_cnt[k] > 3 and rec.sc_held[k] == 0:
                cur = k
                break
        if cur < 0:
            return True
        cur_e = rec.sc_laste[cur]


@njit(cache=True)
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
    return _any_held(rec)


@njit(cache=True)
def _any_held(rec):
    """Whether some road is held, read 8 roads at a time (a road past the map's
    roads is never held)."""
    w = rec.held.view(np.uint64)
    s = np.uint64(0)
    for i in range(MAX_ROADS // 8):
        s |= w[i]
    return s != 0


@njit(cache=True)
def full_loop_possible(rec, cfg):
    """Whether the held roads close a loop of pushes (J8's full loop).

    An endless jam cannot rest as J8 says (one road left with 4) only when every road
    on its loop held 4 before the move: the loop then carries one extra car per road
    plus the one the move brought, so each road a car is pushed onto holds 5. Such a
    loop follows pushed exits (fixed during the move phase: pieces are placed first)
    from a held road through held roads only, back to where it began.
    """
    if not _any_held(rec):
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


@njit(cache=True)
def jam_check_needed(rec, cfg):
    """Whether some move's jam could be illegal, so that moves must be simulated.

    Two ways: a dead end (:func:`dead_end_possible`, J7's last rule) or a full loop
    of held roads (:func:`full_loop_possible`, J8). Otherwise every jam plays out.
    """
    return dead_end_possible(rec, cfg) or full_loop_possible(rec, cfg)


@njit(cache=True)
def _move_ok(rec, cfg, r, x, o, oe):
    """J7's last rule (and J8's full loops) for one move: cheap unless a jam can fail.

    A move onto a road with room starts no jam (the first test of
    :func:`_move_ok_full`), so that is checked before :func:`jam_check_needed`.
    """
    if rec.cnt[o] + (1 if o != r else 0) <= 3:
        return True
    if not jam_check_needed(rec, cfg):
        return True
    return _move_ok_full(rec, cfg, r, x, o, oe)


@njit(cache=True)
def _move_ok_full(rec, cfg, r, x, o, oe):
    """J7's last rule: the jam a move would start must give every pushed car an exit.

    The common case (no held road involved) follows the chain on the live counts
    without copying them: a road on the chain is full iff its count before the move,
    less the car the move took from it, is 3. A held road on the way means the jam
    may come in several chains; that rare case is played out on scratch counts.
    """
    extra = 1 if o != r else 0
    if rec.cnt[o] + extra <= 3:
        return True
    if rec.held[o] == 0:
        v0 = np.uint64(0)
        v1 = np.uint64(0)
        rr = o
        e = oe
        while True:
            h = 2 * rr + e
            if h < 64:
                b = np.uint64(1) << np.uint64(h)
                if v0 & b:
                    return True
                v0 |= b
            else:
                b = np.uint64(1) << np.uint64(h - 64)
                if v1 & b:
                    return True
                v1 |= b
            ex = pushed_exit(rec, cfg, rr, 1 - e)
            if ex < 0:
                return False
            nr = ex >> 1
            if rec.held[nr]:
                break  # the slow path below
            base = rec.cnt[nr] - (1 if (nr == r and extra == 1) else 0)
            if base < 3:
                return True
            rr = nr
            e = ex & 1
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
    return _sim_jam(rec, cfg, o, oe, target_held)


@njit(cache=True)
def loop_towns_of(rec, cfg, r, e):
    """Bit set of the towns on the endless loop through state (road r, entered at e)."""
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


@njit(cache=True)
def _push(rec, cfg, r, e):
    """Push the far car of road ``r`` (entered last at ``e``); returns (half-edge, won)."""
    x = 1 - e
    ex = pushed_exit(rec, cfg, r, x)
    if ex < 0:
        # never happens after a legal move (J7's last rule is checked first); the road
        # stays over-full and not held, which check_invariants reports
        return ex, False
    car = _take(rec, r, x)
    _put(rec, ex >> 1, ex & 1, car)
    won = _visit(rec, cfg, car, cfg.rt[r, x])
    return ex, won


@njit(cache=True)
def _loop_roads(rec, cfg, r, e):
    """Bit set of the roads on the endless loop through state (road r, entered at e).

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


@njit(cache=True)
def _same_config(rec, cfg, roads):
    """The roads in bit set ``roads`` hold what the snapshot holds."""
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


@njit(cache=True)
def _laps_at_once(rec, cfg, r, e):
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
    h = h0
    roads = np.uint64(0)
    towns = np.uint32(0)
    players = 0
    for _ in range(2 * MAX_ROADS + 1):
        rr = h >> 1
        b = np.uint64(1) << np.uint64(rr)
        if roads & b:
            return False
        roads |= b
        x = 1 - (h & 1)
        towns |= np.uint32(1) << np.uint32(cfg.rt[rr, x])
        for i in range(rec.cnt[rr]):
            c = rec.q[rr, i]
            if c > 0:
                players |= 1 << (c - 1)
        h = pushed_exit(rec, cfg, rr, x)
        if h == h0 or h < 0:
            break
    if h != h0:
        return False
    for p in range(N):
        if (players >> p) & 1:
            need = _needed(rec, cfg, p)
            if (rec.visited[p] | towns) & need == need:
                return False
    for p in range(N):
        if (players >> p) & 1:
            if cfg.shaping:  # 1 a town newly passed, as _visit gives push by push
                need = _needed(rec, cfg, p)
                rec.reward[p] += _popcount(np.uint64(towns & need & ~rec.visited[p]))
            rec.visited[p] |= towns
    for _ in range(2 * MAX_ROADS + 1):
        rr = h >> 1
        rec.held[rr] = 0
        rec.laste[rr] = h & 1
        h = pushed_exit(rec, cfg, rr, 1 - (h & 1))
        if h == h0:
            break
    rec.loop_towns = towns
    return True


@njit(cache=True)
def _jam(rec, cfg, cur, cur_e, laps_at_once):
    """Play out the jam at road ``cur`` (J6-J8). Returns False if paused for a stop choice.

    ``laps_at_once``: an endless jam's laps are played by :func:`_laps_at_once` where
    it applies (``step`` does); False plays every push (the reference the tests
    compare it with).

    A chain leaves no road over 3 but held ones unless it fed a held road (4 cars, so
    5 once fed: ``disturbed``), which then jams again (J8); only then are the roads
    searched for the next chain."""
    disturbed = rec.cnt[cur] > 4
    while True:
        kind, star = _chain_sim(rec, cfg, cur, cur_e)
        r = cur
        e = cur_e
        snapped = False
        pushes = 0
        roads = np.uint64(0)
        while True:
            if kind == 1 and 2 * r + e == star:
                if not snapped:
                    if laps_at_once and _laps_at_once(rec, cfg, r, e):
                        rec.js_road = r
                        rec.js_end = e
                        rec.phase = STOP
                        return False
                    q = rec.q
                    snap = rec.snap
                    for k in range(cfg.n_roads):
                        for i in range(QLEN):
                            snap[k, i] = q[k, i]
                    roads = _loop_roads(rec, cfg, r, e)
                    snapped = True
                elif pushes > MAX_CHAIN_PUSHES or _same_config(rec, cfg, roads):
                    rec.js_road = r
                    rec.js_end = e
                    rec.loop_towns = loop_towns_of(rec, cfg, r, e)
                    rec.phase = STOP
                    return False
            ex, won = _push(rec, cfg, r, e)
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
        cur = -1
        for k in range(cfg.n_roads):
            if rec.cnt[k] > 3 and rec.held[k] == 0:
                cur = k
                break
        if cur < 0:
            return True
        cur_e = rec.laste[cur]


@njit(cache=True)
def _stop_jam(rec, cfg, town):
    """J8: go on until a car is pushed through ``town``; roads left with 4 are held.

    If the road that car went onto now holds 5 (it was held at 4 by an earlier stop),
    it keeps jamming: the jam stops at the next road left with 4. Within one lap there
    is one (a move whose loop has none, a full loop, is illegal: ``_loop_can_rest``),
    so no road is left with more than 4 cars.
    """
    r = rec.js_road
    e = rec.js_end
    for _ in range(4 * MAX_ROADS + 2):
        t = cfg.rt[r, 1 - e]
        ex, won = _push(rec, cfg, r, e)
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


# ----------------------------------------------------------------------------- turns


@njit(cache=True)
def _start_turn(rec, cfg):
    """Roll the two dice (or take the forced ones) for the player to move (J4)."""
    moves = 0
    rec.pend_rb = 0
    rec.pend_ow = 0
    for d in range(2):
        if rec.forced[d] >= 0:
            f = rec.forced[d]
            rec.forced[d] = -1
        else:
            f = rng_below(rec, cfg.n_faces)
        rec.dice[d] = f
        v = cfg.face_val[f]
        if v == ROUNDABOUT:
            rec.pend_rb = 1
        elif v == ONE_WAY:
            rec.pend_ow = 1
        else:
            moves += v
    rec.moves_left = moves
    # every face is a placement or a number >= 1 (checked by the Game), so a roll
    # without moves always has a placement to make
    rec.phase = PLACE if (rec.pend_rb or rec.pend_ow) else MOVE


@njit(cache=True)
def _end_turn(rec, cfg):
    rec.turn += 1
    if cfg.max_turns > 0 and rec.turn >= cfg.max_turns:
        rec.phase = OVER  # cut off, nobody wins: ``is_truncated`` (J9, C2: reward 0)
        for j in range(cfg.num_players):
            rec.winner[j] = 0
        return
    p = rec.cur + 1
    if p >= cfg.num_players:
        p = 0
    rec.cur = p
    _start_turn(rec, cfg)


@njit(cache=True)
def _after_move(rec, cfg):
    if rec.phase == MOVE and rec.moves_left <= 0:
        _end_turn(rec, cfg)


# ----------------------------------------------------------------------------- verbs


@njit(cache=True)
def init(rec, cfg, seed):
    rng_seed(rec, seed)
    N = cfg.num_players
    R = cfg.n_roads
    rec.turn = 0
    rec.visited[:] = 0
    rec.winner[:] = 0
    rec.loop_towns = 0
    rec.q[:, :] = -1
    rec.held[:] = 0
    rec.laste[:] = 0
    rec.cnt[:] = 0
    for r in range(R):
        rec.q[r, 0] = 0
        rec.q[r, 1] = 0
        rec.cnt[r] = 2
    rec.home[:] = -1
    used = np.uint32(0)
    for p in range(N):
        t = cfg.home_given[p]
        if t < 0:
            while True:
                t = rng_below(rec, cfg.n_towns)
                if not used & (np.uint32(1) << np.uint32(t)):
                    break
        used |= np.uint32(1) << np.uint32(t)
        rec.home[p] = t
    rec.phase = SETUP
    rec.cur = 0
    rec.moves_left = 0
    rec.pend_rb = 0
    rec.pend_ow = 0
    rec.dice[:] = -1
    rec.forced[:] = -1
    rec.rb_town = -1
    rec.rb_dir = 0
    rec.ow_road = -1
    rec.ow_entry = 0
    rec.js_road = -1
    rec.js_end = -1


@njit(cache=True)
def current_player(rec, cfg):
    return np.int64(rec.cur)


@njit(cache=True)
def _capped(rec, cfg):
    """The game stopped at the ``max_turns`` cap with no winner (J9's truncation)."""
    if rec.phase != OVER or cfg.max_turns <= 0 or rec.turn < cfg.max_turns:
        return False
    for j in range(cfg.num_players):
        if rec.winner[j]:
            return False
    return True


@njit(cache=True)
def is_over(rec, cfg):
    return rec.phase == OVER and not _capped(rec, cfg)


@njit(cache=True)
def is_truncated(rec, cfg):
    return _capped(rec, cfg)


@njit(cache=True)
def _move_legal(rec, cfg, r, x, k):
    """Move the car at end ``x`` of road ``r`` onto the k-th road of that end's town."""
    n = rec.cnt[r]
    if n == 0:
        return False
    car = rec.q[r, 0] if x == 0 else rec.q[r, n - 1]
    if car != 0 and car != rec.cur + 1:
        return False
    if not _can_leave(rec, r, x):
        return False
    t = cfg.rt[r, x]
    o = cfg.inc[t, k]
    oe = cfg.inc_end[t, k]
    if t == rec.rb_town:
        if _rb_exit(rec, cfg, r, x) != 2 * o + oe:
            return False
    elif o == r or not _can_enter(rec, o, oe):
        return False
    return _move_ok(rec, cfg, r, x, o, oe)


@njit(cache=True)
def is_legal(rec, cfg, action):
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
    return _move_legal(rec, cfg, cfg.mv_road[action], cfg.mv_end[action], cfg.mv_k[action])


@njit(cache=True)
def _chain_code(rec, cfg, o, oe):
    """Memo for ``legal_mask``: the jam of one more car entering full road ``o`` at ``oe``.

    Walked on the counts as they are (no car taken off anywhere). A move from road
    ``r`` that starts this jam is legal unless the jam dead-ends before it reaches
    ``r`` (which, one car short, takes the pushed car in): so a dead end is stored
    with the set of roads reached before it. Every state the walk passes gets its
    code too (the jam from there on is the same), so one mask walks each state once.
    Codes: 1 plays out (or is endless), 2 dead end, 3 a held road is involved
    (4 marks the states of the walk in progress).
    """
    h0 = 2 * o + oe
    code = rec.ch_code[h0]
    if code != 0:
        return code
    code = 1
    tail = np.uint64(0)  # roads reached after the last state, for an inherited dead end
    n = 0
    rr = o
    e = oe
    while True:
        h = 2 * rr + e
        known = rec.ch_code[h]
        if known != 0:
            if known == 4:  # met its own walk again: the jam is endless (legal)
                break
            code = known
            if known == 2:
                tail = rec.ch_roads[h] | (np.uint64(1) << np.uint64(rr))
            break
        rec.ch_code[h] = 4  # on this walk
        rec.ch_path[n] = h
        n += 1
        if rec.held[rr]:
            code = 3
            break
        ex = pushed_exit(rec, cfg, rr, 1 - e)
        if ex < 0:
            code = 2
            break
        nr = ex >> 1
        if rec.cnt[nr] < 3:
            break
        rr = nr
        e = ex & 1
    # states on the path, last first: a dead end's road set grows backwards (the
    # road sets are written for dead ends only, to keep the memo's memory small)
    if code == 2:
        roads = tail
        for i in range(n - 1, -1, -1):
            h = rec.ch_path[i]
            rec.ch_code[h] = 2
            rec.ch_roads[h] = roads
            roads |= np.uint64(1) << np.uint64(h >> 1)
    else:
        for i in range(n):
            rec.ch_code[rec.ch_path[i]] = code
    return code


@njit(cache=True)
def legal_mask_exhaustive(rec, cfg, out):
    """The reference mask: every move onto a full road has its jam simulated (J7).

    Kept (compiled) so tests can check :func:`legal_mask` against it.
    """
    out[:] = 0
    ph = rec.phase
    if ph == OVER:
        return
    if ph == SETUP:
        h = rec.home[rec.cur]
        for r in range(cfg.n_roads):
            if cfg.rt[r, 0] == h or cfg.rt[r, 1] == h:
                out[cfg.a_setup + r] = 1
        return
    if ph == PLACE:
        if rec.pend_rb:
            for a in range(cfg.a_rb, cfg.a_ow):
                out[a] = 1
        if rec.pend_ow:
            for a in range(cfg.a_ow, cfg.a_setup):
                out[a] = 1
        return
    if ph == STOP:
        for t in range(cfg.n_towns):
            if (rec.loop_towns >> np.uint32(t)) & np.uint32(1):
                out[cfg.a_stop + t] = 1
        return
    out[cfg.a_end] = 1
    me = rec.cur + 1
    for h in range(2 * cfg.n_roads):
        rec.ch_code[h] = 0
    # every jam a move could start, walked once up front (each state at most once)
    for o in range(cfg.n_roads):
        if rec.cnt[o] >= 3:
            for oe in range(2):
                if rec.ch_code[2 * o + oe] == 0:
                    _chain_code(rec, cfg, o, oe)
    for r in range(cfg.n_roads):
        n = rec.cnt[r]
        if n == 0:
            continue
        for x in range(2):
            car = rec.q[r, 0] if x == 0 else rec.q[r, n - 1]
            if car != 0 and car != me:
                continue
            if not _can_leave(rec, r, x):
                continue
            t = cfg.rt[r, x]
            base = cfg.mv_base[r, x]
            if t == rec.rb_town:
                ex = _rb_exit(rec, cfg, r, x)
                if ex >= 0:
                    o = ex >> 1
                    if _move_ok_full(rec, cfg, r, x, o, ex & 1):
                        out[base + cfg.pos[o, ex & 1]] = 1
                continue
            for k in range(cfg.deg[t]):
                o = cfg.inc[t, k]
                if o == r:
                    continue
                oe = cfg.inc_end[t, k]
                if not _can_enter(rec, o, oe):
                    continue
                if rec.cnt[o] < 3:
                    out[base + k] = 1
                    continue
                code = rec.ch_code[2 * o + oe]
                if code == 1:
                    out[base + k] = 1
                elif code == 2:
                    if (rec.ch_roads[2 * o + oe] >> np.uint64(r)) & np.uint64(1):
                        out[base + k] = 1
                elif _move_ok_full(rec, cfg, r, x, o, oe):
                    out[base + k] = 1


@njit(cache=True)
def _movable(car, me):
    """1 if a car value may be taken by player ``me`` (neutral or theirs), else 0."""
    return (car == 0) | (car == me)


@njit(cache=True)
def legal_mask(rec, cfg, out):
    """The legal actions (C3). Same result as :func:`legal_mask_exhaustive`, faster.

    Unless :func:`jam_check_needed` (a one-way road into a dead-end town, or held
    roads closing a loop), no jam can break J7's last rule or J8's stop, so a move is
    legal when its car may be taken and its exit entered: no jam is simulated.
    """
    if rec.phase != MOVE or jam_check_needed(rec, cfg):
        legal_mask_exhaustive(rec, cfg, out)
        return
    mask_without_dead_ends(rec, cfg, out)


@njit(cache=True)
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


@njit(cache=True)
def mask_without_dead_ends(rec, cfg, out):
    """The MOVE-phase mask when no jam can dead-end (see :func:`legal_mask`).

    A move is legal when its car may be taken (neutral or the mover's, at a road
    end, not through a one-way road's entry end) and its exit entered: every road at
    the town but the one it came from and the one-way road's exit end, or the
    roundabout's exit. Written with few branches (which car sits at an end is
    unpredictable): the moves of road end ``(r, x)`` are the slots
    ``mv_base[r, x] + k`` in increasing ``(r, x)`` order, so each end's block is
    written as one 8-byte word, the end's precomputed pattern ``cfg.mv_tpl[r, x]``
    (every road at the town but the U-turn) or 0 (the spill is overwritten by the
    next block, the last one's by the zeroed actions after the moves); then the
    one-way road and the roundabout town are fixed up. Public so tests can show
    that the dead-end corner matters where the simulation is kept.
    """
    me = np.uint64(rec.cur + 1)
    q = rec.q
    cnt = rec.cnt
    rt = cfg.rt
    deg = cfg.deg
    pos = cfg.pos
    mv_base = cfg.mv_base
    tpl = cfg.mv_tpl
    o8 = out.view(np.uint8)
    # unsigned indices: numba then skips the negative-index wraparound, which lets
    # LLVM merge the 8 byte stores of a block into one 8-byte store
    for rd in range(np.uint64(cfg.n_roads)):
        c0 = np.int64(q[rd, np.uint64(0)])
        c1 = np.int64(q[rd, _end1_slot(cnt[rd])])
        w0 = tpl[rd, np.uint64(0)] & _MOVABLE[me, np.uint64(c0 + 1)]
        w1 = tpl[rd, np.uint64(1)] & _MOVABLE[me, np.uint64(c1 + 1)]
        b0 = np.uint64(mv_base[rd, np.uint64(0)])
        for k in range(8):
            o8[b0 + np.uint64(k)] = np.uint8(w0 >> np.uint64(8 * k))
        b1 = np.uint64(mv_base[rd, np.uint64(1)])
        for k in range(8):
            o8[b1 + np.uint64(k)] = np.uint8(w1 >> np.uint64(8 * k))
    for ai in range(np.uint64(cfg.n_moves), np.uint64(cfg.num_actions)):
        o8[ai] = 0
    out[cfg.a_end] = 1
    inc = cfg.inc
    inc_end = cfg.inc_end
    ow = rec.ow_road
    if ow >= 0:
        x = rec.ow_entry
        b = np.uint64(mv_base[ow, x])
        for k in range(np.uint64(deg[rt[ow, x]])):  # no car leaves through the entry end
            o8[b + k] = 0
        t = rt[ow, 1 - x]
        kk = np.uint64(pos[ow, 1 - x])
        for j in range(deg[t]):  # nor enters at the exit end
            o8[np.uint64(mv_base[inc[t, j], inc_end[t, j]]) + kk] = 0
    t = rec.rb_town
    if t >= 0:
        d = deg[t]
        for j in range(d):
            r = inc[t, j]
            x = inc_end[t, j]
            b = np.uint64(mv_base[r, x])
            for k in range(np.uint64(d)):
                o8[b + k] = 0
            car = np.int64(q[r, np.uint64(0) if x == 0 else _end1_slot(cnt[r])])
            # the end's one move, the roundabout's exit, is legal when its car may
            # be taken (written branch-free: which car sits there is unpredictable)
            ok = _MOVABLE[me, np.uint64(car + 1)] & np.uint64(1)
            ok &= np.uint64(_can_leave(rec, r, x))
            ex = _rb_exit(rec, cfg, r, x)
            if ex >= 0:
                o8[b + np.uint64(pos[ex >> 1, ex & 1])] = np.uint8(ok)


@njit(cache=True)
def step(rec, cfg, action):
    N = cfg.num_players
    for j in range(N):
        rec.reward[j] = 0.0
    ph = rec.phase
    if ph == SETUP:
        r = action - cfg.a_setup
        h = rec.home[rec.cur]
        x = 0 if cfg.rt[r, 0] == h else 1
        if x == 0:
            rec.q[r, 0] = rec.cur + 1
        else:
            rec.q[r, rec.cnt[r] - 1] = rec.cur + 1
        if rec.cur + 1 < N:
            rec.cur += 1
        else:
            rec.cur = 0
            _start_turn(rec, cfg)
        return
    if ph == PLACE:
        if action < cfg.a_ow:
            a = action - cfg.a_rb
            rec.rb_town = a >> 1
            rec.rb_dir = a & 1
            rec.pend_rb = 0
        else:
            a = action - cfg.a_ow
            rec.ow_road = a >> 1
            rec.ow_entry = a & 1
            rec.pend_ow = 0
        if not (rec.pend_rb or rec.pend_ow):
            rec.phase = MOVE
            _after_move(rec, cfg)
        return
    if ph == STOP:
        _stop_jam(rec, cfg, action - cfg.a_stop)
        if rec.phase != OVER:
            _after_move(rec, cfg)
        return
    if action == cfg.a_end:
        _end_turn(rec, cfg)
        return
    _move(rec, cfg, action, True)


@njit(cache=True)
def _move(rec, cfg, action, laps_at_once):
    """Play move ``action`` and its jam (J5-J8); ``laps_at_once`` as in :func:`_jam`."""
    r = cfg.mv_road[action]
    x = cfg.mv_end[action]
    t = cfg.rt[r, x]
    o = cfg.inc[t, cfg.mv_k[action]]
    oe = cfg.inc_end[t, cfg.mv_k[action]]
    rec.moves_left -= 1
    car = _take(rec, r, x)
    _put(rec, o, oe, car)
    if _visit(rec, cfg, car, t):
        return
    if rec.cnt[o] > 3:
        if not _jam(rec, cfg, o, oe, laps_at_once):
            return  # paused: the mover picks where the endless jam stops
        if rec.phase == OVER:
            return
    _after_move(rec, cfg)


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
def _popcount(x):
    """Number of set bits of a value below 2**32 (uint64 arithmetic)."""
    U = np.uint64
    x = x - ((x >> U(1)) & U(0x55555555))
    x = (x & U(0x33333333)) + ((x >> U(2)) & U(0x33333333))
    x = (x + (x >> U(4))) & U(0x0F0F0F0F)
    return ((x * U(0x01010101)) >> U(24)) & U(0xFF)


@njit(cache=True)
def observe(rec, cfg, seat, out):
    """Seat ``seat``'s view (C4); the layout is documented on the rules page.

    Written without branches on the data (which car sits where, visited bits): a
    road slot's value comes from the table ``_SLOT`` for this seat, bit sets are
    written 8 floats at a time from ``_BITS8`` (each section's spill is overwritten
    by the next section, written later), and indices are unsigned (numba then emits
    no negative-index wraparound, so LLVM keeps plain, vectorised stores). A road
    slot past the road's cars holds -1 (``check_invariants``), which reads 0 like an
    empty slot, so the slots need no count.
    """
    N = cfg.num_players
    T = cfg.n_towns
    R = cfg.n_roads
    U = np.uint64
    q = rec.q
    vals = _SLOT[N, seat]
    for r in range(U(R)):
        o = U(4) * r
        out[o] = vals[U(np.int64(q[r, U(0)]) + 1)]
        out[o + U(1)] = vals[U(np.int64(q[r, U(1)]) + 1)]
        out[o + U(2)] = vals[U(np.int64(q[r, U(2)]) + 1)]
        out[o + U(3)] = vals[U(np.int64(q[r, U(3)]) + 1)]
    o = U(4 * R)
    tt = U(T)
    visited = rec.visited
    home = rec.home
    for j in range(N):
        p = seat + j
        if p >= N:
            p -= N
        vis = U(visited[U(p)])
        h = U(home[U(p)])
        _bits_out(out, o, vis, tt)
        seen = _popcount(vis) - ((vis >> h) & U(1))  # the home is never needed
        o += tt
        out[o] = h
        out[o + U(1)] = np.int64(T) - 1 - np.int64(seen)
        o += U(2)
    _bits_out(out, o, U(rec.loop_towns), tt)
    o += tt
    for k in range(U(5)):
        out[o + k] = 0.0
    out[o + U(rec.phase)] = 1.0
    o += U(5)
    out[o] = rec.moves_left
    out[o + U(1)] = rec.pend_rb
    out[o + U(2)] = rec.pend_ow
    for d in range(2):
        f = rec.dice[d]
        v = 0.0
        if f >= 0:
            fv = cfg.face_val[U(f)]
            v = 5.0 if fv == ROUNDABOUT else (6.0 if fv == ONE_WAY else fv)
        out[o + U(3 + d)] = v
    out[o + U(5)] = rec.rb_town + 1
    out[o + U(6)] = rec.rb_dir
    out[o + U(7)] = rec.ow_road + 1
    out[o + U(8)] = rec.ow_entry
    held = rec.held
    nh = 0
    for r in range(U(R)):
        nh += held[r]
    out[o + U(9)] = nh
