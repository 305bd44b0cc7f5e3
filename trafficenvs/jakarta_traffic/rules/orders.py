"""Orders (K7's limits and accepting, K8's order board): what a seat may accept, which
addresses want which orders, what a star pays, accepting, placing the rest of a
stack, and delivering (stars, then the order board shifts).
"""

from __future__ import annotations

from trafficenvs.core.jit import kernel
from trafficenvs.jakarta_traffic.rules.layout import (
    BAPAK,
    BUILDING,
    IBU,
    NSLOTS,
    NTYPES,
    PLACE,
    STAR_VALUES,
)
from trafficenvs.jakarta_traffic.rules.scoring import end_turn


@kernel
def can_accept(rec, p, t):
    """K7: 1 energy, at most 2 orders, not two of one type, at most one passenger."""
    return rec.energy[p] >= 1 and (acceptable(rec, p) >> t) & 1 == 1


@kernel(inline="always")
def acceptable(rec, p):
    """K7's limits but energy: the order types seat ``p`` could take into its phone now,
    as bits (1 << type): at most 2 orders, not two of one type, at most one passenger
    (Ibu or Bapak). :func:`can_accept` adds the energy it costs."""
    free = 0
    for t in range(NTYPES):
        free |= (rec.held[p, t] == 0) << t
    passengers = (1 << IBU) | (1 << BAPAK)
    if rec.held[p, IBU] or rec.held[p, BAPAK]:
        free &= ~passengers
    return free if rec.nheld[p] < 2 else 0


@kernel(inline="always")
def points_at(i):
    """K8: the address slot order slot ``i`` points at (slot i -> address slot i + 1;
    the lowest order slot also at the lowest address slot). :func:`wanted_slots` is its
    inverse."""
    return i + 1 if i + 1 < NSLOTS else NSLOTS - 1


@kernel
def wanted_slots(rec, a):
    """K8: the order slots pointing at address ``a`` (slot i -> address slot min(i+1, 4)).

    Returns (first, second) order slots, -1 where none; the top address slot is out.
    """
    j = -1
    for k in range(NSLOTS):
        if rec.addr_slot[k] == a:
            j = k
    if j <= 0:
        return -1, -1
    if j == NSLOTS - 1:
        return NSLOTS - 2, NSLOTS - 1
    return j - 1, -1


@kernel
def deliverable(rec, cfg, p, x):
    """Bits (1 << type) of the orders ``p`` holds whose current address is cell ``x``."""
    if cfg.tile_kind[rec.cell_tile[x]] != BUILDING:
        return 0
    s1, s2 = wanted_slots(rec, cfg.tile_addr[rec.cell_tile[x]])
    bits = 0
    if s1 >= 0 and rec.held[p, rec.ord_slot[s1]]:
        bits |= 1 << rec.ord_slot[s1]
    if s2 >= 0 and rec.held[p, rec.ord_slot[s2]]:
        bits |= 1 << rec.ord_slot[s2]
    return bits


@kernel(inline="always")
def slot_pays(rec, i):
    """K8: the pile slot ``i`` pays from: its own, else the best non-empty one below."""
    for j in range(i, NSLOTS):
        if rec.star_left[j] > 0:
            return j
    return -1


@kernel
def accept(rec, cfg):
    """K7: take one order of the stack here for 1 energy; the rest of the stack is then
    to be placed (phase ``place_stack``), or the turn ends if it was the last."""
    p = rec.cur
    t = rec.pending
    rec.energy[p] -= 1
    rec.held[p, t] = 1
    rec.nheld[p] += 1
    rec.stack_n[t] -= 1
    if rec.stack_n[t] > 0:
        rec.phase = PLACE
        return
    rec.stack_cell[t] = -1
    end_turn(rec, cfg)


@kernel
def place_stack(rec, cfg, x):
    """K7: the rest of the accepted stack moves to cell ``x``; the turn ends."""
    rec.stack_cell[rec.pending] = x
    end_turn(rec, cfg)


@kernel
def take_star(rec, cfg, p, i):
    """K8: seat ``p`` takes the star order slot ``i`` pays (none if no pile has one)."""
    j = slot_pays(rec, i)
    if j < 0:
        return
    rec.star_left[j] -= 1
    rec.stars[p, j] += 1
    rec.nstars[p] += 1
    rec.points[p] += STAR_VALUES[j]
    if cfg.shaping:
        rec.reward[p] += STAR_VALUES[j]


@kernel
def deliver(rec, cfg, lowest):
    """K7/K8: deliver every matching order for 1 energy, then shift the order board
    (``lowest``: the delivered type that goes to the very bottom)."""
    p = rec.cur
    x = rec.pos[p]
    bits = deliverable(rec, cfg, p, x)
    rec.energy[p] -= 1
    # stars first, top slot first, before anything moves
    for i in range(NSLOTS):
        t = rec.ord_slot[i]
        if (bits >> t) & 1:
            take_star(rec, cfg, p, i)
            rec.held[p, t] = 0
            rec.nheld[p] -= 1
            rec.delivered[p, t] += 1
            if t == IBU or t == BAPAK:
                rec.passengers[p] += 1
    shift_orders(rec, bits, lowest)
    shift_addresses(rec, cfg.tile_addr[rec.cell_tile[x]])


@kernel
def shift_orders(rec, bits, lowest):
    """K8: the delivered orders (``bits``) go to the bottom, ``lowest`` lowest; the others
    move up."""
    k = 0
    other = -1
    for i in range(NSLOTS):
        t = rec.ord_slot[i]
        if (bits >> t) & 1:
            if t != lowest:
                other = t
        else:
            rec.ord_slot[k] = t
            k += 1
    if other >= 0:
        rec.ord_slot[k] = other
        k += 1
    rec.ord_slot[k] = lowest


@kernel
def shift_addresses(rec, a):
    """K8: address ``a`` (delivered to) goes to the top slot, the ones above it move down."""
    j = 0
    for i in range(NSLOTS):
        if rec.addr_slot[i] == a:
            j = i
    for i in range(j, 0, -1):
        rec.addr_slot[i] = rec.addr_slot[i - 1]
    rec.addr_slot[0] = a
