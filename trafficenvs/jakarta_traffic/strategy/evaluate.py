"""Jakarta Traffic's ``evaluate`` verb: who is ahead, for search cut-offs.

A search agent that stops a rollout before the game ends needs a value for the
position. This one projects every seat's final score and turns the projections into
win chances:

* **Now:** the final score if the game ended now (K9: star points + energy + the
  speech-bubble bonus).
* **To come:** what the seat's held orders and the orders it may pick up are likely to
  add: the greedy player's route planner (``route.route_value``: up to three stops
  among delivering a held order at its current address, picking an order up and
  charging, each gain discounted by ``GAMMA`` per turn away, energy counted as 1
  point), over the maze's distances in turns (``maze``: a turn is a drive,
  possibly after one rotation of a tile on the way; the spare swaps are left out so
  every seat is measured on the same maze), weighted by :data:`ROUTE_WEIGHT`.
* **Mid-turn:** the seat to move in the ``deliver`` phase is credited with the delivery
  it is about to make, in the ``accept`` phase with the better of accepting and
  declining (the route says which).
* **Tempo and tokens:** the seat to move (honk or drive phase) gets :data:`MOVER_BONUS`,
  every star token :data:`TOKEN_WEIGHT` on top of its points.
* **The last round** (end triggered): a seat that has had its last turn keeps its
  score; one still to play gets only what one turn can add (the best stop one turn
  away); the seat to move gets its current turn's delivery.

Each projection ``v_j`` gives a win chance ``p_j = softmax(k v)``, and the
value of seat ``j`` is C2's expected result ``n/(n-1) * (p_j - 1/n)``: +1 for a certain
lone winner, -1/(n-1) for a certain loser; the values sum to zero like the results.
The estimate gives only :data:`SHRINK` of that: a search that leads then prefers really
ending the game (the full +1) to holding a lead while it blocks the others (an estimate
of a near-certain win is otherwise as good as the win, and such games ran into the move
limit).
The inverse temperature ``k`` (:data:`INV_TEMPERATURE`) grows as the game nears its end
(the most star tokens any seat holds), since a lead then has fewer turns to melt.

Everything at the table is open (the rulebook hides nothing); hidden is only the
generator (the dice to come, C1), which this never reads (nor ``forced_dice``).

The scratch row (``EVAL_SCRATCH`` = 256 float64, 2048 bytes) is carved into views:
bytes 0-624 the distances (int8 25x25), the links, the entry edges and the building
flags (int8); int64 entries 128-233 the one-turn sets, spot bits, nearest chargers,
the route search's stack and each type's address and stack cell; float64 entries
240-252 the pays, the route's values and the projections. No allocation per call.
"""

from __future__ import annotations

import math

import numpy as np

from trafficenvs.core.jit import kernel
from trafficenvs.jakarta_traffic.rules.board import blocked_bits
from trafficenvs.jakarta_traffic.rules.layout import (
    ACCEPT,
    BUBBLE_BONUS,
    BUILDING,
    CHARGING,
    DELIVER,
    MAX_ENERGY,
    NCELLS,
    NSLOTS,
    NTYPES,
    STAR_VALUES,
)
from trafficenvs.jakarta_traffic.rules.orders import deliverable, slot_pays
from trafficenvs.jakarta_traffic.strategy.maze import FAR, all_distances, reach_all
from trafficenvs.jakarta_traffic.strategy.route import ROUTE_STOPS, may_accept, route_value

#: 1 / temperature of the softmax (per point of projected score) by the game's progress,
#: the most star tokens any seat holds (0-3), and once the end is triggered: fitted by
#: maximum likelihood to the winners of 1000 two-player greedy games (23,627 positions)
INV_TEMPERATURE = np.array([0.20, 0.21, 0.29, 0.50])
INV_TEMPERATURE_LAST = 2.0
#: weight of the route planner's discounted gains to come in the projection
ROUTE_WEIGHT = 1.0
#: points per star token beyond its value (four end the game; fitted as above)
TOKEN_WEIGHT = 1.0
#: points for the seat to move in the honk or drive phase (its turn is still to come)
MOVER_BONUS = 0.8
#: share of the expected result an estimate gives: a real win (+1) is worth more than
#: any lead, so a search ends a game it leads instead of blocking the others forever
SHRINK = 0.8


@kernel
def _maze(rec, cfg, links, bits, building, first, reach, dist, charger_at):
    """The distances in turns between all cells (``dist``) and each cell's nearest other
    charging station (``charger_at``), from the record's board (links, spot bits)."""
    for x in range(NCELLS):
        for e in range(4):
            links[x, e] = rec.links[x, e]
        code = rec.code[x]
        bits[x] = code & 15
        building[x] = 1 if (code >> 4) == BUILDING else 0
    reach_all(links, bits, cfg.exit_to, blocked_bits(rec, cfg), building, 0, False, reach,
               first)
    all_distances(reach, dist)
    for x in range(NCELLS):
        best = FAR + 1
        charger_at[x] = 0
        for c in range(NCELLS):
            if (rec.code[c] >> 4) == CHARGING and c != x and dist[x, c] < best:
                best = dist[x, c]
                charger_at[x] = c


@kernel
def _board(rec, cfg, addr, pay, stack):
    """Each order type's current address (its building's cell), what delivering it pays
    now (K8) and its stack's cell (-1: none)."""
    for i in range(NSLOTS):
        t = rec.ord_slot[i]
        k = i + 1 if i + 1 < NSLOTS else NSLOTS - 1
        addr[t] = rec.addr_cell[rec.addr_slot[k]]
        j = slot_pays(rec, i)
        pay[t] = STAR_VALUES[j] if j >= 0 else 0.0
    for t in range(NTYPES):
        stack[t] = rec.stack_cell[t] if rec.stack_n[t] > 0 else -1


@kernel
def _held(rec, p):
    h = 0
    for t in range(NTYPES):
        if rec.held[p, t]:
            h |= 1 << t
    return h


@kernel
def _one_turn(x, h, e, dist, addr, pay, charger_at, code):
    """The best a single last turn from ``x`` adds to the final score: a delivery one
    turn away (its pay, less the energy), or a charge."""
    best = 0.0
    if e >= 1:
        for t in range(NTYPES):
            if (h >> t) & 1 and dist[x, addr[t]] == 1:
                g = -1.0
                for u in range(NTYPES):
                    if (h >> u) & 1 and addr[u] == addr[t]:
                        g += pay[u]
                best = max(best, g)
    c = charger_at[x]
    if e < MAX_ENERGY and dist[x, c] == 1 and (code[c] >> 4) == CHARGING:
        best = max(best, float(MAX_ENERGY - e))
    return best


#: where :func:`projections` leaves the seats' projected scores in the scratch row
PROJ = 249


@kernel
def projections(rec, cfg, scratch):
    """Every seat's projected final score (module docstring) in ``scratch[PROJ:PROJ + n]``
    (:data:`PROJ` = 249; a kernel returns no view: ``core/jit.py``)."""
    n = cfg.num_players
    b8 = scratch.view(np.int8)
    i64 = scratch.view(np.int64)
    dist = b8[0:625].reshape((NCELLS, NCELLS))
    links = b8[632:732].reshape((NCELLS, 4))
    first = b8[736:836].reshape((4, NCELLS))
    building = b8[840:865]
    reach = i64[128:153]
    bits = i64[153:178]
    charger_at = i64[178:203]
    sk = i64[204:224].reshape((5, ROUTE_STOPS + 1))
    addr = i64[224:229]
    stack = i64[229:234]
    pay = scratch[240:245]
    value = scratch[245:249]
    v = scratch[PROJ:PROJ + n]
    _maze(rec, cfg, links, bits, building, first, reach, dist, charger_at)
    _board(rec, cfg, addr, pay, stack)
    cur = rec.cur
    for p in range(n):
        x = rec.pos[p]
        h = _held(rec, p)
        e = np.int64(rec.energy[p])
        score = float(rec.points[p]) + BUBBLE_BONUS[rec.bubbles[p]]
        if p == cur and rec.phase == DELIVER:  # the delivery about to be made
            d = deliverable(rec, cfg, p, x)
            for t in range(NTYPES):
                if (d >> t) & 1:
                    score += pay[t] + TOKEN_WEIGHT
                    h &= ~(1 << t)
            e -= 1
        score += e + TOKEN_WEIGHT * rec.nstars[p]
        if p == cur and rec.phase < 2:
            score += MOVER_BONUS
        if rec.trigger:
            if p > cur or (p == cur and rec.phase < 2):  # one turn left
                score += _one_turn(x, h, e, dist, addr, pay, charger_at, rec.code)
            v[p] = score
            continue
        r = route_value(x, h, e, ROUTE_STOPS, dist, addr, pay, stack, charger_at, sk, value)
        if p == cur and rec.phase == ACCEPT:
            t = rec.pending
            if may_accept(h, rec.nheld[p], e, t):
                r = max(r, -1.0 + route_value(x, h | (1 << t), e - 1, ROUTE_STOPS, dist, addr,
                                         pay, stack, charger_at, sk, value))
        v[p] = score + ROUTE_WEIGHT * r


@kernel
def evaluate(rec, cfg, ret, scratch):
    """Add every seat's expected result (module docstring) to ``ret``; ``scratch``: a
    float64 row of at least 253 entries (``EVAL_SCRATCH``)."""
    n = cfg.num_players
    projections(rec, cfg, scratch)
    v = scratch[PROJ:PROJ + n]
    top = v[0]
    most = rec.nstars[0]
    for p in range(1, n):
        top = max(top, v[p])
        most = max(most, rec.nstars[p])
    k = INV_TEMPERATURE_LAST if rec.trigger else INV_TEMPERATURE[min(most, 3)]
    z = 0.0
    for p in range(n):
        v[p] = math.exp((v[p] - top) * k)
        z += v[p]
    for p in range(n):
        ret[p] += SHRINK * n / (n - 1.0) * (v[p] / z - 1.0 / n)
