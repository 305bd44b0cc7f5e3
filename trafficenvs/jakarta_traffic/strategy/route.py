"""The greedy Jakarta Traffic player's valuation: the worth of ending a turn on a cell.

What happens there (deliveries, a charge, a chat, an order accepted) plus the best
route of up to :data:`ROUTE_STOPS` further stops, each gain discounted by
:data:`GAMMA` per turn it takes to get there (strategy: ``greedy.py``).

Two tuples carry the position into :func:`stop_value`: ``mine`` = ``(energy,
bubbles, held, nstars, points, passengers)`` of the player to move, ``plan`` =
``(dist, addr, pay, stack, charger_at, sk, value)``: turns between cells, each order
type's address, pay and stack cell, each cell's nearest charger and the route search's
scratch arrays (:func:`route_value`).
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.jit import kernel
from trafficenvs.jakarta_traffic.rules.layout import (
    BAPAK,
    BUBBLE_BONUS,
    END_STARS,
    IBU,
    MAX_BUBBLES,
    MAX_ENERGY,
    NTYPES,
)
from trafficenvs.jakarta_traffic.strategy.maze import FAR

#: the strategy's knobs (``greedy.py``'s module docstring; the distance ones,
#: ``HORIZON`` and ``FAR``, are in ``maze.py``)
GAMMA = 0.75  # discount per turn
STAR_BONUS = 2.0  # worth of a star token beyond its points (4 tokens end the game)
ROUTE_STOPS = 3  # stops planned after this turn
MAX_ROUTE_TURNS = 9  # no stop further than this many turns away
END_BONUS = 10.0  # for ending the game in the lead (malus when trailing)
#: GAMMA ** turns, looked up (a power per route step is measurably slower)
DISCOUNT = GAMMA ** np.arange(MAX_ROUTE_TURNS + FAR + 2, dtype=np.float64)


@kernel
def may_accept(held, nheld, energy, t):
    """K7's limits: 1 energy, two orders, not two of one type, one passenger."""
    if energy < 1 or nheld >= 2 or (held >> t) & 1:
        return False
    if t == IBU and (held >> BAPAK) & 1:
        return False
    if t == BAPAK and (held >> IBU) & 1:
        return False
    return True


@kernel
def nbits(v):
    c = 0
    while v:
        c += v & 1
        v >>= 1
    return c


@kernel
def _set_level(sk, level, x, held, energy, turn):
    """Level ``level`` of the route search's stack: at ``x`` holding ``held`` with
    ``energy`` after ``turn`` turns, its first option next."""
    sk[0, level] = x
    sk[1, level] = held
    sk[2, level] = energy
    sk[3, level] = turn
    sk[4, level] = 0


@kernel
def route_value(x, held, energy, stops, dist, addr, pay, stack, charger_at, sk, value):
    """Best discounted worth of up to ``stops`` stops after this turn, from cell ``x``.

    A depth-first search over the stops (deliver a held order, pick one up, charge),
    written as a loop over an explicit stack (``sk``: int64 ``(5, ROUTE_STOPS + 1)``
    rows cell, held bits, energy, turn, next option, :func:`_set_level`; ``value``: the
    worth so far) because numba's cache cannot hold recursive functions (numba issue
    #6061). Each option is priced in this loop, not in a helper returning a tuple: that
    made the whole player about four times slower (measured)."""
    best = 0.0
    _set_level(sk, 0, x, held, energy, 0)
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
            if c < 0 or not may_accept(h, nbits(h), e, t):
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
        _set_level(sk, level, c, left, ne, turn + d)
    return best


@kernel
def _on_arrival(x, kind, start, n, energy, bubbles, held, passengers, others_here,
                opp_energy_here, addr, pay):
    """What ending the turn on cell ``x`` (``kind``: 0 pick-up, 1 charging, 2 building)
    does at once: a chat with the competitors there, a charge, the deliveries.

    Returns ``(gain, energy, bubbles, stars, points, held, passengers)`` after it."""
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
    return gain, e, b, stars, pts, h, passengers


@kernel
def stop_value(x, kind, start, n, mine, others_here, opp_energy_here, stack_here, opp_best,
                last_turn, plan):
    """Worth of ending this turn on cell ``x`` (``kind``: 0 pick-up, 1 charging,
    2 building): what happens there (:func:`_on_arrival`) plus the best route after it.

    Returns (worth, accept): ``accept`` says whether the order there would be taken."""
    energy, bubbles, held, nstars, points, passengers = mine
    dist, addr, pay, stack, charger_at, sk, value = plan
    gain, e, b, stars, pts, h, passengers = _on_arrival(
        x, kind, start, n, energy, bubbles, held, passengers, others_here, opp_energy_here,
        addr, pay)
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
    best = route_value(x, h, e, ROUTE_STOPS, dist, addr, pay, stack, charger_at, sk, value)
    accept = False
    if kind == 0 and stack_here >= 0 and may_accept(h, nbits(h), e, stack_here):
        v = -1.0 + route_value(x, h | (1 << stack_here), e - 1, ROUTE_STOPS, dist, addr, pay,
                          stack, charger_at, sk, value)
        if v > best:
            best = v
            accept = True
    return gain + best, accept
