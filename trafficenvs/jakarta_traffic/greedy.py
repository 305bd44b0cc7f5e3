"""The rule-based ("greedy") Jakarta Traffic player: a courier's route planner.

Strategy (also on docs/rules/jakarta_traffic.md, "Strategy of the greedy player"):

* **Reading the board.** The observation holds the whole open position. Each cell's
  four "path end leads to the spot" bits describe its tile fully (K2: 2 or 4 ends go
  to the spot, the others are joined to each other), so the player rebuilds the
  maze's links from them and follows paths through the fixed frame (K3) itself.
* **Distances in turns.** For every cell it computes where one turn can take a moped
  from there: the ends of its four paths, plus every end reachable after one honk that
  changes a tile *on* one of those paths (each distinct rotation, and the spare tile
  swapped in at each rotation; only tiles that may be honked: no stack, moped or
  marker). A breadth-first search over these one-turn sets gives the number of turns
  from any cell to any other (capped; far cells count as 7 turns).
* **Route value.** The worth of ending this turn on a cell is what happens there
  (deliver every matching order: the stars it pays plus 2 for each star token, less 1
  energy; accept an order if that pays; a charging station refills the battery; a
  chat gives energy and a speech-bubble bonus but also charges the competitors
  there), plus the best *route* that follows: up to three stops chosen among
  delivering a held order at its current address, picking up an order it may accept
  and a charging station, each gain discounted by 0.75 per turn it takes to get there,
  and no stop without the energy it costs. Energy counts 1 point (the final score),
  so a stop that only spends energy is worth taking only when it leads to stars.
* **The turn.** In the honk phase it tries every drive after every honk that changes
  a tile on its own paths (and no honk at all) and takes the best end cell, a honk
  only when it is strictly better than not honking. If its drive needs no honk and the
  next player could reach an address it may deliver to next turn, it spends the honk on
  a tile off its own drive's path that cuts the next player off from every such address
  (the marker then lies on that tile, so it cannot be turned back at once; K5). A
  detour is weighed by its exact dice odds (a diagonal cell 3/36, any other 1/36, and
  the best cell 1/36 for a double 6); it is taken only when it beats every drive. A
  double 6 parks on the best cell. Deliveries are always made; an order is accepted
  when the route says so.
* **The end.** On its last turn (the end triggered by someone else) it only counts
  final points: stars, energy, bubbles, no new orders. A turn that would trigger the
  end itself (a fourth star) is worth a bonus of 10 when its final score would then
  lead and a malus of 10 when it would trail, so it does not end a game it loses.
* **Stacks.** The rest of an accepted stack goes on the vacant pick-up tile that the
  nearest competitor needs the most turns to reach.

Why rebuild from the observation instead of running the game's kernels: the
observation does not say which tile (of several of one shape) lies where, so a record
cannot be rebuilt exactly; the paths, however, follow from the four bits, and the
frame is the game's own :func:`~trafficenvs.jakarta_traffic.tiles.exit_table`. The
tests check the traced drives against the game's own drive mask and moves.

It reads only what the interface gives (observation, mask), ties are broken by the
first best in a fixed order (no randomness; ``seed`` is accepted for the common
signature), and the whole batch is one compiled loop over the rows.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from trafficenvs.core.game import Game
from trafficenvs.core.player import GreedyPlayer
from trafficenvs.jakarta_traffic.layout import (
    A_ACCEPT,
    A_CELL,
    A_DECLINE,
    A_DELIVER,
    A_DETOUR,
    A_DRIVE,
    A_ROTATE,
    A_SWAP,
    ACCEPT,
    BAPAK,
    BUBBLE_BONUS,
    CELL_BUILDING,
    CELL_CHARGING,
    CELL_ENDS,
    CELL_F,
    CELL_MARKER,
    CELL_ME,
    CELL_OTHERS,
    CELL_STACK,
    CENTRE,
    DELIVER,
    DETOUR_PICK,
    END_STARS,
    HONK,
    IBU,
    MAX_BUBBLES,
    MAX_ENERGY,
    NCELLS,
    NPHASES,
    NTYPES,
    OB_CELLS,
    OB_PLAYERS,
    PL_BUBBLES,
    PL_COL,
    PL_ENERGY,
    PL_HOLDS,
    PL_PASSENGERS,
    PL_POINTS,
    PL_ROW,
    PL_SPARE_CHARGING,
    PL_SPARE_ENDS,
    PL_STARS,
    PLACE,
    PLAYER_F,
    SIDE,
    TY_ADDR_COL,
    TY_ADDR_ROW,
    TY_PAYS,
    TY_STACK_COL,
    TY_STACK_N,
    TY_STACK_ROW,
    TYPE_F,
)
from trafficenvs.jakarta_traffic.tiles import exit_table

# Every observation offset and action number below comes from the game's layouts
# (``layout.py``): part offsets and the fixed action ranges as module constants, the
# offsets that depend on the player count from the config record (``cfg.ob_*``).

#: the strategy's knobs (module docstring)
GAMMA = 0.75  # discount per turn
STAR_BONUS = 2.0  # worth of a star token beyond its points (4 tokens end the game)
HORIZON = 5  # turns searched for distances
FAR = 7  # distance counted for a cell not reached within the horizon
ROUTE_STOPS = 3  # stops planned after this turn
MAX_ROUTE_TURNS = 9  # no stop further than this many turns away
END_BONUS = 10.0  # for ending the game in the lead (malus when trailing)
#: GAMMA ** turns, looked up (a power per route step is measurably slower)
DISCOUNT = GAMMA ** np.arange(MAX_ROUTE_TURNS + FAR + 2, dtype=np.float64)


@njit(cache=True)
def _rotl(bits, k):
    """The spot bits of a tile turned ``k`` quarter turns clockwise (edge e -> e + k)."""
    k &= 3
    return ((bits << k) | (bits >> (4 - k))) & 15


@njit(cache=True)
def _set_links(links, y, bits):
    """Cell ``y``'s links from its spot bits: ends not to the spot join each other."""
    other = -1
    for e in range(4):
        if (bits >> e) & 1:
            links[y, e] = CENTRE
        elif other < 0:
            other = e
        else:
            links[y, e] = other
            links[y, other] = e


@njit(cache=True)
def _trace(links, exit_to, x, e):
    """K6: the cell where the path out of ``x`` by edge ``e`` parks (-1: no such path)."""
    if links[x, e] != CENTRE:
        return -1
    for _ in range(4 * NCELLS + 1):
        t = exit_to[x, e]
        x = t >> 2
        g = links[x, t & 3]
        if g == CENTRE:
            return x
        e = g
    return -1


@njit(cache=True)
def _trace_cells(links, exit_to, x, e):
    """The cells a path out of ``x`` by edge ``e`` passes or ends on, as bits."""
    seen = np.int64(0)
    if links[x, e] != CENTRE:
        return seen
    for _ in range(4 * NCELLS + 1):
        t = exit_to[x, e]
        x = t >> 2
        seen |= np.int64(1) << x
        g = links[x, t & 3]
        if g == CENTRE:
            return seen
        e = g
    return seen


@njit(cache=True)
def _honk_bits(bits, o, spare, can_swap):
    """Option ``o`` of honking a tile with spot bits ``bits``: rotations 1-3 (o = 0-2),
    the spare swapped in at rotation 0-3 (o = 3-6). -1 if the option does not exist."""
    if o < 3:
        return _rotl(bits, o + 1)
    if not can_swap:
        return -1
    return _rotl(spare, o - 3)


@njit(cache=True)
def _honk_options(bits, spare, can_swap):
    """The distinct honks of a tile with spot bits ``bits``, in option order (rotations
    1-3, then the spare at rotations 0-3; :func:`_honk_bits`), skipping any that leaves
    the tile as it is or as an earlier option did. Returns ``(packed, count)``: option
    ``i`` is ``(packed >> 7 * i) & 127`` = ``o << 4 | new bits`` (no allocation)."""
    seen = 1 << bits
    packed = np.int64(0)
    count = 0
    for o in range(7):
        nb = _honk_bits(bits, o, spare, can_swap)
        if nb < 0 or (seen >> nb) & 1:
            continue
        seen |= 1 << nb
        packed |= np.int64(o << 4 | nb) << (7 * count)
        count += 1
    return packed, count


@njit(cache=True)
def _honk_action(y, o):
    """The action of honk option ``o`` (:func:`_honk_bits`) on cell ``y``."""
    return A_ROTATE + 3 * y + o if o < 3 else A_SWAP + 4 * y + (o - 3)


@njit(cache=True)
def _bits4(ob, o):
    """Four 0/1 entries ``ob[o:o + 4]`` (path ends N, E, S, W) as bits."""
    v = 0
    for e in range(4):
        if ob[o + e] > 0.5:
            v |= 1 << e
    return v


@njit(cache=True)
def _cell_of(ob, row, col):
    """The cell whose row and column are ``ob[row]``, ``ob[col]``."""
    return int(ob[row] + 0.5) * SIDE + int(ob[col] + 0.5)


@njit(cache=True)
def _enter(links, exit_to, x, g):
    """The cell where a path entering cell ``x`` by edge ``g`` parks."""
    for _ in range(4 * NCELLS + 1):
        h = links[x, g]
        if h == CENTRE:
            return x
        t = exit_to[x, h]
        x = t >> 2
        g = t & 3
    return -1


@njit(cache=True)
def _reach_one(links, bits, exit_to, blocked, building, spare, has_spare, first, x):
    """The cells one turn can take a moped on ``x`` to (a honk on one of its paths'
    tiles allowed, with the spare ``spare``), as bits. ``links`` is left as it was.

    A honk on tile ``y`` changes a path only from where it first enters ``y``, so each
    path is walked once, noting that entry edge (``first[e, y]``, -1 if it never enters
    ``y``), and every honk of ``y`` re-traces only the affected paths, from ``y`` on."""
    r = np.int64(0)
    path = np.int64(0)
    for e in range(4):
        for y in range(NCELLS):
            first[e, y] = -1
        if links[x, e] != CENTRE:
            continue
        c = x
        g = e
        for _ in range(4 * NCELLS + 1):
            t = exit_to[c, g]
            c = t >> 2
            if first[e, c] < 0:
                first[e, c] = t & 3
                path |= np.int64(1) << c
            g = links[c, t & 3]
            if g == CENTRE:
                break
        if c != x:
            r |= np.int64(1) << c
    cand = path & ~blocked & ~(np.int64(1) << x)
    for y in range(NCELLS):
        if (cand >> y) & 1 == 0:
            continue
        b0 = bits[y]
        opts, count = _honk_options(b0, spare, has_spare and not building[y])
        for i in range(count):
            nb = (opts >> (7 * i)) & 15
            _set_links(links, y, nb)
            for e in range(4):
                g = first[e, y]
                if g >= 0:
                    d = _enter(links, exit_to, y, g)
                    if d >= 0 and d != x:
                        r |= np.int64(1) << d
        _set_links(links, y, b0)
    return r


@njit(cache=True)
def _reach_all(links, bits, exit_to, blocked, building, spare, has_spare, reach, first):
    """``reach[x]`` = :func:`_reach_one` of every cell ``x``."""
    for x in range(NCELLS):
        reach[x] = _reach_one(links, bits, exit_to, blocked, building, spare, has_spare,
                              first, x)


@njit(cache=True)
def _distances(reach, dist):
    """Turns from every cell to every other (breadth-first over one-turn sets)."""
    for s in range(NCELLS):
        for y in range(NCELLS):
            dist[s, y] = FAR
        dist[s, s] = 0
        seen = np.int64(1) << s
        front = seen
        for level in range(1, HORIZON + 1):
            nxt = np.int64(0)
            for x in range(NCELLS):
                if (front >> x) & 1:
                    nxt |= reach[x]
            nxt &= ~seen
            if nxt == 0:
                break
            for y in range(NCELLS):
                if (nxt >> y) & 1:
                    dist[s, y] = level
            seen |= nxt
            front = nxt


@njit(cache=True)
def _may_accept(held, nheld, energy, t):
    """K7's limits: 1 energy, two orders, not two of one type, one passenger."""
    if energy < 1 or nheld >= 2 or (held >> t) & 1:
        return False
    if t == IBU and (held >> BAPAK) & 1:
        return False
    if t == BAPAK and (held >> IBU) & 1:
        return False
    return True


@njit(cache=True)
def _nbits(v):
    c = 0
    while v:
        c += v & 1
        v >>= 1
    return c


@njit(cache=True)
def _route(x, held, energy, stops, dist, addr, pay, stack, charger_at, sk, value):
    """Best discounted worth of up to ``stops`` stops after this turn, from cell ``x``.

    A depth-first search over the stops (deliver a held order, pick one up, charge),
    written as a loop over an explicit stack (``sk``: int64 ``(5, ROUTE_STOPS + 1)``
    rows cell, held bits, energy, turn, next option; ``value``: the worth so far)
    because numba's cache cannot hold recursive functions (numba issue #6061)."""
    best = 0.0
    sk[0, 0] = x
    sk[1, 0] = held
    sk[2, 0] = energy
    sk[3, 0] = 0
    sk[4, 0] = 0
    value[0] = 0.0
    level = 0
    while level >= 0:
        o = sk[4, level]
        if level == stops or o > 2 * NTYPES:
            level -= 1
            continue
        sk[4, level] = o + 1
        x = sk[0, level]
        h = sk[1, level]
        e = sk[2, level]
        turn = sk[3, level]
        if o < NTYPES:  # deliver held order o (and any other held for that address)
            if (h >> o) & 1 == 0 or e < 1:
                continue
            c = addr[o]
            gain = -1.0
            left = h
            for u in range(NTYPES):
                if (h >> u) & 1 and addr[u] == c:
                    gain += pay[u] + STAR_BONUS
                    left &= ~(1 << u)
            ne = e - 1
        elif o < 2 * NTYPES:  # pick up an order of type t
            t = o - NTYPES
            c = stack[t]
            if c < 0 or not _may_accept(h, _nbits(h), e, t):
                continue
            gain = -1.0
            left = h | (1 << t)
            ne = e - 1
        else:  # charge
            if e >= MAX_ENERGY:
                continue
            c = charger_at[x]
            gain = float(MAX_ENERGY - e)
            left = h
            ne = MAX_ENERGY
        d = dist[x, c]
        if d == 0 or turn + d > MAX_ROUTE_TURNS:
            continue
        v = value[level] + DISCOUNT[turn + d] * gain
        if v > best:
            best = v
        level += 1
        value[level] = v
        sk[0, level] = c
        sk[1, level] = left
        sk[2, level] = ne
        sk[3, level] = turn + d
        sk[4, level] = 0
    return best


@njit(cache=True)
def _stop_value(x, kind, start, n, energy, bubbles, held, nstars, points, passengers,
                others_here, opp_energy_here, opp_best, last_turn, dist, addr, pay, stack,
                charger_at, stack_here, sk, value):
    """Worth of ending this turn on cell ``x`` (``kind``: 0 pick-up, 1 charging,
    2 building): what happens there plus the best route after it.

    Returns (worth, accept): ``accept`` says whether the order there would be taken."""
    gain = 0.0
    e = energy
    b = bubbles
    if others_here > 0:  # chat: +1 energy, a bubble; each competitor there +1 energy
        if e < MAX_ENERGY:
            e += 1
            gain += 1.0
        if b < MAX_BUBBLES:
            gain += BUBBLE_BONUS[b + 1] - BUBBLE_BONUS[b]
            b += 1
        gain -= opp_energy_here / (n - 1)
    if kind == 1:
        gain += MAX_ENERGY - e
        e = MAX_ENERGY
    stars = 0
    pts = 0.0
    h = held
    if kind == 2 and x != start and e >= 1:
        for t in range(NTYPES):
            if (held >> t) & 1 and addr[t] == x:
                stars += 1
                pts += pay[t]
                h &= ~(1 << t)
                if t == IBU or t == BAPAK:
                    passengers += 1
        if stars > 0:
            e -= 1
            gain += pts + STAR_BONUS * stars - 1.0
    if last_turn or nstars + stars >= END_STARS:
        # the game ends after this round: only the final score counts
        final = points + pts + e + BUBBLE_BONUS[b]
        worth = gain - STAR_BONUS * stars + 0.01 * passengers
        if not last_turn:
            if final > opp_best:
                worth += END_BONUS
            elif final < opp_best:
                worth -= END_BONUS
        return worth, False
    best = _route(x, h, e, ROUTE_STOPS, dist, addr, pay, stack, charger_at, sk, value)
    accept = False
    if kind == 0 and stack_here >= 0 and _may_accept(h, _nbits(h), e, stack_here):
        v = -1.0 + _route(x, h | (1 << stack_here), e - 1, ROUTE_STOPS, dist, addr, pay,
                          stack, charger_at, sk, value)
        if v > best:
            best = v
            accept = True
    return gain + best, accept


@njit(cache=True)
def _decide(ob, mask, cfg, exit_to):
    """The greedy action for one decision (observation row ``ob``, mask row ``mask``;
    ``cfg`` gives the player count and the observation's offsets)."""
    n = cfg.num_players
    P = cfg.ob_players
    phase = 0
    for k in range(NPHASES):
        if ob[cfg.ob_phase + k] > 0.5:
            phase = k
    if phase == DELIVER:  # always deliver (stars, never worth keeping an order)
        for t in range(NTYPES):
            if mask[A_DELIVER + t]:
                return A_DELIVER + t
        return A_DECLINE
    last_turn = ob[cfg.ob_end_triggered] > 0.5
    # the board
    bits = np.zeros(NCELLS, np.int64)
    kind = np.zeros(NCELLS, np.int64)
    building = np.zeros(NCELLS, np.bool_)
    links = np.zeros((NCELLS, 4), np.int64)
    stack_type = np.full(NCELLS, -1, np.int64)
    others = np.zeros(NCELLS, np.int64)
    opp_energy = np.zeros(NCELLS, np.float64)
    blocked = np.int64(0)
    for x in range(NCELLS):
        o = cfg.ob_cells + x * CELL_F
        v = _bits4(ob, o + CELL_ENDS)
        bits[x] = v
        _set_links(links, x, v)
        if ob[o + CELL_CHARGING] > 0.5:
            kind[x] = 1
        elif ob[o + CELL_BUILDING] > 0.5:
            kind[x] = 2
            building[x] = True
        if ob[o + CELL_STACK] > 0.5 or ob[o + CELL_MARKER] > 0.5 or ob[o + CELL_ME] > 0.5 \
                or ob[o + CELL_OTHERS] > 0.5:
            blocked |= np.int64(1) << x
        others[x] = np.int64(ob[o + CELL_OTHERS] + 0.5)
    # players: me first (C4)
    me = _cell_of(ob, P + PL_ROW, P + PL_COL)
    energy = int(ob[P + PL_ENERGY] + 0.5)
    bubbles = int(ob[P + PL_BUBBLES] + 0.5)
    nstars = int(ob[P + PL_STARS] + 0.5)
    points = ob[P + PL_POINTS]
    passengers = int(ob[P + PL_PASSENGERS] + 0.5)
    held = 0
    for t in range(NTYPES):
        if ob[P + PL_HOLDS + t] > 0.5:
            held |= 1 << t
    spare = _bits4(ob, P + PL_SPARE_ENDS)
    has_spare = spare != 0
    opp_pos = np.zeros(n, np.int64)
    opp_best = -1.0
    for j in range(1, n):
        o = P + PLAYER_F * j
        q = _cell_of(ob, o + PL_ROW, o + PL_COL)
        opp_pos[j] = q
        en = ob[o + PL_ENERGY]
        if en < MAX_ENERGY - 0.5:
            opp_energy[q] += 1.0
        final = ob[o + PL_POINTS] + en + BUBBLE_BONUS[int(ob[o + PL_BUBBLES] + 0.5)]
        if final > opp_best:
            opp_best = final
    # orders: current address, what a delivery pays, where the stacks lie
    addr = np.zeros(NTYPES, np.int64)
    pay = np.zeros(NTYPES, np.float64)
    stack = np.full(NTYPES, -1, np.int64)
    for t in range(NTYPES):
        o = cfg.ob_types + TYPE_F * t
        pay[t] = ob[o + TY_PAYS]
        addr[t] = _cell_of(ob, o + TY_ADDR_ROW, o + TY_ADDR_COL)
        if ob[o + TY_STACK_N] > 0.5:
            c = _cell_of(ob, o + TY_STACK_ROW, o + TY_STACK_COL)
            stack[t] = c
            stack_type[c] = t
    # distances in turns
    reach = np.zeros(NCELLS, np.int64)
    first = np.zeros((4, NCELLS), np.int64)
    _reach_all(links, bits, exit_to, blocked, building, spare, has_spare, reach, first)
    dist = np.zeros((NCELLS, NCELLS), np.int64)
    _distances(reach, dist)
    sk = np.zeros((5, ROUTE_STOPS + 1), np.int64)
    value = np.zeros(ROUTE_STOPS + 1, np.float64)
    charger_dist = np.full(NCELLS, FAR + 1, np.int64)
    charger_at = np.zeros(NCELLS, np.int64)
    for x in range(NCELLS):
        for c in range(NCELLS):
            if kind[c] == 1 and c != x and dist[x, c] < charger_dist[x]:
                charger_dist[x] = dist[x, c]
                charger_at[x] = c

    if phase == PLACE:  # the rest of the stack: where competitors need longest
        return A_CELL + _stack_place(mask, n, opp_pos, dist)

    if phase == ACCEPT:
        t = stack_type[me]
        _, acc = _stop_value(me, kind[me], -1, n, energy, bubbles, held, nstars, points,
                             passengers, 0, 0.0, opp_best, last_turn, dist, addr, pay,
                             stack, charger_at, t, sk, value)
        return A_ACCEPT if acc else A_DECLINE

    # honk, drive or a double-6 pick: the worth of ending the turn on each cell
    start = me
    worth = np.zeros(NCELLS, np.float64)
    for x in range(NCELLS):
        w, _ = _stop_value(x, kind[x], start, n, energy, bubbles, held, nstars, points,
                           passengers, others[x], opp_energy[x], opp_best, last_turn, dist,
                           addr, pay, stack, charger_at, stack_type[x], sk, value)
        worth[x] = w
    top = 0
    for x in range(1, NCELLS):
        if worth[x] > worth[top]:
            top = x
    if phase == DETOUR_PICK:
        return A_CELL + top
    # detour: column die, row die; a 6 copies the other; a double 6 picks the best
    detour = worth[top] / 36.0
    for x in range(NCELLS):
        r = x // SIDE
        c = x % SIDE
        detour += worth[x] * (3.0 if r == c else 1.0) / 36.0
    best_a = A_DETOUR
    best_v = detour
    for e in range(4):
        if mask[A_DRIVE + e]:
            d = _trace(links, exit_to, me, e)
            if d >= 0 and worth[d] > best_v:
                best_v = worth[d]
                best_a = A_DRIVE + e
    if phase != HONK:
        return best_a
    # a honk on a tile of my own paths, then the best drive after it
    path = np.int64(0)
    for e in range(4):
        path |= _trace_cells(links, exit_to, me, e)
    cand = path & ~blocked & ~(np.int64(1) << me)
    spare_kind = 1 if ob[P + PL_SPARE_CHARGING] > 0.5 else 0
    for y in range(NCELLS):
        if (cand >> y) & 1 == 0:
            continue
        b0 = bits[y]
        opts, count = _honk_options(b0, spare, has_spare and not building[y])
        for i in range(count):
            o = (opts >> (7 * i + 4)) & 7
            nb = (opts >> (7 * i)) & 15
            a = _honk_action(y, o)
            if not mask[a]:
                continue
            _set_links(links, y, nb)
            for e in range(4):
                d = _trace(links, exit_to, me, e)
                if d < 0 or d == start:
                    continue
                v = worth[d]
                if d == y and o >= 3:  # the swapped-in tile is a different kind
                    v, _ = _stop_value(d, spare_kind, start, n, energy, bubbles, held, nstars,
                                       points, passengers, others[d], opp_energy[d],
                                       opp_best, last_turn, dist, addr, pay, stack,
                                       charger_at, stack_type[d], sk, value)
                if v > best_v:
                    best_v = v
                    best_a = a
            _set_links(links, y, b0)
    if best_a < A_DRIVE or best_a == A_DETOUR:
        return best_a
    # no honk needed for my drive: spend it to keep the next player from a delivery
    return _block_next(ob, mask, P + PLAYER_F, exit_to, links, bits, building, blocked, addr,
                       me, spare, best_a - A_DRIVE, first)


@njit(cache=True)
def _stack_place(mask, n, opp_pos, dist):
    """The cell for the rest of a stack: the legal one the nearest competitor needs the
    most turns to reach (then the most steps)."""
    best = -1
    best_v = -1e9
    for x in range(NCELLS):
        if not mask[A_CELL + x]:
            continue
        near = 1e9
        for j in range(1, n):
            dj = dist[opp_pos[j], x] * 100.0 + abs(opp_pos[j] // SIDE - x // SIDE) \
                + abs(opp_pos[j] % SIDE - x % SIDE)
            if dj < near:
                near = dj
        if near > best_v:
            best_v = near
            best = x
    return best


@njit(cache=True)
def _block_next(ob, mask, o, exit_to, links, bits, building, blocked, addr, me, spare, e0,
                first):
    """The honk (or, if none helps, the plain drive out of edge ``e0``) that leaves the
    next player (observed at ``ob[o:]``, C4) unable to reach any address it could
    deliver to next turn; ``spare`` is my spare's spot bits.

    Only honks off my own drive's path count (my drive stays as chosen); the marker then
    lies on the honked tile, so the next player cannot turn it back (K5)."""
    q = _cell_of(ob, o + PL_ROW, o + PL_COL)
    threat = np.int64(0)
    if ob[o + PL_ENERGY] > 0.5:
        for t in range(NTYPES):
            if ob[o + PL_HOLDS + t] > 0.5 and addr[t] != q:
                threat |= np.int64(1) << addr[t]
    if threat == 0:
        return A_DRIVE + e0
    qspare = _bits4(ob, o + PL_SPARE_ENDS)
    if _reach_one(links, bits, exit_to, blocked, building, qspare, qspare != 0, first,
                  q) & threat == 0:
        return A_DRIVE + e0
    mine = _trace_cells(links, exit_to, me, e0)
    dest = _trace(links, exit_to, me, e0)
    after = (blocked & ~(np.int64(1) << me)) | (np.int64(1) << dest)
    cand = ~mine & ~blocked & ~(np.int64(1) << me)
    for y in range(NCELLS):
        if (cand >> y) & 1 == 0:
            continue
        b0 = bits[y]
        opts, count = _honk_options(b0, spare, spare != 0 and not building[y])
        for i in range(count):
            a = _honk_action(y, (opts >> (7 * i + 4)) & 7)
            if not mask[a]:
                continue
            nb = (opts >> (7 * i)) & 15
            bits[y] = nb
            _set_links(links, y, nb)
            r = _reach_one(links, bits, exit_to, after | (np.int64(1) << y), building, qspare,
                           qspare != 0, first, q)
            bits[y] = b0
            _set_links(links, y, b0)
            if r & threat == 0:
                return a
    return A_DRIVE + e0


@njit(cache=True)
def _drive_targets(obs, exit_to, out):
    for i in range(obs.shape[0]):
        links = np.zeros((NCELLS, 4), np.int64)
        for x in range(NCELLS):
            _set_links(links, x, _bits4(obs[i], OB_CELLS + x * CELL_F + CELL_ENDS))
        me = _cell_of(obs[i], OB_PLAYERS + PL_ROW, OB_PLAYERS + PL_COL)
        for e in range(4):
            out[i, e] = _trace(links, exit_to, me, e)


def drive_targets(observation: np.ndarray) -> np.ndarray:
    """``(B, 4)``: where each exit of the observer's tile parks, as this player traces
    the paths from the observation (-1: no path; the turn's start is not excluded).
    Exposed so tests can hold the player's reading of the maze against the game's."""
    obs = np.ascontiguousarray(np.atleast_2d(observation), np.float32)
    out = np.zeros((obs.shape[0], 4), np.int64)
    _drive_targets(obs, exit_table().astype(np.int64), out)
    return out


@njit(cache=True, parallel=True)
def greedy_batch(obs, mask, cfg, exit_to, out):
    """The greedy action of every row (one compiled loop over the batch); ``cfg`` is
    the game's config array (player count, observation offsets)."""
    for i in prange(obs.shape[0]):
        out[i] = _decide(obs[i], mask[i], cfg[0], exit_to)


class JakartaTrafficGreedy(GreedyPlayer):
    """The rule-based Jakarta Traffic player (strategy in the module docstring)."""

    game_name = "jakarta_traffic"

    def __init__(self, game: Game, seed: int | None = None, name: str = "greedy"):
        super().__init__(game, seed, name)
        self.exit_to = exit_table().astype(np.int64)

    def _act(self, obs: np.ndarray, mask: np.ndarray, out: np.ndarray) -> None:
        greedy_batch(obs, mask, self.game.cfg, self.exit_to, out)
